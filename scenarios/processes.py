"""The worlds' bookkeeping of processes: which process runs which node id on which machine.

Used by the world core (core.py). No protocol here: a process's state is the model's,
opaque to the world; what the world knows of a process it noted itself.
"""

from __future__ import annotations


class Proc:
    """One process: a node id and instance running on a machine."""

    __slots__ = ("index", "node_id", "instance", "machine", "clock", "state", "alive", "timers", "watched",
                 "pending", "learned", "slot", "step", "draining", "stragglers", "events", "deadlines")

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
        # request id -> the key of a request whose answer the world records: a segment upload (its failure,
        # OR-5) or a fence write (how many are in flight, BD-1)
        self.watched: dict[int, str] = {}
        # request id -> its timeout's instant (true time), for a request whose timeout is not scheduled
        # yet: a world with lazy timeouts schedules it only once the reply will not come first
        self.deadlines: dict[int, int] = {}
        self.learned: dict[tuple[str, str], int] = {}  # (key, version token) -> serial, as this process learned it
        self.draining = False  # the world told it to drain and has not told it to resume
        self.stragglers: list[tuple[str, int]] = []  # (actor, request): events ended by its `released` write (CS-1)
        self.events: dict[tuple[str, int], int] = {}  # (actor, request) -> when the world ends that event


class Slot:
    """Where a supervisor keeps one node id running on one machine."""

    __slots__ = ("node_id", "machine", "wanted", "proc", "restart_after_stop", "down_for_good")

    def __init__(self, node_id, machine) -> None:
        self.node_id = node_id
        self.machine = machine
        self.wanted = True  # the supervisor restarts a process that failed (Restart=on-failure)
        self.proc: Proc | None = None
        self.restart_after_stop: int | None = None  # a clean stop is followed by a start this much later
        self.down_for_good = False  # crashed, and its machine never comes back (not even in the quiet phase)
