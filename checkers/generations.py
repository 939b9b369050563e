"""INV-2 one generation per hold, read from the records the bucket applied: no two holds of
one actor share a generation, successive holds' generations strictly increase (old binaries'
per-actor leases, then the new records, across the upgrade), and a hold's generation is
above every segment the actor's earlier holds wrote (ADR 0007: segment keys carry it).

A hold here is a record write that took effect naming its writer (checkers/facts.py), not the
model's `hold_began`: the generation is the one the bucket stored.
"""

from __future__ import annotations

from history import History, Violation

from .facts import DATA, Facts, act_actor, facts
from .registry import invariant

INVARIANT = "INV-2"


@invariant(INVARIANT, "one generation per hold", kind="safety", rules=("OR-3", "UP-3"))
def check(history: History, fx: Facts | None = None) -> list[Violation]:
    fx = facts(history) if fx is None else fx
    last: dict[str, object] = {}
    out = []
    flagged: set[int] = set()  # the holds reported (each its own occurrence, issue 44: not one per actor)
    for h in fx.holds:  # in the order they began
        if h.renewal or h.end_ms <= h.start_ms:
            # an old lease renewed after a lapse is the same hold; a record that landed after its
            # writer ended (a late write) named a process that held nothing: the next real hold
            # is judged against the last real one
            continue
        prev = last.get(h.actor)
        if prev is not None and h.generation <= prev.generation and h.opened not in flagged:
            what = "the same generation as" if h.generation == prev.generation else "a lower generation than"
            out.append(Violation(
                INVARIANT,
                f"actor {h.actor}: {h.describe(history)} has {what} the earlier {prev.describe(history)}",
                (prev.opened, h.opened),
            ))
            flagged.add(h.opened)
        if prev is None or h.generation > prev.generation:
            last[h.actor] = h
    # segments already written at or above a new hold's generation (its keys would collide); a record that
    # landed after its writer ended is no hold here either (nobody can write a segment in it: seed 3948 of
    # issue 38's draw, an old binary's create held back 38.5 s that landed after the old garbage collection
    # had deleted the lease it released, its process long gone; UP-3 seeds the next hold above the segment)
    top: dict[str, tuple[int, int]] = {}  # actor -> (highest segment generation written so far, event)
    starts = [(h.opened, h) for h in fx.holds if not h.renewal and h.end_ms > h.start_ms]
    k = 0
    events = history.events
    for i in history.of_kind("apply"):  # every hold opens at an applied write
        t, p, kind, f = events[i]
        while k < len(starts) and starts[k][0] == i:
            h = starts[k][1]
            k += 1
            seg = top.get(h.actor)
            if seg is not None and h.generation <= seg[0] and h.opened not in flagged:
                out.append(Violation(
                    INVARIANT,
                    f"actor {h.actor}: {h.describe(history)} is not above generation {seg[0]}, which a segment of "
                    f"an earlier hold already carries ({history.events[seg[1]].fields.key})",
                    (seg[1], h.opened),
                ))
                flagged.add(h.opened)
        if str.startswith(f.key, DATA) and f.op == "PUT":
            actor = act_actor(f.key)
            g = _key_generation(f.key)
            if g > top.get(actor, (0, -1))[0]:
                top[actor] = (g, i)
    return out


def _key_generation(key: str) -> int:
    try:
        return int(key.rsplit("/", 1)[1].split("-", 1)[0])
    except (ValueError, IndexError):
        return 0
