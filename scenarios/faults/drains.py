"""Drains (CS-3, OR-11): a node told to drain, then resumed or stopped.

Drains are judged with the holds they drain: the world asks the node for every actor just before
each drain, keeps random network faults off its requests until the drain must have ended
(`drains_with_holds`), and tells it to drain only once an applied record names it, its actors
kept busy (no hibernation or move ends its holds) to the drain's bound (`drains_wait_for_holds`):
the drain must release them itself (CS-3), or it never reports drained (INV-11). Half the drains
come right after one of the node's acquisitions lost its record write (F-2's precondition), and
half of those of a node with an outage are told during it (judged from the faults' end).
"""

from __future__ import annotations

from model.io import Command
from model.records import OWNERS_PREFIX

from . import FaultKind

DRAIN_WAITS = 12  # a drain with holds waits up to this many sixths of a lease span for the node to hold one


class Drains(FaultKind):
    id = "drains"
    title = "a node is drained, then resumed or stopped; half right after one of its record writes was lost"
    rules = ("CS-3", "OR-8", "OR-11", "INV-5", "INV-11")
    # [[node, at, then after, resume|stop, an acquisition's write lost just before it (F-2)]]
    options = {"drains": []}
    settings = {"drains_with_holds": False, "drains_wait_for_holds": False}
    scheduled = ("drains",)
    at_field = {"drains": 1}
    node_field = {"drains": 0}

    def draw_main(self, ctx) -> None:
        rng, S, tg, o = ctx.rng, ctx.S, ctx.tg, ctx.o
        fault = o["fault_ms"]
        o["drains"] = []
        o["drains_with_holds"] = True
        o["drains_wait_for_holds"] = True
        nodes = ctx.nodes()
        for _ in range(rng.randint(1, 2) if ctx.on["stops"] else 0):  # switched on with the stops
            node, at = ctx.choice(nodes), rng.randint(0, fault)
            after = ctx.choice((rng.randint(S(2_000), S(20_000)), rng.randint(2 * tg, 4 * tg)))
            then, lost = ctx.choice(("resume", "stop")), rng.random() < 0.5
            if not lost:
                # a drain judged with its holds (drains_wait_for_holds) lasts past its bound (ttl + grace after
                # the events it runs, INV-11): one resumed or stopped sooner is not judged, so a drain that
                # never releases its holds (broken model drain_keeps_holds) would pass (issue 45 part 4)
                # and it is told early enough for that to fit in the fault phase (its waits for a hold, then 2 ttl
                # + grace), which a drain's span never outlasts
                after, at = max(after, 2 * tg), min(at, max(0, fault - 3 * tg))
            o["drains"].append([node, at, min(after, fault - at + 1), then, lost])

    def draw_outage(self, ctx) -> None:
        """Half the drains of a node whose machine (or every machine) has an outage are told during one
        of them: INV-11 judges them from the faults' end, CONV-1 once the quiet phase settles. Drawn
        last (DRAW_ORDER), so it moves only those drains and no other draw."""
        rng, o = ctx.rng, ctx.o
        outs = [x for x in o.get("outages") or () if x]
        for d in o.get("drains") or ():
            if not d:
                continue
            mine = [x for x in outs if x[0] == "*" or x[0] == d[0]]
            if mine and rng.random() < 0.5:
                _who, at, length, _mode = ctx.choice(mine)
                d[1] = min(at + rng.randint(0, length), o["fault_ms"])
                d[2] = max(1, min(d[2], o["fault_ms"] - d[1] + 1))

    def schedule(self, w, base: int) -> None:
        o = w.options
        before = w.tg // 3  # the node is asked for its actors, or loses a write, this long before the drain
        for node_id, at, after_ms, then, *lose in filter(None, o.get("drains", ())):
            lost = bool(lose and lose[0])
            if lost:
                # an acquisition's record write is lost just before the drain (F-2's precondition)
                w.later(base + at - before, w.lose_next, node_id, OWNERS_PREFIX)
            elif o.get("drains_with_holds"):
                # no random network fault on the node's requests from just before the drain until it
                # must have reported drained: the drain is judged (INV-11) with the holds it drains
                until = base + at + w.drain_bound_ms()
                w.later(base + at - before, w.shield_until, node_id, until)
                if o.get("drains_wait_for_holds"):
                    # and its actors stay busy: no hibernation or move ends its holds for it, so the
                    # drain must release them itself (CS-3), or never reports drained (INV-11)
                    w.later(base + at - before, w.busy_until, node_id, until)
            if lost or o.get("drains_with_holds"):
                # the node is asked for every actor just before: it drains holds, not an empty node (CS-3)
                for actor in w.actors:
                    w.later(base + at - before + 1, w.ask_new, node_id, actor)
            if not lost and o.get("drains_with_holds") and o.get("drains_wait_for_holds"):
                w.later(base + at, w.fault_step, self.id, "drain_holding", node_id, after_ms, then, DRAIN_WAITS)
                continue
            w.later(base + at, w.command_node, node_id, Command("drain"))
            self.after_drain(w, node_id, base + at + after_ms, then)

    def after_drain(self, w, node_id: str, at: int, then: str) -> None:
        if then == "resume":
            w.later(at - w.now, w.command_node, node_id, Command("resume"))
        else:
            w.later(at - w.now, w.stop_node, node_id, w.tg // 3)

    def drain_holding(self, w, node_id: str, after_ms: int, then: str, waits: int) -> None:
        """A drain judged with the holds it drains (CS-3, INV-11): told once an applied record names
        the node (a node still in its start check, or whose asks were forwarded, holds nothing to
        drain); until then, up to `waits` times, it is asked for every actor again a sixth of a
        lease span later, its shield and its busy actors kept on to the drain's bound. Not once the
        quiet phase began (it resumes drained nodes: one drained after it would stay drained)."""
        if w.in_quiet:
            return
        if waits > 0 and node_id not in w.holders.values():
            until = w.now + w.tg // 6 + w.drain_bound_ms()
            w.shield_until(node_id, until)
            w.busy_until(node_id, until)
            for actor in w.actors:
                w.ask_new(node_id, actor)
            w.later(w.tg // 6, w.fault_step, self.id, "drain_holding", node_id, after_ms, then, waits - 1)
            return
        # no drawn fault aimed at the node (a crash, a twin, an outage, a stop) until the drain must have ended:
        # one that struck meanwhile would leave the drain unjudged (INV-11), and a drain that never releases
        # its holds (drain_keeps_holds) would pass (issue 45 part 4)
        w.command_node(node_id, Command("drain"))
        w.keep_calm(node_id, w.now + w.drain_bound_ms())  # (after it: a calm node is told no drain)
        self.after_drain(w, node_id, w.now + after_ms, then)


KIND = Drains()
