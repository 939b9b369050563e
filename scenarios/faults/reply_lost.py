"""Replies lost: the bucket applied the request, its answer never arrives (the timeout answers).

Also where the stretches of dropped write replies (reply_drops.py) strike: during one, a write's
reply is lost at REPLIES_DROPPING instead of the seed's rate, in the same one draw.
"""

from __future__ import annotations

from model.io import GET

from . import FaultKind

REPLIES_DROPPING = 0.9  # the share of write replies lost during a stretch of dropping


class ReplyLost(FaultKind):
    id = "reply_lost"
    title = "a reply is lost after the bucket applied the request (its outcome unknown to the sender)"
    rules = ("NL-7", "NL-9", "OR-5", "OR-7", "CS-2")
    options = {"p_reply_lost": 0.0}
    settings = {"read_replies_lost": False}  # lost replies hit reads too
    rates = ("p_reply_lost",)

    def active(self, o: dict) -> bool:
        return bool(o.get("p_reply_lost") or o.get("reply_drops"))

    def draw_switch(self, ctx) -> None:
        ctx.on[self.id] = ctx.rng.random() < 0.5

    def draw_rate(self, ctx) -> None:
        ctx.o["p_reply_lost"] = ctx.at_least(self.id, ctx.choice((0.02, 0.1, 0.3)) if ctx.on[self.id] else 0.0)

    def draw_reads(self, ctx) -> None:
        ctx.o["read_replies_lost"] = ctx.rng.random() < 0.3

    @staticmethod
    def reply_early(world, proc, req, f):
        lost = f["p_reply_lost"]
        if world.replies_dropping and req.op != GET and f is world.fault:
            lost = REPLIES_DROPPING  # a stretch in which writes land and their replies are lost
        if (lost and (world.fault_target is None or world.targeted(req))
                and (req.op != GET or world.options.get("read_replies_lost"))
                and world.rngs["reply_lost"].random() < lost):
            return "lost", 0
        return None


KIND = ReplyLost()
