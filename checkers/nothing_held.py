"""INV-4 nothing stays held: at the end of the quiet phase, every actor requested in its final
rounds is held by a serving process, and no record names a process that no longer serves it.

A record naming a live process must be that process's valid hold; a record naming a process
that is gone must be free by FN-5 on the final `nodes/<id>` (live under another instance, or
fenced or released whose kept written_at + ttl + grace has passed), or nobody could ever
take it over. Judged only on histories with a quiet phase.
"""

from __future__ import annotations

from model.params import Params

from .history import History, Violation
from .holds import hold_windows
from .records import final_state, names

INVARIANT = "INV-4"


def check(history: History, holds=None) -> list[Violation]:
    events = history.events
    quiet = next((i for i, e in enumerate(events) if e[2] == "quiet"), None)
    if quiet is None:
        return []
    end = history.end_ms
    params = Params(**history.params)
    procs = history.processes
    gone = {p for _t, p, kind, _f in events if kind in ("exit", "crash")}
    by_label = {(pr.node_id, pr.instance): k for k, pr in enumerate(procs)}
    holds = hold_windows(history) if holds is None else holds
    valid_at_end = {(h.proc, h.actor): h for h in holds if h.start_ms <= end <= h.end_ms}
    state = final_state(history)
    final_round = next((i for i, e in enumerate(events) if e[2] == "final_round"), None)
    requested = sorted({a for e in events if e[2] == "final_round" for a in (e[3][0] if e[3] else ())})
    out = []
    for actor in requested:
        key = "owners/" + actor
        who = names(state.get(key, ""))
        p = by_label.get(who) if who else None
        if who is None or p is None or p in gone or (p, actor) not in valid_at_end:
            why = ("its record names nobody" if who is None else
                   f"its record names {who[0]}/{who[1]}, which " +
                   ("has exited" if p in gone else "holds no valid hold of it"))
            out.append(Violation(INVARIANT, f"actor {actor} was requested in the final rounds but is not held "
                                            f"by a serving process at the end ({end / 1000:.3f} s): {why}",
                                 (final_round,)))
    for key in sorted(state):
        who = names(state[key]) if key.startswith("owners/") else None
        if who is None:
            continue
        actor = key[len("owners/"):]
        p = by_label.get(who)
        if p is not None and p not in gone:
            if (p, actor) not in valid_at_end and actor not in requested:
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
