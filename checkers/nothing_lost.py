"""INV-8 nothing lost: every hold restores before it acts, and every data write acknowledged by
a valid owner is seen by every later owner's restore.

World facts only: a hold is a record write that took effect (checkers/facts.py); a restore is
a listing of `wal/<actor>/` that the world delivered to the holder (`listed`), sent after the
hold's record write took effect and delivered before the hold's first act (a request served,
a data write sent, an acknowledgement). Every segment acknowledged to a client before that
listing was sent, or acknowledged at any time by an earlier owner (its hold began before this
one), must be in it: the acknowledgement came after the bucket applied the segment (OR-4),
and an earlier owner's validity ended before this hold began (INV-1), so a listing sent later
sees it. (Whether the process that acknowledged it was a valid
owner is INV-1's question; the client was told it is durable either way.)
"""

from __future__ import annotations

from .facts import DATA, Facts, facts
from .history import History, Violation

INVARIANT = "INV-8"


def check(history: History, fx: Facts | None = None) -> list[Violation]:
    fx = facts(history) if fx is None else fx
    events = history.events
    listings: dict[tuple[int, str], list[tuple[int, int, set, int]]] = {}  # (proc, actor) -> [(sent, at, keys, event)]
    for i in history.of_kind("listed"):
        t, p, _kind, f = events[i]
        if f[0].startswith(DATA):
            listings.setdefault((p, f[0][len(DATA):].rstrip("/")), []).append((f[2], t, set(f[1]), i))
    acts: dict[tuple[int, str], list[tuple[int, int]]] = {}
    # actor -> [(t, segment, event, when the acknowledging hold began)] acknowledged to a client
    acked: dict[str, list[tuple[int, str, int, int]]] = {}
    for t, p, actor, what, i in fx.acts:
        acts.setdefault((p, actor), []).append((t, i))
    for i in history.of_kind("data_acked"):  # a client was told it is durable (whether the teller was owner is INV-1's)
        t, p, _kind, f = events[i]
        began = max((h.start_ms for h in fx.by_proc_actor.get((p, f[0]), ()) if h.start_ms <= t), default=t)
        acked.setdefault(f[0], []).append((t, f[2], i, began))
    out = []
    flagged: set[str] = set()
    for h in fx.holds:
        if h.actor in flagged or h.end_ms <= h.start_ms:
            continue
        # its first act (acts in time order), not every one
        first = next(((t, i) for t, i in acts.get((h.proc, h.actor), ()) if fx.valid_at(h, t)), None)
        if first is None:
            continue  # a hold that never acts needs no restore
        first_t, first_i = first
        restore = next((x for x in listings.get((h.proc, h.actor), ()) if x[0] >= h.start_ms and x[1] <= first_t), None)
        if restore is None:
            out.append(Violation(
                INVARIANT,
                f"{h.describe(history)} acted at {first_t / 1000:.3f} s without restoring first: no listing of "
                f"{DATA}{h.actor}/ sent after its record write took effect reached it before",
                (h.opened, first_i)))
            flagged.add(h.actor)
            continue
        sent, _at, keys, j = restore
        for t, seg, k, began in acked.get(h.actor, ()):
            # acknowledged before this listing was sent, or by an owner that came before this one
            if (t < sent or began < h.start_ms) and seg not in keys:
                out.append(Violation(
                    INVARIANT,
                    f"actor {h.actor}: segment {seg}, acknowledged at {t / 1000:.3f} s, is missing from the restore "
                    f"of the {h.describe(history)} (listing sent at {sent / 1000:.3f} s)",
                    tuple(sorted((k, j)))))
                flagged.add(h.actor)
                break
    return out
