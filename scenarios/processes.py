"""Processes: which process runs which node id on which machine, and their lives.

`Proc` and `Slot` are the worlds' bookkeeping; `Processes` is the part of the world core
(core.py) that starts processes, ends them (an exit, a crash), restarts them as a supervisor
would (systemd Restart=on-failure: same id, new instance), runs twins and replacements under an
id, and carries the operator's and the world's instructions to them (drain, resume, stop,
`cluster fence`, `cluster forget`, a mistaken delete). No protocol here: a process's state is
the model's, opaque to the world; what the world knows of a process it noted itself.
"""

from __future__ import annotations

from history import Process
from model.io import Command, ProcessStarted
from model.old_lease import OLD_MODEL, OldTiming
from model.operator import OPERATOR

WORLD = -1  # the proc index of events the world itself records


class Proc:
    """One process: a node id and instance running on a machine."""

    __slots__ = ("index", "node_id", "instance", "machine", "clock", "state", "alive", "timers", "watched",
                 "pending", "learned", "slot", "step", "draining", "stragglers", "events", "deadlines",
                 "resume_when_drained", "reading", "background", "bg_ctx", "record_reqs", "asked", "paused_until",
                 "waited", "keyed", "answering", "chain", "fences")

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
        self.resume_when_drained = False  # the quiet phase resumes it once it reports drained
        self.stragglers: list[tuple[str, int]] = []  # (actor, request): events ended by its `released` write (CS-1)
        self.events: dict[tuple[str, int], int] = {}  # (actor, request) -> when the world ends that event
        # request id -> key of a GET of nodes/ in flight, recorded as a `read` when answered (UP-1, UP-2: what
        # the start check and the guard read); None once a live write of its own took effect: no more reads
        self.reading: dict[int, str] | None = {}
        # request id -> (what, op, key, version, sent_ms) of a request of its background task in flight (BD-2,
        # BD-3): "write" (a pending release's retry), "read" (the read that follows its refusal), "resolve" (the
        # resolver's read); what the world knows of it: it was sent when the `background` timer fired, or on
        # the answer to a retry (scenarios/core.py, `background_or_release`)
        self.background: dict[int, tuple] = {}
        # while an input is delivered: "timer" (its `background` timer), "told" (a command of the world's), or
        # the background request it answers
        self.bg_ctx: str | tuple | None = None
        # request id -> a request on an owners/ key or on its own nodes/<id>, until the world delivers its answer
        # (or its timeout), which it records (`record_reply`: what the process sent and learned of its records,
        # and of its node lease, CONV-2)
        self.record_reqs: dict[int, object] = {}
        # client request id -> its actor: a request the world delivered to it in the quiet phase and that it has
        # not answered yet (the world records its answer, `answer`: CONV-1)
        self.asked: dict[int, str] = {}
        # paused (SIGSTOP, a long GC pause) until this instant (true time): its inputs wait until then, in order
        # (World.pause)
        self.paused_until = 0
        self.waited = [0, 0, 0]  # what queued in its current or last pause: timers, replies, commands
        # request id -> key of a request on nodes/ (a LIST of it, or another node's object) or on owners/, in
        # flight: what the world knows of the request whose answer is being delivered (`answering`: its id and
        # key, or None), to tell a fence's read from the listing's and an acquisition's (BD-1, SLOT-1)
        self.keyed: dict[int, str] = {}
        self.answering: tuple[int, str] | None = None
        # the listing's chain (the ADR: one LIST of nodes/, then one GET per listed node, one after another):
        # [the id of its request in flight, the listed keys it has not read yet (None before the LIST's answer)]
        self.chain: list | None = None
        # request id -> (op, key, sent_ms) of a fence's request in flight: its read (FN-3's fresh GET) or its write
        # (FN-3, FN-7), from its send until the world delivers its answer or timeout (BD-1, SLOT-1)
        self.fences: dict[int, tuple[str, str, int]] = {}


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


class Processes:
    """The world core's processes (a part of World, core.py)."""

    def start_process(self, slot: Slot, step=None, instance: str | None = None) -> Proc:
        if instance is None:
            instance = self.choose("instance", slot.machine, self._instance)
        config = None
        if step is not None and getattr(step, "__self__", None) is OLD_MODEL:
            # the old binary beside the model under test: a broken model may bring a broken one (UP-4), as it
            # may bring its operator; it runs at its own cadence (section 6)
            step = getattr(self.model, "old", OLD_MODEL).step
            config = self.old_timing()
        proc = Proc(len(self.procs), slot.node_id, instance, slot.machine, self.clocks[slot.machine], slot,
                    step or self.model.step)
        self.procs.append(proc)
        slot.proc = proc
        c = proc.clock
        self.history.processes.append(Process(slot.node_id, instance, slot.machine, c.offset_ms, c.drift_ppm))
        self.record(proc.index, "start", (slot.node_id, instance, slot.machine))
        self.deliver(proc, ProcessStarted(slot.node_id, instance, self.params, config))
        return proc

    def old_timing(self) -> OldTiming:
        """The old binaries' own cadence (model/old_lease.py): the option `old_timing`, [heartbeat period,
        renewal interval or None], when a script sets one, or the upgrade's drawn `old_timing` (issue 39:
        scenarios/faults/upgrade.py, `draw_old_timing`, in a share of upgrade seeds: 3 s whatever the new
        timing, the new nodes' period, or three of it); else the ADR's (a heartbeat every 3 s, renewals a
        third of the ttl after the previous one returned)."""
        given = self.options.get("old_timing") or (self.options.get("upgrade") or {}).get("old_timing")
        return OldTiming(*given) if given else OldTiming()

    def _instance(self) -> str:
        return f"{self.rngs['instances'].getrandbits(32):08x}"

    def end_process(self, proc: Proc, status: int | None = None) -> None:
        """The process is gone (exit `status`, or a crash when None)."""
        proc.alive = False
        proc.timers.clear()
        proc.pending.clear()
        proc.watched.clear()
        proc.deadlines.clear()
        proc.background.clear()
        proc.keyed.clear()
        proc.fences.clear()
        proc.chain = None
        slot = proc.slot
        if not slot.wanted or slot.proc is not proc:
            return
        if status == 0:
            # a clean stop: started again only if the scenario says so (a deploy)
            if slot.restart_after_stop is not None:
                self.later(slot.restart_after_stop, self._restart, slot)
                slot.restart_after_stop = None
            return
        # the supervisor (systemd Restart=on-failure) starts it again: same id, new instance
        o = self.options
        lo = o.get("restart_ms_min", 100)
        ms = self.choose("restart", slot.machine, self.rngs["restarts"].randint, lo, o["restart_ms_max"])
        self.later(lo if ms is None else ms, self._restart, slot)

    def _restart(self, slot) -> None:
        if slot.wanted and (slot.proc is None or not slot.proc.alive):
            self.start_process(slot)

    def start_operator(self) -> None:
        """The operator's process: its commands (FN-7, FN-8); a broken model may bring a broken operator."""
        op = Slot("operator", "op")
        op.wanted = False
        self.operator = self.start_process(op, getattr(self.model, "operator", OPERATOR).step, instance="op")

    def drain_bound_ms(self) -> int:
        """From a drain (or the end of the faults around it) to the instant it must have reported drained
        (INV-11, CS-3): ttl + grace, and an attempt timeout for a request in flight."""
        p = self.params
        return p.ttl_ms + p.grace_ms + p.attempt_timeout_ms

    def _resume_drained(self, proc) -> None:
        """The quiet phase resumes a node it found draining: once the node reports drained, or once the
        drain's bound from the quiet phase's start has passed (INV-11 then judges it)."""
        if proc.alive and proc.draining:
            proc.resume_when_drained = False
            self.tell(proc, Command("resume"))

    def _start_slot(self, slot) -> None:
        if slot.proc is None or not slot.proc.alive:
            self.start_process(slot)

    def pause(self, proc: Proc, ms: int, detail: str = "") -> None:
        """Stop the process for `ms` (SIGSTOP, a stop-the-world GC pause): every input that reaches it meanwhile
        (a reply, a timer, a command) waits until it resumes, in order; its clocks run on, so it wakes to find
        the time gone (the ADR's reason for local-clock validity, NL-4). Its requests in flight still land."""
        if not proc.alive:
            return
        if proc.paused_until <= self.now:
            proc.waited = [0, 0, 0]
        proc.paused_until = max(proc.paused_until, self.now + ms)
        self.fault_event(proc.index, "pause", proc.machine, ms,
                         "the process stopped: its inputs wait" + (f" ({detail})" if detail else ""))

    def resumed(self, proc: Proc) -> None:
        """The process resumes (its pause is over): what queued meanwhile is delivered now, in arrival order."""
        timers, replies, commands = proc.waited
        self.fault_event(proc.index, "resumed", proc.machine, None,
                         f"timers {timers}, replies {replies}, commands {commands}")

    def crash(self, proc: Proc) -> None:
        """Kill without any write: requests in flight may still land."""
        self.record(proc.index, "crash")
        self.end_process(proc)

    def live_proc(self, node_id: str) -> Proc | None:
        """The live process serving `node_id` (the supervised one first, then a twin)."""
        for slot in self.slots:
            if slot.node_id == node_id and slot.proc is not None and slot.proc.alive:
                return slot.proc
        return None

    def tell(self, proc: Proc, command: Command) -> None:
        """An instruction from outside the protocol to a node process. The world notes the
        drains it asked for (it never reads the model's state)."""
        if command.name == "drain":
            proc.draining = True
        elif command.name == "resume":
            proc.draining = False
        self.record(proc.index, "told", (command.name,))
        if command.name == "drain" and proc.events:
            # its actors' events still running end by then: the drain's releases wait for them
            self.record(proc.index, "running", (max(proc.events.values()),))
        self.deliver(proc, command)

    def command_node(self, node_id, command) -> None:
        if command.name == "drain" and self.disturbs_a_race(node_id):
            return
        proc = self.live_proc(node_id)
        if proc is not None and str.startswith(proc.slot.machine, "m"):
            self.tell(proc, command)

    def command_node_any(self, node_id, command) -> None:
        proc = self.live_proc(node_id)
        if proc is not None:
            self.deliver(proc, command)

    def stop_node(self, node_id, restart_after_ms, retire: bool = False) -> None:
        """A clean stop (CS-1) of the node's supervised process, started again `restart_after_ms`
        after it exits (None: it stays down). In the quiet phase only the retirement it draws
        stops a node (`retire`): a stop drawn for the fault phase that comes late is skipped."""
        if self.in_quiet and not retire:
            return
        slot = self.slots[self.node_ids.index(node_id)]
        if slot.proc is not None and slot.proc.alive and not self.disturbs_a_race(node_id):
            slot.restart_after_stop = restart_after_ms
            self.tell(slot.proc, Command("stop"))

    def operator_command(self, command) -> None:
        if self.disturbs_a_race(command.args[0]):
            return
        self.record(self.operator.index, "operator", (command.name, command.args[0]))
        self.deliver(self.operator, command)

    def delete_record(self, key) -> None:
        """An operator deletes an object by mistake: outside the protocol, so not an `apply`."""
        if str.startswith(key, "nodes/") and self.disturbs_a_race(key[len("nodes/"):]):
            return
        self.record(WORLD, "fault_delete", (key,))
        self.remove_object(key)

    def crash_node(self, node_id) -> None:
        if self.disturbs_a_race(node_id):
            return
        for slot in self.slots:
            if slot.node_id == node_id and str.startswith(slot.machine, "m") and slot.proc and slot.proc.alive:
                self.crash(slot.proc)

    def start_twin(self, node_id, machine, life_ms, silence: bool = False) -> None:
        """A second process under `node_id` on `machine` for `life_ms`. `silence`: the original's own
        lease writes are lost meanwhile for ttl + grace + a third (an outage of mode "lease"), so that
        the twin's start check finds the object unchanged and writes live over it (NL-5, NL-6); back,
        the original's next write fails its condition and its re-read meets the twin's instance (NL-9,
        NL-10)."""
        if self.in_quiet or self.disturbs_a_race(node_id):
            return  # faults stopped: a twin or replacement drawn for the fault phase comes too late
        slot = Slot(node_id, machine)
        self.slots.append(slot)
        self.record(WORLD, "twin", (node_id, machine))
        self.start_process(slot)
        self.later(life_ms, self._twin_ends, slot)
        if silence:
            self.outage(node_id, self.tg + self.tg // 3, "lease")

    def _twin_ends(self, slot) -> None:
        slot.wanted = False
        if slot.proc and slot.proc.alive:
            self.crash(slot.proc)
