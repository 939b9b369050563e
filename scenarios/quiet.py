"""The quiet phase (TigerBeetle's liveness mode): once the fault phase ends, faults stop and every
node is up again (or stopped cleanly), so that what must converge is judged (INV-4, INV-7).

What the faults turn off is theirs to say (each kind's `quiet`, scenarios/faults/); what the
quiet phase itself does is here: old binaries of an upgrade stop, twins and replacements go, every
node's supervisor brings it back (or, gone for good, the operator forgets it and fences an absent
object), drained nodes resume, and the kinds that act as it begins act (a node retired for good:
quiet_stop.py). The final rounds (workload.py) ask for every actor before the run ends.

A part of the world core (core.py).
"""

from __future__ import annotations

from model.io import Command

from .faults import KINDS

WORLD = -1  # the proc index of events the world itself records


class QuietPhase:
    """The world core's quiet phase (a part of World, core.py)."""

    def forget_after_ms(self) -> int:
        """When an operator who knows a node gone for good asks `cluster forget` of it: once its last
        write is stale by UP-2's test (3 P + ttl + grace), and a lease period more."""
        p = self.params
        return 3 * p.heartbeat_period_ms + p.ttl_ms + p.grace_ms + self.tg // 3

    def _quiet_begins(self) -> None:
        """Faults stop; twins go; every node is up again (or stopped cleanly); requests go on."""
        self.in_quiet = True
        if self.choices is not None:
            self.choices.quiet = True  # a plan's faults for later decisions are read calm (scenarios/plan.py)
        for kind in KINDS.values():
            kind.quiet(self)
        # what faults share: a race's calm ends with the fault phase (the quiet phase's own moves go
        # ahead), and so do shields, busy actors and armed losses
        self._calm.clear()
        self._shield.clear()
        self._busy.clear()
        self._lose.clear()
        self.record(WORLD, "quiet")
        for k in self.fault:
            self.fault[k] = 0.0
        self.cut.clear()
        for slot in self.slots:
            if slot in self.old_slots:
                # the upgrade is finished: an old binary still running is stopped
                if slot.proc is not None and slot.proc.alive:
                    self.deliver(slot.proc, Command("stop"))
            elif not str.startswith(slot.machine, "m"):
                slot.wanted = False  # twins and replacements go
                if slot.proc is not None and slot.proc.alive:
                    self.crash(slot.proc)
        # an operator who knows a node gone for good asks `cluster forget` of it once its last write
        # is stale by UP-2's test: its object is in format 3 (fenced, released or live), and FN-8
        # deletes only a retired old-format heartbeat: forget must refuse
        forget_after = self.forget_after_ms()
        for slot in self.slots[: len(self.node_ids)]:
            slot.restart_after_stop = self.tg // 15  # one still stopping now comes back once it exits
            if slot.down_for_good:
                if self.options.get("forget_gone"):
                    self.later(forget_after, self.operator_command, Command("cluster_forget", (slot.node_id,)))
                # its machine is gone: peers fence it (FN-3) to free its records; and where its
                # nodes/<id> was deleted by mistake too, only the operator's fence of the absent
                # object frees them (FN-7), which the operator runs for a machine it knows gone
                if any(f and f[0] == slot.node_id for f in self.options.get("deletes", ())):
                    self.later(self.tg // 3, self.operator_command, Command("cluster_fence", (slot.node_id,)))
                continue
            if slot.proc is None or not slot.proc.alive:
                self.start_process(slot)
            elif slot.proc.draining:
                # a drain told while faults were on ends within its bound counted from their end (INV-11):
                # the node is resumed once it reports drained, or once that bound has passed
                proc = slot.proc
                proc.resume_when_drained = True
                running = max(max(proc.events.values(), default=self.now), self.now)
                self.record(proc.index, "running", (running,))  # INV-11 counts the bound from there
                self.later(running - self.now + self.drain_bound_ms() + 1, self._resume_drained, proc)
        for act in self.quiet_acts:
            act(self)
