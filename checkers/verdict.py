"""The one verdict: a history in, the violations that fail it and the known findings out.

Campaigns, replay, shrink and the explorer all judge a history here, so that "does this run
fail?" has one answer everywhere. A violation a known finding about the ADR explains
(checkers/findings.py) is counted as that finding, not as a failure; with `strict` it fails
the run too. And only while it is necessary: a driver that can replay the run passes `necessity`,
which replays it without the chain's cause (counterexamples/necessity.py); a violation still there,
unexplained, fails the run. Invariants a history cannot judge are left out, with why, as their declarations
say (checkers/registry.py): those judged in the quiet phase, in a run without one; those and
the ones judged on a whole run, in a run its environment cut short.

A margin (checkers/margins.py) whose value is negative because of a violation a known finding
explains (every violation of the margin's invariant in that history is one) is set apart with that
finding (`margins_explained`), not left to sit at the campaign's minimum for ever: the minimum then
shows how close the runs the ADR does not excuse came. With `strict` nothing is set apart.

Exceptions are not caught here: a checker that cannot read a history is a bug of the tool,
which the caller reports as such (never as a violation).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from history import History, Violation

from . import check_all, measure_all, registry
from .findings import classify_chains


@dataclass
class Verdict:
    violations: list[Violation]  # what fails the run (with `strict`, the findings' violations too)
    findings: dict[str, list[Violation]] = field(default_factory=dict)  # finding id -> violations it explains
    not_judged: dict[str, str] = field(default_factory=dict)  # invariant -> why it was not judged
    measures: dict = field(default_factory=dict)  # figures a report sums (measure_all), if asked for

    @property
    def failed(self) -> bool:
        return bool(self.violations)


def not_judged(history: History, env_failure: str | None = None, not_calm: str | None = None) -> dict[str, str]:
    """The invariants a history cannot judge, and why (`not_calm`: why its quiet phase was not calm,
    as a real bucket may fail to keep it; a history without a request ledger, a trace's, judges no check
    declared on it)."""
    out = _not_judged(history, env_failure, not_calm)
    if history.requests is None:
        for inv in registry.invariants():
            if inv.ledger and inv.id not in out:
                out[inv.id] = "no request ledger (the world that wrote this history kept none)"
    return out


def _not_judged(history: History, env_failure: str | None, not_calm: str | None) -> dict[str, str]:
    if env_failure is not None:
        return {inv.id: "the run was cut short by its environment" for inv in registry.invariants()
                if inv.quiet or inv.whole_run}
    if not_calm is not None:
        return {inv.id: not_calm for inv in registry.invariants() if inv.quiet}
    if not history.of_kind("quiet"):
        return {inv.id: "no quiet phase" for inv in registry.invariants() if inv.quiet}
    return {}


def judge(history: History, strict: bool = False, env_failure: str | None = None,
          measure: bool = False, not_calm: str | None = None, necessity=None) -> Verdict:
    """Every checker over `history` (but those it cannot judge), findings classified; with
    `measure`, the figures a report sums (those of an invariant not judged: nothing measured).
    `necessity` (counterexamples/necessity.py `check`, given by the drivers that can replay the run):
    each violation a finding excuses is replayed without its chain's cause, and one that still occurs
    unexplained there fails the run (issue 44)."""
    skip = not_judged(history, env_failure, not_calm)
    found = check_all(history, skip=frozenset(skip))
    unexplained, by_finding, chains = classify_chains(history, found)
    if necessity is not None and chains and not strict:
        for v, instead in necessity(history, chains):
            by_finding = {fid: [x for x in vs if x is not v] for fid, vs in by_finding.items()}
            by_finding = {fid: vs for fid, vs in by_finding.items() if vs}
            unexplained.append(instead)
    measures = measure_all(history, skip=frozenset(skip)) if measure else {}
    if measures and not strict:
        measures["margins_explained"] = _explained(measures["margins"], unexplained, by_finding)
    return Verdict(found if strict else unexplained, by_finding, skip, measures)


def _explained(margins: dict[str, int], unexplained: list[Violation],
               by_finding: dict[str, list[Violation]]) -> dict[str, tuple[int, str]]:
    """The negative margins whose invariant's violations a known finding explains, each taken out of
    `margins`: name -> (its value, the finding)."""
    out = {}
    for m in registry.margins():
        v = margins.get(m.name)
        if v is None or v >= 0 or any(x.invariant == m.invariant for x in unexplained):
            continue
        fid = next((fid for fid, vs in by_finding.items() if any(x.invariant == m.invariant for x in vs)), None)
        if fid is not None:
            out[m.name] = (margins.pop(m.name), fid)
    return out
