"""BD-2, judged on world facts: at most 32 pending entries (releases, unresolved acquires) are worked
at once.

The world records what the background task sends (`background_sent`): when the process's `background`
timer fires, a write naming nobody is a pending release's retry and a read the resolver's (OR-8); on the
answer to a retry, the read of its key that follows its refusal (OR-5); on the answer to the resolver's
read, the release of its key it sends (OR-8: the entry is worked until that release's reply, OR-9's lock
held that long; a failure makes it a pending release). Each entry works one request at a time, so the
task's requests in flight are the entries at work, of either kind; the world counts them at each send,
this one included, from the send to the answer (a reply, or the timeout) it delivered: a count rises only
at a send, so judging every send judges every instant. Broken models `unbounded_pending` and
`resolver_release_uncounted`.
"""

from __future__ import annotations

from history import History, Violation

from .bounds import over_cap
from .registry import Context, invariant, point

INVARIANT = "BD-2"
PENDING_AT_ONCE = 32  # BD-2


@invariant(INVARIANT, "at most 32 pending entries worked at once", kind="safety", rules=("BD-2",))
def check_pending(history: History) -> list[Violation]:
    return over_cap(history, ("background_sent",), PENDING_AT_ONCE, INVARIANT, lambda f, _kind: (
        f"{f.op} {f.key} for its pending entries", f"of their requests in flight, this one included (BD-2: at most "
                                                   f"{PENDING_AT_ONCE} entries worked at once)"))


@point("resolver at BD-2's cap", "the resolver's read of an unresolved acquire (OR-8) left while its process had "
       "32 of the background task's requests in flight, this one included (BD-2's cap reached by the resolver)",
       topic="bounds")  # (reached by scenarios/faults/acquire_crowd.py)
def _resolver_at_cap(c: Context) -> bool:
    events = c.history.events
    return any(events[i].fields.op == "GET" and events[i].fields.version is None
               and events[i].fields.in_flight >= PENDING_AT_ONCE for i in c.history.of_kind("background_sent"))
