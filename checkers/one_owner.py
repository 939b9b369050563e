"""INV-1 one owner: for each actor, the true-time validity windows of distinct holds never overlap."""

from __future__ import annotations

from .history import History, Violation
from .holds import hold_windows

INVARIANT = "INV-1"


def check(history: History, holds=None) -> list[Violation]:
    holds = hold_windows(history) if holds is None else holds
    by_actor: dict[str, list] = {}
    for h in holds:
        if h.end_ms > h.start_ms:
            by_actor.setdefault(h.actor, []).append(h)
    out = []
    for actor in sorted(by_actor):
        best = None
        for h in sorted(by_actor[actor], key=lambda h: (h.start_ms, h.opened)):
            if best is not None and h.start_ms < best.end_ms:
                overlap = min(best.end_ms, h.end_ms) - h.start_ms
                evs = tuple(e for e in (best.opened, best.closed, h.opened, h.closed) if e is not None)
                out.append(Violation(
                    INVARIANT,
                    f"actor {actor} had two owners for {overlap / 1000:.3f} s: "
                    f"{best.describe(history)}; and {h.describe(history)}",
                    evs,
                ))
                break
            if best is None or h.end_ms > best.end_ms:
                best = h
    return out
