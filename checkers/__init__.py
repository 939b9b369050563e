"""Checkers: pure functions from a history to a list of violations, one module per invariant."""

from . import chain, lease
from .history import History, Violation

# invariant id -> check(history) -> list[Violation]
CHECKERS = {
    lease.INVARIANT: lease.check,
    chain.INVARIANT: chain.check,
}


def check_all(history: History) -> list[Violation]:
    out: list[Violation] = []
    for check in CHECKERS.values():
        out.extend(check(history))
    return out


__all__ = ["CHECKERS", "check_all", "History", "Violation"]
