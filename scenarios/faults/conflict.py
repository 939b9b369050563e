"""Bucket conflicts: a conditional write racing another answered 409, not applied (AWS does this)."""

from __future__ import annotations

from . import FaultKind


class Conflict(FaultKind):
    id = "conflict"
    title = "the bucket answers a conditional write racing another 409 ConditionalRequestConflict (not applied)"
    rules = ("OR-7", "CS-2", "NL-9")
    options = {"p_conflict": 0.0}
    # a real bucket answers racing conditional writes 409 whatever the phase: the quiet phase keeps it
    keeps_in_quiet = True

    def draw_rate(self, ctx) -> None:
        ctx.o["p_conflict"] = ctx.choice((0.0, 0.0, 0.3))  # the simulated bucket draws each race (bucket.py)


KIND = Conflict()
