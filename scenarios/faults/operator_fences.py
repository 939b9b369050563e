"""The operator's `cluster fence` of a node (FN-7), at a drawn instant, whatever the node is doing."""

from __future__ import annotations

from model.io import Command

from . import FaultKind


class OperatorFences(FaultKind):
    id = "operator_fences"
    title = "the operator runs `cluster fence` of a node that may still be running (FN-7)"
    rules = ("FN-7", "INV-10", "NL-10")
    options = {"operator_fences": []}  # [[node, at]]
    scheduled = ("operator_fences",)
    at_field = {"operator_fences": 1}
    node_field = {"operator_fences": 0}

    def draw_main(self, ctx) -> None:
        rng = ctx.rng
        n = rng.randint(0, 2) if rng.random() < 0.3 else 0
        if ctx.alone:
            n = 0
        nodes = ctx.nodes()
        ctx.o["operator_fences"] = [[ctx.choice(nodes), rng.randint(0, ctx.o["fault_ms"])] for _ in range(n)]

    def schedule(self, w, base: int) -> None:
        for node_id, at in filter(None, w.options.get("operator_fences", ())):
            w.later(base + at, w.operator_command, Command("cluster_fence", (node_id,)))


KIND = OperatorFences()
