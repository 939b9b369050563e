"""Stretches of dropped write replies: for a while, writes land and most of their replies are lost
(reply_lost.py draws each reply's fate, at REPLIES_DROPPING during a stretch)."""

from __future__ import annotations

from . import FaultKind

WORLD = -1


class ReplyDrops(FaultKind):
    id = "reply_drops"
    title = "a stretch of 2 to 10 s in which writes land and 90 % of their replies are lost"
    rules = ("NL-9", "OR-5", "OR-7", "CS-2")
    options = {"reply_drops": []}  # [[at, length_ms]]
    scheduled = ("reply_drops",)
    state = {"replies_dropping": bool}

    def draw_main(self, ctx) -> None:
        rng, S = ctx.rng, ctx.S
        ctx.o["reply_drops"] = ([[rng.randint(0, ctx.o["fault_ms"]), rng.randint(S(2_000), S(10_000))]]
                                if rng.random() < 0.2 and not ctx.alone else [])

    def schedule(self, w, base: int) -> None:
        for at, length_ms in filter(None, w.options.get("reply_drops", ())):
            w.later(base + at, w.fault_step, self.id, "stretch", True, length_ms)
            w.later(base + at + length_ms, w.fault_step, self.id, "stretch", False)

    def stretch(self, w, on: bool, length_ms: int | None = None) -> None:
        if on and not w.in_quiet:
            w.record(WORLD, "fault", ("reply_drops", "writes", length_ms, "write replies lost"))
        w.replies_dropping = on and not w.in_quiet

    def quiet(self, w) -> None:
        w.replies_dropping = False


KIND = ReplyDrops()
