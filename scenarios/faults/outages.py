"""Outages: one machine, or every one ("*"), cut off the bucket for a while.

A cut's mode says what the bucket does meanwhile: `blackhole` (requests and replies vanish: the
timeouts answer), `refuse` (every request fails fast), `lease` (only the machine's own node-lease
writes vanish: it reaches records and data, NL-11's lapse with holds in hand). The cut itself is
the world's mechanism (World.cut_off), which other kinds use too (the blip, deadline races, twins
and stops that silence a node's lease writes).
"""

from __future__ import annotations

from . import FaultKind


class Outages(FaultKind):
    id = "outages"
    title = "a machine (or every one) cut off the bucket: requests vanish, or are refused, for a while"
    rules = ("NL-4", "NL-11", "FN-2", "OR-6")
    options = {"outages": []}  # [[who (a node id, or "*"), at, length_ms, mode]]
    scheduled = ("outages",)
    at_field = {"outages": 1}
    node_field = {"outages": 0}
    durations = {"outages": 2}

    def draw_switch(self, ctx) -> None:
        ctx.on["outages"] = ctx.rng.random() < 0.5

    def draw_count(self, ctx) -> None:
        ctx.counts["outages"] = ctx.rng.randint(1, 4) if ctx.on["outages"] else 0
        minimum = ctx.force("outages")
        if minimum is not None:
            ctx.counts["outages"] = max(ctx.counts["outages"], minimum)

    def draw_entries(self, ctx) -> None:
        rng, S, tg = ctx.rng, ctx.S, ctx.tg
        nodes = ctx.nodes()
        out = []
        for _ in range(0 if ctx.alone else ctx.counts["outages"]):
            who = ctx.choice(["*"] + nodes)
            length = ctx.choice((rng.randint(S(300), S(3_000)), rng.randint(S(3_000), tg), rng.randint(tg, 3 * tg)))
            mode = ctx.choice(("blackhole", "refuse"))
            out.append([who, rng.randint(0, ctx.o["fault_ms"]), length, mode])
        ctx.o["outages"] = out

    def schedule(self, w, base: int) -> None:
        for who, at, length_ms, mode in filter(None, w.options.get("outages", ())):
            w.later(base + at, w.outage, who, length_ms, mode)

    def drop_node(self, o: dict, node: str) -> None:
        o["outages"] = [None if x is not None and x[0] in (node, "m" + node[1:]) else x for x in o.get("outages") or ()]


KIND = Outages()
