"""The registry of what the checkers judge and what a campaign must reach.

Each checker module declares its invariant(s) with `@invariant(...)` on the check, the
coverage points that serve them with `@point(...)` on a predicate (Stateright's *always* and
*sometimes* properties), and the margins of its time bounds with `@margin(...)` on a measure, at
module level, so that a module is the one place where they are written down. checkers/__init__.py
imports every module of the package and derives from what registered here everything callers read
(INVARIANTS, CHECKERS, LIVENESS; coverage.POINTS; margins.MARGINS): adding an invariant is adding
a module (with its points and margins) and its test, and nothing else lists it.

A point's predicate and a margin's measure read one `Context` per history: the history, its
facts, its timing, and shared scans (`Context.scan`) that several of them read and that are
computed once, so that the cost per history does not grow with the number of points.

A margin is the slack a history left to one timing rule: how far, in ms, the closest instance of
the rule's situation stayed from its bound (the per-seed minimum; negative: the bound was broken,
and the invariant it names flags that history), or None when the history has no such situation.
A margin is measured by the rule's own test, shared with the checker that judges it, so the two
cannot disagree about where the bound lies.

Misuse fails at definition time, naming what is wrong: an id or a name registered twice, a kind,
topic or unit not in the vocabulary below, a rule id not of the spec's form (and, once every
module is imported, a margin naming an invariant nobody declared: checkers/__init__.py).

Must not know: any invariant, point or checker module by name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from history import History, Violation

from .facts import Facts, keyed

INVARIANT_KINDS = ("safety", "liveness")
_ID = re.compile(r"[A-Z]+-[0-9]+$")  # INV-7, LEASE-1, NL-11 (docs/protocol.md's ids, and checkers' own families)

_MARGIN_NAME = re.compile(r"[a-z][a-z0-9_]*$")  # a margin's name: a report's key, a JUnit property's
MARGIN_UNITS = ("ms",)

# the order in which reports list the coverage points: by topic, then by module, then as declared
TOPICS = ("configuration", "timing", "blip", "fencing", "twins", "ownership", "bounds", "clean stop and drain",
          "failover", "upgrade")


@dataclass(frozen=True)
class Measure:
    """A figure a report sums across seeds (not pass or fail), measured on the histories that judge
    its invariant."""

    figure: str  # its key in measure_all's figures ("failover_ms")
    of: Callable[[History], Any]
    # makes its value for a history that does not judge the invariant, nothing measured (`list`: [])
    unjudged: Callable[[], Any]


@dataclass(frozen=True)
class Invariant:
    id: str  # "INV-7"; the id its violations carry
    title: str
    kind: str  # "safety" (nothing bad ever happens) or "liveness" (something good happens within a bound)
    rules: tuple[str, ...]  # the rules it judges (docs/protocol.md)
    check: Callable[[History], list[Violation]]
    quiet: bool = False  # judged in the quiet phase that ends a run: not judged without one
    whole_run: bool = False  # judged only on a run that ran to its end (not one its environment cut short)
    measure: Measure | None = None
    module: str = ""
    ledger: bool = False  # judged on the request ledger (History.requests): not judged on a history without one

    @property
    def order(self) -> tuple:
        """INV-1..INV-n by number first, then the others by family, then number."""
        return id_order(self.id)


def id_order(id: str) -> tuple:
    """An invariant id's place in reports: INV-1..INV-n by number first, then the others by family, then
    number."""
    family, _, n = id.rpartition("-")
    return (0, "", int(n)) if family == "INV" else (1, family, int(n))


@dataclass(frozen=True)
class Point:
    name: str  # what a report prints
    doc: str
    topic: str  # one of TOPICS
    reached: Callable[["Context"], bool]
    module: str = ""
    rank: int = 0  # declaration order within its module
    # why the worlds cannot reach it yet ("" for a point a long swarm campaign must reach): counted and shown,
    # never required, until the world change it names lands
    awaits: str = ""

    @property
    def order(self) -> tuple:
        return (TOPICS.index(self.topic), self.module, self.rank)


@dataclass(frozen=True)
class Margin:
    name: str  # the report's key ("takeover")
    doc: str  # what is measured, and from which bound
    invariant: str  # the check that flags a history whose value is negative (its id)
    rules: tuple[str, ...]  # the rules whose bound it measures (docs/protocol.md)
    of: Callable[["Context"], int | None]  # the history's minimum slack, or None: no such situation
    unit: str = "ms"
    module: str = ""
    rank: int = 0  # declaration order within its module

    @property
    def order(self) -> tuple:
        return (id_order(self.invariant), self.module, self.rank)


class Context:
    """One history as the coverage points read it. `scan(f)` is `f(self)`, computed once per history;
    `faults(what)` and `writes(prefix)` are the indices of the faults of a kind and of the applied
    writes under a key prefix, in order (each one pass over the history for every kind or prefix; the
    writes are facts.keyed's index, which the checkers share)."""

    __slots__ = ("history", "facts", "params", "_scans", "_faults")

    def __init__(self, history: History, fx: Facts) -> None:
        self.history = history
        self.facts = fx
        self.params = fx.params
        self._scans: dict = {}
        self._faults: dict[str, list[int]] | None = None

    def scan(self, f: Callable[["Context"], Any]) -> Any:
        try:
            return self._scans[f]
        except KeyError:
            value = self._scans[f] = f(self)
            return value

    def faults(self, what: str) -> list[int]:
        """`what`: a fault kind ("request_lost", "late", "gone_for_good", ...: the `fault` event's `what`)."""
        by_what = self._faults
        if by_what is None:
            by_what = self._faults = {}
            events = self.history.events
            for i in self.history.of_kind("fault"):
                by_what.setdefault(events[i].fields.what, []).append(i)
        return by_what.get(what, [])

    def writes(self, prefix: str) -> list[int]:
        """`prefix`: a key's first part with its slash ("nodes/", "owners/", "leases/", "wal/")."""
        return keyed(self.history, prefix, "apply")


_invariants: dict[str, Invariant] = {}
_ordered: tuple[Invariant, ...] | None = None  # _invariants in report order, sorted once
_points: dict[str, Point] = {}
_ranks: dict[str, int] = {}  # module -> how many points it declared so far
_margins: dict[str, Margin] = {}
_margin_ranks: dict[str, int] = {}  # module -> how many margins it declared so far

# name -> doc of every point registered, in report order; kept in that order as points register
# (coverage.POINTS is this dict; complete once checkers/__init__.py imported every module)
POINT_DOCS: dict[str, str] = {}
# the same for the margins (margins.MARGINS is this dict)
MARGIN_DOCS: dict[str, str] = {}


def _rule_ids(what: str, rules: tuple[str, ...]) -> tuple[str, ...]:
    bad = [r for r in rules if not _ID.match(r)]
    if not rules or bad:
        raise ValueError(f"{what}: rules must be a non-empty tuple of rule ids like 'NL-4' "
                         f"(docs/protocol.md), got {rules!r}")
    return tuple(rules)


def invariant(id: str, title: str, *, kind: str, rules: tuple[str, ...], quiet: bool = False,
              whole_run: bool = False, measure: Measure | None = None, ledger: bool = False):
    """Declare the invariant that the decorated `check(history) -> violations` judges."""
    if not _ID.match(id):
        raise ValueError(f"invariant id {id!r} is not of the form 'INV-7' or 'LEASE-1'")
    if kind not in INVARIANT_KINDS:
        raise ValueError(f"{id}: kind {kind!r} is not one of {', '.join(INVARIANT_KINDS)}")
    rules = _rule_ids(id, rules)

    def register(check: Callable[[History], list[Violation]]):
        module = check.__module__
        old = _invariants.get(id)
        if old is not None:
            raise ValueError(f"{id} is declared twice: in {old.module} and in {module}")
        _invariants[id] = Invariant(id, title, kind, rules, check, quiet, whole_run, measure, module, ledger)
        return check

    return register


def _enter(what: str, name: str, module: str, table: dict, ranks: dict, docs: dict, make: Callable) -> None:
    """Enter `make(module, rank)` in `table` under `name` (its rank: its place among its module's entries),
    refusing a name declared twice, and keep `docs` (name -> doc) in report order."""
    old = table.get(name)
    if old is not None:
        raise ValueError(f"{what} {name!r} is declared twice: in {old.module} and in {module}")
    rank = ranks[module] = ranks.get(module, 0) + 1
    table[name] = make(module, rank)
    docs.clear()
    docs.update((x.name, x.doc) for x in sorted(table.values(), key=lambda x: x.order))


def point(name: str, doc: str, *, topic: str, awaits: str = ""):
    """Declare the coverage point that the decorated predicate `reached(context) -> bool` finds. `awaits`: why
    no world reaches it yet (the change that will make it reachable): it is counted and shown, its doc says so,
    and no campaign fails for missing it until the declaration drops `awaits`."""
    if topic not in TOPICS:
        raise ValueError(f"coverage point {name!r}: topic {topic!r} is not one of registry.TOPICS "
                         f"({', '.join(TOPICS)})")
    if awaits:
        doc = f"{doc} [not required yet: {awaits}]"

    def register(reached: Callable[[Context], bool]):
        _enter("coverage point", name, reached.__module__, _points, _ranks, POINT_DOCS,
               lambda module, rank: Point(name, doc, topic, reached, module, rank, awaits))
        return reached

    return register


def invariants() -> tuple[Invariant, ...]:
    """Every invariant registered so far, in report order."""
    global _ordered
    if _ordered is None or len(_ordered) != len(_invariants):
        _ordered = tuple(sorted(_invariants.values(), key=lambda inv: inv.order))
    return _ordered


def points() -> tuple[Point, ...]:
    """Every coverage point registered so far, in report order."""
    return tuple(_points[name] for name in POINT_DOCS)


def margin(name: str, doc: str, *, invariant: str, rules: tuple[str, ...], unit: str = "ms"):
    """Declare the margin that the decorated `of(context) -> int | None` measures: the history's smallest
    slack to the bound of `rules` (negative: broken, which `invariant` then flags), None without the
    situation."""
    if not _MARGIN_NAME.match(name):
        raise ValueError(f"margin name {name!r} is not a lower-case identifier like 'start_check' (it is a "
                         f"report's key and a JUnit property's name)")
    if not _ID.match(invariant):
        raise ValueError(f"margin {name!r}: invariant {invariant!r} is not an id of the form 'INV-7' or 'LEASE-1'")
    if unit not in MARGIN_UNITS:
        raise ValueError(f"margin {name!r}: unit {unit!r} is not one of {', '.join(MARGIN_UNITS)}")
    rules = _rule_ids(f"margin {name!r}", rules)

    def register(of: Callable[[Context], int | None]):
        _enter("margin", name, of.__module__, _margins, _margin_ranks, MARGIN_DOCS,
               lambda module, rank: Margin(name, doc, invariant, rules, of, unit, module, rank))
        return of

    return register


def margins() -> tuple[Margin, ...]:
    """Every margin registered so far, in report order (by the invariant it serves, then module, then as
    declared)."""
    return tuple(_margins[name] for name in MARGIN_DOCS)


def once(history: History, key: str, compute: Callable[[], Any]) -> Any:
    """`compute()`, kept in the history's cache under `key`: what a checker and the margin of its bound
    both read is computed once per history."""
    cache = history.cache
    try:
        return cache[key]
    except KeyError:
        value = cache[key] = compute()
        return value
