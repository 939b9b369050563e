"""An owner dies early in the quiet phase: its actors' failover is measured (INV-7)."""

from __future__ import annotations

from . import FaultKind


class QuietCrash(FaultKind):
    id = "quiet_crash"
    title = "a node's process crashes a third of a liveness span into the quiet phase: failover is measured"
    rules = ("INV-7", "FN-3", "FN-5", "T-5")
    options = {"quiet_crash": False}
    flags = {"quiet_crash": False}

    def draw_main(self, ctx) -> None:
        ctx.o["quiet_crash"] = ctx.rng.random() < 0.6

    def schedule(self, w, base: int) -> None:
        if w.options.get("quiet_crash") and w.quiet_at_ms is not None:
            w.later(w.quiet_at_ms + w.liveness_ms // 3, w.fault_step, self.id, "strike")

    def strike(self, w) -> None:
        node_id = w.choose("quiet_crash", "", w.rngs["quiet_crash"].one_of, w.node_ids) or w.node_ids[0]
        proc = w.live_proc(node_id)
        if proc is not None:
            w.crash(proc)


KIND = QuietCrash()
