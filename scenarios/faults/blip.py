"""A global blip (INV-9): every machine cut off the bucket at once, restored for all at once.

In a fifth of the swarm's seeds (and always in the `blip` scenario) the blip comes alone: no other
fault around it, so that INV-9's proviso (every request around it applied and answered within its
attempt timeout) can hold and the property is judged.
"""

from __future__ import annotations

from . import FaultKind

# what a lone blip turns off, as it is drawn (the kinds drawn after it draw nothing while it is alone)
NOT_AROUND_A_BLIP = ("fail_fast", "reply_lost", "late", "request_lost", "slow_reply", "degraded", "stops", "drains",
                     "deletes", "quiet_crash", "quiet_stop")


class Blip(FaultKind):
    id = "blip"
    title = "every machine cut off the bucket at once, for up to six ttl, then back together (INV-9)"
    rules = ("NL-11", "FN-2", "INV-9")
    options = {"blip": [], "blip_alone": False}  # [at, length_ms, mode]; alone: no other fault around it
    flags = {"blip": []}

    def draw_main(self, ctx) -> None:
        rng, S, p, tg, o = ctx.rng, ctx.S, ctx.p, ctx.tg, ctx.o
        fault = o["fault_ms"]
        o["blip_alone"] = ctx.force(self.id) == "alone" or rng.random() < 0.2
        # half the blips outlast some node's lease (ttl or more): who lapses and who does not is
        # where FN-2's restarted watch matters (the nodes' cadences are spread, see `starts`)
        length = ctx.choice((rng.randint(S(200), S(3_000)), rng.randint(S(3_000), p.ttl_ms),
                           rng.randint(p.ttl_ms, 6 * p.ttl_ms), rng.randint(p.ttl_ms, 2 * p.ttl_ms)))
        o["blip"] = [rng.randint(tg + S(5_000), max(tg + S(5_000), fault - S(5_000))), length,
                     ctx.choice(("blackhole", "blackhole", "refuse"))] if (o["blip_alone"] or rng.random() < 0.2) else []

    def draw_alone(self, ctx) -> None:
        if ctx.alone:
            ctx.turn_off(*NOT_AROUND_A_BLIP)

    def schedule(self, w, base: int) -> None:
        if w.options.get("blip"):
            at, length_ms, mode = w.options["blip"]
            w.later(base + at, w.outage, "*", length_ms, mode)


KIND = Blip()
