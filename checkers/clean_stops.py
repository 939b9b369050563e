"""CS-1, judged on world facts: a process acts no more once it has sent its `released` write.

A clean stop writes `released` last (CS-1): before it, the node makes its lease locally invalid
and the lost-lease cut ends every event still running, so that a straggler past the stop's
bounded wait is cut, not left acting. Peers free every record naming a `released` instance at
once (FN-5), so an act after that write was sent may overlap the next owner's. The write is the
first `released` write on the process's own `nodes/<id>` the world saw leave (`released_sent`),
applied or not: the rule is on the sending, and a write lost on the way (a silenced stop, CS-2)
does not excuse an act after it; the acts are what the process did to clients and the bucket
(checkers/facts.py). Its coverage point: a straggler at a clean stop (the world ends an event just
after the `released` write left). CS-2's check, below, measures the margins of its two bounds
(`released_retries`, `stop`).
"""

from __future__ import annotations

from history import History, Violation

from .facts import Facts, facts, pauses, sent_ms
from .registry import Context, invariant, margin, once, point

INVARIANT = "CS-1"


@invariant(INVARIANT, "a process acts no more once it sent its released write", kind="safety", rules=("CS-1",))
def check(history: History, fx: Facts | None = None) -> list[Violation]:
    fx = facts(history) if fx is None else fx
    procs = history.processes
    released: dict[int, tuple[int, int]] = {}  # proc -> (when its first `released` write left, event)
    events = history.events
    for i in history.of_kind("apply", "released_sent"):
        t, q, kind, f = events[i]
        if kind == "released_sent":
            # the world saw the write leave (applied, lost or refused: the rule is on the sending)
            if q >= 0 and (q not in released or t < released[q][0]):
                released[q] = (t, i)
        elif q >= 0 and str.startswith(f.state, "released ") and f.key == "nodes/" + procs[q].node_id:
            if q not in released or sent_ms(events[i]) < released[q][0]:
                released[q] = (sent_ms(events[i]), i)
    if not released:
        return []
    out = []
    for t, q, actor, what, event in fx.acts:
        mark = released.get(q)
        if mark is not None and t > mark[0]:
            out.append(Violation(INVARIANT, f"{procs[q].label} {what} for {actor} at {t / 1000:.3f} s, after it sent "
                                            f"its `released` write at {mark[0] / 1000:.3f} s (a straggler not cut)",
                                 (mark[1], event)))
            released.pop(q)  # one per process
    return out


@point("straggler at a clean stop", "an event outlasted a clean stop's bounded wait, the world ending it just after "
                                    "the `released` write was sent (CS-1)", topic="clean stop and drain")
def _straggler(c: Context) -> bool:
    return bool(c.faults("straggler"))


# --- CS-2: a clean stop ends ------------------------------------------------------------------------

STOP_INVARIANT = "CS-2"
STOP_LIMIT_MS = 20_000  # the stop's limit (CS-2; the ADR's "bounded, as today": the value the model states)


def stop_bound_ms(params) -> int:
    """Told to stop, a process has exited by then, on its own clock: the stop limit bounds the release
    wait, the lease attempt it lets finish and the `released` write's retries (CS-1, CS-2); past it one
    attempt may still be in flight, then NL-9's re-read once and the adopted write (an attempt timeout
    each), and a second to spare."""
    return STOP_LIMIT_MS + 3 * params.attempt_timeout_ms + 1_000


def retries_bound_ms(params, conflict: bool) -> int:
    """Every `released` write is sent within this of the first, on the process's own clock (the clock
    it counts A + 1 s on: a drifting clock's second is not a true one): retried for A + 1 s (CS-2);
    after a conflict, NL-9's re-read once (the refused try answered within A, the read within A) and
    the adopted write."""
    return params.attempt_timeout_ms + 1_000 + (2 * params.attempt_timeout_ms if conflict else 0)


@invariant(STOP_INVARIANT, "a clean stop ends", kind="liveness", rules=("CS-2",))
def check_ends(history: History, fx: Facts | None = None) -> list[Violation]:
    """CS-2, judged on world facts: a process sends its `released` writes (the world sees each leave,
    `released_sent`) within `retries_bound_ms` of the first: a failing write is retried for A + 1 s,
    not for ever. And told to stop (the world's `told stop`), a process exits (or crashes) within
    `stop_bound_ms` (both on its own clock), whatever the bucket does meanwhile: past the limit the lease stays live and
    peers free the actors by fencing. A stop whose bound runs past the run's end is not judged."""
    fx = facts(history) if fx is None else fx
    return list(once(history, "stop_ends", lambda: _judge_ends(history, fx))[0])


def _judge_ends(history: History, fx: Facts) -> tuple[list[Violation], int | None, int | None]:
    """CS-2's violations, and its two least slacks: of the `released` writes sent after a process's
    first, the retries' bound minus the time since the first; of the stops judged, the stop's bound
    minus the time to the process's end (both windows on the process's monotonic clock, `Clock.mono_span`; negative: past the bound, a
    violation; a stop never ended is -1 at best)."""
    bound = stop_bound_ms(fx.params)
    events = history.events
    out = []
    first: dict[int, tuple[int, int]] = {}
    conflict: set[int] = set()  # processes whose `released` write met a conflict (412, 404 or 409) on their own key
    procs = history.processes
    retry_least = stop_least = None
    for i in history.of_kind("released_sent", "refused", "conflicted"):
        t, p, kind, f = events[i]
        if kind == "refused" or kind == "conflicted":
            if p in first and f.key == "nodes/" + procs[p].node_id:
                conflict.add(p)
            continue
        t0, i0 = first.setdefault(p, (t, i))
        retries = retries_bound_ms(fx.params, p in conflict)
        clock = procs[p].clock
        if i0 != i:  # a retry (after a violation, i0 is -1)
            slack = retries - clock.mono_span(t0, t)
            retry_least = slack if retry_least is None else min(retry_least, slack)
        if clock.mono_span(t0, t) > retries and i0 >= 0:
            first[p] = (t0, -1)  # one per process
            out.append(Violation(STOP_INVARIANT, f"{history.processes[p].label} sent a `released` write at {t / 1000:.3f} s, "
                                                 f"{clock.mono_span(t0, t) / 1000:.3f} s after its first at "
                                                 f"{t0 / 1000:.3f} s (its monotonic clock): a failing "
                                                 f"`released` write is retried for A + 1 s (CS-2; with the last try, the "
                                                 f"re-read and the adopted write, {retries / 1000:.3f} s at most)", (i0, i)))
    judged: set[int] = set()
    paused = pauses(history)
    for i in history.of_kind("told"):
        t, p, _kind, f = events[i]
        if f.command != "stop" or p in judged or t + bound > history.end_ms:
            continue
        judged.add(p)
        end = fx.ended.get(p)
        clock = history.processes[p].clock

        def took(a: int, b: int) -> int:
            """The stop's time on the process's monotonic clock, less its pauses (a paused process takes no
            step: its stop resumes with it; issue 47)."""
            return clock.mono_span(a, b) - sum(clock.mono_span(max(a, s), min(b, e))
                                               for s, e in paused.get(p, ()) if s < b and a < e)

        slack = (bound - took(t, end[0] - 1) if end is not None
                 else min(-1, bound - took(t, history.end_ms)))
        stop_least = slack if stop_least is None else min(stop_least, slack)
        if end is None or took(t, end[0] - 1) > bound:
            ended = "and was still running at the run's end" if end is None else f"and ended only at {(end[0] - 1) / 1000:.3f} s"
            out.append(Violation(STOP_INVARIANT, f"{history.processes[p].label} was told to stop at {t / 1000:.3f} s "
                                                 f"{ended}: a clean stop ends within {bound / 1000:.3f} s (CS-2's stop "
                                                 f"limit, then the attempts in flight)", (i,) + ((end[1],) if end else ())))
    return out, retry_least, stop_least


@margin("released_retries", "CS-2's retry window: of the `released` writes a process sent after its first, A + 1 s "
                            "(2 A more after a conflict) minus the time since the first, on its clock",
        invariant=STOP_INVARIANT, rules=("CS-2",))
def _released_retries(c: Context) -> int | None:
    return once(c.history, "stop_ends", lambda: _judge_ends(c.history, c.facts))[1]


@margin("stop", "a clean stop's bound (CS-1, CS-2): told to stop, the stop limit plus 3 A and a second minus the time "
                "the process took to end, on its clock", invariant=STOP_INVARIANT, rules=("CS-1", "CS-2"))
def _stop(c: Context) -> int | None:
    return once(c.history, "stop_ends", lambda: _judge_ends(c.history, c.facts))[2]
