"""The verdicts of traces whose clocks are skewed: violated, possibly violated, held.

Each line of a trace is stamped with its process's wall clock, within max_skew of true time, and each
write took effect at some instant between bounds (traces/bucket.py). The checkers judge one History,
one timing; so the traces are placed at several admissible timings, the extreme ones, and every
checker (checkers.verdict.judge, unchanged) judges each placement:

- the centre: every clock on true time;
- for every ordered pair of machines (a, b): a's clock ahead by k and b's behind by k, k the largest
  admissible up to max_skew (a's lines then happened as early as they can, b's as late: 2k between
  them, the skew the protocol budgets for, T-2);
- each of those with every write at the earliest instant its bounds allow, and again at the latest.

An invariant violated in every placement is *violated*; in some but not all, *possibly violated*, with
the placements where it is and the interval of true time its events span there; in none, *held*.
A rule a process states on its own clock (NL-4's validity, OR-2's gate, FN-5's time bound on the
taker's clock) reads the same in every placement (a placement moves a process's lines and its clock
together), so its verdict is never "possibly": it is judged exactly. docs/traces.md gives the argument
for why the extreme placements stand for every admissible one.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from checkers.verdict import judge as judge_history
from history import History

from .bucket import Bucket, Constraints, Placement, place, rebuild, schedule
from .load import TraceSet


@dataclass
class Seen:
    """One violation (by its invariant and the trace lines that prove it), over the placements."""

    invariant: str
    message: str  # as the first placement that showed it says it
    refs: tuple  # ((process index, line number), ...): the trace lines of its events
    placements: list[str] = field(default_factory=list)
    lo_ms: int = 1 << 62  # the true time its events span, over the placements that show it
    hi_ms: int = -(1 << 62)
    finding: str | None = None  # the known finding about the ADR that explains it (checkers/findings.py)
    history: History | None = None  # the first placement that shows it (for the picture)
    events: tuple = ()  # its events' indices in that history


@dataclass
class TraceVerdict:
    placements: list[Placement]
    histories: list[History]
    skipped: list[str]  # placements not admissible, and why
    status: dict[str, str]  # invariant -> violated | possibly violated | held | not judged: why
    seen: list[Seen]
    bucket: Bucket

    def failed(self, strict: bool = False) -> bool:
        return any(s == "violated" or strict and s == "possibly violated" for s in self.status.values())


def machines(ts: TraceSet) -> list[str]:
    return sorted({pt.machine for pt in ts.procs})


def placements(ts: TraceSet, bucket: Bucket) -> tuple[list[Placement], list[str]]:
    """The extreme admissible placements (see the module's docstring), and the ones not admissible. The
    admissible clock offsets are the solutions of a system of difference constraints (bucket.Constraints);
    for each ordered pair of machines (a, b) the placement where b's lines come as late after a's as the
    system allows, and the mean of those as the centre (the set is convex: a mean of solutions is one)."""
    c = Constraints(ts, bucket, ts.params.max_skew_ms)
    skipped: list[str] = []
    if c.solve() is None and bucket.twice:
        # a body written twice (a seeded bug's generation written again) leaves the chain of its key a guess:
        # placed without that key's order, rather than not judged at all (the notes say which keys)
        c = Constraints(ts, bucket, ts.params.max_skew_ms, bucket.twice)
        skipped.append(f"the order of {', '.join(sorted(bucket.twice))} not bound (bodies written twice)")
    if c.solve() is None:
        return [], skipped + ["no clock offsets within max_skew fit the traces"]
    extremes: list[tuple[str, dict[str, int]]] = []
    for a, b in itertools.permutations(c.ms, 2):
        d = c.widest(a, b)
        sol = None if d is None else c.solve((c.var[b], c.var[a], -d))  # T_a - T_b <= -d
        if sol is None:
            skipped.append(f"{b} after {a}: no admissible shift")
            continue
        extremes.append((f"{b} {d} ms behind {a}", sol))
    if not extremes:
        extremes.append(("the only fit", c.solve()))
    mean = {m: round(sum(sol[m] for _n, sol in extremes) / len(extremes)) for m in c.ms}
    named = [("centre", mean)] + extremes
    out: list[Placement] = []
    for name, sol in named:
        offs = {m: -t for m, t in sol.items()}  # a History's offset: the clock minus true time
        if schedule(ts, bucket, Placement(offs, "earliest"))[0] is None:
            skipped.append(f"{name}: not admissible once rounded")
            continue
        for policy in ("earliest", "latest"):
            out.append(Placement(offs, policy, name))
    return out, skipped


def judge(ts: TraceSet) -> TraceVerdict:
    bucket = rebuild(ts)
    pls, skipped = placements(ts, bucket)
    if not pls:
        from house.errors import UsageError

        raise UsageError(f"{ts.directory}: no placement of the traces is admissible with max_skew "
                         f"{ts.params.max_skew_ms} ms ({'; '.join(skipped)}): the traces contradict their own "
                         f"clocks (a read answered before the write it returned was sent)")
    histories: list[History] = []
    by_key: dict[tuple, Seen] = {}
    violated_in: dict[str, int] = {}
    not_judged: dict[str, str] = {}
    kept: list[Placement] = []
    for pl in pls:
        h, why = place(ts, bucket, pl)
        if h is None:
            skipped.append(f"{pl.describe()}: {why}")
            continue
        kept.append(pl)
        histories.append(h)
        v = judge_history(h)
        not_judged.update(v.not_judged)
        refs = h.cache["trace_refs"]
        found = [(x, None) for x in v.violations] + [(x, fid) for fid, xs in v.findings.items() for x in xs]
        invs = set()
        for x, fid in found:
            invs.add(x.invariant)
            # a violation is known by the trace lines of its events, but for a process's end (whether the run's
            # end or the exit closes a hold depends on which process ended last: not a different violation)
            own = {refs[i] for i in x.events if h.events[i].kind not in ("exit", "crash")} or {refs[i] for i in x.events}
            key = (x.invariant, tuple(sorted(own, key=_ref_order)))
            s = by_key.get(key)
            if s is None:
                s = by_key[key] = Seen(x.invariant, x.message, key[1], finding=fid, history=h, events=x.events)
            s.placements.append(pl.describe())
            ts_ = [h.events[i].t_ms for i in x.events] or [0]
            s.lo_ms, s.hi_ms = min(s.lo_ms, min(ts_)), max(s.hi_ms, max(ts_))
        for inv in invs:
            violated_in[inv] = violated_in.get(inv, 0) + 1
    from checkers import INVARIANTS

    status = {}
    n = len(kept)
    for inv in INVARIANTS:
        if inv.id in not_judged:
            status[inv.id] = "not judged: " + not_judged[inv.id]
        elif violated_in.get(inv.id, 0) == n:
            status[inv.id] = "violated"
        elif violated_in.get(inv.id):
            status[inv.id] = "possibly violated"
        else:
            status[inv.id] = "held"
    # an invariant whose every violation a known finding explains fails nothing (as checkers.verdict says)
    for inv_id, st in list(status.items()):
        if st in ("violated", "possibly violated"):
            mine = [s for s in by_key.values() if s.invariant == inv_id]
            if mine and all(s.finding for s in mine):
                status[inv_id] = f"explained by finding {mine[0].finding} ({st})"
    seen = sorted(by_key.values(), key=lambda s: (s.invariant, s.lo_ms))
    return TraceVerdict(kept, histories, skipped, status, seen, bucket)


def _ref_order(ref: tuple) -> tuple:
    p, line = ref
    return (p, -1 if line is None else line)
