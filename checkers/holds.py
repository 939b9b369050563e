"""Holds and their validity windows in true time, shared by INV-1, INV-2 and INV-6.

A hold's window (OR-4) runs from the moment it began (its write acknowledged,
or adopted by read-back) to the earliest of: its end (released, lapsed,
dropped), the end of the node lease's validity window it began in (see
lease.validity_windows: `written_at + ttl - safety` converted from the
process's clock to true time, cut at exit, crash, loss or local
invalidation), and the process's exit. A hold of an old binary (section 6)
is valid by its own per-actor lease instead: until the `sent + ttl - safety`
of its last acknowledged write (`hold_valid`).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

from .history import History
from .lease import validity_windows


@dataclass(slots=True)
class HoldWindow:
    actor: str
    proc: int
    generation: int
    start_ms: int
    end_ms: int
    opened: int  # event index of hold_began
    closed: int | None  # event index that ended it (None: the lease window's end, or the run's)
    how_closed: str

    def describe(self, history: History) -> str:
        p = history.processes[self.proc]
        return (f"hold of {self.actor} by {p.label} (machine {p.machine}) at generation {self.generation}, "
                f"valid [{self.start_ms / 1000:.3f} s, {self.end_ms / 1000:.3f} s), ended by {self.how_closed}")


def hold_windows(history: History) -> list[HoldWindow]:
    """Every hold of the history, in the order they began."""
    lease = validity_windows(history)
    starts = {p: [w[0] for w in ws] for p, ws in lease.items()}
    open_: dict[tuple[int, str], HoldWindow] = {}
    out: list[HoldWindow] = []
    clocks = [pr.clock for pr in history.processes]
    for i, (t, p, kind, f) in enumerate(history.events):
        if kind == "hold_began":
            actor, gen = f[0], f[1]
            if f[3] == "old":
                # an old per-actor lease: valid by its own renewals (hold_valid), not a node lease
                end, how = t, "its old lease's validity ending"
            else:
                ws = lease.get(p, ())
                k = bisect_right(starts.get(p, ()), t) - 1
                if k >= 0 and ws[k][0] <= t < ws[k][1]:
                    end, how = ws[k][1], "the node lease's validity ending"
                else:
                    end, how = t, "the node lease not being valid when it began"
            h = HoldWindow(actor, p, gen, t, end, i, None, how)
            out.append(h)
            open_[(p, actor)] = h
        elif kind == "hold_valid":
            h = open_.get((p, f[0]))
            if h is not None and h.generation == f[1] and h.closed is None:
                h.end_ms = max(h.end_ms, clocks[p].true_at(f[2]))  # sent + ttl - safety on its clock
        elif kind == "hold_ended":
            h = open_.pop((p, f[0]), None)
            if h is not None and t < h.end_ms:
                h.end_ms, h.closed, h.how_closed = t, i, f"hold_ended ({f[2]})"
        elif kind in ("exit", "crash"):
            for key in [k for k in open_ if k[0] == p]:
                h = open_.pop(key)
                if t < h.end_ms:
                    h.end_ms, h.closed, h.how_closed = t, i, kind
    return out
