"""Checkers: pure functions from a history to a list of violations, one module per invariant."""

from . import chain, generations, lease, one_owner, pending_release
from .history import History, Violation
from .holds import hold_windows

# invariant id -> check(history) -> list[Violation]
CHECKERS = {
    one_owner.INVARIANT: one_owner.check,
    generations.INVARIANT: generations.check,
    chain.INVARIANT: chain.check,
    pending_release.INVARIANT: pending_release.check,
    lease.INVARIANT: lease.check,
}


def check_all(history: History) -> list[Violation]:
    out: list[Violation] = []
    holds = hold_windows(history)
    out.extend(one_owner.check(history, holds))
    out.extend(generations.check(history, holds))
    out.extend(pending_release.check(history, holds))
    out.extend(chain.check(history))
    out.extend(lease.check(history))
    return out


__all__ = ["CHECKERS", "check_all", "History", "Violation", "hold_windows"]
