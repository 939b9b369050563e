"""INV-5 drained means free, over time: from the moment a process reports drained until it is
told to resume or it ends, no record in the bucket names it (CS-3), neither one left from
before nor one written after.

The report (`drained`) is the process's act; the records are the bucket's applied writes;
resuming is the world's own instruction (`told resume`) and ending its exit or crash.
"""

from __future__ import annotations

from history import History, Violation
from .records import apply_to, names

INVARIANT = "INV-5"


def check(history: History) -> list[Violation]:
    state: dict[str, str] = {}
    written_by: dict[str, int] = {}
    drained: dict[int, int] = {}  # proc -> event index of its drained report, while it stands
    out = []
    procs = history.processes
    flagged: set[int] = set()
    events = history.events
    for i in history.of_kind("apply", "fault_delete", "fault_put", "drained", "told", "exit", "crash"):
        t, p, kind, f = events[i]
        if apply_to(state, kind, f):
            written_by[f[0]] = i
            if kind == "apply" and f[0].startswith("owners/") and drained:
                who = names(f[6])
                for q, j in drained.items():
                    if who == (procs[q].node_id, procs[q].instance) and q not in flagged:
                        out.append(Violation(
                            INVARIANT,
                            f"{f[0]} was written naming {procs[q].label} ({f[6]!r}) at {t / 1000:.3f} s, after it "
                            f"reported drained at {history.events[j][0] / 1000:.3f} s and before it resumed or ended",
                            (j, i)))
                        flagged.add(q)
            continue
        if kind == "drained":
            drained[p] = i
            me = (procs[p].node_id, procs[p].instance)
            for key, line in state.items():
                if key.startswith("owners/") and names(line) == me and p not in flagged:
                    out.append(Violation(
                        INVARIANT,
                        f"{procs[p].label} reported drained at {t / 1000:.3f} s while {key} still named it ({line!r})",
                        (written_by[key], i),
                    ))
                    flagged.add(p)
                    break
        elif (kind == "told" and f[0] == "resume") or kind in ("exit", "crash"):
            drained.pop(p, None)
    return out
