"""UP-2, judged on world facts: a new node starts writing its node lease only once every old-format
heartbeat it could have read was stale by the start guard's test: written more than horizon +
ttl + grace ago on the new node's clock (horizon: three heartbeat periods), or, for one dated
ahead of its clock, that long plus max_skew after it appeared in the bucket, counted on the new
node's own clock (UP-2: its monotonic clock; a clock that drifts across the max_skew band counts
durations short or long, and the rule is judged as that node could apply it).

The heartbeats are the old binaries' applied writes on `nodes/` (each judged by its own written_at,
the writer's clock at send, which the world knows: a rewritten heartbeat is fresh again), those the
guard could read between the process's start and the moment it says its guard passed (`guard_passed`,
a claim cross-checked here), or the moment it sent its first lease write if that came first (a write
before the claim is UP-1's violation, checkers/start_order.py). A future-dated one is counted from the
process's first read of that very body, as the world recorded it (`read`: the answer's instant), or,
with no such record, from no earlier than the body was there and the process had started. A guard
that passes early lets a new node serve beside an old one that may still hold per-actor leases
(section 6).

FN-8 applies the same test: `cluster forget` deletes (conditionally) a retired old-format
heartbeat once stale by it. Judged on what the bucket applied: every delete on `nodes/` that took
effect (only forget deletes there) removed an old-format heartbeat written at least horizon +
ttl + grace before the deleter's clock read at that instant (its decision came no later, and its
clock only moves on). A forget that deletes a fresh old heartbeat hides an old binary still
running from every new node's start guard; one that deletes a format-3 object is no forget.

The coverage points of both tests are declared here: FN-8's outcomes (a retired heartbeat deleted;
a fresh one, or a format-3 object, refused) and a new node's lost read of a fresh old heartbeat
(the guard must hold on a read that proves nothing). Their margins: how long after the freshest
old heartbeat it could read went stale each guard passed (`start_guard`), and each forget deleted
(`forget`).
"""

from __future__ import annotations

from dataclasses import dataclass

from history import History, Violation

from .facts import Facts, facts, keyed, sent_ms
from .lease import start_writes
from .registry import Context, invariant, margin, once, point

INVARIANT = "UP-2"


def stale_after_ms(p) -> int:
    """UP-2's test, computed here from the rule's text (docs/protocol.md, UP-2), never from the model's
    code: an old-format heartbeat is stale once written `horizon + ttl + grace` ago, the horizon being
    the old readiness horizon, three heartbeat periods, each the configured heartbeat period (T-3's
    configured value, not the lease period P). A model whose guard computes it otherwise (no horizon,
    a shorter one, no grace) passes while this says fresh (broken model `guard_without_horizon`)."""
    horizon = 3 * p.heartbeat_period_ms
    return horizon + p.ttl_ms + p.grace_ms


@invariant(INVARIANT, "the start guard waits out every old-format heartbeat", kind="safety", rules=("UP-2", "FN-8"))
def check(history: History, fx: Facts | None = None) -> list[Violation]:
    fx = facts(history) if fx is None else fx
    return list(once(history, "start_guards", lambda: _judge(history, fx))[0])


def _judge(history: History, fx: Facts) -> tuple[list[Violation], int | None, int | None]:
    """The violations, and two least slacks: the start guard's (per new process, its first lease write
    before its guard passed is that write's send minus the pass; otherwise, of the keys holding an old
    heartbeat its last round could read, the least of each key's best slack: the pass minus the instant
    its stalest readable heartbeat became stale by the guard's test), and the forgets' (each deleted
    heartbeat's age on the deleter's clock minus the guard's span). Negative: a violation."""
    p = fx.params
    span = stale_after_ms(p)
    procs = history.processes
    clocks = [pr.clock for pr in procs]
    old: dict[str, list[tuple[int, int, int]]] = {}  # key -> [(applied at, written_at on the writer's clock, event)]
    out = []
    guard_least = forget_least = None
    events = history.events
    for i in history.of_kind("apply", "fault_delete", "fault_put"):
        t, q, kind, f = events[i]
        if kind == "apply" and q >= 0 and str.startswith(f.key, "nodes/") and f.op == "DELETE":
            found, slack = _forget(f.key, old.get(f.key), f.prev_state, t, q, i, procs, span)
            out.extend(found)
            if slack is not None:
                forget_least = slack if forget_least is None else min(forget_least, slack)
        if kind == "apply" and q >= 0 and str.startswith(f.key, "nodes/") and str.startswith(f.state, "node "):
            old.setdefault(f.key, []).append((t, clocks[q].local(sent_ms(events[i])), i))
        elif kind == "fault_put" and str.startswith(f.key, "nodes/") and f.written_at_ms is not None:
            old.setdefault(f.key, []).append((t, f.written_at_ms, i))  # the world wrote an old heartbeat dated so
        elif f.key in old and not (kind == "apply" and str.startswith(f.state, "node ")):
            old[f.key].append((t, None, i))  # replaced or deleted: no old heartbeat there from now
    if not old:
        return out, guard_least, forget_least
    starts = {events[i].proc: events[i].t_ms for i in history.of_kind("start")}
    # when each process says its guard passed (a claim, read only against the bucket's heartbeats;
    # an old binary started after that is an old version running, logged, not the guard's). A first
    # lease write sent before that claim is UP-1's (checkers/start_order.py); the guard is judged here
    # at the earlier of the two, the instant the process acted as if it had passed
    passed = {}
    for i in history.of_kind("guard_passed"):
        t, q = events[i].t_ms, events[i].proc
        if q not in passed:
            passed[q] = (t, i)
    first_read = _first_reads(history)
    for n, writes in sorted(start_writes(history).writes.items()):
        first = writes[0]
        began = starts.get(n, 0)
        t_g, g_event = passed.get(n, (first.sent_ms, first.event))
        if first.sent_ms < t_g:
            t_g, g_event = first.sent_ms, first.event
        what = "start guard passed" if g_event != first.event else "first node-lease write was sent"
        # the guard's last round read every key at some instant of its last R ms: LIST, then one GET
        # per key, each within an attempt timeout, half a period after the round before
        keys = len({events[k].fields.key for k in keyed(history, "nodes/", "apply")})
        window = p.heartbeat_period_ms // 2 + (keys + 1) * p.attempt_timeout_ms
        shown = False
        # the keys its listings of nodes/ answered within that span showed (the world's record; None: it
        # listed none there, and every key counts): a key none of them showed was not in the last round's
        # listing, so that round read nothing there (a heartbeat that appeared after it is seen, after the
        # switch, as an old version running, not by the guard: section 6)
        shown_keys = _listed_keys(history, n, t_g - window, t_g)
        for key, beats in sorted(old.items()):
            if shown_keys is not None and key[len("nodes/"):] not in shown_keys:
                continue
            # what that round read there: the body present at t_g - window, or one written after
            there = [b for b in beats if b[0] <= t_g - window][-1:] + [b for b in beats if t_g - window < b[0] < t_g]
            fresh = []
            for t_old, written_at, i in there:
                if written_at is None:
                    fresh = []
                    break  # no old heartbeat there at some point: the round may have read none
                # when it first read this body: the world's record of its reads (UP-2: "after this node
                # first read that same body"), else no earlier than the body was there and it had started
                read = first_read.get((n, i), max(t_old, began))
                if read > t_g:
                    read = max(t_old, began)  # read only after its guard passed: not what the guard saw
                # (the lapse of a future-dated one is counted on this node's monotonic clock)
                until = min(clocks[n].true_at(written_at + span),
                            clocks[n].mono_true_at(clocks[n].mono(read) + span + p.max_skew_ms))
                fresh.append((t_old, until, i))
            if not fresh:
                continue
            # the key's slack: the pass minus when the stalest heartbeat the round could read became stale
            # (a stale one, slack >= 0: the round may have read it)
            t_old, until, i = min(fresh, key=lambda x: x[1])
            guard_least = t_g - until if guard_least is None else min(guard_least, t_g - until)
            if t_g < until and not shown:
                shown = True
                out.append(Violation(
                    INVARIANT,
                    f"{procs[n].label}'s {what} at {t_g / 1000:.3f} s, while every old-format heartbeat on "
                    f"{key} its last round could read was fresh by its test (the stalest, applied at "
                    f"{t_old / 1000:.3f} s, not stale before {until / 1000:.3f} s)", (i, g_event)))
    return out, guard_least, forget_least


def _listed_keys(history: History, q: int, lo: int, hi: int) -> set[str] | None:
    """The nodes/ keys (after the prefix) any listing of nodes/ answered to process q in [lo, hi] showed;
    None when none was answered then."""
    out = None
    events = history.events
    for i in history.of_kind("listed"):
        t, p, _kind, f = events[i]
        if p == q and lo <= t <= hi and f.prefix == "nodes/":
            out = (out or set()) | set(f.keys)
    return out


def _first_reads(history: History) -> dict[tuple[int, int], int]:
    """(process, event index of an applied old-format heartbeat) -> when the process's first read of that
    body was answered (true time), from the world's `read` events (their serial is the write's)."""
    events = history.events
    write_of: dict[tuple[str, int], int] = {}  # (key, serial) -> the apply event that wrote it
    out: dict[tuple[int, int], int] = {}
    for i in history.of_kind("apply", "read"):
        t, q, kind, f = events[i]
        if kind == "apply":
            if str.startswith(f.key, "nodes/") and str.startswith(f.state, "node ") and isinstance(f.serial, int):
                write_of[(f.key, f.serial)] = i
        elif q >= 0 and f.serial > 0:
            w = write_of.get((f.key, f.serial))
            if w is not None and (q, w) not in out:
                out[(q, w)] = t
    return out


def _forget(key, beats, prev_state, t, q, i, procs, span) -> tuple[list[Violation], int | None]:
    """FN-8: the delete of `key` by process q, applied at t, removed what UP-2's test calls a stale
    old-format heartbeat (`beats`: the key's old heartbeats so far, the last one the deleted body
    when it is one). And its slack: the heartbeat's age minus the span (None: no heartbeat deleted)."""
    who = procs[q].label
    if not str.startswith(prev_state, "node ") or not beats or beats[-1][1] is None:
        what = f"a {prev_state.split(' ', 1)[0]} record" if prev_state else "no object"
        return [Violation(INVARIANT, f"FN-8: {who} deleted {key} at {t / 1000:.3f} s, which held {what}, "
                                     f"not a retired old-format heartbeat", (i,))], None
    _t_old, written_at, j = beats[-1]
    age = procs[q].clock.local(t) - written_at
    if age < span:
        return [Violation(INVARIANT, f"FN-8: {who} deleted the old-format heartbeat on {key} at {t / 1000:.3f} s, "
                                     f"written {age / 1000:.3f} s before on its clock: fresh by UP-2's test "
                                     f"(stale after {span / 1000:.3f} s)", (j, i))], age - span
    return [], age - span


@margin("start_guard", "the start guard's wait (UP-2): the instant a new node's guard passed minus the instant the "
                       "freshest old-format heartbeat its last round could read became stale by the guard's test "
                       "(horizon + ttl + grace on the node's clock; its first lease write before the pass: that "
                       "write's send minus the pass)", invariant=INVARIANT, rules=("UP-2",))
def _start_guard(c: Context) -> int | None:
    return once(c.history, "start_guards", lambda: _judge(c.history, c.facts))[1]


@margin("forget", "`cluster forget`'s wait (FN-8, by UP-2's test): a deleted old-format heartbeat's age on the "
                  "deleter's clock minus horizon + ttl + grace", invariant=INVARIANT, rules=("FN-8",))
def _forget_wait(c: Context) -> int | None:
    return once(c.history, "start_guards", lambda: _judge(c.history, c.facts))[2]


# --- coverage: old-format heartbeats met by the guard and by `cluster forget` ---------------------------


@dataclass
class _Sightings:
    forget_deleted: bool = False  # `cluster forget` deleted an old-format heartbeat
    forget_refused_fresh: bool = False  # it refused while the heartbeat in the bucket was fresh by UP-2's test
    forget_refused_format3: bool = False  # it refused a format-3 object
    guard_read_lost: bool = False  # a new node's read of a fresh old heartbeat was lost or failed


def _old_heartbeats(c: Context) -> _Sightings:
    """Read from the bucket's applied writes in order: a heartbeat is fresh while it was written less
    than UP-2's span before the reader's clock (the operator's at its read, the new node's at its
    lost read). `cluster forget` met an object when the world asked it (`operator`) and delivered its read of
    that node's key (`read`, the object then in the bucket); it refused when it then wrote nothing on that key
    before the world's next command to it (world facts, issue 44: never the tool's own `operator_done`)."""
    history = c.history
    p = c.params
    out = _Sightings()
    events = history.events
    procs = history.processes
    span = stale_after_ms(p)
    new = {k for k, pr in enumerate(procs) if pr.machine[0] in "mt"}  # new nodes' processes (and their twins)
    old: dict[str, int | None] = {}  # nodes/ key -> written_at of the old heartbeat it holds (None: none)
    fmt3: set[str] = set()  # nodes/ keys holding a format-3 object (live, fenced, released)
    asked: dict[int, str] = {}  # the operator's process -> the nodes/ key `cluster forget` was asked of, last
    met: dict[int, tuple[bool, bool]] = {}  # that process -> (read a fresh old heartbeat, read a format-3 object)

    def settle(q: int) -> None:  # the command's end: nothing written on its key, it refused what it met
        fresh, format3 = met.pop(q, (False, False))
        out.forget_refused_fresh |= fresh
        out.forget_refused_format3 |= format3

    for i in history.of_kind("apply", "fault_delete", "fault_put", "operator", "read", "fault"):
        t, q, kind, f = events[i]
        if kind == "fault":
            if (q in new and f.what in ("request_lost", "fail_fast", "reply_lost")
                    and str.startswith(f.target, "GET nodes/")):
                written_at = old.get(f.target[len("GET "):])
                if written_at is not None and procs[q].clock.local(t) - written_at < span:
                    out.guard_read_lost = True
        elif kind == "operator":
            settle(q)
            asked.pop(q, None)
            if f.command == "cluster_forget":
                asked[q] = "nodes/" + f.node
        elif kind == "read":
            if asked.get(q) == f.key and f.serial is not None and f.serial >= 0:
                written_at = old.get(f.key)
                met[q] = (written_at is not None and procs[q].clock.local(t) - written_at < span, f.key in fmt3)
        elif kind == "fault_put":
            old[f.key] = f.written_at_ms  # the world wrote an old heartbeat so dated, or another body (None)
            fmt3.discard(f.key)
        elif str.startswith(f.key, "nodes/"):
            applied = kind == "apply"
            if applied and q >= 0 and asked.get(q) == f.key:
                met.pop(q, None)  # it wrote on the key it was asked of: not a refusal
            if applied and f.op == "DELETE" and q >= 0 and asked.get(q) == f.key \
                    and str.startswith(f.prev_state, "node "):
                out.forget_deleted = True  # the operator's delete, on the key `cluster forget` was asked of
            old[f.key] = (procs[q].clock.local(sent_ms(events[i])) if applied and q >= 0
                          and str.startswith(f.state, "node ") else None)
            if applied and str.startswith(f.state, ("live ", "fenced ", "released ")):
                fmt3.add(f.key)
            else:
                fmt3.discard(f.key)
    for q in list(met):
        settle(q)
    return out


@point("forget deleted a retired heartbeat",
       "`cluster forget` deleted an old-format heartbeat stale by UP-2's test (FN-8)", topic="upgrade")
def _forget_deleted(c: Context) -> bool:
    return c.scan(_old_heartbeats).forget_deleted


@point("forget met a fresh heartbeat", "`cluster forget` was asked while the node's old-format heartbeat in the "
                                       "bucket was fresh by UP-2's test, and refused (FN-8)", topic="upgrade")
def _forget_refused_fresh(c: Context) -> bool:
    return c.scan(_old_heartbeats).forget_refused_fresh


@point("guard read lost on a fresh heartbeat", "a new node's read of an old-format heartbeat still fresh by UP-2's "
       "test was lost or failed (the start guard must hold on a read that proves nothing)", topic="upgrade")
def _guard_read_lost(c: Context) -> bool:
    return c.scan(_old_heartbeats).guard_read_lost


@point("forget met a format-3 object", "`cluster forget` was asked of a node whose object is in format 3 (a node "
                                       "gone for good, or retired), and refused (FN-8)", topic="upgrade")
def _forget_refused_format3(c: Context) -> bool:
    return c.scan(_old_heartbeats).forget_refused_format3
