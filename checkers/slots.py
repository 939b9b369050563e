"""SLOT-1, judged on world facts: a slot of a bounded task (BD-1's fences, BD-2's entries) held by a fence or an
entry whose request has ended is free again within a period, whatever the request's outcome (a failed read, a
timeout, a refusal).

The slots are the process's own (its claim, `slots`: the fences and the entries it counts against its caps, said
as its listing ends and as its background timer fires); the checker takes no one's word for them. Each claimed
slot is held by a request the world saw leave and not yet answered (a fence's read or write: `fence_read_sent`,
`fence_sent`, `fence_answered`; an entry's retry, read or resolver's release: `background_sent`,
`background_answered`), or by one answered less than a period ago. A slot claimed with no request of its key in
flight, the last answered more than a period before, was not given back: the cap it counts against is smaller
by one for ever (eight such fences and a node fences no more; a stuck entry is never worked again). Broken model
`fence_slot_kept` (a fence whose read decides no write keeps its slot).
"""

from __future__ import annotations

from history import History, Violation
from model.params import Params

from .registry import invariant

INVARIANT = "SLOT-1"
SENT = ("fence_read_sent", "fence_sent", "background_sent")
ANSWERED = ("fence_answered", "background_answered")


@invariant(INVARIANT, "a slot whose request ended is free again within a period", kind="liveness",
           rules=("SLOT-1", "BD-1", "BD-2"))
def check_slots(history: History) -> list[Violation]:
    events = history.events
    procs = history.processes
    period = Params(**history.params).period_ms
    flying: dict[tuple[int, str], int] = {}  # (process, key) -> its requests of the bounded tasks in flight
    ended: dict[tuple[int, str], tuple[int, int]] = {}  # (process, key) -> (when, event) its last one was answered
    out = []
    flagged: set[tuple[int, str]] = set()
    for i in history.of_kind(*SENT, *ANSWERED, "slots"):
        t, p, kind, f = events[i]
        if kind in SENT:
            flying[(p, f.key)] = flying.get((p, f.key), 0) + 1
        elif kind in ANSWERED:
            k = (p, f.key)
            flying[k] = max(flying.get(k, 0) - 1, 0)
            ended[k] = (t, i)
        else:
            for key in f.keys:
                k = (p, key)
                if flying.get(k, 0) > 0 or k in flagged:
                    continue
                last = ended.get(k)
                if last is not None and t - last[0] <= period:
                    continue
                flagged.add(k)
                what = "fence of" if f.bound == "BD-1" else "entry on"
                since = (f"its last request answered at {last[0] / 1000:.3f} s, more than a period ({period} ms) before"
                         if last is not None else "no request of it ever seen in flight")
                out.append(Violation(INVARIANT, f"{procs[p].label} held a slot of {f.bound}'s cap for its {what} "
                                                f"{key} at {t / 1000:.3f} s with no request of it in flight: {since} "
                                                f"(SLOT-1: a slot whose request ended is free again within a period)",
                                     (i,) if last is None else (last[1], i)))
    return out
