"""Coverage you can see: the situations a campaign must reach, found in each history.

A green sweep is worth the bugs it could have found; the coverage points name the situations the
protocol's margins and races live in (the ADR's arguments rely on each), so that every report
counts how many seeds reached each, and a campaign of 2,000 seeds or more that never reaches one
fails: a world change cannot silently lose a race. Each is read from the world's facts (the
configuration, the clocks, the faults, the applied and refused writes, the answers delivered), never
from a model's claim alone (issue 44): the bounds of BD-1..BD-3, which only the model knows held work
back, count its rule marks only where the world saw the bound bind. Each has a recount of its own in
tests/checkers/test_coverage_points.py, held to it on seeds that reach it.

A point is declared beside the invariant it serves (checkers/registry.py: `@point`, a named
*sometimes* predicate); this module declares those that belong to no invariant (the
configurations, the timing of requests and replies, moves, the upgrade) and reads them all:
`POINTS` (name -> doc, in report order), `reached` (the points one history reaches), `required`,
`awaited` (the points declared before any world can reach them, never required).

The deadline races' margins (`takeover_margins`), which a point here reads, are measured in
checkers/margins.py, beside the other margins.

Must not know: which module declares which point, or how many there are.
"""

from __future__ import annotations

from bisect import bisect_left

from history import History
from scenarios.presets import PRESETS

from . import registry
from .facts import Facts, facts, keyed
from .margins import takeover_margins
from .registry import Context, point

# every point declared, in report order (complete once checkers/__init__.py has imported every module)
POINTS: dict[str, str] = registry.POINT_DOCS

MIN_SEEDS = 2_000  # a campaign this long must reach every point


def required(scenario: str, seeds: int) -> bool:
    """Whether a campaign of `seeds` seeds of `scenario` must reach every point: the scenarios whose
    preset draws every kind of fault (scenarios/presets.py: `covers_all`, the swarm); a focused one
    (stops, blip, ...) cannot reach the others' points, so its campaigns count them without failing."""
    preset = PRESETS.get(scenario)
    return preset is not None and preset.covers_all and seeds >= MIN_SEEDS


def awaited() -> set[str]:
    """The points declared with `awaits`: no world reaches them yet, so no campaign fails for missing them."""
    return {p.name for p in registry.points() if p.awaits}


def missed(coverage: dict[str, int], scenario: str, seeds: int) -> list[str]:
    """The points a campaign of `seeds` seeds of `scenario` had to reach and did not (`coverage`: point ->
    seeds reaching it), but for those awaiting a world change."""
    if not required(scenario, seeds):
        return []
    waiting = awaited()
    return [k for k, v in coverage.items() if v == 0 and k not in waiting]


def reached(history: History, fx: Facts | None = None, context: Context | None = None) -> list[str]:
    """The coverage points this history reaches, in POINTS order (`context`: one already made for it,
    whose scans the margins share)."""
    c = context if context is not None else Context(history, facts(history) if fx is None else fx)
    return [p.name for p in registry.points() if p.reached(c)]


# --- the configuration ------------------------------------------------------------------------------


@point("clocks 2 max_skew apart", "two node processes ran on clocks 2 * max_skew apart (T-2's whole budget)",
       topic="configuration")
def _clocks_apart(c: Context) -> bool:
    """World facts (issue 44): two node processes that wrote their lease and were running at one true instant
    (between their `start` and their exit or crash) read clocks 2 * max_skew apart at an instant of that
    overlap (its ends, or a step of either clock inside it: between those the gap moves by drift alone,
    linearly), never final offsets of processes that did not run together."""
    history, fx = c.history, c.facts
    procs, events = history.processes, history.events
    end = history.end_ms if history.end_ms is not None else 0
    spans = []  # (start, end, clock) of each node process that wrote its lease
    for i in history.of_kind("start"):
        q = events[i].proc
        if str.startswith(procs[q].machine, "m") and q in fx.live_writes:
            spans.append((events[i].t_ms, fx.ended.get(q, (end,))[0], procs[q]))
    gap = 2 * c.params.max_skew_ms
    for k, (s1, e1, p1) in enumerate(spans):
        for s2, e2, p2 in spans[k + 1:]:
            lo, hi = max(s1, s2), min(e1, e2)
            if lo > hi:
                continue  # never ran together
            c1, c2 = p1.clock, p2.clock
            at = {lo, hi} | {t for pr in (p1, p2) for t, _d in pr.steps if lo <= t <= hi} \
                | {t - 1 for pr in (p1, p2) for t, _d in pr.steps if lo < t <= hi}
            if any(abs(c1.local(t) - c2.local(t)) >= gap for t in at):
                return True
    return False


@point("every clock at the bound", "a process other than a node machine's (an old binary, the operator, a twin, "
                                   "a replacement) ran on a clock 2 * max_skew from a node process's (T-1 at its "
                                   "bound for every process: UP-2's age test, UP-3's grace, FN-7's absent fence)",
       topic="configuration")
def _every_clock_at_bound(c: Context) -> bool:
    procs = c.history.processes
    gap = 2 * c.params.max_skew_ms
    nodes = {pr.offset_ms for pr in procs if str.startswith(pr.machine, "m") and not pr.drift_ppm}
    return any(abs(pr.offset_ms - o) >= gap for pr in procs if not str.startswith(pr.machine, "m")
               and pr.machine != "omf" and not pr.drift_ppm for o in nodes)


@point("clock stepped back", "a running process's clock stepped back within max_skew of true time (T-1, NTP: "
                             "it reads instants again, NL-4's deadline among them)", topic="configuration")
def _stepped_back(c: Context) -> bool:
    return any(d < 0 for pr in c.history.processes for _, d in pr.steps)


@point("clock stepped forward", "a running process's clock stepped forward within max_skew of true time (T-1, "
                                "NTP: every written_at it reads ages at once)", topic="configuration")
def _stepped_forward(c: Context) -> bool:
    return any(d > 0 for pr in c.history.processes for _, d in pr.steps)


@point("old beat at the guard's horizon", "an old binary beat at its own cadence, two of its heartbeats sent UP-2's "
       "horizon (three of the new heartbeat periods) apart or nearly (issue 39: the old binary's drawn timing, "
       "model/old_lease.py)", topic="upgrade")
def _old_beat_at_horizon(c: Context) -> bool:
    history, p = c.history, c.params
    if not history.options.get("upgrade"):
        return False
    events, procs = history.events, history.processes
    near = 3 * p.heartbeat_period_ms - p.heartbeat_period_ms // 4
    last: dict[int, int] = {}
    for i in keyed(history, "nodes/", "apply"):
        _t, q, _kind, f = events[i]
        if q >= 0 and f.op == "PUT" and str.startswith(f.state, "node ") \
                and str.startswith(procs[q].machine, "om"):
            local = procs[q].clock.local(f.sent_ms if isinstance(f.sent_ms, int) else events[i].t_ms)
            if q in last and local - last[q] >= near:
                return True
            last[q] = local
    return False


@point("config on T-2", "grace + safety = 2 * max_skew exactly", topic="configuration")
def _on_t2(c: Context) -> bool:
    p = c.params
    return p.grace_ms + p.safety_ms == 2 * p.max_skew_ms


@point("config on T-3", "the lease period P = ttl / 3 exactly", topic="configuration")
def _on_t3(c: Context) -> bool:
    p = c.params
    return 3 * p.heartbeat_period_ms >= p.ttl_ms - 2  # (P is a whole number of ms: ttl / 3 rounded down)


@point("config on T-4", "the attempt timeout at (ttl - safety) / 3 exactly", topic="configuration")
def _on_t4(c: Context) -> bool:
    p = c.params
    return p.attempt_timeout_ms == (p.ttl_ms - p.safety_ms) // 3


@point("config scaled", "the real-S3 world's short timing (ttl 2 s)", topic="configuration")
def _scaled(c: Context) -> bool:
    return c.history.options.get("config") == "scaled"


@point("config large", "long timing (ttl 30 s)", topic="configuration")
def _large(c: Context) -> bool:
    return c.history.options.get("config") == "large"


# --- timing: deadlines, timeouts, lost replies ----------------------------------------------------------


@point("takeover at the deadline", "an owner cut off right after an acknowledged write was taken over within "
                                   "2 * max_skew of its last valid instant", topic="timing")
def _takeover_at_deadline(c: Context) -> bool:
    return any(m <= 2 * c.params.max_skew_ms for m in takeover_margins(c.history, c.facts))


@point("write applied after its timeout", "a write took effect after its sender gave up on it", topic="timing")
def _applied_late(c: Context) -> bool:
    """World facts (issue 44): a write the network held back past its sender's timeout (`late`; a plan's
    `held_back`) that the bucket then applied: its `apply`, of the same process and key, sent when the fault
    struck. One the bucket refused on arrival took no effect (a third of them)."""
    events = c.history.events
    struck = {(events[i].proc, events[i].fields.target, events[i].t_ms) for what in ("late", "held_back")
              for i in c.faults(what)}
    if not struck:
        return False
    for i in c.history.of_kind("apply"):
        _t, q, _kind, f = events[i]
        if q >= 0 and (q, f"{f.op} {f.key}", f.sent_ms) in struck:
            return True
    return False


# the answers the world records delivered to a process, each with when its request was sent
ANSWERS = ("record_reply", "background_answered", "leases_reply")
TIMED_OUT = "timed_out"


def _answer_times(c: Context) -> list[tuple[int, int, int, str]]:
    """(round trip ms, event, process, status) of every answer the world delivered that records its send."""
    events = c.history.events
    out = []
    for i in c.history.of_kind(*ANSWERS):
        t, q, _kind, f = events[i]  # (unpacked once: compiled, each `.field` is a generic attribute read)
        sent = f.sent_ms
        if sent is not None:
            out.append((t - sent, i, q, f.status))
    return out


@point("reply just under its timeout", "a reply came in the last tenth of its attempt timeout", topic="timing")
def _reply_just_under(c: Context) -> bool:
    """World facts (issue 44): an answer the world delivered (not the timeout's), its round trip from the send
    in [A - A/10, A). The reply's own hold (`slow_reply`'s ms) is not its round trip: a third of the replies held
    just under A reached their sender past it, the timeout answering first."""
    a = c.params.attempt_timeout_ms
    return any(a - a // 10 <= rt < a and status != TIMED_OUT for rt, _i, _q, status in c.scan(_answer_times))


@point("reply past its timeout", "a reply was held past its request's attempt timeout (the timeout answered)",
       topic="timing")
def _reply_past(c: Context) -> bool:
    """World facts (issue 44): a request the timeout answered (`timed_out` delivered) whose reply the world was
    holding: a `slow_reply` of the same process and request struck between its send and its timeout."""
    events = c.history.events
    slowed: dict[tuple[int, str], list[int]] = {}
    for i in c.faults("slow_reply"):
        slowed.setdefault((events[i].proc, events[i].fields.target), []).append(events[i].t_ms)
    if not slowed:
        return False
    for _rt, i, q, status in c.scan(_answer_times):
        if status == TIMED_OUT:
            f = events[i].fields
            if any(f.sent_ms <= t <= events[i].t_ms for t in slowed.get((q, f"{f.op} {f.key}"), ())):
                return True
    return False


@point("read reply lost", "the reply to a read was lost", topic="timing")
def _read_reply_lost(c: Context) -> bool:
    events = c.history.events
    return any(str.startswith(events[i].fields.target, "GET ") for i in c.faults("reply_lost"))


# --- ownership ------------------------------------------------------------------------------------------


@point("move handed over", "an actor moved took a new owner on the move's target node", topic="ownership")
def _move_handed_over(c: Context) -> bool:
    """A record write naming the move's target node (over nobody or another holder) that took effect
    after the world asked for the move (OR-5's release, then OR-3 on the target)."""
    history = c.history
    events = history.events
    moves: dict[str, list[int]] = {}  # actor -> the indices of the world's `moved` for it
    for i in history.of_kind("moved"):
        moves.setdefault(events[i].fields.actor, []).append(i)
    if not moves:
        return False
    procs = history.processes
    for i in c.writes("owners/"):
        _t, q, _kind, f = events[i]
        if q < 0 or not str.startswith(f.state, "held "):
            continue
        before = moves.get(f.key[len("owners/"):])
        k = bisect_left(before, i) if before else 0  # the last move asked before this write
        if (k and events[before[k - 1]].fields.target == procs[q].node_id
                and f.prev_state.split(" ")[0] in ("nobody", "held")):
            return True
    return False


# --- the upgrade (section 6) ------------------------------------------------------------------------------


@point("upgrade", "old per-actor-lease binaries and new nodes in one run (section 6)", topic="upgrade")
def _upgrade(c: Context) -> bool:
    return bool(c.history.options.get("upgrade"))


@point("old binary met a marker", "an old binary, running beside new nodes, read a new node's leases/ marker "
                                  "and refused it (UP-3, UP-4)", topic="upgrade")
def _old_met_marker(c: Context) -> bool:
    """World facts (issue 44): the world delivered an old binary's read of leases/ answered with a marker (the
    state it carried, `leases_reply`), and the old binary wrote nothing over that marker (no write of its on
    that key applied after the read). Never the model's own UP-4 mark."""
    history = c.history
    events, procs = history.events, history.processes
    read: dict[tuple[int, str], int] = {}  # (old process, key) -> when it read a marker there
    for i in history.of_kind("leases_reply", "apply"):
        t, q, kind, f = events[i]
        if q < 0 or not str.startswith(procs[q].machine, "om"):
            continue
        if kind == "leases_reply":
            if f.op == "GET" and f.status == "ok" and str.startswith(f.state or "", "marker "):
                read.setdefault((q, f.key), t)
        elif (q, f.key) in read:
            read[(q, f.key)] = -1  # it wrote over it: not refused
    return any(t >= 0 for t in read.values())
