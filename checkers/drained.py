"""INV-5 drained means free: a node reporting drained leaves no record naming it for the
actors it held (CS-3)."""

from __future__ import annotations

from .history import History, Violation
from .records import apply_to, names

INVARIANT = "INV-5"


def check(history: History) -> list[Violation]:
    state: dict[str, str] = {}
    written_by: dict[str, int] = {}
    out = []
    procs = history.processes
    for i, (t, p, kind, f) in enumerate(history.events):
        if apply_to(state, kind, f):
            written_by[f[0]] = i
            continue
        if kind != "drained":
            continue
        me = (procs[p].node_id, procs[p].instance)
        for key, line in state.items():
            if key.startswith("owners/") and names(line) == me:
                out.append(Violation(
                    INVARIANT,
                    f"{procs[p].label} reported drained at {t / 1000:.3f} s while {key} still named it ({line!r})",
                    (written_by[key], i),
                ))
                break
    return out
