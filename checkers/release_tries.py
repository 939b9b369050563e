"""BD-4, judged on world facts: a foreground release tries for 1 s, then is parked to the background
retries, which keep the full attempt.

The world notes the time the process gave each release it sent (`release_sent`) and each request of the
background task (`background_sent`). A release sent on a command of the world's (hibernate, move, stop,
drain, an event's end: "told") is a foreground one: it must be given 1 s. A pending release's retry,
sent when the background timer fired, must be given the attempt timeout. Broken model
`long_foreground_release`.
"""

from __future__ import annotations

from history import History, Violation

from .registry import invariant

INVARIANT = "BD-4"
FOREGROUND_TRIES_MS = 1_000  # BD-4


@invariant(INVARIANT, "a foreground release tries for 1 s; background retries keep the full attempt", kind="safety",
           rules=("BD-4", "OR-5"))
def check_release_tries(history: History) -> list[Violation]:
    events = history.events
    procs = history.processes
    attempt = history.params["attempt_timeout_ms"]
    out = []
    flagged: set[tuple[int, str]] = set()
    for i in history.of_kind("release_sent", "background_sent"):
        t, p, kind, f = events[i]
        if kind == "release_sent":
            if f.how != "told":
                continue
            wanted, what, how = FOREGROUND_TRIES_MS, "a foreground release tries for 1 s, then is parked", "foreground"
        elif f.op == "PUT":
            wanted, what, how = attempt, "the background's retries keep the full attempt timeout", "background"
        else:
            continue
        if f.timeout_ms != wanted and (p, how) not in flagged:
            flagged.add((p, how))
            out.append(Violation(INVARIANT, f"{procs[p].label} gave its {how} release of {f.key[len('owners/'):]} at "
                                         f"{t / 1000:.3f} s {f.timeout_ms} ms (BD-4: {what}, {wanted} ms)", (i,)))
    return out
