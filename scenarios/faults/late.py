"""Writes applied late: held back past their sender's timeout, then applied (NL-3, FN-3's race)."""

from __future__ import annotations

from model.io import DELETE, PUT

from . import FaultKind


class Late(FaultKind):
    id = "late"
    title = "a write is held back past its sender's timeout, then applied (the sender gave up on it)"
    rules = ("NL-3", "NL-8", "FN-3", "OR-5", "OR-7")
    options = {"p_late": 0.0}
    settings = {"late_ms_max": 1}  # how far past the timeout, at most
    rates = ("p_late",)

    def draw_switch(self, ctx) -> None:
        ctx.on[self.id] = ctx.rng.random() < 0.5

    def draw_rate(self, ctx) -> None:
        ctx.o["p_late"] = ctx.at_least(self.id, ctx.choice((0.02, 0.1, 0.3)) if ctx.on[self.id] else 0.0)
        S = ctx.S
        ctx.o["late_ms_max"] = ctx.choice((S(1_000), S(5_000), S(15_000)))

    @staticmethod
    def send_late(world, proc, req, f, delay):
        p = f["p_late"]
        if (p and (world.fault_target is None or world.targeted(req)) and (req.op == PUT or req.op == DELETE)
                and world.rngs["late"].random() < p):
            return "late", world.rngs["late"].randint(1, world.options["late_ms_max"])
        return None


KIND = Late()
