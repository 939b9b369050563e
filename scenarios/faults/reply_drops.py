"""Stretches of dropped write replies: for a while, writes land and most of their replies are lost
(reply_lost.py draws each reply's fate, at REPLIES_DROPPING during a stretch)."""

from __future__ import annotations

from . import Stretch


class ReplyDrops(Stretch):
    id = "reply_drops"
    title = "a stretch of 2 to 10 s in which writes land and 90 % of their replies are lost"
    rules = ("NL-9", "OR-5", "OR-7", "CS-2")
    options = {"reply_drops": []}  # [[at, length_ms]]
    scheduled = ("reply_drops",)
    at_field = {"reply_drops": 0}
    state = {"replies_dropping": bool}
    flag, what, target, detail = "replies_dropping", "reply_drops", "writes", "write replies lost"

    def draw_main(self, ctx) -> None:
        rng, S = ctx.rng, ctx.S
        ctx.o["reply_drops"] = ([[rng.randint(0, ctx.o["fault_ms"]), rng.randint(S(2_000), S(10_000))]]
                                if rng.random() < 0.2 and not ctx.alone else [])


KIND = ReplyDrops()
