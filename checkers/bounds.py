"""The bounds on background work (BD-1..BD-4), judged on world facts.

BD-1: a process has at most 8 fences in flight at once (fences run on a task of their own, beside the
listing, so a hung fence never delays it). The world counts, at each fence write a process sends (a
PUT on another node's `nodes/` object: FN-3's fence, FN-7's operator fence), the fence writes that
process has in flight, this one included: sent, and not yet answered by a reply or a timeout the world
delivered (`fence_sent`). A fence's read (FN-3 decides on a fresh read) is not counted: a GET of
`nodes/<id>` is also an acquisition's read (OR-3), so only the writes are the world's to tell apart. The
bound binds when most of a large cluster goes at once (the `mass` fault; coverage point "bound BD-1").

BD-2..BD-4 are judged on the requests the world saw the background task send and answer
(`background_sent`, `background_answered`: what it sent when its `background` timer fired, a pending
release's retry or the resolver's read, and the read of a retry's key it sent on the retry's answer)
and on the other releases (`release_sent`, "told" when sent on a command of the world's: hibernate,
move, stop, drain, an event's end). The resolver's release (OR-8) ends its entry and is not counted:

- BD-2: at most 32 of the task's requests in flight at once (each entry works one at a time: its
  retry, or its read; the resolver's read).

- BD-3 (with OR-6's back-off, whose values this page fills in: 500 ms, doubling to 8 s): each pending
  release, known to the world by its write (key and If-Match token), is sent again only once its
  back-off from its last answer has run (the answer a refusal, or a read showing the record still
  naming this process at the release's generation); and once 32 answers in a row were refusals (a
  retry answered other than ok, 412 or 404; a read that failed), no entry that was waiting then is
  sent before its back-off from that moment: the pass stops. A retry answered ok, or a read finding
  the record still its own, ends the run of refusals. A release the world never saw answered yet (its
  first retry) is not judged: when it became due is the model's, not a fact.
- BD-4: a foreground release (one sent on the world's command) is given 1 s (it tries for 1 s, then
  the background retries park it); the background's retries keep the full attempt timeout.

Each time is compared on the sender's own clock, as its timers run. The coverage points of the three
bounds (BD-1..BD-3) are the model's rule marks: only the model knows when a bound held work back.
"""

from __future__ import annotations

from history import History, Violation

from .registry import Context, invariant, point

INVARIANT = "BD-1"
FENCES_AT_ONCE = 8  # BD-1
PENDING_AT_ONCE = 32  # BD-2
REFUSALS_IN_A_ROW = 32  # BD-3
FOREGROUND_TRIES_MS = 1_000  # BD-4
BACKOFF_FIRST_MS, BACKOFF_MAX_MS = 500, 8_000  # OR-6, as docs/protocol.md fills them in
ENDS = ("precondition_failed", "not_found")  # a retry answered so is followed by a read (OR-5)


@invariant(INVARIANT, "at most 8 fences in flight at once", kind="safety", rules=("BD-1",))
def check(history: History) -> list[Violation]:
    return _over(history, "fence_sent", FENCES_AT_ONCE, INVARIANT, lambda f: (
        f"a fence of {f.key}", f"fence writes in flight, this one included (BD-1: at most {FENCES_AT_ONCE} at once)"))


def _over(history: History, kind: str, cap: int, inv: str, says) -> list[Violation]:
    """A violation of `inv` for each process that sent a request (`kind` events) with more than `cap` of its
    kind in flight, this one included (`says(fields)`: what it sent, what was in flight)."""
    events = history.events
    out = []
    flagged: set[int] = set()
    for i in history.of_kind(kind):
        t, p, _kind, f = events[i]
        if f.in_flight > cap and p not in flagged:
            flagged.add(p)
            what, flying = says(f)
            out.append(Violation(inv, f"{history.processes[p].label} sent {what} at {t / 1000:.3f} s with "
                                      f"{f.in_flight} {flying}", (i,)))
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


# --- BD-2..BD-4: the background task's requests and the releases, as the world saw them --------------------


@invariant("BD-2", "at most 32 pending entries worked at once", kind="safety", rules=("BD-2",))
def check_pending(history: History) -> list[Violation]:
    return _over(history, "background_sent", PENDING_AT_ONCE, "BD-2", lambda f: (
        f"{f.op} {f.key} for its pending entries", f"of their requests in flight, this one included (BD-2: at most "
                                                   f"{PENDING_AT_ONCE} entries worked at once)"))


class _Entry:
    """A pending release as the world knows it (OR-5: every retry the same write, If-Match v)."""

    __slots__ = ("generation", "backoff", "due", "flying", "since")

    def __init__(self, generation: str) -> None:
        self.generation = generation  # as the write's state says it ("nobody <g>")
        self.backoff = BACKOFF_FIRST_MS  # OR-6: from 500 ms, doubled at every answer that backs it off
        self.due: int | None = None  # when it may go again (its sender's clock); None: not known
        self.flying = False
        self.since = -1  # the event that set `due`


@invariant("BD-3", "a pass over pending entries stops after 32 refusals in a row", kind="safety",
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
        local = procs[p].clock.local(t)
        if kind == "background_sent":
            e = mine.get((f.key, f.version))
            if f.op == "PUT":
                if e is None:
                    e = mine[(f.key, f.version)] = _Entry(f.state.split(" ")[-1])
                elif e.due is not None and local < e.due and p not in flagged:
                    flagged.add(p)
                    why = (f"the pass stopped after {REFUSALS_IN_A_ROW} refusals in a row (BD-3)" if e.since == stopped.get(p)
                           else f"its back-off ({e.backoff} ms, OR-6) had not run")
                    out.append(Violation("BD-3", f"{procs[p].label} retried its release of {f.key[len('owners/'):]} at "
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


@invariant("BD-4", "a foreground release tries for 1 s; background retries keep the full attempt", kind="safety",
           rules=("BD-4", "OR-5", "OR-8"))
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
            out.append(Violation("BD-4", f"{procs[p].label} gave its {how} release of {f.key[len('owners/'):]} at "
                                         f"{t / 1000:.3f} s {f.timeout_ms} ms (BD-4: {what}, {wanted} ms)", (i,)))
    return out
