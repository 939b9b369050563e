"""Many releases pending at once on one node, into a bucket partition that hangs (BD-2, BD-3, OR-6).

A node that serves a crowd of actors (64 to 80 more, named under a key range of their own, `owners/t2/crowd/`)
hibernates them all at once while the bucket's partition for that key range stops answering: S3 spreads a
bucket's keys over partitions by prefix, and one that is overloaded or failing leaves the requests on its
keys hanging (the sender's timeout answers them) while every other key answers as usual. The node's lease
and its other records are untouched; only the crowd's record writes and reads hang, for a stretch of a
few attempt timeouts and the back-offs between them (OR-6: 500 ms doubled to 8 s).

What follows is the model's own: each foreground release tries for 1 s (BD-4) and is parked, all at the
same instant, as a pending entry (OR-11); the background task works at most 32 entries at once (BD-2:
the others wait, due), and their retries hang to their timeout together, so 32 refusals come in a row and
the pass stops (BD-3: the entries waiting wait their back-off from then). Later passes meet entries already
answered once, due again and waiting behind the cap, which is where a pass that never stops (broken model
`endless_pass`) retries them early, and a cap of more than 32 (`unbounded_pending`) shows in flight. After
the stretch the partition answers again and the releases land (OR-5).

Drawn in the swarm only (a share of its seeds, never with the actor count pinned, nor in an upgrade, a
crowd of `mass` or `fence_crowd`, or around a lone blip), from its own streams ("draw/release_crowd", "release_crowd"). The
crowd's actors are not the workload's: only this kind asks for them, and the final rounds do not.
"""

from __future__ import annotations

from model.io import Command
from model.records import OWNERS_PREFIX

from . import FaultKind, keep_node, stays_off

SHARE = 0.25  # of the swarm's seeds that may draw it (BD-3's broken model needs a tenth of them)
CROWD = (64, 72, 80)  # the crowd's size (BD-2's cap is 32: two of its passes and more)
PREFIX = "t2/crowd/"  # the crowd's actors: a key range of their own
HIBERNATE_AFTER = 10  # ms after the partition stops answering, the crowd hibernates
GATHER_TRIES = 4  # the clients ask for the crowd at most this many times, ttl + grace / 2 apart


def crowd_actors(count: int) -> list[str]:
    return [f"{PREFIX}a{k}" for k in range(count)]


class ReleaseCrowd(FaultKind):
    id = "release_crowd"
    title = "a node hibernates 64 to 80 actors at once while the bucket partition of their records hangs"
    rules = ("BD-2", "BD-3", "BD-4", "OR-5", "OR-6", "OR-11")
    options = {"release_crowd": []}  # [[node, at, actors, hang_ms]]
    scheduled = ("release_crowd",)
    at_field = {"release_crowd": 1}
    node_field = {"release_crowd": 0}
    durations = {"release_crowd": 3}
    # the hang is on; node -> the crowd it gathered; the nodes it keeps calm
    state = {"crowd_hang": bool, "crowd_gathered": dict, "crowd_calm": dict}

    def draw_main(self, ctx) -> None:
        rng, tg, o = ctx.rng, ctx.tg, ctx.o
        drawn = rng.random() < SHARE
        if not (drawn and ctx.preset.mix and ctx.pinned.get("actors") is None and ctx.duration_ms is None
                and not o.get("upgrade")
                and not o.get("mass") and not o.get("fence_crowd") and not stays_off(ctx)):
            o["release_crowd"] = []
            return
        a = ctx.p.attempt_timeout_ms
        count = ctx.choice(CROWD)
        # the hang: the foreground tries (1 s), then two passes and more, each a timeout and a back-off (while
        # it lasts the task is at its cap: the model's background timer fires every ms, the cost of a crowd)
        hang = rng.randint(2 * a + 1_500, 2 * a + 3_000)
        fault = o["fault_ms"]
        # the crowd is asked for at `at`, acquired within ttl + grace, then hibernated into the hang, which
        # ends ttl + grace before the faults end
        # (every node has passed its start check by 3 ttl + grace: NL-5's wait, the guard's reads)
        at = rng.randint(3 * tg, max(3 * tg, fault - 3 * tg - hang))
        o["fault_ms"] = max(fault, at + 3 * tg + hang)  # (a longer run where the crowd needs it)
        node = ctx.choice(ctx.nodes())
        o["release_crowd"] = [[node, at, count, hang]]
        keep_node(ctx, node)  # (with the deadline races on, 33 of 43 forced seeds catch endless_pass, not 41)

    def schedule(self, w, base: int) -> None:
        for node_id, at, count, hang in filter(None, w.options.get("release_crowd", ())):
            w.later(base + at, w.fault_step, self.id, "gather", node_id, count, hang, 0)

    def gather(self, w, node_id: str, count: int, hang: int, tries: int) -> None:
        """Clients ask the node for every actor of the crowd it does not hold yet (asking again, as clients
        do, while it was not ready: its start check, a lapse); the node is kept calm from the first ask to
        the hang's end and ttl + grace after (its releases land)."""
        proc = w.live_proc(node_id)
        if w.in_quiet:
            return
        if proc is None or proc.draining or node_id not in w.crowd_calm and w.disturbs_a_race(node_id):
            if tries < GATHER_TRIES:  # not there, or not ready: the clients come back later
                w.later(w.tg // 2, w.fault_step, self.id, "gather", node_id, count, hang, tries + 1)
            return
        if node_id not in w.crowd_calm:
            w.crowd_calm[node_id] = True
            w.set_calm(node_id, w.now + 3 * w.tg + hang)
        for actor in crowd_actors(count):
            if w.holders.get(actor) != node_id:
                w.ask_new(node_id, actor)
        w.later(w.tg // 2, w.fault_step, self.id, "settle", node_id, count, hang, tries + 1)

    def settle(self, w, node_id: str, count: int, hang: int, tries: int) -> None:
        """Once most of the crowd's records name the node (the bucket's fact, `holders`), their partition
        hangs and the crowd hibernates; else the clients ask again, a few times."""
        held = sum(1 for actor in crowd_actors(count) if w.holders.get(actor) == node_id)
        if held < count * 3 // 4 and tries < GATHER_TRIES:
            self.gather(w, node_id, count, hang, tries)
            return
        if w.in_quiet or not held:
            return
        w.crowd_gathered[node_id] = count
        self.hang(w, True, hang)
        w.later(hang, w.fault_step, self.id, "hang", False)
        w.later(HIBERNATE_AFTER, w.fault_step, self.id, "hibernate", node_id, count)

    def hang(self, w, on: bool, length_ms: int | None = None) -> None:
        if on and not w.in_quiet:
            w.fault_event(-1, "crowd_hang", OWNERS_PREFIX + PREFIX, length_ms, "the partition stops answering")
        w.crowd_hang = on and not w.in_quiet

    def hibernate(self, w, node_id: str, count: int) -> None:
        """The crowd goes idle at once: each actor hibernates (a release each, OR-5)."""
        if w.crowd_gathered.get(node_id) != count:
            return
        for actor in crowd_actors(count):
            w.command_node_any(node_id, Command("hibernate", (actor,)))

    def quiet(self, w) -> None:
        w.crowd_hang = False

    @staticmethod
    def send_early(world, proc, req, f):
        """A request on the crowd's key range, while its partition hangs: never applied, never answered."""
        if world.crowd_hang and str.startswith(req.key, OWNERS_PREFIX + PREFIX):
            return "lost", 0
        return None


KIND = ReleaseCrowd()
