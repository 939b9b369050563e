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

And NL-1 on the bucket's applied writes: a fence (FN-3, FN-7) or a `released` write (CS-1) over a
`live` object keeps that object's instance and written_at (FN-5 frees the records it names from
written_at + ttl + grace: a fence dated otherwise frees them at another instant than the one the
owner's own validity ends by).
"""

from __future__ import annotations

from bisect import bisect_right

from .facts import Facts, facts
from .history import History, Violation

INVARIANT = "LEASE-1"


def check(history: History, fx: Facts | None = None) -> list[Violation]:
    fx = facts(history) if fx is None else fx
    out = _two_holders(history, fx)
    out += _claims(history, fx)
    out += _kept_written_at(history)
    return out


def _kept_written_at(history: History) -> list[Violation]:
    """NL-1: `fenced I W` or `released I W` written over `live I' W'` has I = I' and W = W'."""
    out = []
    events = history.events
    for i in history.of_kind("apply"):
        _t, q, _kind, f = events[i]
        state, prev = f[6], f[7]
        if q < 0 or not prev.startswith("live ") or not state.startswith(("fenced ", "released ")):
            continue
        if state.split(" ", 1)[1] != prev.split(" ", 1)[1]:
            out.append(Violation(INVARIANT, f"{f[0]}: {history.processes[q].label} wrote \"{state}\" over \"{prev}\": "
                                            f"a fence or a release keeps the instance and written_at it replaces (NL-1)",
                                 (i,)))
    return out


def _two_holders(history: History, fx: Facts) -> list[Violation]:
    by_node: dict[str, list[tuple[int, int, int, int]]] = {}
    for p, ws in fx.lease.items():
        node = history.processes[p].node_id
        by_node.setdefault(node, []).extend((s, e, p, i) for s, e, i in ws)
    out = []
    for node in sorted(by_node):
        best = None  # the window reaching furthest so far
        for w in sorted(by_node[node]):
            if best is not None and w[0] < best[1] and w[2] != best[2]:
                a, b = best, w
                pa, pb = history.processes[a[2]], history.processes[b[2]]
                out.append(Violation(
                    INVARIANT,
                    f"node {node}: process {pa.label} on {pa.machine} was valid over "
                    f"[{a[0] / 1000:.3f} s, {a[1] / 1000:.3f} s) and process {pb.label} on {pb.machine} over "
                    f"[{b[0] / 1000:.3f} s, {b[1] / 1000:.3f} s): both held node lease {node} for "
                    f"{(min(a[1], b[1]) - b[0]) / 1000:.3f} s",
                    (a[3], b[3]),
                ))
                break  # one counterexample per node is enough to read
            if best is None or w[1] > best[1]:
                best = w
    return out


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
        if granted is None or f[1] > granted:
            label = history.processes[p].label
            allows = ("no live write of it had taken effect" if granted is None
                      else f"its last applied live write allows only until {granted}")
            out.append(Violation(
                INVARIANT,
                f"{label} believes its node lease valid until {f[1]} (its clock) at {t / 1000:.3f} s, "
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
