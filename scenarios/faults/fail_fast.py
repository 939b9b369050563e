"""Requests that fail fast: the connection is refused, answered within a few ms, never applied."""

from __future__ import annotations

from . import FaultKind

FAIL_FAST_MS_MAX = 20  # a refused connection is answered within this


class FailFast(FaultKind):
    id = "fail_fast"
    title = "a request fails fast (connection refused): answered within 20 ms, never applied"
    rules = ("NL-3", "OR-7", "UP-2")
    options = {"p_fail_fast": 0.0}
    rates = ("p_fail_fast",)

    def draw_switch(self, ctx) -> None:
        ctx.on[self.id] = ctx.rng.random() < 0.5

    def draw_rate(self, ctx) -> None:
        ctx.o["p_fail_fast"] = ctx.at_least(self.id, ctx.choice((0.01, 0.05, 0.2)) if ctx.on[self.id] else 0.0)

    @staticmethod
    def send_early(world, proc, req, f):
        p = f["p_fail_fast"]
        if p and world.rngs["fail_fast"].random() < p:
            return "fail_fast", world.rngs["fail_fast"].randint(1, FAIL_FAST_MS_MAX)
        return None


KIND = FailFast()
