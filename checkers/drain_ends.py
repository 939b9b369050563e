"""INV-11 a drain ends (CS-3): told to drain, with no fault around it, a process reports drained
within ttl + grace of the end of the events it was running then (the world ends them: `running`;
every release lands on its first try, every acquisition and read answers within its attempt
timeout, and nothing else is waiting).

Judged on world facts: the world's own instruction (`told drain`), the process's report
(`drained`), and the faults the world gave that process (`fault` events naming it, outages of
its machine or of everyone, a pause of it for its whole span) from one attempt timeout before the
drain to the end of the bound; drains resumed, stopped or ended by the process's end inside the bound are not
judged. A drain with faults around it is judged from their end instead: still draining when the
quiet phase begins (the world heals every fault then, and records the events the process still
runs: `running`), it reports drained within the same bound counted from the later of the quiet
phase's start and those events' end (the world resumes it only then). The ADR bounds no resolver (OR-8): an acquire whose write was lost before the drain
leaves an entry the resolver reads forever, and the drain never ends. That is a finding about
the ADR (checkers/findings.py), counted, not hidden.

Its coverage points: a drain judged with no fault around it, one whose node released the records
naming it itself, and one after a lost acquisition (the finding's situation). Its margin: how long
before its bound's end each drain judged reported drained (`drain`).
"""

from __future__ import annotations

from bisect import bisect_left
from itertools import islice  # (the events after a drain, read without copying the list's tail)

from history import History, Violation

from .facts import Facts, facts, pauses
from .registry import Context, invariant, margin, once, point

INVARIANT = "INV-11"


def bound_ms(fx: Facts) -> int:
    return fx.params.ttl_ms + fx.params.grace_ms


@invariant(INVARIANT, "a drain ends", kind="liveness", rules=("CS-3",))
def check(history: History, fx: Facts | None = None) -> list[Violation]:
    fx = facts(history) if fx is None else fx
    return list(once(history, "drain_ends", lambda: _judge(history, fx))[0])


def _judge(history: History, fx: Facts) -> tuple[list[Violation], int | None]:
    """The violations, and the least slack of the drains judged: the bound's end minus the instant the
    process reported drained (negative: it reported later, or never, -1 at best: a violation)."""
    bound = bound_ms(fx)
    a = fx.params.attempt_timeout_ms
    events = history.events
    procs = history.processes
    drains: list[tuple[int, int, int]] = []  # (proc, told at, event)
    draining: set[int] = set()
    running: dict[int, int] = {}  # the drain's event -> when the world ends the events running then
    quiet = history.of_kind("quiet")
    quiet_t = events[quiet[0]].t_ms if quiet else None
    quiet_running: dict[int, int] = {}  # proc -> the end of its events still running when the quiet phase began
    for i in history.of_kind("told", "running"):
        t, p, kind, f = events[i]
        if kind == "running" and t == quiet_t:
            quiet_running[p] = f.until_ms
        if kind == "told" and f.command == "drain":
            if p not in draining:  # told again while draining: the first drain is the one judged
                drains.append((p, t, i))
            draining.add(p)
        elif kind == "told" and f.command == "resume":
            draining.discard(p)
        elif kind == "running" and drains and drains[-1][0] == p and drains[-1][1] == t:
            running[drains[-1][2]] = f.until_ms
    if not drains:
        return [], None
    paused = pauses(history)
    out = []
    slacks = []
    for p, td, i in drains:
        # events take time (CS-1): the releases wait for the events running at the drain
        until = max(td, running.get(i, td)) + bound
        if until > history.end_ms:
            continue
        machine = procs[p].machine
        done = None
        disturbed = False
        for t, q, kind, f in islice(events, i + 1, None):
            if t > until:
                break
            if q == p and kind == "drained":
                done = t
                break
            if q == p and (kind in ("exit", "crash") or kind == "told" and f.command in ("resume", "stop")):
                disturbed = True
                break
        if disturbed:
            continue
        faulted = (_faulted(history, p, machine, td - a, until, paused.get(p, ()))
                   or _release_left_pending(history, p, td))
        if done is not None:
            if not faulted:  # (a drain with faults around it is not judged by this bound)
                slacks.append(until - done)
            continue
        if faulted:
            if p in quiet_running and td < quiet_t:
                found, slack = _judged_from_quiet(history, p, td, i, quiet[0], quiet_running[p] + bound + a)
                out += found
                slacks += [slack] if slack is not None else []
            continue
        slacks.append(min(-1, until - _drained_after(history, p, until)))
        out.append(Violation(
            INVARIANT,
            f"{procs[p].label} was told to drain at {td / 1000:.3f} s, with no fault around it, and had not "
            f"reported drained {(until - td) / 1000:.3f} s later", (i,)))
    return out, min(slacks) if slacks else None


def judged_until(history: History, v: Violation) -> int:
    """The end of the bound this check judged violation v by (its first event the drain, its second, if
    any, the quiet phase's start): the bound counted from the drain, or from the faults' end, past the
    events the process was running then (the releases wait for them, CS-1). A finding's classifier
    (F-2) judges the drain at the same instant."""
    fx = facts(history)
    events = history.events
    i = v.events[0]
    td, p = events[i].t_ms, events[i].proc
    at = events[v.events[1]].t_ms if len(v.events) > 1 else td
    running = next((events[j].fields.until_ms for j in history.of_kind("running")
                    if events[j].proc == p and events[j].t_ms == at), at)
    if len(v.events) > 1:  # judged from the faults' end (_judged_from_quiet)
        return running + bound_ms(fx) + fx.params.attempt_timeout_ms
    return max(td, running) + bound_ms(fx)


def _drained_after(history: History, p: int, after: int) -> int:
    """When process p first reported drained after `after` (the run's end if it never did)."""
    events = history.events
    return next((events[k].t_ms for k in history.of_kind("drained") if events[k].proc == p
                 and events[k].t_ms > after), history.end_ms)


def _judged_from_quiet(history: History, p: int, td: int, i: int, q: int,
                       until: int) -> tuple[list[Violation], int | None]:
    """A drain told at td (event i) with faults around it, still draining when the quiet phase began
    (event q): it reports drained by `until` (the bound counted from the faults' end), unless it
    ends or is stopped first. And its slack: `until` minus its report (None: not judged)."""
    events = history.events
    if until > history.end_ms:
        return [], None
    for t, qp, kind, f in islice(events, i + 1, None):  # from the drain: it may have reported drained under the faults
        if t > until:
            break
        # resumed or stopped by the world within the bound: not judged (the quiet phase's own resume of a
        # drain that never reported drained comes only once the bound has passed)
        if qp == p and kind == "drained":
            return [], until - t
        if qp == p and (kind in ("exit", "crash") or kind == "told" and f.command in ("stop", "resume")):
            return [], None
    tq = events[q].t_ms
    return [Violation(
        INVARIANT,
        f"{history.processes[p].label} was told to drain at {td / 1000:.3f} s, with faults around it, was still "
        f"draining when they ended at {tq / 1000:.3f} s, and had not reported drained by {until / 1000:.3f} s "
        f"(the bound counted from the faults' end and the events it still ran)", (i, q))], \
        min(-1, until - _drained_after(history, p, until))


@margin("drain", "a drain's bound (INV-11, CS-3): for each drain judged (with no fault around it, or from the faults' "
                 "end), the end of its bound (ttl + grace after the events it was running) minus the instant it "
                 "reported drained", invariant=INVARIANT, rules=("CS-3",))
def _drain(c: Context) -> int | None:
    return once(c.history, "drain_ends", lambda: _judge(c.history, c.facts))[1]


def _release_left_pending(history: History, p: int, td: int) -> bool:
    """A write of process p to a record met a fault before the drain at td and no release of p's
    landed on that record since, while the record still names p at td (world facts: faults, applied
    writes): a release left pending by earlier faults, which OR-6 retries with a back-off grown up
    to 8 s, longer than the drain's bound at a short ttl. Such a drain has a fault around it: it is
    judged from the faults' end. (A lost acquisition's record does not name p: F-2 stays judged.)"""
    events = history.events
    pr = history.processes[p]
    mine = f"held {pr.node_id} {pr.instance} "
    state: dict[str, str] = {}
    failed: set[str] = set()
    for i in history.of_kind("apply", "fault"):  # (the two kinds it reads, not every event: once per drain)
        t, q, kind, f = events[i]
        if t >= td:
            break
        if kind == "apply" and str.startswith(f.key, "owners/"):
            state[f.key] = f.state
            if q == p and str.startswith(f.state, "nobody "):
                failed.discard(f.key)
        elif q == p and kind == "fault" and str.startswith(f.target, "PUT owners/"):
            failed.add(f.target[len("PUT "):])
    return any(str.startswith(state.get(k, ""), mine) for k in sorted(failed))


def _faulted(history: History, p: int, machine: str, start: int, end: int, paused=()) -> bool:
    """A fault the world gave process p in [start, end], or an outage of its machine (or of every
    machine), or a pause of the process (`paused`: its spans, checkers/facts.py `pauses`) overlapping it: a
    paused process works no release and reports nothing (swarm seed 13145: a drain told 14.5 s into a
    48.9 s pause, whose fault event lies before the window). (Only those two kinds read, not every event:
    once per drain judged.)"""
    if any(s <= end and start <= e for s, e in paused):
        return True
    events = history.events
    for i in history.of_kind("outage", "fault"):
        t, q, kind, f = events[i]
        if t > end:
            continue
        if kind == "outage":
            if (f.machine == "*" or f.machine == machine) and f.until_ms >= start:
                return True
        elif q == p and start <= t:
            return True
    return False


# --- coverage: drains the campaign must judge ---------------------------------------------------------


def _judged_drains(c: Context) -> list[int]:
    """The `told drain` events of drains judged with no fault around them: the bound (from the
    instruction) ends inside the run, and the process reports drained, or is neither resumed,
    stopped nor ended, before it."""
    history, fx = c.history, c.facts
    events = history.events
    paused = pauses(history)  # (once, not per drain)
    out = []
    for i in history.of_kind("told"):
        t, p, _kind, f = events[i]
        if f.command != "drain":
            continue
        until = t + bound_ms(fx)
        if until > history.end_ms:
            continue
        disturbed = False
        for tt, q, kind, ff in islice(events, i + 1, None):
            if tt > until:
                break
            if q == p and kind == "drained":
                break
            if q == p and (kind in ("exit", "crash") or kind == "told" and ff.command in ("resume", "stop")):
                disturbed = True
                break
        if not disturbed and not _faulted(history, p, history.processes[p].machine,
                                          t - fx.params.attempt_timeout_ms, until,
                                          paused.get(p, ())) and not _release_left_pending(history, p, t):
            out.append(i)
    return out


def _released_busy_holds(history: History, i: int) -> bool:
    """At the drain (event i, `told drain`), applied records named the process (world facts), and the
    process itself wrote each of them `nobody` before it reported drained."""
    events = history.events
    t, p = events[i].t_ms, events[i].proc
    procs = history.processes
    mine = "held %s %s " % (procs[p].node_id, procs[p].instance)
    named: dict[str, str] = {}
    for k in history.of_kind("apply"):
        if events[k].t_ms > t:
            break
        f = events[k].fields
        if str.startswith(f.key, "owners/"):
            named[f.key] = f.state
    held = {key for key, state in named.items() if str.startswith(state, mine)}
    if not held:
        return False
    for _t, q, kind, f in islice(events, i + 1, None):
        if q == p and kind == "drained":
            return not held
        if kind == "apply" and f.key in held:
            if q != p or not str.startswith(f.state, "nobody "):
                return False  # ended by another writer: not the drain's release
            held.discard(f.key)
    return False


@point("drain judged", "a drain with no fault around it, judged by INV-11", topic="clean stop and drain")
def _some_drain_judged(c: Context) -> bool:
    return bool(c.scan(_judged_drains))


@point("drain released busy holds", "a judged drain of a node that records named at the drain, each released by "
       "the node itself before it reported drained (CS-3: nothing else ended them)", topic="clean stop and drain")
def _some_drain_released_busy_holds(c: Context) -> bool:
    return any(_released_busy_holds(c.history, i) for i in c.scan(_judged_drains))


@point("drain after a lost acquire", "a node was drained after one of its acquisitions' record writes was lost",
       topic="clean stop and drain")
def _some_drain_after_a_lost_acquire(c: Context) -> bool:
    """An acquisition's record write (a PUT of owners/ whose body, as the world recorded the struck write,
    names its sender: "held <node> <instance> <g>", never a release's "nobody <g>"; issue 44) lost on its way,
    by the drained process, within ttl + grace before the drain: OR-7's unresolved acquire, which OR-8's
    resolver reads on (finding F-2)."""
    history = c.history
    events = history.events
    procs = history.processes
    lost = c.faults("request_lost")
    if not lost:
        return False
    span = c.params.ttl_ms + c.params.grace_ms
    for i in history.of_kind("told"):
        t, p, _kind, f = events[i]
        if f.command != "drain" or p < 0:
            continue
        mine = f"held {procs[p].node_id} {procs[p].instance} "
        for k in reversed(lost[:bisect_left(lost, i)]):
            e = events[k]
            if e.t_ms < t - span:
                break
            if e.proc == p and str.startswith(e.fields.target, "PUT owners/") \
                    and str.startswith(e.fields.state or "", mine):
                return True
    return False


@point("drain judged from the faults' end", "a drain told with faults around it, still draining when the quiet "
       "phase began, judged by INV-11 from the faults' end", topic="clean stop and drain")
def _some_drain_judged_from_quiet(c: Context) -> bool:
    history = c.history
    events = history.events
    quiet = history.of_kind("quiet")
    if not quiet:
        return False
    tq = events[quiet[0]].t_ms
    bound = bound_ms(c.facts) + c.params.attempt_timeout_ms
    for i in history.of_kind("running"):
        t, p, _k, f = events[i]
        if t == tq and f.until_ms + bound <= history.end_ms:
            return True
    return False
