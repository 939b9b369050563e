"""INV-6: a pending release never applies to a later hold.

Judged on the bucket's applied writes and the process's acts. Every release that lands (a
write of *nobody* at generation g on `owners/<actor>`) must replace the very hold it ends: a
record naming the releasing process's instance at generation g. And the releasing process
stopped acting as owner before it sent that release (OR-5): from the release's send time it
performs no act for the actor until a record write of its own, sent after the release, takes
effect. A release that lands on a hold the process still acts for applied to a later hold
(an in-flight acquisition at the same generation, OR-9, or a reused one, OR-3). The
releaser's own account is cross-checked too: a release landing while the releaser says it holds
the actor at that generation again (`hold_began` with no `hold_ended` since) is one.
"""

from __future__ import annotations

from bisect import bisect_right

from history import History, Violation

from .facts import Facts, facts, sent_ms
from .registry import invariant

INVARIANT = "INV-6"


@invariant(INVARIANT, "a pending release never applies to a later hold", kind="safety", rules=("OR-5", "OR-9", "OR-3"))
def check(history: History, fx: Facts | None = None) -> list[Violation]:
    fx = facts(history) if fx is None else fx
    events = history.events
    acts: dict[tuple[int, str], list[tuple[int, int]]] = {}  # (proc, actor) -> its acts (t, event), in time order
    for t, p, actor, _what, i in fx.acts:
        acts.setdefault((p, actor), []).append((t, i))
    act_times = {k: [t for t, _i in v] for k, v in acts.items()}  # (the same, their instants: for the bisection)
    claimed: dict[tuple[int, str], tuple[int, int]] = {}  # (proc, actor) -> (generation, event) it says it holds
    out = []
    procs = history.processes
    for i in history.of_kind("hold_began", "hold_ended", "apply"):
        t, p, kind, f = events[i]
        if kind == "hold_began":
            claimed[(p, f.actor)] = (f.generation, i)
        elif kind == "hold_ended" and claimed.get((p, f.actor), (None,))[0] == f.generation:
            del claimed[(p, f.actor)]
        if kind != "apply" or p < 0 or not str.startswith(f.key, "owners/"):
            continue
        state, prev_state = f.state, f.prev_state
        if not str.startswith(state, "nobody "):
            continue
        g = state.split(" ")[1]
        proc = procs[p]
        actor = f.key[len("owners/"):]
        expected = f"held {proc.node_id} {proc.instance} {g}"
        if prev_state != expected:
            out.append(Violation(
                INVARIANT,
                f"{f.key}: the release of generation {g} by {proc.label} replaced "
                f"{prev_state or 'no record'!r}, not its own hold ({expected!r})",
                (i,),
            ))
            continue
        mine = claimed.get((p, actor))
        if mine is not None and str(mine[0]) == g:
            # cross-check of its own account: it says it holds the actor at this generation again
            out.append(Violation(
                INVARIANT,
                f"{f.key}: a release of generation {g} by {proc.label} landed at {t / 1000:.3f} s while it holds "
                f"{actor} at generation {g} again (by its own account since {events[mine[1]].t_ms / 1000:.3f} s): the "
                f"record names nobody under a live owner",
                (mine[1], i)))
            continue
        sent = sent_ms(events[i])
        # the first record write of this process for the actor sent after the release, that took effect
        again = next((h.start_ms for h in fx.by_proc_actor.get((p, actor), ()) if not h.old
                      and sent_ms(events[h.opened]) > sent), None)
        # (an act in the very millisecond the release was sent came before it, in the same step): its first act
        # after the send, found by bisection (the acts are in time order: one scan per release was quadratic in
        # a release crowd), is the one, unless it comes once its record write took effect again
        mine_acts = acts.get((p, actor), ())
        k = bisect_right(act_times[(p, actor)], sent) if mine_acts else 0
        late = mine_acts[k] if k < len(mine_acts) and (again is None or mine_acts[k][0] < again) else None
        if late is not None:
            out.append(Violation(
                INVARIANT,
                f"{f.key}: {proc.label} sent a release of generation {g} at {sent / 1000:.3f} s (it landed at "
                f"{t / 1000:.3f} s) and still acted for {actor} at {late[0] / 1000:.3f} s: the release applied to a "
                f"hold it still acts for",
                tuple(sorted((i, late[1]))),
            ))
    return out

