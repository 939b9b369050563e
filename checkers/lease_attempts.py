"""LEASE-2, judged on world facts: every lease-write attempt is bounded by A, and the lease task keeps
its cadence (T-4, NL-2, NL-3).

Peers size their watch on A (FN-2: a full P + A unchanged, "a lease write of its in flight lands within
A of its period"), so a node whose attempts run longer than A is a node whose last write may land after
the watch of it ended. Both clauses read what the world recorded of each process's own node lease
(`record_reply`: every request on `nodes/<its id>`, with its send time, recorded when the world delivered
its answer or its timeout):

- (a) **attempt**: each `live` write (a PUT on its own `nodes/<id>` naming its instance) is answered,
  by the bucket or by its timeout, within A of its send on the writer's monotonic clock (T-4, NL-3: "each
  attempt has a timeout of a third of ttl - safety at most"; A is the run's `attempt_timeout_ms`).
- (e) **cadence**: from its first acknowledged (or adopted, NL-9) lease write on, a process sends its
  next `live` write within max(P, A) of the previous one, on its monotonic clock (NL-2: every P from the previous
  send; a tick that finds an attempt in flight goes when it ends, within A of its send), or within
  max(P, 2 A) when NL-9's re-read followed a failed attempt between them, while it runs its
  lease task: not once it was told to stop (CS-1 stops the task), nor across one of its pauses (its
  inputs wait, its timers too: `World.pause`), nor past its end. Both are read on the monotonic clock
  (`Clock.mono_span`), where the model times them since issue 47: a step of the wall clock excuses nothing;
  the last gap, to the process's stop or end, gets A more (a write sent in its last A may be answered
  never, so never recorded).

A pause of the writer (a fault of its own kind) excuses both: a paused process's timeout fires when it
resumes. Broken model `long_lease_attempts` (attempts of 2 A); mutant `nl2_double_period` (cadence).
Its margins: `lease_attempt`, the least of A minus each attempt's length; `lease_cadence`, the least of
each gap's bound minus the gap.
"""

from __future__ import annotations

from model.params import Params

from history import History, Violation

from .facts import NODES, keyed, pauses
from .registry import Context, invariant, margin, once

INVARIANT = "LEASE-2"
# a timer or a timeout fires at the first true millisecond at which its clock reads its deadline: up to 1 ms
# past it at the clock's rate
ROUNDING_MS = 1


@invariant(INVARIANT, "every lease-write attempt within A; lease writes every P",
           kind="safety", rules=("T-4", "NL-2", "NL-3"))
def check(history: History) -> list[Violation]:
    return list(once(history, "lease_attempts", lambda: _judge(history))[0])


def _overlaps(spans, a: int, b: int) -> bool:
    return any(s <= b and a <= e for s, e in spans)


def _judge(history: History) -> tuple[list[Violation], int | None, int | None]:
    """The violations, the least slack of every attempt (A minus its length) and that of every gap between
    two lease writes (its bound minus the gap), on the writer's clock."""
    prm = Params(**history.params)
    # A as configured, and never above T-4's (ttl - safety) / 3, whatever a configuration let through
    attempt, period = min(prm.attempt_timeout_ms, (prm.ttl_ms - prm.safety_ms) // 3), prm.period_ms
    events = history.events
    procs = history.processes
    paused = pauses(history)
    stopping: dict[int, int] = {}  # proc -> when it was told to stop
    for i in history.of_kind("told"):
        t, p, _kind, f = events[i]
        if f.command == "stop":
            stopping.setdefault(p, t)
    ended: dict[int, int] = {}
    for i in history.of_kind("exit", "crash"):
        t, p, _kind, _f = events[i]
        ended.setdefault(p, t)
    sends: dict[int, list[tuple[int, int]]] = {}  # proc -> [(send time, event)] of its live writes
    running_from: dict[int, int] = {}  # proc -> its first acknowledged or adopted lease write's answer
    out: list[Violation] = []
    least = None
    flagged: set[int] = set()
    last_failed: dict[int, int] = {}  # proc -> when its last lease write was answered, unacknowledged (NL-9)
    rereads: dict[int, list[int]] = {}  # proc -> the send times of its NL-9 re-reads
    for i in keyed(history, NODES, "record_reply"):
        t, p, _kind, f = events[i]
        pr = procs[p]
        if f.key != NODES + pr.node_id:
            continue
        live = str.startswith(f.state, "live ") and f.state.split(" ")[1:2] == [pr.instance]
        if f.op == "GET":
            # NL-9's re-read, sent on the failed write's answer (another read of its own object, the listing's,
            # may be answered first: it is not the re-read, and leaves the failed write waiting for it)
            if last_failed.get(p) == f.sent_ms:
                del last_failed[p]
                rereads.setdefault(p, []).append(f.sent_ms)
                if f.status == "ok" and live:
                    running_from.setdefault(p, t)  # it adopted its own write
            continue
        if f.op != "PUT" or not live:
            continue
        if f.status == "ok":
            running_from.setdefault(p, t)
        elif f.status != "failed_fast":
            last_failed[p] = t
        else:
            last_failed.pop(p, None)
        sends.setdefault(p, []).append((f.sent_ms, i))
        if _overlaps(paused.get(p, ()), f.sent_ms, t):
            continue
        took = pr.clock.mono_span(f.sent_ms, t)  # the attempt's timeout runs on the monotonic clock (issue 47)
        slack = attempt + ROUNDING_MS + history.timing_slack_ms - took
        least = slack if least is None else min(least, slack)
        if slack < 0 and p not in flagged:
            flagged.add(p)
            out.append(Violation(INVARIANT, f"(a) {pr.label}'s lease write sent at {f.sent_ms / 1000:.3f} s was "
                                            f"answered ({f.status}) only at {t / 1000:.3f} s, {took} ms later on its "
                                            f"monotonic clock: each attempt is bounded by A = {attempt} ms (T-4, NL-3)", (i,)))
    # a tick that finds an attempt in flight goes when it ends (within A of its send), and one that finds
    # NL-9's re-read in flight when that ends (within A of the failed write's answer)
    attempts_least, least = least, None
    late = ROUNDING_MS + history.timing_slack_ms  # (a real process's timers fire late by its scheduler)
    gap_plain, gap_reread = max(period, attempt) + late, max(period, 2 * attempt) + late
    for p, writes in sends.items():
        since = running_from.get(p)
        if since is None:
            continue
        pr = procs[p]
        stop = min(stopping.get(p, history.end_ms), ended.get(p, history.end_ms), history.end_ms)
        writes.sort()
        marks = [(s, i) for s, i in writes if s >= since] + [(stop, None)]
        prev = max((s for s, _i in writes if s < since), default=None)
        prev_i = None
        clock = pr.clock
        for s, i in marks:
            if prev is not None and prev < stop and not _overlaps(paused.get(p, ()), prev, s):
                gap = clock.mono_span(prev, s)  # NL-2's period, on the monotonic clock (issue 47)
                reread = any(prev <= r < s for r in rereads.get(p, ()))
                gap_max = gap_reread if reread else gap_plain
                # (a write sent in its last A may never be answered, so never recorded: the end gets A more)
                slack = gap_max + (attempt if i is None else 0) - gap
                least = slack if least is None else min(least, slack)
                if slack < 0 and p not in flagged:
                    flagged.add(p)
                    nxt = "none before it stopped or the run ended" if i is None else f"the next at {s / 1000:.3f} s"
                    out.append(Violation(INVARIANT, f"(e) {pr.label} sent a lease write at {prev / 1000:.3f} s and "
                                                    f"{nxt}, {gap} ms on its clock: the lease task writes every "
                                                    f"P = {period} ms from the previous send, or as an attempt "
                                                    f"in flight (A = {attempt} ms) and its re-read end (NL-2)",
                                         tuple(x for x in (prev_i, i) if x is not None)))
            prev, prev_i = s, i
    return out, attempts_least, least


@margin("lease_attempt", "a lease write's attempt (LEASE-2 (a), T-4, NL-3): A minus the time from its send to its "
                         "answer or timeout, on the writer's clock", invariant=INVARIANT, rules=("T-4", "NL-3"))
def _lease_attempt(c: Context) -> int | None:
    return once(c.history, "lease_attempts", lambda: _judge(c.history))[1]


@margin("lease_cadence", "the lease task's cadence (LEASE-2 (e), NL-2): the bound of each gap between two lease writes "
                         "of a process, max(P, A) (max(P, 2 A) across NL-9's re-read), minus the gap, on its clock",
        invariant=INVARIANT, rules=("NL-2",))
def _lease_cadence(c: Context) -> int | None:
    return once(c.history, "lease_attempts", lambda: _judge(c.history))[2]
