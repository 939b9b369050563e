"""Margins you can see: how close each history came to each timing rule's bound.

A verdict says whether a bound held; a margin says by how much. For each rule with a time bound
(the takeover against the owner's validity, two validity windows of one node id, a fence or a
freeing against `W + ttl + grace`, CS-2's retry window, a drain's, a stop's and failover's bound,
the start check's and the start guard's waits) a margin measures, on one history, the smallest
slack left to that bound, in ms: positive, how much room the closest case kept; negative, the
bound was broken, and the invariant the margin names flags that history too. A history without
the rule's situation has no value (None). A campaign keeps each margin's minimum, histogram and
the seed reaching it (campaign/report.py), so that a change which eats a margin is seen before
the margin goes negative.

A margin is declared beside the checker of its rule (checkers/registry.py: `@margin`) and measured
by the rule's own test, shared with that checker (computed once per history, `registry.once`):
the margin and the verdict cannot disagree about where the bound lies. This module declares the
one margin that belongs to no checker (the deadline races' takeovers, a coverage point's figure)
and reads them all: `MARGINS` (name -> doc, in report order) and `measured`.

Must not know: which module declares which margin, or how many there are.
"""

from __future__ import annotations

from history import History

from . import registry
from .facts import Facts, facts
from .registry import Context, margin


def takeover_margins(history: History, fx: Facts | None = None) -> list[int]:
    """For each deadline race (an owner the world cut off right after an acknowledged write), the
    first takeover of one of its actors minus the owner's last valid instant (ms; negative: a
    takeover while the owner was still valid)."""
    fx = facts(history) if fx is None else fx
    cached = history.cache.get("takeover_margins")
    if cached is not None:
        return cached
    out = []
    procs = history.processes
    events = history.events
    for i in history.of_kind("fault"):
        t, _q, _kind, f = events[i]
        if f.what != "deadline_race":
            continue
        machine = f.target
        owner = next((k for k, pr in enumerate(procs) if pr.machine == machine and fx.lease_valid_at(k, t - 1)),
                     None)
        if owner is None:
            continue
        end = fx.lease_valid_at(owner, t - 1)[1]
        label = f"held {procs[owner].node_id} {procs[owner].instance} "
        firsts = [h.start_ms for h in fx.holds if h.start_ms > t and h.proc != owner
                  and str.startswith(events[h.opened].fields.prev_state, label)]
        if firsts:
            out.append(min(firsts) - end)
    history.cache["takeover_margins"] = out
    return out


@margin("takeover", "a deadline race (T-2, T-5): the first takeover of an actor of the owner the world cut off "
                    "right after an acknowledged write, minus that owner's last valid instant (negative: taken while "
                    "the owner's lease was still valid; INV-1 fails once the owner acts in that span)",
        invariant="INV-1", rules=("T-2", "T-5", "FN-5"))
def _takeover(c: Context) -> int | None:
    ms = takeover_margins(c.history, c.facts)
    return min(ms) if ms else None


def measured(c: Context, skip: frozenset = frozenset()) -> dict[str, int]:
    """name -> the history's value of each margin with a value, in MARGINS order; those of an invariant
    in `skip` (not judged on this history) measure nothing."""
    out = {}
    for m in registry.margins():
        if m.invariant not in skip:
            value = m.of(c)
            if value is not None:
                out[m.name] = value
    return out


# every margin declared, name -> doc, in report order (complete once checkers/__init__.py imported every module)
MARGINS: dict[str, str] = registry.MARGIN_DOCS
