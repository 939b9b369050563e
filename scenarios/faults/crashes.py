"""Crashes: a node's process killed without a write; its supervisor starts it again (new instance)."""

from __future__ import annotations

from . import FaultKind


class Crashes(FaultKind):
    id = "crashes"
    title = "a node's process is killed (no write on the way out); its supervisor restarts it under the same id"
    rules = ("NL-5", "NL-7", "FN-3", "FN-5", "OR-3")
    options = {"crashes": []}  # [[node, at]]
    scheduled = ("crashes",)
    at_field = {"crashes": 1}
    node_field = {"crashes": 0}

    def draw_switch(self, ctx) -> None:
        ctx.on["crashes"] = ctx.rng.random() < 0.5

    def draw_count(self, ctx) -> None:
        ctx.counts["crashes"] = ctx.rng.randint(1, 4) if ctx.on["crashes"] else 0

    def draw_entries(self, ctx) -> None:
        nodes = ctx.nodes()
        ctx.o["crashes"] = [[ctx.choice(nodes), ctx.rng.randint(0, ctx.o["fault_ms"])]
                            for _ in range(0 if ctx.alone else ctx.counts["crashes"])]

    def schedule(self, w, base: int) -> None:
        for node_id, at in filter(None, w.options.get("crashes", ())):
            w.later(base + at, w.crash_node, node_id)


KIND = Crashes()
