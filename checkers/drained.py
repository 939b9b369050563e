"""INV-5 drained means free, over time: from the moment a process reports drained until it is
told to resume or it ends, no record in the bucket names it (CS-3), neither one left from
before nor one written after.

The report (`drained`) is the process's act; the records are the bucket's applied writes;
resuming is the world's own instruction (`told resume`) and ending its exit or crash.
"""

from __future__ import annotations

from history import History, Violation

from .facts import pauses
from .records import apply_to, names
from .registry import invariant

INVARIANT = "INV-5"


@invariant(INVARIANT, "drained means free", kind="safety", rules=("CS-3",))
def check(history: History) -> list[Violation]:
    state: dict[str, str] = {}
    written_by: dict[str, int] = {}
    drained: dict[int, int] = {}  # proc -> event index of its drained report, while it stands
    out = []
    procs = history.processes
    flagged: set[int] = set()  # the drained reports judged wrong (each its own occurrence, issue 44)
    events = history.events
    for i in _in_effect_order(history):
        t, p, kind, f = events[i]
        if apply_to(state, kind, f):
            written_by[f.key] = i
            if kind == "apply" and str.startswith(f.key, "owners/") and drained:
                who = names(f.state)
                for q, j in drained.items():
                    if who == (procs[q].node_id, procs[q].instance) and j not in flagged:
                        out.append(Violation(
                            INVARIANT,
                            f"{f.key} was written naming {procs[q].label} ({f.state!r}) at {t / 1000:.3f} s, after it "
                            f"reported drained at {history.events[j].t_ms / 1000:.3f} s and before it resumed or ended",
                            (j, i)))
                        flagged.add(j)
            continue
        if kind == "drained":
            drained[p] = i
            me = (procs[p].node_id, procs[p].instance)
            for key, line in state.items():
                if str.startswith(key, "owners/") and names(line) == me and i not in flagged:
                    out.append(Violation(
                        INVARIANT,
                        f"{procs[p].label} reported drained at {t / 1000:.3f} s while {key} still named it ({line!r})",
                        (written_by[key], i),
                    ))
                    flagged.add(i)
                    break
        elif (kind == "told" and f.command == "resume") or kind in ("exit", "crash"):
            drained.pop(p, None)
    return out


def _in_effect_order(history: History) -> list[int]:
    """The events INV-5 reads, in the order they took effect: a command the world gave a paused process
    (`told` during its pause) reaches it only as the pause ends, after what it does on the commands queued
    before (issue 47: a drain and a resume told during one pause are handled at its end, drain first, so the
    drained report comes after the `told resume` event and stands for no time); a pause that begins the
    instant one ends carries the command on to its own end."""
    events = history.events
    paused = pauses(history)
    kinds = ("apply", "fault_delete", "fault_put", "drained", "told", "exit", "crash")
    if not paused:
        return list(history.of_kind(*kinds))  # (most seeds: no pause, the record's order is the effect order)
    keyed = []
    for i in history.of_kind(*kinds):
        t, p, kind, _f = events[i]
        at, late = t, 0
        if kind == "told":
            for s, e in paused.get(p, ()):
                if s <= t <= e:
                    at, late = e, 1  # (at the pause's end, after the steps the process takes at that instant)
                    break
            if late:
                # a pause that begins as the last one ends (the process paused again before its queue was worked,
                # swarm seed 10534) holds the command on: it takes effect when the process runs on at last
                for s, e in paused.get(p, ()):
                    if s == at:
                        at = e
        keyed.append((at, late, i))
    keyed.sort()
    return [i for _at, _late, i in keyed]
