"""Requests lost on the way: never applied, never answered (the sender's timeout answers)."""

from __future__ import annotations

from . import FaultKind


class RequestLost(FaultKind):
    id = "request_lost"
    title = "a request is lost on the way: never applied, never answered (its timeout answers)"
    rules = ("NL-3", "OR-7", "OR-8", "CS-2")
    options = {"p_request_lost": 0.0}
    rates = ("p_request_lost",)

    def draw_switch(self, ctx) -> None:
        ctx.on[self.id] = ctx.rng.random() < 0.5

    def draw_rate(self, ctx) -> None:
        ctx.o["p_request_lost"] = ctx.at_least(self.id, ctx.choice((0.01, 0.05, 0.15)) if ctx.on[self.id] else 0.0)

    @staticmethod
    def send_early(world, proc, req, f):
        p = f["p_request_lost"]
        if p and (world.fault_target is None or world.targeted(req)) and world.rngs["request_lost"].random() < p:
            return "lost", 0
        return None


KIND = RequestLost()
