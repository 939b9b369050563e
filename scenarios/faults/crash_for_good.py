"""A machine gone for good: crashed, never restarted, not even in the quiet phase (peers must fence it)."""

from __future__ import annotations

from . import FaultKind

WORLD = -1


class CrashForGood(FaultKind):
    id = "crash_for_good"
    title = "a machine dies and never comes back: peers must fence it (FN-3) to free its records"
    rules = ("FN-2", "FN-3", "FN-5", "FN-8", "INV-4")
    options = {"crash_for_good": []}  # [[node, at]]
    scheduled = ("crash_for_good",)
    at_field = {"crash_for_good": 1}
    node_field = {"crash_for_good": 0}

    def draw_main(self, ctx) -> None:
        rng, tg, o = ctx.rng, ctx.tg, ctx.o
        fault = o["fault_ms"]
        o["crash_for_good"] = ([[ctx.choice(ctx.nodes()), rng.randint(tg, max(tg, fault - tg))]]
                               if rng.random() < 0.2 and not ctx.alone else [])

    def schedule(self, w, base: int) -> None:
        for node_id, at in filter(None, w.options.get("crash_for_good", ())):
            w.later(base + at, w.fault_step, self.id, "strike", node_id)

    def strike(self, w, node_id) -> None:
        """The machine dies and never comes back: no supervisor restart, not even in the quiet phase."""
        if w.disturbs_a_race(node_id):
            return
        slot = w.slots[w.node_ids.index(node_id)]
        slot.down_for_good = True
        slot.wanted = False
        w.fault_event(WORLD, "gone_for_good", slot.machine, None, "the machine never comes back")
        if slot.proc is not None and slot.proc.alive:
            w.crash(slot.proc)


KIND = CrashForGood()
