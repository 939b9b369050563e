"""A node retired for good as the quiet phase begins: stopped cleanly, then revoked by the operator
(FN-7), which frees its records even where its stop wrote nothing or nodes/<id> was deleted."""

from __future__ import annotations

from model.io import Command

from . import FaultKind


class QuietStop(FaultKind):
    id = "quiet_stop"
    title = "a node stops cleanly as the quiet phase begins and stays down; the operator fences it (FN-7)"
    rules = ("CS-1", "FN-7", "FN-8", "INV-4")
    options = {"quiet_stop": False}
    flags = {"quiet_stop": False}

    def draw_main(self, ctx) -> None:
        ctx.o["quiet_stop"] = ctx.rng.random() < 0.2

    def quiet_acts(self, w) -> None:
        """At the quiet phase's start, once every node is up: one that runs now is retired (a dead one
        would be restarted meanwhile, and its revocation would fence a new process, not the one
        retired); never the last node standing: somebody must take its actors over."""
        if not w.options.get("quiet_stop"):
            return
        running = [s for s in w.slots[: len(w.node_ids)] if not s.down_for_good and s.proc is not None and s.proc.alive]
        if len(running) < 2:
            return
        ids = [s.node_id for s in running]
        node_id = w.choose("quiet_stop", "", w.rngs["quiet_stop"].one_of, ids)
        slot = running[ids.index(node_id) if node_id in ids else 0]
        slot.wanted = False  # retired: no supervisor brings it back
        w.stop_node(slot.node_id, None, retire=True)
        w.later(4 * w.tg // 3, w.operator_command, Command("cluster_fence", (slot.node_id,)))
        if w.options.get("forget_gone"):
            w.later(4 * w.tg // 3 + w.forget_after_ms(), w.operator_command, Command("cluster_forget", (slot.node_id,)))


KIND = QuietStop()
