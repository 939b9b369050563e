"""INV-8 nothing lost: every data write acknowledged by a valid owner is seen by every later
owner's restore.

A write is acknowledged (`data_acked`) only if the hold was still valid after the bucket
acknowledged it (OR-4); a hold that began after that acknowledgement must list it when it
restores (`restored`).
"""

from __future__ import annotations

from .history import History, Violation

INVARIANT = "INV-8"


def check(history: History) -> list[Violation]:
    acked: dict[str, list[tuple[int, str, int]]] = {}  # actor -> [(t, segment, event)]
    began: dict[tuple[int, str, int], int] = {}  # (proc, actor, generation) -> begin time
    out = []
    flagged: set[str] = set()
    for i, (t, p, kind, f) in enumerate(history.events):
        if kind == "data_acked":
            acked.setdefault(f[0], []).append((t, f[2], i))
        elif kind == "hold_began":
            began[(p, f[0], f[1])] = t
        elif kind == "restored":
            actor, gen, segments = f
            if actor in flagged:
                continue
            since = began.get((p, actor, gen), t)
            seen = set(segments)
            for ta, seg, j in acked.get(actor, ()):
                if ta >= since:
                    break
                if seg not in seen:
                    out.append(Violation(
                        INVARIANT,
                        f"actor {actor}: segment {seg} acknowledged at {ta / 1000:.3f} s is missing from the restore "
                        f"by {history.processes[p].label} at generation {gen} (hold began {since / 1000:.3f} s)",
                        (j, i),
                    ))
                    flagged.add(actor)
                    break
    return out
