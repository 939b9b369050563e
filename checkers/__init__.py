"""Checkers: pure functions from a history to a list of violations, one module per invariant."""

from . import (
    blip,
    bounds,
    chain,
    clean_stops,
    drain_ends,
    drained,
    fences,
    failover,
    fenced_stops,
    generations,
    lease,
    nothing_held,
    nothing_lost,
    one_owner,
    pending_release,
    start_guard,
)
from .facts import Facts, facts
from history import History, Violation

# invariant id -> check(history) -> list[Violation]
CHECKERS = {
    one_owner.INVARIANT: one_owner.check,
    generations.INVARIANT: generations.check,
    chain.INVARIANT: chain.check,
    nothing_held.INVARIANT: nothing_held.check,
    drained.INVARIANT: drained.check,
    pending_release.INVARIANT: pending_release.check,
    failover.INVARIANT: failover.check,
    nothing_lost.INVARIANT: nothing_lost.check,
    blip.INVARIANT: blip.check,
    fenced_stops.INVARIANT: fenced_stops.check,
    drain_ends.INVARIANT: drain_ends.check,
    lease.INVARIANT: lease.check,
    start_guard.INVARIANT: start_guard.check,
    clean_stops.INVARIANT: clean_stops.check,
    clean_stops.STOP_INVARIANT: clean_stops.check_ends,
    bounds.INVARIANT: bounds.check,
    fences.INVARIANT: fences.check,
}

_USES_FACTS = {one_owner.INVARIANT, generations.INVARIANT, nothing_held.INVARIANT, pending_release.INVARIANT,
               failover.INVARIANT, nothing_lost.INVARIANT, fenced_stops.INVARIANT, drain_ends.INVARIANT,
               lease.INVARIANT, start_guard.INVARIANT, clean_stops.INVARIANT, clean_stops.STOP_INVARIANT,
               fences.INVARIANT}


# judged in the quiet phase that ends a run: a run without one, or cut short, cannot judge them
LIVENESS = (nothing_held.INVARIANT, failover.INVARIANT)


def check_all(history: History, skip: frozenset = frozenset()) -> list[Violation]:
    """Every checker but those in `skip` over one history (the world's facts rebuilt once)."""
    fx = facts(history)
    out: list[Violation] = []
    for inv, check in CHECKERS.items():
        if inv not in skip:
            out.extend(check(history, fx) if inv in _USES_FACTS else check(history))
    return out


def measure_all(history: History) -> dict:
    """Figures the report aggregates across seeds (not pass/fail)."""
    from . import coverage

    fx = facts(history)
    return {"failover_ms": failover.measure(history, fx), "blip_judged": 1 if blip.judged(history) else 0,
            "coverage": coverage.reached(history, fx), "takeover_margin_ms": coverage.takeover_margins(history, fx)}


__all__ = ["CHECKERS", "LIVENESS", "check_all", "measure_all", "History", "Violation", "facts", "Facts"]
