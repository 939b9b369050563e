"""LEASE-1: for each node id, never two processes with a valid node lease at once.

A process's lease is valid (NL-4) from the true time a write was acknowledged
(or adopted, NL-9) until its `written_at + ttl - safety` on the process's own
clock, converted to true time, and never after the process lost its lease,
exited or crashed.
"""

from __future__ import annotations

from .history import History, Violation

INVARIANT = "LEASE-1"
_ENDS = ("lease_lost", "exit", "crash", "lease_invalidated")


def validity_windows(history: History) -> dict[int, list[tuple[int, int, int]]]:
    """proc -> merged windows (start_ms, end_ms, event index that opened it), half-open, true time.
    Computed once per history (several checkers ask)."""
    cached = history.cache.get("validity_windows")
    if cached is None:
        cached = history.cache["validity_windows"] = _validity_windows(history)
    return cached


def _validity_windows(history: History) -> dict[int, list[tuple[int, int, int]]]:
    raw: dict[int, list[list[int]]] = {}
    ended: dict[int, int] = {}
    clocks = [p.clock for p in history.processes]
    for i, (t, p, kind, f) in enumerate(history.events):
        if kind == "lease_valid":
            if p in ended:
                continue
            end = clocks[p].true_at(f[1])
            if end > t:
                raw.setdefault(p, []).append([t, end, i])
        elif kind in _ENDS and p not in ended:
            ended[p] = t
    out = {}
    for p, ws in raw.items():
        stop = ended.get(p)
        merged: list[list[int]] = []
        for w in ws:  # already in time order
            if stop is not None:
                w[1] = min(w[1], stop)
            if w[1] <= w[0]:
                continue
            if merged and w[0] <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], w[1])
            else:
                merged.append(w)
        out[p] = [tuple(w) for w in merged]
    return out


def check(history: History) -> list[Violation]:
    by_node: dict[str, list[tuple[int, int, int, int]]] = {}
    for p, ws in validity_windows(history).items():
        node = history.processes[p].node_id
        by_node.setdefault(node, []).extend((s, e, p, i) for s, e, i in ws)
    out = []
    for node in sorted(by_node):
        ws = sorted(by_node[node])
        best = None  # the window reaching furthest so far
        for w in ws:
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
