"""Scripted scenarios: the SimPy world with faults at chosen times instead of drawn ones.

For the deterministic tests of the ADR's verification list: no random fault
is on (every probability is zero, delays are a fixed few ms), nothing
happens unless a step says so, and network faults are rules that match
requests by sender, operation and key:

    world = ScriptedWorld(nodes=2, model=MODEL)
    world.at(20_000, "request", "n0", "t0/c/a0")
    world.rule(NetRule("lose_reply", node="n0", op="PUT", key="owners/", after_ms=30_000))
    history = world.run(until_ms=60_000)

The world still holds no protocol decision: a step is something a client, an
operator, a machine or the network does.
"""

from __future__ import annotations

from dataclasses import dataclass

from history import History
from model.io import PUT, Command, Request
from model.old_lease import OLD_MODEL
from model.params import Params

from . import faults
from .core import WORLD
from .faults.clock_steps import set_clock
from .processes import Slot
from .sim import SimWorld

# what a rule does to a request: lost on the way; refused at once (connection refused: failed_fast); held back
# `ms`; its reply lost; its reply `ms` late; answered 500/503 at once, never applied (the model sees timed_out);
# answered 409 after `ms`, never applied; applied after `ms`, its answer lost, and sent again by the client's
# SDK, whose retry's answer the process gets (issue 39's S3 answers: fault kinds fast_5xx, conflict_any,
# sdk_retry_412)
ACTIONS = ("lose_request", "fail_fast", "delay_apply", "lose_reply", "delay_reply", "answer_5xx", "conflict",
           "sdk_retry")


@dataclass
class NetRule:
    """A scripted network fault for requests matching it, at most `times` times (None: always)."""

    action: str
    node: str | None = None  # the sender's node id; None: any sender
    op: str | None = None  # GET / PUT / DELETE / LIST
    key: str | None = None  # a key prefix
    after_ms: int = 0
    until_ms: int | None = None
    times: int | None = 1
    ms: int = 0  # for delay_apply / delay_reply
    machine: str | None = None  # the sender's machine, to single out one of two twins

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise ValueError(f"unknown action {self.action!r} (choices: {', '.join(ACTIONS)})")

    def matches(self, now: int, node: str, machine: str, req: Request) -> bool:
        return ((self.times is None or self.times > 0) and now >= self.after_ms
                and (self.until_ms is None or now < self.until_ms)
                and (self.node is None or self.node == node) and (self.machine is None or self.machine == machine)
                and (self.op is None or self.op == req.op) and (self.key is None or req.key.startswith(self.key)))


def calm_options(nodes: int, params: Params, clocks: dict | None = None, versioning: str = "opaque",
                 absent_if_match: int = 404) -> dict:
    """A world with nothing drawn: every fault kind off (scenarios/faults/), no random workload."""
    machines = [f"m{i}" for i in range(nodes)] + ["op"] + [f"t{k}" for k in range(4)]
    clk = {m: [100_000, 0] for m in machines}
    if clocks:
        clk.update({m: list(v) for m, v in clocks.items()})
    return {
        **faults.defaults(),
        "nodes": nodes, "fault_ms": 0, "versioning": versioning, "absent_if_match": absent_if_match,
        "p_alias": 0.0, "delay_ms_max": 5, "upload_ms_max": 0, "late_ms_max": 1,
        "restart_ms_max": 100, "clock_mode": "fixed", "slow_fast": None, "actors": 0,
        "request_gap_ms": 0, "hibernate_gap_ms": 0, "move_gap_ms": 0, "p_client_retry": 0.0, "hot_share": 0.0,
        "clocks": clk,
    }


class ScriptedWorld(SimWorld):
    """The SimPy world driven by a script of steps and network rules."""

    lazy_timeouts = False  # scripts were written against timeouts scheduled at the send

    def __init__(self, nodes: int = 2, model=None, params: Params | None = None, seed: int = 0,
                 model_name: str = "correct", clocks: dict | None = None, restart: bool = True,
                 versioning: str = "opaque", absent_if_match: int = 404) -> None:
        if model is None:
            from model import MODEL as model
        params = params or Params()
        super().__init__(seed, model, "scripted", params, model_name,
                         options=calm_options(nodes, params, clocks, versioning, absent_if_match))
        self.steps: list[tuple[int, str, tuple]] = []
        self.event_rules: list[list] = []  # [node, after_ms, ms (None: a straggler), times left]
        self.restart = restart
        if not restart:
            for slot in self.slots:
                slot.wanted = False

    # --- writing the script ------------------------------------------------------

    def at(self, t_ms: int, what: str, *args) -> "ScriptedWorld":
        """Schedule a step: request / hibernate / move / command / crash / restart / twin / start / fence /
        forget / outage / clock / delete / put_raw."""
        if not hasattr(self, "_step_" + what):
            raise ValueError(f"unknown step {what!r}")
        self.steps.append((t_ms, what, args))
        return self

    def rule(self, rule: NetRule) -> "ScriptedWorld":
        self.net_rules.append(rule)
        return self

    def event(self, node_id: str, ms: int | None, after_ms: int = 0, times: int = 1) -> "ScriptedWorld":
        """The next `times` events `node_id` begins after `after_ms` run `ms` (None: a straggler,
        ended right after its process sends `released`); every other event ends at once."""
        self.event_rules.append([node_id, after_ms, ms, times])
        return self

    def event_ms(self, proc, actor) -> int | None:
        for r in self.event_rules:
            if r[0] == proc.node_id and self.now >= r[1] and r[3] > 0:
                r[3] -= 1
                return r[2]
        return 0

    def run(self, until_ms: int = 60_000) -> History:  # type: ignore[override]
        self.options["fault_ms"] = until_ms
        return super().run()

    # --- the world's side ----------------------------------------------------------

    def schedule_script(self) -> None:
        for t, what, args in self.steps:
            self.later(t, self._do, what, args)

    def _do(self, what, args) -> None:
        getattr(self, "_step_" + what)(*args)

    def scripted_fate(self, proc, request):
        for r in self.net_rules:
            if r.matches(self.now, proc.node_id, proc.machine, request):
                if r.times is not None:
                    r.times -= 1
                return (r.action, r.ms)
        return None

    def _req(self) -> int:
        self._requests += 1
        return self._requests

    def _step_request(self, node_id, actor, machine=None) -> None:
        """A client request for `actor` at node `node_id` (at its process on `machine`, one of twins)."""
        proc = self.live_proc(node_id) if machine is None else next(
            (s.proc for s in self.slots if s.node_id == node_id and s.machine == machine and s.proc is not None
             and s.proc.alive), None)
        if proc is not None:
            self.deliver(proc, Command("request", (actor, self._req(), 0)))

    def _step_hibernate(self, node_id, actor) -> None:
        proc = self.live_proc(node_id)
        if proc is not None:
            self.deliver(proc, Command("hibernate", (actor,)))

    def _step_move(self, node_id, actor, target) -> None:
        proc = self.live_proc(node_id)
        if proc is not None:
            self.deliver(proc, Command("move", (actor, target, self._req())))

    def _step_command(self, node_id, name, *args) -> None:
        """Any command to a node's live process (stop, drain, ...)."""
        proc = self.live_proc(node_id)
        if proc is not None:
            self.tell(proc, Command(name, tuple(args)))

    def _step_crash(self, node_id, machine=None) -> None:
        for slot in self.slots:
            if slot.node_id == node_id and (machine is None or slot.machine == machine):
                if slot.proc is not None and slot.proc.alive:
                    self.crash(slot.proc)
                    return

    def _step_restart(self, node_id) -> None:
        for slot in self.slots:
            if slot.node_id == node_id and (slot.proc is None or not slot.proc.alive):
                self.start_process(slot)
                return

    def _step_twin(self, node_id, machine) -> None:
        slot = Slot(node_id, machine)
        slot.wanted = self.restart
        self.slots.append(slot)
        self.record(WORLD, "twin", (node_id, machine))
        self.start_process(slot)

    def _step_start(self, node_id, machine, model=None) -> None:
        """A process of `node_id` starts on `machine` (no supervisor restarts it), running the model under
        test or `model` (a broken one, say: a second, independent bug grafted into a script, whose
        violations a finding's classifier must not take for the finding's)."""
        slot = Slot(node_id, machine)
        slot.wanted = False
        self.slots.append(slot)
        self.start_process(slot, None if model is None else model.step)

    def _step_fence(self, node_id) -> None:
        self.operator_command(Command("cluster_fence", (node_id,)))

    def _step_forget(self, node_id) -> None:
        self.operator_command(Command("cluster_forget", (node_id,)))

    def _step_clock(self, machine, offset_ms) -> None:
        """NTP steps the machine's wall clock: it reads true time + `offset_ms` from now (T-1)."""
        set_clock(self, machine, offset_ms)

    def _step_outage(self, who, length_ms, mode="blackhole") -> None:
        self.outage(who, length_ms, mode)

    def _step_delete(self, key) -> None:
        """An operator deletes an object by mistake (recorded as a fault, not a protocol write)."""
        self.delete_record(key)

    def _step_put_raw(self, key, body) -> None:
        """Bytes written outside the protocol (an old binary's heartbeat, say)."""
        # the header (an old format) and the written_at it carries, if any (UP-2 and FN-8 judge its age)
        stamp = next((int(line.split(" ", 1)[1]) for line in body.split("\n") if line.startswith("written_at_ms ")), None)
        self.record(WORLD, "fault_put", (key, body.split("\n", 1)[0], stamp))
        self.bucket.apply(Request(PUT, key, None, None, body), self.now)


class UpgradeWorld(ScriptedWorld):
    """A ScriptedWorld that starts no node by itself: the script starts old binaries and new nodes on
    named machines, and sends requests and commands to the process running on a machine. Every
    request a process sends is logged in `sent` as (t_ms, proc, op, key), to judge start orders."""

    MACHINES = ("m0", "m1", "om0", "om1")

    def __init__(self, model=None, model_name: str = "correct") -> None:
        super().__init__(nodes=0, model=model, model_name=model_name, restart=False,
                         clocks={m: [100_000, 0] for m in self.MACHINES})  # true time + 100 s
        self.sent: list[tuple[int, int, str, str]] = []

    def send(self, proc, eff) -> None:
        self.sent.append((self.now, proc.index, eff.request.op, eff.request.key))
        super().send(proc, eff)

    def _running_on(self, machine):
        for slot in reversed(self.slots):
            if slot.machine == machine and slot.proc is not None and slot.proc.alive:
                return slot.proc
        return None

    def _start_on(self, node_id, machine, step=None) -> None:
        slot = Slot(node_id, machine)
        slot.wanted = False  # no supervisor: the script restarts what it wants restarted
        self.slots.append(slot)
        self.start_process(slot, step)

    # steps (looked up as _step_<name>)

    def _step_new_start(self, node_id, machine) -> None:
        """A new binary (the model under test) starts as `node_id` on `machine`."""
        self._start_on(node_id, machine)

    def _step_old_start(self, node_id, machine) -> None:
        """An old per-actor-lease binary starts as `node_id` on `machine`."""
        self._start_on(node_id, machine, OLD_MODEL.step)

    def _step_ask(self, machine, actor) -> None:
        """A client request for `actor` reaches the process running on `machine`."""
        proc = self._running_on(machine)
        if proc is not None:
            self.deliver(proc, Command("request", (actor, self._req(), 0)))

    def _step_tell(self, machine, name, *args) -> None:
        """A command (hibernate, stop, stall_heartbeats, ...) to the process running on `machine`."""
        proc = self._running_on(machine)
        if proc is not None:
            self.deliver(proc, Command(name, tuple(args)))

    def _step_kill(self, machine) -> None:
        """The process on `machine` crashes (no write; requests in flight may still land)."""
        proc = self._running_on(machine)
        if proc is not None:
            self.crash(proc)

    def _step_new_restart(self, machine) -> None:
        """The last new-node slot on `machine` is started again: same id, new instance."""
        for slot in reversed(self.slots):
            if slot.machine == machine:
                if slot.proc is None or not slot.proc.alive:
                    self.start_process(slot)
                return

    def local(self, machine: str, t_ms: int) -> int:
        return self.clocks[machine].local(t_ms)
