"""INV-6: a pending release never applies to a later hold.

Every release that lands (a write of *nobody* at generation g on
`owners/<actor>`) must replace the very hold it ends: a record naming the
releasing process's instance at generation g, at a moment when that process
no longer holds the actor (OR-5: it stops acting as owner before sending).
A release landing on a record of another instance or generation, or while
the releasing process holds the actor again, applied to a later hold.
"""

from __future__ import annotations

from .history import History, Violation
from .holds import hold_windows

INVARIANT = "INV-6"


def check(history: History, holds=None) -> list[Violation]:
    holds = hold_windows(history) if holds is None else holds
    by_proc_actor: dict[tuple[int, str], list] = {}
    for h in holds:
        by_proc_actor.setdefault((h.proc, h.actor), []).append(h)
    out = []
    procs = history.processes
    for i, (t, p, kind, f) in enumerate(history.events):
        if kind != "apply" or not f[0].startswith("owners/"):
            continue
        state, prev_state = f[6], f[7]
        if not state.startswith("nobody "):
            continue
        g = state.split(" ")[1]
        proc = procs[p]
        actor = f[0][len("owners/"):]
        expected = f"held {proc.node_id} {proc.instance} {g}"
        if prev_state != expected:
            out.append(Violation(
                INVARIANT,
                f"{f[0]}: the release of generation {g} by {proc.label} replaced "
                f"{prev_state or 'no record'!r}, not its own hold ({expected!r})",
                (i,),
            ))
            continue
        for h in by_proc_actor.get((p, actor), ()):
            # OR-5: a hold ends before its release is sent, so its release lands after its
            # window. A hold at this generation still valid when the release lands is a
            # later hold (an in-flight acquisition at the same generation, or a reused one).
            if h.generation == int(g) and h.end_ms > max(t, h.start_ms):
                when = "while" if h.start_ms <= t else "just before"
                out.append(Violation(
                    INVARIANT,
                    f"{f[0]}: a release of generation {g} by {proc.label} landed at {t / 1000:.3f} s {when} its "
                    f"{h.describe(history)}: the record names nobody under a live owner",
                    (h.opened, i) if h.opened < i else (i, h.opened),
                ))
                break
    return out
