"""Twins: a second process started under an existing node id, on a machine of its own (NL-6, NL-12).

Half the twins win (NL-9's margin): the original's own lease writes are lost through the twin's
start check, so the twin writes `live` over an unchanged object; back, the original's next write
fails its condition and its re-read meets the twin's instance (NL-9, NL-10).
"""

from __future__ import annotations

from . import FaultKind


class Twins(FaultKind):
    id = "twins"
    title = "a second process under an existing node id, for 5 to 60 s; half of them win the node lease"
    rules = ("NL-5", "NL-6", "NL-9", "NL-10", "NL-12")
    options = {"twins": [], "twin_silences": []}  # [[node, at, life_ms]]; indices of the twins that win
    switches = ("twins",)
    scheduled = ("twins",)
    at_field = {"twins": 1}
    node_field = {"twins": 0}
    durations = {"twins": 2}

    def draw_switch(self, ctx) -> None:
        ctx.on["twins"] = ctx.rng.random() < 0.5

    def draw_count(self, ctx) -> None:
        ctx.counts["twins"] = ctx.rng.randint(1, 2) if ctx.on["twins"] else 0
        minimum = ctx.force("twins")
        if minimum is not None:
            ctx.counts["twins"] = max(ctx.counts["twins"], minimum)

    def draw_entries(self, ctx) -> None:
        rng, S = ctx.rng, ctx.S
        nodes = ctx.nodes()
        ctx.o["twins"] = [[ctx.choice(nodes), rng.randint(0, ctx.o["fault_ms"]), rng.randint(S(5_000), S(60_000))]
                          for _ in range(0 if ctx.alone else ctx.counts["twins"])]

    def draw_silences(self, ctx) -> None:
        ctx.o["twin_silences"] = [k for k in range(len(ctx.o["twins"])) if ctx.rng.random() < 0.5]

    def schedule(self, w, base: int) -> None:
        o = w.options
        for k, twin in enumerate(o.get("twins", ())):
            if twin:
                node_id, at, life_ms = twin
                w.later(base + at, w.start_twin, node_id, f"t{k}", life_ms, k in o.get("twin_silences", ()))


KIND = Twins()
