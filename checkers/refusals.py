"""BD-3, judged on world facts, with OR-6's back-off: a pass over the pending entries stops after 32
refusals in a row, and the entries still waiting wait their back-off.

Each pending release is known to the world by its write (OR-5: every retry the same write, key and
If-Match token) and by the answers the world delivered to the background task (`background_sent`,
`background_answered`). From them this check keeps, per process, what OR-6 and BD-3 decide: each
release's back-off (from 500 ms, doubled at every answer that backs it off, to 8 s: the values
docs/protocol.md fills in), the instant it may go again (its last such answer plus that back-off, on
the sender's monotonic clock: a duration, which a step of its wall clock does not move, issue 47), and the refusals in a row (a retry answered other than ok, 412 or 404; the read
after a 412 or 404 that failed). A retry that lands, or a read that finds the record still naming this
process at the release's generation, ends the run; a read that finds it naming anything else, or no
record, ends the release (OR-5). At the 32nd refusal in a row every release then waiting, and due, is
due again only its back-off later: the pass stopped. A retry sent before it is due is a violation (of
BD-3 when the stopped pass made it due later, else of OR-6). A release the world has not yet seen
answered (its first retry) is not judged: when it became due is the model's, not a fact. Broken model
`endless_pass`.
"""

from __future__ import annotations

from history import History, Violation

from .registry import invariant

INVARIANT = "BD-3"
REFUSALS_IN_A_ROW = 32  # BD-3
BACKOFF_FIRST_MS, BACKOFF_MAX_MS = 500, 8_000  # OR-6, as docs/protocol.md fills them in
ENDS = ("precondition_failed", "not_found")  # a retry answered so is followed by a read (OR-5)


class _Entry:
    """A pending release as the world knows it (OR-5: every retry the same write, If-Match v)."""

    __slots__ = ("generation", "backoff", "due", "flying", "since")

    def __init__(self, generation: str) -> None:
        self.generation = generation  # as the write's state says it ("nobody <g>")
        self.backoff = BACKOFF_FIRST_MS  # OR-6: from 500 ms, doubled at every answer that backs it off
        self.due: int | None = None  # when it may go again (its sender's monotonic clock); None: not known
        self.flying = False
        self.since = -1  # the event that set `due`


@invariant(INVARIANT, "a pass over pending entries stops after 32 refusals in a row", kind="safety",
           rules=("BD-3", "OR-6"))
def check_refusals(history: History) -> list[Violation]:
    events = history.events
    procs = history.processes
    out = []
    flagged: set[int] = set()
    entries: dict[int, dict[tuple[str, str], _Entry]] = {}
    streak: dict[int, int] = {}
    stopped: dict[int, int] = {}  # process -> the event at which its last pass stopped (BD-3)
    for i in history.of_kind("background_sent", "background_answered"):
        t, p, kind, f = events[i]
        if f.version is None:
            continue  # the resolver's read (OR-8): neither a pending release nor a refusal BD-3 counts
        mine = entries.setdefault(p, {})
        local = procs[p].clock.mono(t)  # (OR-6's back-offs run on the monotonic clock, as the world ran it)
        if kind == "background_sent":
            e = mine.get((f.key, f.version))
            if f.op == "PUT":
                if e is None:
                    e = mine[(f.key, f.version)] = _Entry(f.state.split(" ")[-1])
                elif e.due is not None and local < e.due and p not in flagged:
                    flagged.add(p)
                    why = (f"the pass stopped after {REFUSALS_IN_A_ROW} refusals in a row (BD-3)" if e.since == stopped.get(p)
                           else f"its back-off ({e.backoff} ms, OR-6) had not run")
                    out.append(Violation(INVARIANT, f"{procs[p].label} retried its release of {f.key[len('owners/'):]} at "
                                                 f"{t / 1000:.3f} s, {e.due - local} ms before it was due: {why}",
                                         (e.since, i)))
            if e is not None:
                e.flying = True
            continue
        e = mine.get((f.key, f.version))
        if e is None:
            continue
        refused = False
        if f.op == "PUT":
            if f.status == "ok":
                del mine[(f.key, f.version)]
                streak[p] = 0
                continue
            if f.status in ENDS:
                continue  # the read that follows is the entry's
            refused = True
        elif f.status == "not_found" or f.status == "ok" and not _names(procs[p], f.state, e.generation):
            del mine[(f.key, f.version)]  # the record no longer names it at g: the entry ends (OR-5)
            continue
        else:
            refused = f.status != "ok"
        e.backoff = min(e.backoff * 2, BACKOFF_MAX_MS)  # OR-6
        e.due, e.flying, e.since = local + e.backoff, False, i
        n = streak.get(p, 0) + 1 if refused else 0
        if n >= REFUSALS_IN_A_ROW:
            n = 0
            stopped[p] = i
            for other in mine.values():
                if not other.flying and other.due is not None and other.due <= local:
                    other.due, other.since = local + other.backoff, i  # BD-3: it waits its back-off from here
        streak[p] = n
    return out


def _names(proc, state: str, generation: str) -> bool:
    """A record's state names this process (its node id and instance) at `generation`."""
    return state == f"held {proc.node_id} {proc.instance} {generation}"
