"""LEASE-1: for each node id, never two processes with a valid node lease at the same true
time; and no process believes its lease valid longer than the bucket granted.

Validity is rebuilt from the world's facts (checkers/facts.py): each `live` write of a process
that the bucket applied grants it validity from that instant to its send time on the
process's own clock + ttl - safety (NL-4), in true time, until the process ends. The model's
claims are cross-checked against those facts: a `live` write's `written_at` must not be later
than the sender's clock at send (NL-4: it is the send time; an earlier one only shortens what
peers wait), and a `lease_valid` observation must not reach past the last
applied write's grant ("believes it is valid longer than its last acknowledged write
allows").

NL-5 on world facts: a process's first `live` write that reached the bucket (applied or refused)
was sent at least ttl + grace after the process started, on its own clock (the start check waits
that long in every case, also when no object exists), unless the shortcut held: the bucket then
held a `fenced` or `released` object of that id whose kept written_at + ttl + grace had passed on
the process's clock. A check that ends early lets a new process write beside an instance that may
still be valid (a twin, or its predecessor's last write still in flight).

And NL-1 on the bucket's applied writes: a fence (FN-3, FN-7) or a `released` write (CS-1) over a
`live` object keeps that object's instance and written_at (FN-5 frees the records it names from
written_at + ttl + grace: a fence dated otherwise frees them at another instant than the one the
owner's own validity ends by).

Its coverage point: a twin that wins (NL-12: the second process's live write took effect while
the first ran), the situation the first clause judges. Its margins: the gap between one process's
last valid instant and the next process's first valid one under the same node id (the first
clause), and how long past its bound each start check waited (NL-5).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

from history import History, Violation

from .facts import Facts, facts, sent_ms
from .registry import Context, invariant, margin, once, point

INVARIANT = "LEASE-1"


@invariant(INVARIANT, "one valid node lease per node id, as the bucket granted it", kind="safety",
           rules=("NL-1", "NL-4", "NL-5", "NL-12"))
def check(history: History, fx: Facts | None = None) -> list[Violation]:
    fx = facts(history) if fx is None else fx
    out = list(once(history, "lease_handovers", lambda: _two_holders(history, fx))[0])
    out += _claims(history, fx)
    out += _kept_written_at(history)
    out += once(history, "start_checks", lambda: _start_check_waited(history, fx))[0]
    return out


def _start_check_waited(history: History, fx: Facts) -> tuple[list[Violation], int | None]:
    """NL-5: each process's first live write sent no earlier than its start + ttl + grace (own clock),
    or than a fenced/released object's kept written_at + ttl + grace (the shortcut). And the least
    slack of those writes: how long after the earliest instant the rule allowed it each was sent, on
    its clock (negative: too early, a violation)."""
    sw = start_writes(history)
    procs = history.processes
    span = fx.params.ttl_ms + fx.params.grace_ms
    out = []
    least = None
    for q, writes in sorted(sw.writes.items()):
        first = writes[0]
        slack = sw.slack(history, fx.params, q, first.sent_ms, sw.started[q])
        least = slack if least is None else min(least, slack)
        if slack >= 0:
            continue
        waited = first.sent_ms - sw.started[q]
        out.append(Violation(INVARIANT, f"{procs[q].label} sent its first node-lease write at {first.sent_ms / 1000:.3f} s, "
                                        f"{waited / 1000:.3f} s after it started (true time): the start check waits "
                                        f"ttl + grace ({span / 1000:.3f} s) in every case, but for the shortcut of a "
                                        f"fenced or released object (NL-5)", (first.event,)))
    return out, least


@dataclass(frozen=True, slots=True)
class StartWrite:
    """One first-write attempt of a process (NL-7): a `live` PUT of its own nodes/<id> that reached the
    bucket (took effect, or was refused on its condition), sent no later than the first of them took effect
    (later ones are NL-8's writes)."""

    event: int
    sent_ms: int
    cond: str | None  # its condition (None: unconditional)
    named_serial: int | None  # the serial its condition named as the writer knew it (0: If-None-Match;
    # -1: a version it never learned; None: not recorded)


@dataclass
class StartWrites:
    """The first-write attempts of every process (in the order they were sent), when each process started,
    and the fenced or released objects of each nodes/ key (NL-5's shortcut): shared by LEASE-1 and UP-1."""

    writes: dict[int, list[StartWrite]]
    started: dict[int, int]
    ended: dict[str, list[tuple[int, int]]]  # nodes/ key -> [(applied at, kept written_at)]

    def slack(self, history: History, p, q: int, sent: int, since: int) -> int:
        """NL-5 on world facts: how long after the earliest instant the rule allows it a write of q sent at true
        time `sent` left: ttl + grace after true time `since`, a wait, on q's monotonic clock (judged on true
        time but for NTP's slew: `Clock.mono_span`, issue 47), or once the shortcut held (a fenced or released
        object of q's id applied by then whose kept written_at + ttl + grace had passed on q's wall clock).
        Negative: too early."""
        span = p.ttl_ms + p.grace_ms
        clock = history.processes[q].clock
        local = clock.local(sent)
        slack = clock.mono_span(since, sent) - span  # (no step of its wall clock moves a wait, T-1)
        for at, w in self.ended.get("nodes/" + history.processes[q].node_id, ()):
            if at <= sent:
                slack = max(slack, local - (w + span))  # the shortcut
        return slack

    def waited(self, history: History, p, q: int, sent: int, since: int) -> bool:
        """NL-5 held for that write (its slack is not negative)."""
        return self.slack(history, p, q, sent, since) >= 0


def start_writes(history: History) -> StartWrites:
    """Each process's first-write attempts (StartWrite), read once per history from its applied and refused
    writes."""
    cached = history.cache.get("start_writes")
    if cached is not None:
        return cached
    events = history.events
    procs = history.processes
    started: dict[int, int] = {}
    writes: dict[int, list[StartWrite]] = {}
    first_applied: dict[int, int] = {}  # proc -> when its first live write took effect
    ended: dict[str, list[tuple[int, int]]] = {}
    for i in history.of_kind("start", "apply", "refused"):
        t, q, kind, f = events[i]
        if kind == "start":
            started.setdefault(q, t)
            continue
        if q < 0 or not str.startswith(f.key, "nodes/") or f.op != "PUT":
            continue
        if kind == "apply" and str.startswith(f.state, ("fenced ", "released ")):
            ended.setdefault(f.key, []).append((t, int(f.state.rsplit(" ", 1)[1])))
        pr = procs[q]
        if f.key != "nodes/" + pr.node_id or q not in started:
            continue
        if kind == "apply" and not str.startswith(f.state, f"live {pr.instance} "):
            continue
        if kind == "refused" and f.cond is None:
            continue
        sent = sent_ms(events[i])
        if q in first_applied and sent > first_applied[q]:
            continue
        if kind == "apply":
            first_applied.setdefault(q, t)
        named = f.named_serial if isinstance(f.named_serial, int) else None
        writes.setdefault(q, []).append(StartWrite(i, sent, f.cond, named))
    for ws in writes.values():
        ws.sort(key=lambda w: (w.sent_ms, w.event))
    out = history.cache["start_writes"] = StartWrites(writes, started, ended)
    return out


def _kept_written_at(history: History) -> list[Violation]:
    """NL-1: `fenced I W` or `released I W` written over `live I' W'` has I = I' and W = W'."""
    out = []
    events = history.events
    for i in history.of_kind("apply"):
        _t, q, _kind, f = events[i]
        state, prev = f.state, f.prev_state
        if q < 0 or not str.startswith(prev, "live ") or not str.startswith(state, ("fenced ", "released ")):
            continue
        if state.split(" ", 1)[1] != prev.split(" ", 1)[1]:
            out.append(Violation(INVARIANT, f"{f.key}: {history.processes[q].label} wrote \"{state}\" over \"{prev}\": "
                                            f"a fence or a release keeps the instance and written_at it replaces (NL-1)",
                                 (i,)))
    return out


def _two_holders(history: History, fx: Facts) -> tuple[list[Violation], int | None]:
    """Two processes of one node id valid at once (one counterexample per pair of overlapping windows: a new
    lease window is a new occurrence, issue 44), and the least gap between one process's last valid instant
    and the start of the next window of another process under that id (negative: they overlap, a
    violation)."""
    by_node: dict[str, list[tuple[int, int, int, int]]] = {}
    for p, ws in fx.lease.items():
        node = history.processes[p].node_id
        by_node.setdefault(node, []).extend((s, e, p, i) for s, e, i in ws)
    out = []
    least = None
    for node in sorted(by_node):
        best = None  # the window reaching furthest so far
        earlier: list[tuple[int, int, int, int]] = []  # the windows begun so far, for every overlapping pair
        for w in sorted(by_node[node]):
            if best is not None and w[2] != best[2]:
                gap = w[0] - best[1]
                least = gap if least is None else min(least, gap)
            for a in [x for x in earlier if w[0] < x[1] and w[2] != x[2]]:
                b = w
                pa, pb = history.processes[a[2]], history.processes[b[2]]
                out.append(Violation(
                    INVARIANT,
                    f"node {node}: process {pa.label} on {pa.machine} was valid over "
                    f"[{a[0] / 1000:.3f} s, {a[1] / 1000:.3f} s) and process {pb.label} on {pb.machine} over "
                    f"[{b[0] / 1000:.3f} s, {b[1] / 1000:.3f} s): both held node lease {node} for "
                    f"{(min(a[1], b[1]) - b[0]) / 1000:.3f} s",
                    (a[3], b[3]),
                ))
            earlier.append(w)
            if best is None or w[1] > best[1]:
                best = w
    return out, least


def _claims(history: History, fx: Facts) -> list[Violation]:
    out = []
    for p, writes in sorted(fx.live_writes.items()):
        for w in writes:
            if w.written_at_ms > w.sent_local_ms:  # later than its send: it claims validity never granted
                label = history.processes[p].label
                out.append(Violation(
                    INVARIANT,
                    f"{label} wrote written_at {w.written_at_ms} in its live write, but its clock read "
                    f"{w.sent_local_ms} when it sent it (NL-4: written_at is the send time, never later)", (w.event,)))
                break
    events = history.events
    # proc -> its live writes' apply instants in order, and the latest grant among those applied by each
    grants: dict[int, tuple[list[int], list[int]]] = {}
    for i in history.of_kind("lease_valid"):
        t, p, _kind, f = events[i]
        g = grants.get(p)
        if g is None:
            g = grants[p] = _grants(fx.live_writes.get(p, ()))
        k = bisect_right(g[0], t)
        granted = g[1][k - 1] if k else None  # the latest grant of the writes applied by t
        if granted is None or f.until_ms > granted:
            label = history.processes[p].label
            allows = ("no live write of it had taken effect" if granted is None
                      else f"its last applied live write allows only until {granted}")
            out.append(Violation(
                INVARIANT,
                f"{label} believes its node lease valid until {f.until_ms} (its clock) at {t / 1000:.3f} s, "
                f"but {allows}: it believes it is valid longer than its last acknowledged write allows", (i,)))
            break
    return out


def _grants(writes) -> tuple[list[int], list[int]]:
    """The apply instants of `writes`, sorted, and for each the latest `until_local_ms` among the writes
    applied by then: max(w.until_local_ms for w applied by t) is one bisection per claim."""
    applied, latest = [], []
    for w in sorted(writes, key=lambda w: w.applied_ms):
        applied.append(w.applied_ms)
        latest.append(w.until_local_ms if not latest else max(latest[-1], w.until_local_ms))
    return applied, latest


@margin("node_handover", "two validity windows of one node id (LEASE-1, NL-4, NL-12): the next process's first "
                         "valid instant minus the last valid instant of the one before it (negative: both valid at "
                         "once)", invariant=INVARIANT, rules=("NL-4", "NL-12"))
def _node_handover(c: Context) -> int | None:
    return once(c.history, "lease_handovers", lambda: _two_holders(c.history, c.facts))[1]


@margin("start_check", "the start check's wait (NL-5): a process's first node-lease write sent, on its clock, "
                       "minus its start + ttl + grace (or, with the shortcut, a fenced or released object's kept "
                       "written_at + ttl + grace, whichever allows it earlier)", invariant=INVARIANT, rules=("NL-5",))
def _start_check(c: Context) -> int | None:
    return once(c.history, "start_checks", lambda: _start_check_waited(c.history, c.facts))[1]


@point("twin won", "a twin held the node lease (its live write took effect) while the other process ran", topic="twins")
def _twin_won(c: Context) -> bool:
    """A twin (a process on a machine t<k>) whose lease window began while the node's original
    process (on a machine m<k>, its own live write applied before) still ran (NL-12)."""
    history, fx = c.history, c.facts
    procs = history.processes
    for k, pr in enumerate(procs):
        if str.startswith(pr.machine, "t") and fx.lease.get(k):
            start = fx.lease[k][0][0]
            if any(o != k and procs[o].node_id == pr.node_id and str.startswith(procs[o].machine, "m")
                   and fx.ended.get(o, (history.end_ms + 1,))[0] > start and fx.live_writes.get(o)
                   and fx.live_writes[o][0].applied_ms < start for o in range(len(procs))):
                return True
    return False
