"""CS-1, judged on world facts: a process acts no more once it has sent its `released` write.

A clean stop writes `released` last (CS-1): before it, the node makes its lease locally invalid
and the lost-lease cut ends every event still running, so that a straggler past the stop's
bounded wait is cut, not left acting. Peers free every record naming a `released` instance at
once (FN-5), so an act after that write was sent may overlap the next owner's. The write is the
bucket's applied `released` on the process's own `nodes/<id>` (the world knows when it was sent);
the acts are what the process did to clients and the bucket (checkers/facts.py).
"""

from __future__ import annotations

from .facts import Facts, facts, sent_ms
from .history import History, Violation

INVARIANT = "CS-1"


def check(history: History, fx: Facts | None = None) -> list[Violation]:
    fx = facts(history) if fx is None else fx
    procs = history.processes
    released: dict[int, tuple[int, int]] = {}  # proc -> (send time of its first applied `released`, event)
    events = history.events
    for i in history.of_kind("apply"):
        _t, q, _kind, f = events[i]
        if q >= 0 and q not in released and f[6].startswith("released ") and f[0] == "nodes/" + procs[q].node_id:
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
