"""Deadline races (T-2, T-5, INV-1): an owner cut off right after an acknowledged lease write, a taker
on the far side of the skew band asked for its actors from the first instant it may free them.

The owner runs on the slowest clock, the taker on the fastest (the clocks draw puts two node
machines at the two ends of the band: `slow_fast`), so at T-2's equality the takeover may land
exactly at the owner's last valid instant: any missing margin shows. In half the races
(`lapse_acquires`) only the owner's own lease writes are lost: it reaches records and data to the
end, and past it, while it is asked for actors as its lease runs out (OR-2, OR-4, NL-11).
"""

from __future__ import annotations

from model.io import Command

from . import FaultKind

WORLD = -1


class DeadlineRaces(FaultKind):
    id = "deadline_races"
    title = "an owner on the slowest clock cut off after an acknowledged write; the fastest asked for its actors"
    rules = ("T-2", "T-5", "NL-4", "FN-5", "OR-2", "OR-4", "NL-11", "INV-1")
    options = {"deadline_races": []}  # [at, ...]
    settings = {"lapse_acquires": False}
    scheduled = ("deadline_races",)
    at_field = {"deadline_races": -1}
    state = {"deadline_races_armed": dict}  # node -> deadline races armed: cut it off after its next acknowledged write

    def draw_main(self, ctx) -> None:
        rng, tg, o = ctx.rng, ctx.tg, ctx.o
        fault = o["fault_ms"]
        count = rng.randint(1, 2) if rng.random() < 0.4 or ctx.force(self.id) == "always" else 0
        o["deadline_races"] = sorted(rng.randint(2 * tg, max(2 * tg, fault - 2 * tg)) for _ in range(count))
        if ctx.alone:
            o["deadline_races"] = []
        if o["deadline_races"] and o["clock_mode"] == "spread":
            o["clock_mode"] = "opposite"  # a race needs its slow and fast clocks
        # half the races cut off only the owner's lease writes, and ask it for free actors as its lease
        # runs out: acquisitions straddle its deadline (OR-2), and its acts near it reach the bucket
        o["lapse_acquires"] = bool(o["deadline_races"]) and rng.random() < 0.5

    def drop_node(self, o: dict, node: str) -> None:
        if o.get("slow_fast") and "m" + node[1:] in o["slow_fast"]:
            o["deadline_races"] = []

    def schedule(self, w, base: int) -> None:
        for at in filter(lambda x: x is not None, w.options.get("deadline_races", ())):
            w.later(base + at, w.fault_step, self.id, "arm")

    def quiet(self, w) -> None:
        w.deadline_races_armed.clear()

    def arm(self, w) -> None:
        slow_fast = w.options.get("slow_fast")
        if slow_fast and not w.in_quiet:
            node = "n" + slow_fast[0][1:]
            taker = "n" + slow_fast[1][1:]
            if w.disturbs_a_race(node) or w.disturbs_a_race(taker):
                return  # a race is under way on one of them already
            if w.live_proc(node) is None or w.live_proc(taker) is None:
                return  # one of them is down: no race to run
            w.deadline_races_armed[node] = w.deadline_races_armed.get(node, 0) + 1
            # nothing else disturbs the two from now until the race is over (set again at the cut)
            w.set_calm(node, w.now + 2 * w.tg)
            w.set_calm(taker, w.now + 2 * w.tg)
            # the owner-to-be is asked for every actor, so that it owns some when it is cut off
            for actor in w.actors:
                w.ask_new(node, actor)

    @staticmethod
    def on_lease_acked(w, proc, sent_ms: int) -> None:
        if w.deadline_races_armed.get(proc.node_id):
            KIND.cut(w, proc, sent_ms)

    def cut(self, w, proc, sent_ms: int) -> None:
        if w.in_quiet:
            return
        node = proc.node_id
        actors = sorted(a for a, n in w.holders.items() if n == node)
        if not actors or proc.slot is not w.slots[w.node_ids.index(node)]:
            return  # it owns nothing yet (or this is a twin): wait for a later write
        if w.restart_race_state and any(node in (n, r["freer"]) and w.now < r["until"] for n, r in w.restart_race_state.items()):
            return  # a restart race plays out on it (restart_races.py): a later write
        w.deadline_races_armed[node] -= 1
        p = w.params
        fast = w.options["slow_fast"][1]
        taker = "n" + fast[1:]
        # the instant the taker's clock reads the owner's written_at + ttl + grace
        t_free = w.clocks[fast].true_at(proc.clock.local(sent_ms) + w.tg)
        w.fault_event(WORLD, "deadline_race", proc.machine, None,
                                  f"cut off after an acknowledged lease write; {taker} may free its actors "
                                  f"from {t_free} ms")
        # the owner's last valid instant, by its own clock
        deadline = proc.clock.true_at(proc.clock.local(sent_ms) + p.lease_span_ms)
        # nothing else disturbs the two until the race is over
        calm_until = max(t_free, deadline) + 2 * p.period_ms + 2 * p.attempt_timeout_ms
        w.set_calm(node, calm_until)
        w.set_calm(taker, calm_until)
        lapse = w.options.get("lapse_acquires")
        # cut off from the bucket; or (lapse_acquires) only its lease writes are lost: it reaches
        # the records and the data to the end, and past it (OR-2, OR-4, NL-11 at the deadline)
        w.cut_off(proc.machine, 2 * w.tg + p.period_ms + p.attempt_timeout_ms, "lease" if lapse else "blackhole")
        # the owner is asked up to its deadline and a little past it; the taker from half a
        # takeover span before it may free them (a model that frees early shows) to well after;
        # every eighth of a lease period, for three of the owner's actors at most. With
        # lapse_acquires, the owner hibernates them every sixteenth of a period in its last half
        # period, and is asked for them again from an instant drawn in the last few round trips
        # before its deadline (the workload asks too): each is acquired anew
        # (OR-3) as its lease runs out, between the acquisition's reads and its record write
        # (OR-2: the write only while the lease is valid), then served up to the deadline; actors
        # nobody holds are asked of it likewise
        step = max(1, p.period_ms // 8)
        dense = max(1, p.period_ms // 32)
        trip = 4 * w.options["delay_ms_max"]  # a read there and back, twice (routing, acquisition)
        randint = w.rngs[self.id].randint
        for actor in actors[:3]:
            if lapse:
                for at in range(deadline - p.period_ms // 2, deadline, max(1, p.period_ms // 16)):
                    w.later(at - w.now, w.command_node_any, node, Command("hibernate", (actor,)))
                first = deadline - w.choose("later", f"lapse {node} {actor}", randint, 0, trip)
            else:
                for at in range(deadline - 2 * p.period_ms, deadline - p.period_ms // 2, step):
                    w.later(at - w.now, w.ask_new, node, actor)
                first = deadline - p.period_ms // 2
            # densest where a takeover too early would overlap: the owner's last half period
            for at in range(first, deadline + p.period_ms // 4, dense):
                w.later(at - w.now, w.ask_new, node, actor)
            for at in range(t_free - w.tg // 2, t_free + 2 * p.period_ms, step):
                w.later(at - w.now, w.ask_new, taker, actor)
        if lapse:
            for actor in [x for x in w.actors if x not in w.holders][:3]:
                for at in range(deadline - w.choose("later", f"lapse {node} {actor}", randint, 0, trip),
                                deadline + p.period_ms // 4, dense):
                    w.later(at - w.now, w.ask_new, node, actor)


KIND = DeadlineRaces()
