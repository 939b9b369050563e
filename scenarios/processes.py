"""The worlds' bookkeeping of processes: which process runs which node id on which machine.

Shared by the SimPy world (sim.py) and the real-S3 world (s3.py). No protocol here: a
process's state is the model's, opaque to the world.
"""

from __future__ import annotations

from model.records import NODE_HEADER_3


class Proc:
    """One process: a node id and instance running on a machine."""

    __slots__ = ("index", "node_id", "instance", "machine", "clock", "state", "alive", "timers",
                 "pending", "learned", "slot", "step")

    def __init__(self, index, node_id, instance, machine, clock, slot, step) -> None:
        self.step = step
        self.index = index
        self.node_id = node_id
        self.instance = instance
        self.machine = machine
        self.clock = clock
        self.slot = slot
        self.state = None
        self.alive = True
        self.timers: dict[str, int] = {}
        self.pending: dict[int, bool] = {}
        self.learned: dict[tuple[str, str], int] = {}  # (key, version token) -> serial, as this process learned it


class Slot:
    """Where a supervisor keeps one node id running on one machine."""

    __slots__ = ("node_id", "machine", "wanted", "proc", "restart_after_stop")

    def __init__(self, node_id, machine) -> None:
        self.node_id = node_id
        self.machine = machine
        self.wanted = True  # the supervisor restarts a process that failed (Restart=on-failure)
        self.proc: Proc | None = None
        self.restart_after_stop: int | None = None  # a clean stop is followed by a start this much later


def state_line(body: str | None) -> str:
    """A record's state for the history: "live <instance> <written_at>" for a node lease,
    "held <node> <instance> <generation>" or "nobody <generation>" for an owner record,
    the second line otherwise ("node <id>" for an old heartbeat)."""
    if not body:
        return ""
    parts = body.split("\n", 3)
    if len(parts) < 2:
        return ""
    if parts[0] == NODE_HEADER_3 and len(parts) > 2:
        return parts[1] + " " + parts[2][len("written_at_ms "):]
    return parts[1]
