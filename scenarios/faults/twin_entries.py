"""A same-id process meets an open entry (issue 45 part 3: OR-7, OR-8 must tell the instance, not the id).

A node's process sends an acquisition's record write, the write is lost on the way, and the process stops
right then (SIGSTOP, a VM frozen by its host: as `pauses` does) for longer than its lease. Its orchestrator,
finding the node unresponsive, starts a second process under the same node id on another machine (a twin,
NL-12): its start check finds the node lease unchanged for ttl + grace (NL-5), so it writes `live` over it and
serves; clients reach it on its machine, and it acquires that same actor, at the generation the first process
tried (the record unchanged since both read it; the first's instance freed by the twin's live object, FN-5).
The first process resumes: its lost write's timeout comes (OR-7: the outcome unknown), and its read-back finds
the record naming its own node id under the twin's instance, at the generation it tried: not its write.

Honest: what a network (a request lost), a host (a process stopped) and an orchestrator (a second process
under the id) can do, on what the world knows: the write picked by its body (an acquisition's names its
writer: `held <node> <instance> <g>`) and the process that sent it. Drawn in a share of the swarm's seeds,
last of the draw (swarm.DRAW_ORDER: no other option moves), from its own streams ("draw/twin_entries",
"twin_entries"), with the twin's machine's clock (`MACHINE`, within max_skew as every clock); off in the
quiet phase and while a race plays out on the node.
"""

from __future__ import annotations

from model.io import PUT
from model.records import OWNERS_PREFIX

from . import FaultKind, stays_off

SHARE = 0.6  # of the swarm's seeds (those without a crowd: about a third of all)
MACHINE = "tp"  # the twin's machine
HELD = "\nheld "  # an acquisition's record body names its writer on this state line
CROWDS = ("release_crowd", "acquire_crowd")  # the kinds whose crowd keeps a node of its own
POKES = 5  # an armed node is asked for a free actor this many times, a lease period apart, until it strikes
ASKS = 3  # the twin's clients ask for the actor at each of its first lease writes acknowledged, this many


class TwinEntries(FaultKind):
    id = "twin_entries"
    title = "a process stops as its acquisition's write is lost; a twin under its id takes that actor meanwhile"
    rules = ("OR-7", "OR-8", "NL-5", "NL-12", "FN-5")
    options = {"twin_entries": []}  # [[node, at]]: armed at `at`, it strikes at the node's next acquisition write
    scheduled = ("twin_entries",)
    at_field = {"twin_entries": 1}
    node_field = {"twin_entries": 0}
    # node -> armed; whether it struck in this run (once a run: one twin machine); node -> [the actor, the asks left]
    # and (proc index, key) of the write to lose
    state = {"entries_armed": dict, "entries_struck": list, "entries_asks": dict, "entries_lost": dict}

    def draw_main(self, ctx) -> None:
        rng, o, tg = ctx.rng, ctx.o, ctx.tg
        on = ctx.preset.mix and not stays_off(ctx) and rng.random() < SHARE
        # armed once the nodes passed their start checks (NL-5), early enough for the pause, the twin's start check
        # and its acquisition within the fault phase
        latest = o["fault_ms"] - self.pause_ms(ctx.p, tg) - 2 * tg
        # never on a crowd's node (its crowd would lose it), nor beside a lost zone or a `mass` crowd (every node's)
        crowds = {x[0] for k in CROWDS for x in o.get(k) or () if x}
        nodes = [n for n in ctx.nodes() if n not in crowds]
        if not on or latest <= 2 * tg or not nodes or o.get("fence_crowd") or o.get("mass"):
            o["twin_entries"] = []
            return
        o["twin_entries"] = sorted([[ctx.choice(nodes), rng.randint(2 * tg, latest)]
                                    for _ in range(rng.randint(3, 6))], key=lambda e: (e[1], e[0]))
        skew = ctx.p.max_skew_ms
        at = rng.randint(-skew, skew)
        if o.get("clock_bound"):  # every clock at an end of the band (swarm._at_bound, T-1): the twin's too
            at = skew if at >= 0 else -skew
        o["clocks"][MACHINE] = [o["clock_base"] + at, 0]

    @staticmethod
    def pause_ms(p, tg: int) -> int:
        """How long the first process stops: the twin's start check (ttl + grace, NL-5, and the reads around it),
        its first write, and a few lease periods for its clients' asks and its acquisition (OR-3)."""
        return tg + 4 * p.period_ms + 2 * p.attempt_timeout_ms

    def schedule(self, w, base: int) -> None:
        for node_id, at in filter(None, w.options.get("twin_entries", ())):
            w.later(base + at, w.fault_step, self.id, "arm", node_id)

    def arm(self, w, node_id: str) -> None:
        """Armed on the node; clients ask it for an actor whose record names nobody (the bucket's fact), so that an
        acquisition's write comes soon (again a lease period later, a few times, while it has not come)."""
        if w.in_quiet or w.entries_struck or w.disturbs_a_race(node_id):
            return
        w.entries_armed[node_id] = True
        self.poke(w, node_id, POKES)

    def poke(self, w, node_id: str, left: int) -> None:
        if w.in_quiet or w.entries_struck or node_id not in w.entries_armed:
            return
        free = [a for a in w.actors if w.holders.get(a) is None]
        if free:
            k = w.choose("twin_poke", node_id, w.rngs[self.id].below, 1 << 16)
            w.ask_new(node_id, free[k % len(free)])
        if left > 1:
            w.later(w.params.period_ms, w.fault_step, self.id, "poke", node_id, left - 1)

    def quiet(self, w) -> None:
        w.entries_lost.clear()
        w.entries_armed.clear()
        w.entries_asks.clear()

    def on_sent(self, w, proc, rid: int, req, timeout: int) -> bool:
        """The armed node's next acquisition write, from its first process: it strikes (the write's fate, lost, given
        by `send_early`; a planned run reads it from its plan)."""
        armed = w.entries_armed
        if not armed or proc.node_id not in armed or req.op != PUT or not str.startswith(req.key, OWNERS_PREFIX) \
                or req.body is None or HELD not in req.body or w.live_proc(proc.node_id) is not proc \
                or w.in_quiet or w.disturbs_a_race(proc.node_id):
            return False
        armed.clear()
        q = w.quiet_at_ms
        if q is not None and q - w.now < self.pause_ms(w.params, w.tg) + w.tg:
            return False  # too late in the run: the pause and the twin's acquisition would not fit
        w.entries_lost[(proc.index, req.key)] = True
        self.strike(w, proc, req.key[len(OWNERS_PREFIX):])
        return False

    @staticmethod
    def send_early(world, proc, req, f):
        lost = world.entries_lost
        return ("lost", 0) if lost and lost.pop((proc.index, req.key), False) else None

    def strike(self, w, proc, actor: str) -> None:
        """`proc` stops; a twin starts under its id, on its own machine; no other client asks for the actor
        meanwhile (it stays as the lost write left it), and the node is kept calm (no other fault there)."""
        length = self.pause_ms(w.params, w.tg)
        w.entries_struck.append(w.now)
        w.pause(proc, length, f"its acquisition's write of {actor} lost; a twin takes its id meanwhile")
        w.later(length, w.fault_step, self.id, "wake", proc.index)
        w.start_twin(proc.node_id, MACHINE, length + w.tg)
        w.keep_calm(proc.node_id, w.now + length + w.tg)  # (after the twin's start: a calm node starts none)
        w.keep_idle(actor, w.now + length + w.tg)
        w.entries_asks[proc.node_id] = [actor, ASKS]

    def on_lease_acked(self, w, proc, sent_ms: int) -> None:
        """The twin's node lease written (NL-7): its clients ask it for the actor, at each of its first writes."""
        asks = w.entries_asks.get(proc.node_id) if proc.machine == MACHINE else None
        if asks and asks[1] > 0 and not w.in_quiet:
            asks[1] -= 1
            w.ask_proc(proc, asks[0])

    def wake(self, w, index: int) -> None:
        proc = w.procs[index]
        if proc.alive:
            w.resumed(proc)


KIND = TwinEntries()
