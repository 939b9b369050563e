"""Many acquisitions left unresolved at once on one node, into a bucket partition that stalls (BD-2, OR-7, OR-8,
OR-9; issue 45 part 3: "the resolver at BD-2's cap").

Clients ask one node for a crowd of actors at once (48 to 80 more, under a key range of their own,
`owners/t2/stall/`), and the bucket's partition for that range stalls on writes as they come: S3 orders a
key's writes and, being strongly consistent, answers a read of a key only after the write in progress on it
(a partition that has stalled leaves both waiting). So each acquisition's first read is answered (no write is
in progress yet), its record write is held until the stall ends and applied then, long past its sender's
timeout (as `late` does), and every read of that key meanwhile hangs (lost: the sender's timeout answers it).
After the stall the partition works off its backlog: for a few attempt timeouts it answers the range's requests
slowly (up to three quarters of an attempt timeout late). The node's lease and its other records are untouched.

What follows is the model's own: each write times out (OR-7: its outcome unknown), its read-back hangs and
fails, and the whole crowd is unresolved at once; the resolver works at most 32 entries at once (BD-2), its
reads hang to their timeout together (the cap full of the resolver's reads). Once the writes have landed, its
reads find them (OR-8: this instance at the generation tried, no hold here) and it releases each, the entry
at work until its release's reply (OR-9), so the cap is full of reads and releases, slowly answered: where a
release not counted (broken model `resolver_release_uncounted`) lets a 33rd request go.

Drawn in the swarm only (a share of its seeds, never with the actor count pinned, nor in an upgrade, a crowd
of `mass` or `fence_crowd`, or around a lone blip; beside a crowd of `release_crowd`, on another node), from its own streams ("draw/acquire_crowd",
"acquire_crowd"). The crowd's actors are not the workload's: only this kind asks for them, and the final rounds
do not.
"""

from __future__ import annotations

from model.io import GET, PUT
from model.records import OWNERS_PREFIX

from . import FaultKind, keep_node, stays_off

SHARE = 0.3  # of the swarm's seeds that may draw it (resolver_release_uncounted needs a tenth of them)
CROWD = (48, 64, 80)  # the crowd's size (BD-2's cap is 32: more than a pass's worth, at once)
PREFIX = "t2/stall/"  # the crowd's actors: a key range of their own
HELD = "\nheld "  # an acquisition's record body names its writer on this state line
ASK_TRIES = 4  # the clients come back at most this many times, ttl + grace / 2 apart, while the node is not there


def crowd_actors(count: int) -> list[str]:
    return [f"{PREFIX}a{k}" for k in range(count)]


class AcquireCrowd(FaultKind):
    id = "acquire_crowd"
    title = "a node is asked for 48 to 80 actors at once while the bucket partition of their records stalls"
    rules = ("BD-2", "OR-7", "OR-8", "OR-9")
    options = {"acquire_crowd": []}  # [[node, at, actors, stall_ms]]
    scheduled = ("acquire_crowd",)
    at_field = {"acquire_crowd": 1}
    node_field = {"acquire_crowd": 0}
    durations = {"acquire_crowd": 3}
    # node -> [the stall's end, the slow answers' end]; (proc index, key) of every write the stall holds
    # and node -> the stall's length, armed: it begins as the first write of the crowd comes
    # and the nodes it keeps calm
    state = {"stall_until": dict, "stall_held": dict, "stall_armed": dict, "stall_calm": dict}

    def draw_main(self, ctx) -> None:
        rng, tg, o = ctx.rng, ctx.tg, ctx.o
        drawn = rng.random() < SHARE
        if not (drawn and ctx.preset.mix and ctx.pinned.get("actors") is None and ctx.duration_ms is None
                and not o.get("upgrade") and not o.get("mass") and not o.get("fence_crowd")
                and not stays_off(ctx)):
            o["acquire_crowd"] = []
            return
        a = ctx.p.attempt_timeout_ms
        count = ctx.choice(CROWD)
        # the stall: the writes' timeouts, their read-backs' and the resolver's first reads (each an attempt
        # timeout), and the network's trips around them
        stall = rng.randint(3 * a, 5 * a) + 4 * o["delay_ms_max"]
        fault = o["fault_ms"]
        # (every node has passed its start check by 3 ttl + grace: NL-5's wait, the guard's reads); the stall and
        # its slow answers over, and the crowd released, ttl + grace before the faults end
        at = rng.randint(3 * tg, max(3 * tg, fault - 3 * tg - stall))
        o["fault_ms"] = max(fault, at + (3 + ASK_TRIES // 2) * tg + stall)  # (a longer run where the crowd needs it)
        # (a node of its own, beside a crowd of release_crowd's if the seed drew one)
        others = [n for n in ctx.nodes() if not any(x and x[0] == n for x in o.get("release_crowd") or ())]
        node = ctx.choice(others)
        o["acquire_crowd"] = [[node, at, count, stall]]
        keep_node(ctx, node)

    def schedule(self, w, base: int) -> None:
        for node_id, at, count, stall in filter(None, w.options.get("acquire_crowd", ())):
            w.later(base + at, w.fault_step, self.id, "ask", node_id, count, stall, 0)

    def ask(self, w, node_id: str, count: int, stall: int, tries: int) -> None:
        """Clients ask the node for the whole crowd at once, and the partition stalls as the first of its writes
        comes (`send_early`); the node is kept calm from then until the crowd is released. While no process
        serves the node, or none of the crowd's writes came (the node was not ready: its start check, a
        lapse), the clients come back later, a few times."""
        if w.in_quiet or node_id in w.stall_until:
            return
        proc = w.live_proc(node_id)
        if proc is not None and not proc.draining and (node_id in w.stall_calm or not w.disturbs_a_race(node_id)):
            if node_id not in w.stall_calm:  # (its calm is this kind's own: no race of another's to disturb)
                w.stall_calm[node_id] = True
                w.set_calm(node_id, w.now + stall + (ASK_TRIES + 3) * w.tg)
            w.stall_armed[node_id] = stall
            for actor in crowd_actors(count):
                w.ask_new(node_id, actor)
        if tries < ASK_TRIES:
            w.later(w.tg // 2, w.fault_step, self.id, "ask", node_id, count, stall, tries + 1)

    def quiet(self, w) -> None:
        w.stall_until.clear()
        w.stall_held.clear()
        w.stall_armed.clear()
        w.stall_calm.clear()

    def on_sent(self, w, proc, rid: int, req, timeout: int) -> bool:
        """On the crowd's key range: the stall begins as the first of the crowd's writes comes; while it lasts,
        each acquisition's write is held (`send_early` gives its fate: a planned run reads it from its plan)."""
        if not str.startswith(req.key, OWNERS_PREFIX + PREFIX) or req.op != PUT or req.body is None \
                or HELD not in req.body:
            return False
        stall = w.stall_armed.pop(proc.node_id, None) if w.stall_armed else None
        if stall is not None:
            a = w.params.attempt_timeout_ms
            w.stall_until[proc.node_id] = [w.now + stall, w.now + stall + 3 * a]
            w.fault_event(-1, "acquire_stall", OWNERS_PREFIX + PREFIX, stall,
                          "the partition holds its writes and the reads of their keys")
        until = w.stall_until.get(proc.node_id)
        if until is not None and w.now < until[0]:
            w.stall_held[(proc.index, req.key)] = True
        return False

    @staticmethod
    def send_early(world, proc, req, f):
        """While the stall lasts, on the crowd's key range: an acquisition's write is held and applied as the
        stall ends (past its sender's timeout: `late`), and a read of a key with a write held hangs (`lost`)."""
        until = world.stall_until.get(proc.node_id) if world.stall_until else None
        if until is None or world.now >= until[0] or not str.startswith(req.key, OWNERS_PREFIX + PREFIX):
            return None
        if req.op == PUT and req.body is not None and HELD in req.body:
            return "late", max(1, until[0] - world.now - world.params.attempt_timeout_ms)
        if req.op == GET and (proc.index, req.key) in world.stall_held:
            return "lost", 0
        return None

    @staticmethod
    def reply_late(world, proc, req, f, delay):
        """After the stall, for three attempt timeouts, the range's answers come slowly (the backlog)."""
        until = world.stall_until.get(proc.node_id) if world.stall_until else None
        if until is None or not until[0] <= world.now < until[1] or not str.startswith(req.key, OWNERS_PREFIX + PREFIX):
            return None
        return "slow", delay + world.rngs["acquire_crowd"].randint(0, 3 * world.params.attempt_timeout_ms // 4)


KIND = AcquireCrowd()
