"""The SimPy world: executes the model's effects against a simulated bucket,
network, clocks and faults, and records the history.

True time is SimPy's clock, in integer milliseconds. Each process runs on a
machine whose clock is true time plus an offset (and a drift); the model only
ever sees its machine's local time. The world owns the one seeded RNG of the
run and every fault decision; it holds no protocol decision (those are in
model/). It uses plain SimPy events with callbacks (no generator per
request), so a seed costs few kernel events.
"""

from __future__ import annotations

import random
from collections import Counter
from functools import partial

import simpy
from simpy.events import NORMAL

from checkers.history import Clock, History, Process
from model import io
from model.io import (
    DELETE,
    FAILED_FAST,
    PUT,
    TIMED_OUT,
    CancelTimer,
    Command,
    Exit,
    Forward,
    Mark,
    Observe,
    ProcessStarted,
    ReplyArrived,
    Send,
    SetTimer,
    TimerFired,
)
from model.old_lease import OLD_MODEL
from model.operator import OPERATOR
from model.actor_data import DATA_PREFIX
from model.records import LEASES_PREFIX, OldLease, decode_lease, segment_generation
from model.params import Params

from .bucket import SimBucket
from .processes import Proc as _Proc, Slot as _Slot, state_line
from .swarm import draw

WORLD = -1  # the proc index of events the world itself records


class SimWorld:
    def __init__(self, seed: int, model, scenario: str = "swarm", params: Params | None = None,
                 model_name: str = "correct", options: dict | None = None) -> None:
        self.seed = seed
        self.rng = random.Random(seed)
        self._randbelow = self.rng._randbelow  # see randint()
        self.params = params or Params()
        self.model = model
        self.options = draw(self.rng, scenario, self.params) if options is None else options
        self.net_rules: list = []  # scripted network faults (scenarios.script); none in drawn worlds
        o = self.options
        # the fault rates in force: the drawn ones, zero once the quiet phase begins
        self.fault = {k: o[k] for k in ("p_fail_fast", "p_request_lost", "p_late", "p_reply_lost", "p_slow_reply")}
        self.in_quiet = False
        self.env = simpy.Environment()
        self.bucket = SimBucket(o["versioning"], o["absent_if_match"], o["p_conflict"], o["p_alias"], self.rng)
        self.history = History(seed, model_name, scenario, self.params.to_dict(), o)
        self.rules: Counter = Counter()
        self.kernel_events = 0
        self.bucket_requests = 0
        self.procs: list[_Proc] = []
        self.clocks = {m: Clock(off, drift) for m, (off, drift) in o["clocks"].items()}
        self.cut: dict[str, str] = {}  # machine or "*" -> mode, while an outage lasts
        self.slots = [_Slot(f"n{i}", f"m{i}") for i in range(o["nodes"])]
        self.node_ids = [slot.node_id for slot in self.slots]
        self.request_ids = list(self.node_ids)  # where clients send requests (old ids too, in an upgrade)
        self.old_slots: list[_Slot] = []
        self.actors = [f"t{k % 2}/c/a{k}" for k in range(o["actors"])]
        self._instances = 0
        self._requests = 0
        self._retries: dict[int, int] = {}  # client request -> retries so far
        self._final_actors: list[str] = []
        self._final_reqs: set[int] = set()  # request ids of the final rounds (membership only)
        self.requests_until = 1 << 62
        self.operator: _Proc | None = None

    # --- scheduling -------------------------------------------------------------

    def randint(self, a: int, b: int) -> int:
        """rng.randint(a, b), drawing exactly the same numbers, without its argument checks
        (it is the hot path's most called function)."""
        return a + self._randbelow(b - a + 1)

    def later(self, delay_ms: int, fn, *args) -> None:
        ev = simpy.Event(self.env)
        ev._ok = True
        ev._value = None
        ev.callbacks.append(partial(fn, *args) if args else fn)
        self.env.schedule(ev, NORMAL, delay_ms if delay_ms > 0 else 0)
        self.kernel_events += 1

    @property
    def now(self) -> int:
        return self.env.now

    # --- running ----------------------------------------------------------------

    def run(self) -> History:
        o = self.options
        up = o.get("upgrade")
        base = up["new_at"] if up else 0  # the new nodes start here; their faults count from here
        if up:
            self.schedule_upgrade(up)
        for slot in self.slots[: len(self.node_ids)]:
            if base:
                self.later(base, self._start_slot, slot)
            else:
                self.start_process(slot)
        op = _Slot("operator", "op")
        op.wanted = False
        self.operator = self.start_process(op, OPERATOR.step, instance="op")
        for node_id, at in o["operator_fences"]:
            self.later(base + at, self._operator, Command("cluster_fence", (node_id,)))
        if o["request_gap_ms"]:
            self.later(self.randint(0, o["request_gap_ms"]), self._client_request)
        if o["hibernate_gap_ms"]:
            self.later(self.randint(0, 2 * o["hibernate_gap_ms"]), self._hibernate)
        if o["move_gap_ms"]:
            self.later(self.randint(0, 2 * o["move_gap_ms"]), self._move)
        self.schedule_script()
        for who, at, length, mode in o["outages"]:
            self.later(base + at, self._outage_begins, who, length, mode)
        for node_id, at in o["crashes"]:
            self.later(base + at, self._crash_node, node_id)
        for k, (node_id, at, life) in enumerate(o["twins"]):
            self.later(base + at, self._twin_begins, node_id, f"t{k}", life)
        for node_id, at, restart_after in o.get("stops", ()):
            self.later(base + at, self._stop_node, node_id, restart_after)
        for node_id, at, after, then in o.get("drains", ()):
            self.later(base + at, self._command_node, node_id, Command("drain"))
            if then == "resume":
                self.later(base + at + after, self._command_node, node_id, Command("resume"))
            else:
                self.later(base + at + after, self._stop_node, node_id, 5_000)
        for node_id, at, replacement in o.get("deletes", ()):
            self.later(base + at, self._delete, "nodes/" + node_id)
            if replacement:
                self.later(base + at + self.randint(0, 5_000), self._twin_begins, node_id, "r0", 60_000)
        if o.get("blip"):
            at, length, mode = o["blip"]
            self.later(base + at, self._outage_begins, "*", length, mode)
        end = base + o["fault_ms"]
        quiet = o.get("quiet_ms", 0)
        self.requests_until = end + quiet - 4_000 if quiet else end  # the run ends on a quiet moment
        if quiet:
            self.later(end, self._quiet_begins)
            if o["quiet_crash"]:
                self.later(end + 5_000, self._quiet_crash)
            self.later(end + quiet - 12_000, self._final_round)
            self.later(end + quiet - 6_000, self._final_round)
            end += quiet
        self.env.run(until=end)
        return self.finish(end)

    def _start_slot(self, slot, _ev) -> None:
        if slot.proc is None or not slot.proc.alive:
            self.start_process(slot)

    # --- section 6: the old binaries before the switch ---------------------------------------

    def schedule_upgrade(self, up: dict) -> None:
        """Old nodes (model/old_lease.py) serve first and stop at old_ms; new ones start at new_at."""
        n = len(self.node_ids)
        self.old_slots = []
        for i in range(n):
            slot = _Slot(self.node_ids[i] if up["same_ids"] else f"o{i}", f"om{i}")
            slot.wanted = False  # no supervisor restarts an old binary here
            self.slots.append(slot)
            self.old_slots.append(slot)
            self.start_process(slot, OLD_MODEL.step)
            if slot.node_id not in self.request_ids:
                self.request_ids.append(slot.node_id)
            stop_at = up["old_ms"] + (up["straggle_ms"] if up["straggler"] == i else 0)
            if up["straggler"] == i and up["stall"]:
                self.later(up["old_ms"] - 5_000, self._old_command, slot, Command("stall_heartbeats"))
            if up["old_stop"][i] == "clean":
                self.later(stop_at, self._old_command, slot, Command("stop"))
            else:
                self.later(stop_at, self._old_crash, slot)
        if up["future_ms"]:
            slot = _Slot("retired", "omf")
            slot.wanted = False
            self.slots.append(slot)
            self.old_slots.append(slot)
            self.start_process(slot, OLD_MODEL.step)
            self.later(min(10_000, up["old_ms"]), self._old_crash, slot)
        if up["old_restart"]:
            i, after = up["old_restart"]
            self.later(up["new_at"] + after, self._old_restart, self.old_slots[i])
        self.later(up["new_at"], self._old_gc, up["p_gc"])

    def _old_command(self, slot, command, _ev) -> None:
        if slot.proc is not None and slot.proc.alive:
            self.deliver(slot.proc, command)

    def _old_crash(self, slot, _ev) -> None:
        if slot.proc is not None and slot.proc.alive:
            self.crash(slot.proc)

    def _old_restart(self, slot, _ev) -> None:
        """An old binary started again after the switch (it must find its id taken, or be refused)."""
        if slot.proc is None or not slot.proc.alive:
            self.start_process(slot, OLD_MODEL.step)
            self.later(20_000, self._old_command, slot, Command("stop"))

    def _old_gc(self, p_gc, _ev) -> None:
        """The old garbage collection (ADR 0012, before) deleted released leases of idle actors,
        here only where the actor's segments still carry the lease's generation, so that no
        generation is forgotten (the old binary seeds an absent lease from the keys too)."""
        if not p_gc:
            return
        for key in sorted(self.bucket.objects):
            if key.startswith(LEASES_PREFIX):
                rec = decode_lease(self.bucket.objects[key].body)
                if not (isinstance(rec, OldLease) and rec.expires_at_ms == 0):
                    continue
                prefix = DATA_PREFIX + key[len(LEASES_PREFIX):] + "/"
                top = max((segment_generation(k) for k, _v in self.bucket.list(prefix)), default=0)
                if top >= rec.generation and self.rng.random() < p_gc:
                    self._delete(key, None)

    def schedule_script(self) -> None:
        """Scripted worlds (scenarios.script) schedule their steps here."""

    def finish(self, end: int) -> History:
        h = self.history
        h.end_ms = end
        h.rules = dict(sorted(self.rules.items()))
        h.counts = {"kernel_events": self.kernel_events, "bucket_requests": self.bucket_requests,
                    "processes": len(self.procs), "client_requests": self._requests}
        return h

    def start_process(self, slot: _Slot, step=None, instance: str | None = None) -> _Proc:
        if instance is None:
            instance = f"{self.rng.getrandbits(32):08x}"
        proc = _Proc(len(self.procs), slot.node_id, instance, slot.machine, self.clocks[slot.machine], slot,
                     step or self.model.step)
        self.procs.append(proc)
        slot.proc = proc
        c = proc.clock
        self.history.processes.append(Process(slot.node_id, instance, slot.machine, c.offset_ms, c.drift_ppm))
        self.record(proc.index, "start", (slot.node_id, instance, slot.machine))
        self.deliver(proc, ProcessStarted(slot.node_id, instance, self.params))
        return proc

    def record(self, proc: int, kind: str, fields: tuple = ()) -> None:
        self.history.events.append((self.env.now, proc, kind, fields))

    # --- the model's side ---------------------------------------------------------

    def deliver(self, proc: _Proc, inp) -> None:
        if not proc.alive:
            return
        state, effects = proc.step(proc.state, inp, proc.clock.local(self.env.now))
        proc.state = state
        for eff in effects:
            t = type(eff)
            if t is Send:
                self.send(proc, eff)
            elif t is SetTimer:
                self.set_timer(proc, eff)
            elif t is Mark:
                self.rules[eff.rule] += 1
            elif t is Observe:
                self.record(proc.index, eff.kind, eff.fields)
                if eff.kind == "request_failed" and (self.options["p_client_retry"] or self._final_reqs):
                    self._client_retry(proc, eff.fields)
            elif t is CancelTimer:
                proc.timers.pop(eff.key, None)
            elif t is Forward:
                self.later(self.randint(1, self.options["delay_ms_max"]), self._forwarded, eff.node_id, eff.command)
            elif t is Exit:
                self.record(proc.index, "exit", (eff.status, eff.reason))
                self.end_process(proc, eff.status)
            else:
                raise TypeError(f"not an effect: {eff!r}")

    def set_timer(self, proc: _Proc, eff: SetTimer) -> None:
        self._instances += 1
        token = self._instances
        proc.timers[eff.key] = token
        self.later(proc.clock.true_at(eff.at_ms) - self.env.now, self._timer_fires, proc, eff.key, token)

    def _timer_fires(self, proc, key, token, _ev) -> None:
        if proc.timers.get(key) == token:
            del proc.timers[key]
            self.deliver(proc, TimerFired(key))

    def end_process(self, proc: _Proc, status: int | None = None) -> None:
        """The process is gone (exit `status`, or a crash when None)."""
        proc.alive = False
        proc.timers.clear()
        proc.pending.clear()
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
        self.later(self.randint(100, self.options["restart_ms_max"]), self._restart, slot)

    def _restart(self, slot, _ev) -> None:
        if slot.wanted and (slot.proc is None or not slot.proc.alive):
            self.start_process(slot)

    # --- the network and the bucket ---------------------------------------------------

    def _is_cut(self, machine: str) -> str | None:
        if not self.cut:
            return None
        return self.cut.get(machine) or self.cut.get("*")

    def send(self, proc: _Proc, eff: Send) -> None:
        self.bucket_requests += 1
        o = self.options
        rng = self.rng
        rid = eff.request_id
        proc.pending[rid] = True
        timeout = proc.clock.true_at(proc.clock.local(self.env.now) + eff.timeout_ms) - self.env.now
        self.later(timeout, self._timed_out, proc, rid)
        cut = self._is_cut(proc.machine)
        if cut == "blackhole":
            return
        fate = self.scripted_fate(proc, eff.request) if self.net_rules else None
        if fate is not None:
            action, ms = fate
            if action == "lose_request":
                return
            if action == "fail_fast":
                self.later(1, self._reply, proc, rid, io.Reply(FAILED_FAST))
                return
            if action == "delay_apply":
                self.later(ms, self._apply, proc, eff.request, rid, None)
                return
        f = self.fault
        if cut == "refuse" or (f["p_fail_fast"] and rng.random() < f["p_fail_fast"]):
            self.later(self.randint(1, 20), self._reply, proc, rid, io.Reply(FAILED_FAST))
            return
        if f["p_request_lost"] and rng.random() < f["p_request_lost"]:
            return  # lost on the way: never applied, never answered
        delay = self.randint(1, o["delay_ms_max"])
        if o["upload_ms_max"] and eff.request.body is not None and len(eff.request.body) >= 1024:
            delay += self.randint(0, o["upload_ms_max"])  # a segment upload takes its time
        if f["p_late"] and eff.request.op in (PUT, DELETE) and rng.random() < f["p_late"]:
            delay = timeout + self.randint(1, o["late_ms_max"])  # applied after its sender gave up
        self.later(delay, self._apply, proc, eff.request, rid, fate)

    def scripted_fate(self, proc, request):
        """(action, ms) for a request a scripted rule matches; None otherwise."""
        return None

    def _apply(self, proc, req, rid, fate, _ev) -> None:
        before = self.bucket.objects.get(req.key)
        reply, prev, serial = self.bucket.apply(req, self.env.now)
        learned = proc.learned
        if reply.status == io.OK:
            if req.op == io.GET:
                learned[(req.key, reply.version)] = serial
            elif req.op == PUT or req.op == DELETE:
                # the version the condition named, as this process knew it before this write
                if req.cond == io.IF_MATCH:
                    named = learned.get((req.key, req.version), -1)
                elif req.cond == io.IF_NONE_MATCH:
                    named = 0
                else:
                    named = None
                if req.op == PUT:
                    learned[(req.key, reply.version)] = serial
                self.record(proc.index, "apply", (req.key, req.op, req.cond, prev, named, serial,
                                                   state_line(req.body),
                                                   state_line(before.body) if before is not None else ""))
        o = self.options
        rng = self.rng
        if fate is not None:
            if fate[0] == "lose_reply":
                return
            if fate[0] == "delay_reply":
                self.later(fate[1], self._reply, proc, rid, reply)
                return
        f = self.fault
        if f["p_reply_lost"] and req.op != io.GET and rng.random() < f["p_reply_lost"]:
            return
        delay = self.randint(1, o["delay_ms_max"])
        if f["p_slow_reply"] and rng.random() < f["p_slow_reply"]:
            delay = self.randint(delay, delay + self.params.attempt_timeout_ms)
        self.later(delay, self._reply, proc, rid, reply)

    def _reply(self, proc, rid, reply, _ev) -> None:
        if proc.pending.pop(rid, None) is None:
            return  # timed out already, or the process is gone
        if reply.status != FAILED_FAST and self._is_cut(proc.machine):
            proc.pending[rid] = True  # the reply is lost on the way: the timeout answers
            return
        self.deliver(proc, ReplyArrived(rid, reply))

    def _timed_out(self, proc, rid, _ev) -> None:
        if proc.pending.pop(rid, None) is None:
            return
        self.deliver(proc, ReplyArrived(rid, io.Reply(TIMED_OUT)))

    # --- the workload -------------------------------------------------------------

    def live_proc(self, node_id: str) -> _Proc | None:
        """The live process serving `node_id` (the supervised one first, then a twin)."""
        for slot in self.slots:
            if slot.node_id == node_id and slot.proc is not None and slot.proc.alive:
                return slot.proc
        return None

    def _forwarded(self, node_id, command, _ev) -> None:
        proc = self.live_proc(node_id)
        if proc is not None:
            self.deliver(proc, command)

    def _client_request(self, _ev) -> None:
        rng = self.rng
        self._requests += 1
        if self.options["hot_share"] and rng.random() < self.options["hot_share"]:
            actor = self.actors[0]
        else:
            actor = self.actors[rng.randrange(len(self.actors))]
        self._ask(self.request_ids[rng.randrange(len(self.request_ids))], actor, self._requests)
        self.later(self.randint(1, 2 * self.options["request_gap_ms"]), self._client_request)

    def _ask(self, node_id: str, actor: str, req: int) -> None:
        """A client request for `actor` reaches `node_id` (lost if no process serves that id)."""
        if self.env.now >= self.requests_until:
            return
        proc = self.live_proc(node_id)
        if proc is not None:
            self.record(proc.index, "client", (actor, node_id, req))
            self.deliver(proc, Command("request", (actor, req, 0)))

    def _client_retry(self, proc, fields) -> None:
        """The client saw its request fail; it may try the same node again soon. A final-round
        request is always tried again, at a node that runs, up to three times."""
        rng = self.rng
        actor, req = fields[0], fields[1]
        if req in self._final_reqs:
            tries = self._retries.get(req, 0)
            live = [n for n in self.node_ids if self.live_proc(n) is not None]
            if tries < 3 and live:
                self._retries[req] = tries + 1
                self.later(500, self._retry_request, live[self.randint(0, len(live) - 1)], actor, req)
            return
        if not self.options["p_client_retry"]:
            return
        tries = self._retries.get(req, 0)
        if tries < 2 and rng.random() < self.options["p_client_retry"]:
            self._retries[req] = tries + 1
            self.later(self.randint(50, 1_000), self._retry_request, proc.node_id, actor, req)

    def _retry_request(self, node_id, actor, req, _ev) -> None:
        self._ask(node_id, actor, req)

    def _broadcast(self, command) -> None:
        for slot in self.slots:
            if slot.proc is not None and slot.proc.alive:
                self.deliver(slot.proc, command)

    def _hibernate(self, _ev) -> None:
        """An actor goes idle: whoever holds it hibernates it."""
        if self.in_quiet:
            return
        rng = self.rng
        self._broadcast(Command("hibernate", (self.actors[rng.randrange(len(self.actors))],)))
        self.later(self.randint(1, 2 * self.options["hibernate_gap_ms"]), self._hibernate)

    def _move(self, _ev) -> None:
        """An actor is moved to another node: whoever holds it hands it over."""
        if self.in_quiet:
            return
        rng = self.rng
        self._requests += 1
        actor = self.actors[rng.randrange(len(self.actors))]
        target = self.node_ids[rng.randrange(len(self.node_ids))]
        self._broadcast(Command("move", (actor, target, self._requests)))
        self.later(self.randint(1, 2 * self.options["move_gap_ms"]), self._move)

    def _command_node(self, node_id, command, _ev) -> None:
        proc = self.live_proc(node_id)
        if proc is not None and proc.slot.machine.startswith("m"):
            self.deliver(proc, command)

    def _stop_node(self, node_id, restart_after, _ev) -> None:
        """A clean stop (CS-1) of the node's supervised process, started again `restart_after` ms
        after it exits (None: it stays down)."""
        slot = self.slots[self.node_ids.index(node_id)]
        if slot.proc is not None and slot.proc.alive:
            slot.restart_after_stop = restart_after
            self.deliver(slot.proc, Command("stop"))

    def _delete(self, key, _ev) -> None:
        """An operator deletes an object by mistake: outside the protocol, so not an `apply`."""
        self.record(WORLD, "fault_delete", (key,))
        self.bucket.remove(key)

    # --- the quiet phase ---------------------------------------------------------------

    def _quiet_begins(self, _ev) -> None:
        """Faults stop; twins go; every node is up again (or stopped cleanly); requests go on."""
        self.in_quiet = True
        self.record(WORLD, "quiet")
        for k in self.fault:
            self.fault[k] = 0.0
        self.cut.clear()
        for slot in self.slots:
            if slot in self.old_slots:
                # the upgrade is finished: an old binary still running is stopped
                if slot.proc is not None and slot.proc.alive:
                    self.deliver(slot.proc, Command("stop"))
            elif not slot.machine.startswith("m"):
                slot.wanted = False  # twins and replacements go
                if slot.proc is not None and slot.proc.alive:
                    self.crash(slot.proc)
        for slot in self.slots[: len(self.node_ids)]:
            slot.restart_after_stop = 1_000  # one still stopping now comes back once it exits
            if slot.proc is None or not slot.proc.alive:
                self.start_process(slot)
            elif slot.proc.state is not None and slot.proc.state.draining:
                self.deliver(slot.proc, Command("resume"))
        if self.options["quiet_stop"]:
            # a node retired for good: stopped cleanly, then revoked by the operator (FN-7),
            # which frees its records even where its stop wrote nothing or nodes/<id> was deleted
            node_id = self.node_ids[self.rng.randrange(len(self.node_ids))]
            self._stop_node(node_id, None, None)
            self.later(20_000, self._operator, Command("cluster_fence", (node_id,)))

    def _quiet_crash(self, _ev) -> None:
        node_id = self.node_ids[self.rng.randrange(len(self.node_ids))]
        proc = self.live_proc(node_id)
        if proc is not None:
            self.crash(proc)

    def _final_round(self, _ev) -> None:
        """Every actor is requested once more, at a node that runs, before the end (INV-4)."""
        rng = self.rng
        live = [n for n in self.node_ids if self.live_proc(n) is not None]
        if not self._final_actors:
            # most actors are asked for once more; the rest show whether a record stays held
            # by a live process that no longer serves it (INV-4)
            self._final_actors = [a for a in self.actors if rng.random() < 0.8]
        self.record(WORLD, "final_round", (self._final_actors if live else [],))
        for actor in self._final_actors:
            if live:
                self._requests += 1
                self._final_reqs.add(self._requests)
                self._ask(live[rng.randrange(len(live))], actor, self._requests)

    def _operator(self, command, _ev) -> None:
        self.record(self.operator.index, "operator", (command.name, command.args[0]))
        self.deliver(self.operator, command)

    # --- faults ------------------------------------------------------------------

    def _outage_begins(self, who, length, mode, _ev) -> None:
        """Cut the bucket off from node `who`'s machine, or from everyone ("*")."""
        if who != "*" and who.startswith("n"):
            who = "m" + who[1:]
        self.cut[who] = mode
        self.record(WORLD, "outage", (who, self.env.now + length))
        self.later(length, self._outage_ends, who)

    def _outage_ends(self, who, _ev) -> None:
        self.cut.pop(who, None)

    def _crash_node(self, node_id, _ev) -> None:
        for slot in self.slots:
            if slot.node_id == node_id and slot.machine.startswith("m") and slot.proc and slot.proc.alive:
                self.crash(slot.proc)

    def crash(self, proc: _Proc) -> None:
        """Kill without any write: requests in flight may still land."""
        self.record(proc.index, "crash")
        self.end_process(proc)

    def _twin_begins(self, node_id, machine, life, _ev) -> None:
        slot = _Slot(node_id, machine)
        self.slots.append(slot)
        self.record(WORLD, "twin", (node_id, machine))
        self.start_process(slot)
        self.later(life, self._twin_ends, slot)

    def _twin_ends(self, slot, _ev) -> None:
        slot.wanted = False
        if slot.proc and slot.proc.alive:
            self.crash(slot.proc)


def run_seed(seed: int, model, scenario: str = "swarm", params: Params | None = None,
             model_name: str = "correct") -> History:
    """Run one seed in the simulated world and return its history."""
    return SimWorld(seed, model, scenario, params, model_name).run()
