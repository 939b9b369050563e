"""The bucket's records over time, rebuilt from a history's writes (for INV-4 and INV-5).

Each `apply` event carries the state line of the record it wrote ("held n i g",
"nobody g", "live i written_at", "fenced i written_at", ...); mistakes made
outside the protocol are `fault_delete` and `fault_put` events.
"""

from __future__ import annotations

from history import History


def apply_to(state: dict[str, str], kind: str, f: tuple) -> bool:
    """Apply one event (its kind and named fields) to `state` (key -> state line); True if it was a write."""
    if kind == "apply":
        if f.serial:
            state[f.key] = f.state
        else:
            state.pop(f.key, None)
        return True
    if kind == "fault_delete":
        state.pop(f.key, None)
        return True
    if kind == "fault_put":
        state[f.key] = "old " + f.header
        return True
    return False


def old_heartbeat(state_line: str) -> bool:
    """Whether a `nodes/` state line is an old binary's heartbeat ("node <id>", section 6), which an old
    binary writes unconditionally and which frees nothing (FN-5)."""
    return str.startswith(state_line, "node ")


def final_state(history: History) -> dict[str, str]:
    state: dict[str, str] = {}
    events = history.events
    for i in history.of_kind("apply", "fault_delete", "fault_put"):
        e = events[i]
        apply_to(state, e.kind, e.fields)
    return state


def names(state_line: str) -> tuple[str, str] | None:
    """(node, instance) an owner record's state line names, or None."""
    parts = state_line.split(" ")
    if parts[0] == "held" and len(parts) == 4:
        return parts[1], parts[2]
    return None
