"""Slow replies: answered up to an attempt timeout late, just under it, or well past it."""

from __future__ import annotations

from . import FaultKind


class SlowReply(FaultKind):
    id = "slow_reply"
    title = "a reply comes late: within the attempt timeout, just under it, or well past it (the timeout answers)"
    rules = ("NL-3", "NL-4", "FN-3", "BD-1")
    options = {"p_slow_reply": 0.0}
    settings = {"slow_tail": "within"}  # within | edge (half just under the timeout) | past (half well past it)
    rates = ("p_slow_reply",)

    def draw_switch(self, ctx) -> None:
        ctx.on[self.id] = ctx.rng.random() < 0.5

    def draw_rate(self, ctx) -> None:
        ctx.o["p_slow_reply"] = ctx.at_least(self.id, ctx.choice((0.05, 0.2, 0.5)) if ctx.on[self.id] else 0.0)
        ctx.o["slow_tail"] = ctx.choice(("within", "edge", "past"))

    @staticmethod
    def reply_late(world, proc, req, f, delay):
        p = f["p_slow_reply"]
        rng = world.rngs["slow_reply"]
        if p and (world.fault_target is None or world.targeted(req)) and rng.random() < p:
            a = world.params.attempt_timeout_ms
            tail = world.options.get("slow_tail", "within")
            if tail == "past" and rng.random() < 0.5:
                return "slow", rng.randint(a, 3 * a)  # well past the attempt timeout: the timeout answers
            if tail == "edge" and rng.random() < 0.5:
                return "slow", rng.randint(a - a // 10, a - 1)  # just under the attempt timeout
            return "slow", rng.randint(delay, delay + a)
        return None


KIND = SlowReply()
