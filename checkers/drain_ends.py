"""INV-11 a drain ends (CS-3): told to drain, with no fault around it, a process reports drained
within ttl + grace of the end of the events it was running then (the world ends them: `running`;
every release lands on its first try, every acquisition and read answers within its attempt
timeout, and nothing else is waiting).

Judged on world facts: the world's own instruction (`told drain`), the process's report
(`drained`), and the faults the world gave that process (`fault` events naming it, outages of
its machine or of everyone) from one attempt timeout before the drain to the end of the
bound; drains resumed, stopped or ended by the process's end inside the bound are not
judged. The ADR bounds no resolver (OR-8): an acquire whose write was lost before the drain
leaves an entry the resolver reads forever, and the drain never ends. That is a finding about
the ADR (checkers/findings.py), counted, not hidden.
"""

from __future__ import annotations

from .facts import Facts, facts
from history import History, Violation

INVARIANT = "INV-11"


def bound_ms(fx: Facts) -> int:
    return fx.params.ttl_ms + fx.params.grace_ms


def check(history: History, fx: Facts | None = None) -> list[Violation]:
    fx = facts(history) if fx is None else fx
    bound = bound_ms(fx)
    a = fx.params.attempt_timeout_ms
    events = history.events
    procs = history.processes
    drains: list[tuple[int, int, int]] = []  # (proc, told at, event)
    draining: set[int] = set()
    running: dict[int, int] = {}  # the drain's event -> when the world ends the events running then
    for i in history.of_kind("told", "running"):
        t, p, kind, f = events[i]
        if kind == "told" and f[0] == "drain":
            if p not in draining:  # told again while draining: the first drain is the one judged
                drains.append((p, t, i))
            draining.add(p)
        elif kind == "told" and f[0] == "resume":
            draining.discard(p)
        elif kind == "running" and drains and drains[-1][0] == p and drains[-1][1] == t:
            running[drains[-1][2]] = f[0]
    if not drains:
        return []
    out = []
    for p, td, i in drains:
        # events take time (CS-1): the releases wait for the events running at the drain
        until = max(td, running.get(i, td)) + bound
        if until > history.end_ms:
            continue
        machine = procs[p].machine
        done = False
        disturbed = False
        for t, q, kind, f in events[i + 1:]:
            if t > until:
                break
            if q == p and kind == "drained":
                done = True
                break
            if q == p and (kind in ("exit", "crash") or kind == "told" and f[0] in ("resume", "stop")):
                disturbed = True
                break
        if done or disturbed or _faulted(events, p, machine, td - a, until):
            continue
        out.append(Violation(
            INVARIANT,
            f"{procs[p].label} was told to drain at {td / 1000:.3f} s, with no fault around it, and had not "
            f"reported drained {(until - td) / 1000:.3f} s later", (i,)))
    return out


def _faulted(events, p: int, machine: str, start: int, end: int) -> bool:
    for t, q, kind, f in events:
        if kind == "outage" and (f[0] == "*" or f[0] == machine) and t <= end and f[1] >= start:
            return True
        if start <= t <= end and q == p and kind == "fault":
            return True
    return False
