"""Checkers: pure functions from a history to a list of violations, one module per invariant."""

from . import blip, chain, drained, failover, generations, lease, nothing_held, nothing_lost, one_owner, pending_release
from .history import History, Violation
from .holds import hold_windows

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
    lease.INVARIANT: lease.check,
}

_USES_HOLDS = {one_owner.INVARIANT, generations.INVARIANT, nothing_held.INVARIANT, pending_release.INVARIANT,
               failover.INVARIANT}


# judged in the quiet phase that ends a run: a run without one, or cut short, cannot judge them
LIVENESS = (nothing_held.INVARIANT, failover.INVARIANT)


def check_all(history: History, skip: frozenset = frozenset()) -> list[Violation]:
    """Every checker but those in `skip` over one history (the hold windows computed once)."""
    holds = hold_windows(history)
    out: list[Violation] = []
    for inv, check in CHECKERS.items():
        if inv not in skip:
            out.extend(check(history, holds) if inv in _USES_HOLDS else check(history))
    return out


def measure_all(history: History) -> dict:
    """Figures the report aggregates across seeds (not pass/fail)."""
    return {"failover_ms": failover.measure(history), "blip_judged": 1 if blip.judged(history) else 0}


__all__ = ["CHECKERS", "LIVENESS", "check_all", "measure_all", "History", "Violation", "hold_windows"]
