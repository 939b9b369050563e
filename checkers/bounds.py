"""BD-1, judged on world facts: a process has at most 8 fences in flight at once (fences run on a
task of their own, beside the listing, so a hung fence never delays it).

The world counts, at each fence write a process sends (a PUT on another node's `nodes/` object:
FN-3's fence, FN-7's operator fence), the fence writes that process has in flight, this one
included: sent, and not yet answered by a reply or a timeout the world delivered (`fence_sent`).
A fence's read (FN-3 decides on a fresh read) is not counted: a GET of `nodes/<id>` is also an
acquisition's read (OR-3), so only the writes are the world's to tell apart. The bound binds
when most of a large cluster goes at once (the `mass` fault; coverage point "bound BD-1").

The coverage points of the three bounds on background work (BD-1..BD-3) are the model's rule marks:
only the model knows when a bound held work back.
"""

from __future__ import annotations

from history import History, Violation

from .registry import Context, invariant, point

INVARIANT = "BD-1"
FENCES_AT_ONCE = 8  # BD-1


@invariant(INVARIANT, "at most 8 fences in flight at once", kind="safety", rules=("BD-1",))
def check(history: History) -> list[Violation]:
    events = history.events
    out = []
    flagged: set[int] = set()
    for i in history.of_kind("fence_sent"):
        t, p, _kind, f = events[i]
        if f.in_flight > FENCES_AT_ONCE and p not in flagged:
            flagged.add(p)
            out.append(Violation(INVARIANT, f"{history.processes[p].label} sent a fence of {f.key} at {t / 1000:.3f} s "
                                            f"with {f.in_flight} fence writes in flight, this one included (BD-1: at most "
                                            f"{FENCES_AT_ONCE} at once)", (i,)))
    return out


@point("bound BD-1", "a node had more fences to run than it may run at once", topic="bounds")
def _fences_held_back(c: Context) -> bool:
    return bool(c.history.rules.get("BD-1"))


@point("bound BD-2", "a node had more pending entries than it may work at once", topic="bounds")
def _pending_held_back(c: Context) -> bool:
    return bool(c.history.rules.get("BD-2"))


@point("bound BD-3", "a pass over pending entries stopped after refusals in a row", topic="bounds")
def _pass_stopped(c: Context) -> bool:
    return bool(c.history.rules.get("BD-3"))
