"""INV-4 nothing stays held: at the end of the quiet phase, every actor requested in its final
rounds is held by a serving process, and no record names a process that no longer serves it.

Holds are the world's (checkers/facts.py): an actor asked for in the final rounds must have
been served (an act) in the quiet phase, and its record name a running process whose hold is
valid at the end. A record naming a running process must be that process's valid hold, and
one it says it holds: its own claims (`hold_began`, `hold_ended`) are read against the
record, for a record naming a process that dropped its release is one nobody can take over; a record naming a process
that is gone must be free by FN-5 on the final `nodes/<id>` (live under another instance, or
fenced or released whose kept written_at + ttl + grace has passed), or nobody could ever
take it over. Judged only on histories with a quiet phase.
"""

from __future__ import annotations

from model.params import Params

from history import History, Violation

from .facts import Facts, facts
from .records import final_state, names
from .registry import invariant

INVARIANT = "INV-4"


@invariant(INVARIANT, "nothing stays held", kind="liveness", rules=("OR-5", "OR-8", "FN-5"), quiet=True)
def check(history: History, fx: Facts | None = None) -> list[Violation]:
    events = history.events
    quiet = next(iter(history.of_kind("quiet")), None)
    if quiet is None:
        return []
    end = history.end_ms
    params = Params(**history.params)
    procs = history.processes
    gone = {events[i].proc for i in history.of_kind("exit", "crash")}
    by_label = {(pr.node_id, pr.instance): k for k, pr in enumerate(procs)}
    fx = facts(history) if fx is None else fx
    # a hold still valid when the run ended (world facts: its record unchanged, its lease valid)
    valid_at_end = {(h.proc, h.actor): h for h in fx.holds if not h.old and fx.valid_at(h, end - 1)}
    state = final_state(history)
    rounds = history.of_kind("final_round")
    final_round = rounds[0] if rounds else None
    requested = sorted({a for i in rounds for a in (events[i].fields.actors or ())})
    quiet_t = events[quiet].t_ms
    served_after = {a for t, _p, a, what, _i in fx.acts if t >= quiet_t and what == "served a request"}
    # what each process itself says it holds at the end (a claim, read only against the record)
    held: dict[tuple[int, str], int] = {}  # (proc, actor) -> the generation it says it holds
    for i in history.of_kind("hold_began", "hold_ended"):
        _t, p, kind, f = events[i]
        if kind == "hold_began":
            held[(p, f.actor)] = f.generation
        elif kind == "hold_ended" and held.get((p, f.actor)) == f.generation:
            del held[(p, f.actor)]
    out = []
    for actor in requested:
        key = "owners/" + actor
        who = names(state.get(key, ""))
        p = by_label.get(who) if who else None
        if who is None or p is None or p in gone or (p, actor) not in valid_at_end or actor not in served_after:
            why = ("its record names nobody" if who is None else
                   f"its record names {who[0]}/{who[1]}, which " +
                   ("has exited" if p in gone else "holds no valid hold of it" if (p, actor) not in valid_at_end
                    else "served none of its requests in the quiet phase"))
            out.append(Violation(INVARIANT, f"actor {actor} was requested in the final rounds but is not held "
                                            f"by a serving process at the end ({end / 1000:.3f} s): {why}",
                                 (final_round,)))
    for key in sorted(state):
        who = names(state[key]) if str.startswith(key, "owners/") else None
        if who is None:
            continue
        actor = key[len("owners/"):]
        p = by_label.get(who)
        if p is not None and p not in gone:
            if actor not in requested and ((p, actor) not in valid_at_end or (p, actor) not in held):
                # a running process named by the record: FN-5 frees nothing while its lease stands;
                # if it does not hold the actor (by the bucket, or by its own account), nobody ever will
                out.append(Violation(INVARIANT, f"{key} names {who[0]}/{who[1]}, which runs but does not serve it "
                                                f"at the end: nobody can take it over", ()))
            continue
        node = state.get("nodes/" + who[0], "")
        parts = node.split(" ")
        if parts[0] == "live" and parts[1] != who[1]:
            continue  # FN-5: live under another instance frees it
        if parts[0] in ("fenced", "released") and len(parts) == 3:
            clock = next((pr.clock for pr in procs if pr.node_id == who[0]), None)
            if clock is not None and clock.true_at(int(parts[2]) + params.takeover_ms) <= end:
                continue
        out.append(Violation(INVARIANT, f"{key} names {who[0]}/{who[1]}, which is gone, and nodes/{who[0]} "
                                        f"({node or 'absent'}) does not free it: it stays held", ()))
    return out
