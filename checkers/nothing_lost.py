"""INV-8 nothing lost: every data write acknowledged by a valid owner is seen by every later
owner's restore.

A write is acknowledged (`data_acked`) only if its hold was still valid after the bucket
acknowledged it (OR-4); every hold of the actor at a higher generation began after that
hold ended (INV-1, INV-2), so its restore (`restored`, the listing made after acquiring)
must list the segment. A segment acknowledged after a later owner already restored
without it is lost to that owner.
"""

from __future__ import annotations

from .history import History, Violation

INVARIANT = "INV-8"


def check(history: History) -> list[Violation]:
    acked: dict[str, list[tuple[int, str, int]]] = {}  # actor -> [(generation, segment, event)]
    restores: dict[str, list[tuple[int, set, int, int]]] = {}  # actor -> [(generation, segments, proc, event)]
    for i, (t, p, kind, f) in enumerate(history.events):
        if kind == "data_acked":
            acked.setdefault(f[0], []).append((f[1], f[2], i))
        elif kind == "restored":
            restores.setdefault(f[0], []).append((f[1], set(f[2]), p, i))
    out = []
    for actor in sorted(acked):
        done = False
        for gw, seg, j in acked[actor]:
            for g, segments, p, i in restores.get(actor, ()):
                if g > gw and seg not in segments:
                    ev = history.events
                    out.append(Violation(
                        INVARIANT,
                        f"actor {actor}: segment {seg} of generation {gw}, acknowledged at {ev[j][0] / 1000:.3f} s, "
                        f"is missing from the restore by {history.processes[p].label} at generation {g} "
                        f"({ev[i][0] / 1000:.3f} s)",
                        tuple(sorted((j, i))),
                    ))
                    done = True
                    break
            if done:
                break
    return out
