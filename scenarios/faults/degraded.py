"""A degraded bucket: writes applied late and replies slow together, as on a bad day."""

from __future__ import annotations

from . import FaultKind


class Degraded(FaultKind):
    id = "degraded"
    title = "a degraded bucket: at least 30 % of writes applied late and 20 % of replies slow, together"
    rules = ("NL-3", "NL-11", "FN-2")
    options = {"degraded": False}

    def draw_main(self, ctx) -> None:
        o = ctx.o
        o["degraded"] = ctx.rng.random() < 0.3
        if o["degraded"]:
            o["p_late"] = max(o["p_late"], 0.3)
            o["p_slow_reply"] = max(o["p_slow_reply"], 0.2)


KIND = Degraded()
