"""UP-1, judged on world facts: a new process sends its first node-lease write (a `live` PUT of its own
nodes/<id>) only once both of its start's tasks are done, the start guard (UP-2) and the start check
(NL-5), which run together after the bucket check; and that write is conditioned on the check's last read
of its object (NL-7).

The facts: the process's first-write attempts (checkers.lease.start_writes: its `live` PUTs of its own
key that reached the bucket, sent no later than the first of them took effect), and its reads of
nodes/<id> (`read`: the world records each GET of nodes/ a process sends before a live write of its own
took effect, with the serial it read and when it was sent; the event's time is the answer's). The start
guard's pass is the process's `guard_passed` claim, used here only for its place in the history; whether
the guard was right to pass is UP-2's (checkers/start_guard.py judges the claim on the bucket's old
heartbeats). Four clauses:

- guard first: the first attempt is sent no earlier than the guard's pass (judged in every history that
  holds a `guard_passed`: the world runs the guard in every process of the new model);
- the check's wait: the first attempt is sent ttl + grace after the check's first answered read, on the
  process's clock, or once NL-5's shortcut held (the same test as LEASE-1's, checkers.lease.StartWrites,
  counted from the first read instead of the process's start: the start check cannot begin its wait
  before it read anything);
- a fresh read after the guard: some read of nodes/<id> answered after the guard passed comes before the
  first attempt. A guard that passes after the check's wait ended must not write on the check's last read
  from before: while the guard waited, that object may have changed (a process showing itself, NL-5);
- the last read: each attempt's condition names what the bucket held at the check's last answered read of
  its object before it (If-None-Match: that read found nothing; If-Match: the serial it returned). The
  guard reads nodes/<id> too (its own key is one of the keys it lists); it reads nothing once it passed,
  so a read answered after the guard passed is the check's. The read the write follows is the last one
  answered at or before its send; one answered in the same millisecond is as good (a second read answered
  at that instant may be the one the write followed). A write that follows a failed read goes on the
  check's last answered one: that read, if answered after the guard passed; otherwise any answered before
  (the world cannot tell the guard's reads of the key from the check's there).

The last three are judged only where the world records reads (a hand-made history without any `read` is
not judged by them).
"""

from __future__ import annotations

from history import History, Violation
from model.io import IF_MATCH, IF_NONE_MATCH

from .facts import Facts, facts
from .lease import StartWrite, start_writes
from .registry import invariant

INVARIANT = "UP-1"


@invariant(INVARIANT, "a new node's first lease write follows its start guard and its start check", kind="safety",
           rules=("UP-1", "NL-5", "NL-7"))
def check(history: History, fx: Facts | None = None) -> list[Violation]:
    fx = facts(history) if fx is None else fx
    sw = start_writes(history)
    if not sw.writes:
        return []
    events = history.events
    procs = history.processes
    claims: dict[int, int] = {}  # proc -> event index of its first guard_passed
    for i in history.of_kind("guard_passed"):
        claims.setdefault(events[i].proc, i)
    reads: dict[int, list[tuple[int, int, int]]] = {}  # proc -> [(answered at, serial, event)] of its own key
    recorded = False
    for i in history.of_kind("read"):
        t, q, _kind, f = events[i]
        recorded = True
        if q >= 0 and f.key == "nodes/" + procs[q].node_id:
            reads.setdefault(q, []).append((t, f.serial, i))
    out = []
    for q, writes in sorted(sw.writes.items()):
        first = writes[0]
        claim = claims.get(q)
        if claims and (claim is None or events[claim].t_ms > first.sent_ms):
            when = "before its start guard passed" if claim is not None else "and its start guard never passed"
            out.append(Violation(INVARIANT, f"{procs[q].label} sent its first node-lease write at "
                                            f"{first.sent_ms / 1000:.3f} s {when}"
                                            + (f" ({events[claim].t_ms / 1000:.3f} s)" if claim is not None else "")
                                            + ": the guard and the start check both come first (UP-1)",
                                 (first.event,) + ((claim,) if claim is not None else ())))
            continue
        if not recorded:
            continue
        mine = reads.get(q, [])
        out.extend(_after_the_wait(history, fx, sw, q, first, mine))
        if claim is not None and not any(j > claim and t <= first.sent_ms for t, _s, j in mine):
            out.append(Violation(INVARIANT, f"{procs[q].label}'s start guard passed at {events[claim].t_ms / 1000:.3f} s "
                                            f"and it sent its first node-lease write at {first.sent_ms / 1000:.3f} s "
                                            f"without reading nodes/{procs[q].node_id} in between: a guard that passes "
                                            f"after the start check's wait ended is followed by a fresh read (UP-1, NL-7)",
                                 (claim, first.event)))
        for w in writes:
            v = _conditioned(history, q, w, mine, claim)
            if v is not None:
                out.append(v)
                break
    return out


def _after_the_wait(history: History, fx: Facts, sw, q: int, first: StartWrite, mine) -> list[Violation]:
    """NL-5 as UP-1 meets it: ttl + grace from the check's first answered read, on q's monotonic clock."""
    pr = history.processes[q]
    answered = [(t, j) for t, serial, j in mine if serial >= 0 and t <= first.sent_ms]
    if not answered:
        return [Violation(INVARIANT, f"{pr.label} sent its first node-lease write at {first.sent_ms / 1000:.3f} s "
                                     f"without any answered read of nodes/{pr.node_id} before it: the start check "
                                     f"reads its object first (NL-5, NL-7)", (first.event,))]
    t_read, j = answered[0]
    if sw.waited(history, fx.params, q, first.sent_ms, t_read):
        return []
    span = fx.params.ttl_ms + fx.params.grace_ms
    waited = first.sent_ms - t_read
    return [Violation(INVARIANT, f"{pr.label} sent its first node-lease write at {first.sent_ms / 1000:.3f} s, "
                                 f"{waited / 1000:.3f} s after its start check's first read was answered (true time): "
                                 f"the check waits ttl + grace ({span / 1000:.3f} s) from it, but for the shortcut "
                                 f"of a fenced or released object (UP-1, NL-5)", (j, first.event))]


def _conditioned(history: History, q: int, w: StartWrite, mine, claim: int | None) -> Violation | None:
    """NL-7 as UP-1 meets it: the attempt's condition names the check's last read before it."""
    pr = history.processes[q]
    before = [(t, serial, j) for t, serial, j in mine if t <= w.sent_ms]
    if not before:
        return None  # (reported by the wait's clause for the first attempt; a later one follows it)
    at_send = [r for r in before if r[0] == w.sent_ms]
    if any(serial >= 0 for _t, serial, _j in at_send):
        allowed = [r for r in at_send if r[1] >= 0]  # the read it followed (or one answered at that instant)
    else:
        answered = [r for r in before if r[1] >= 0]
        if not answered:
            return None
        last = answered[-1]
        after_guard = claim is not None and last[2] > claim
        allowed = [last] if after_guard else answered  # a failed read: the check's last answered one
    if w.cond == IF_NONE_MATCH:
        named = 0
    elif w.cond == IF_MATCH:
        named = w.named_serial
        if named is None:
            return None  # a world that does not record the serial a refused write named
    else:
        return Violation(INVARIANT, f"{pr.label}'s first node-lease write (sent at {w.sent_ms / 1000:.3f} s) was "
                                    f"unconditional: it is If-None-Match or If-Match on the start check's last read "
                                    f"(NL-7)", (w.event,))
    if any(serial == named for _t, serial, _j in allowed):
        return None
    t, serial, j = allowed[-1]
    read = "found nothing" if serial == 0 else f"returned version #{serial}"
    names = "no object (If-None-Match)" if named == 0 else \
        ("a version it never read" if named < 0 else f"version #{named}")
    return Violation(INVARIANT, f"{pr.label}'s first node-lease write (sent at {w.sent_ms / 1000:.3f} s) names "
                                f"{names}, but the start check's last read of nodes/{pr.node_id} before it "
                                f"(answered at {t / 1000:.3f} s) {read}: the write is conditioned on that read "
                                f"(UP-1, NL-7)", (j, w.event))
