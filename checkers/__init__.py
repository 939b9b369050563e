"""Checkers: pure functions from a history to a list of violations, one module per invariant.

Every module of this package is imported here, in name order; a checker module declares its
invariants and coverage points as it is imported (checkers/registry.py), and modules that are
not checkers (facts, records, findings, verdict, ...) declare nothing. What callers read is
derived from those declarations (INVARIANTS, CHECKERS, LIVENESS, MARGINS): no list of invariants
is kept anywhere else.
"""

import importlib
import pkgutil

from history import History, Violation

from . import registry
from .facts import Facts, facts
from .registry import Context

# (check_all and measure_all come before the modules are imported: verdict.py, one of them, imports them)


def check_all(history: History, skip: frozenset = frozenset()) -> list[Violation]:
    """Every checker but those in `skip` over one history (the world's facts rebuilt once, shared)."""
    out: list[Violation] = []
    for inv in INVARIANTS:
        if inv.id not in skip:
            out.extend(inv.check(history))
    return out


def measure_all(history: History, skip: frozenset = frozenset()) -> dict:
    """Figures the report aggregates across seeds (not pass/fail): each invariant's measure (its
    value with nothing measured for those in `skip`), the coverage points reached, the deadline
    races' takeovers, and every margin's value (checkers/margins.py; none for an invariant in
    `skip`). The points and the margins read one Context, their shared scans computed once."""
    fx = facts(history)
    out = {}
    for inv in INVARIANTS:
        m = inv.measure
        if m is not None:
            out[m.figure] = m.unjudged() if inv.id in skip else m.of(history)
    c = Context(history, fx)
    out["coverage"] = coverage.reached(history, fx, c)
    out["takeover_margin_ms"] = margins.takeover_margins(history, fx)
    out["margins"] = margins.measured(c, skip)
    out["ledger"] = ledger.summary(history)  # the request ledger (checkers/ledger.py), summed by reports
    return out


for _module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    importlib.import_module(f"{__name__}.{_module}")

from . import coverage, ledger, margins  # noqa: E402  (imported by the loop above)

INVARIANTS: tuple[registry.Invariant, ...] = registry.invariants()  # INV-n by number, then by family and number
for _m in registry.margins():
    if not any(inv.id == _m.invariant for inv in INVARIANTS):
        raise ValueError(f"margin {_m.name!r} ({_m.module}) names invariant {_m.invariant!r}, which no checker "
                         f"declares: a negative margin must be one that invariant flags")
# every margin, in report order: name -> doc (checkers/margins.py)
MARGINS = margins.MARGINS
# invariant id -> check(history) -> list[Violation], in INVARIANTS order
CHECKERS = {inv.id: inv.check for inv in INVARIANTS}
# judged in the quiet phase that ends a run: a run without one, or cut short, cannot judge them
LIVENESS = tuple(inv.id for inv in INVARIANTS if inv.quiet)

__all__ = ["INVARIANTS", "CHECKERS", "LIVENESS", "MARGINS", "check_all", "measure_all", "History", "Violation", "facts",
           "Facts"]
