"""INV-2 one generation per hold: no two holds of one actor share a generation, and
successive holds' generations strictly increase."""

from __future__ import annotations

from .history import History, Violation
from .holds import hold_windows

INVARIANT = "INV-2"


def check(history: History, holds=None) -> list[Violation]:
    holds = hold_windows(history) if holds is None else holds
    last: dict[str, object] = {}
    out = []
    flagged: set[str] = set()
    for h in holds:  # in the order they began
        prev = last.get(h.actor)
        if prev is not None and h.generation <= prev.generation and h.actor not in flagged:
            what = "the same generation as" if h.generation == prev.generation else "a lower generation than"
            out.append(Violation(
                INVARIANT,
                f"actor {h.actor}: {h.describe(history)} has {what} the earlier {prev.describe(history)}",
                (prev.opened, h.opened),
            ))
            flagged.add(h.actor)
        if prev is None or h.generation > prev.generation:
            last[h.actor] = h
    return out
