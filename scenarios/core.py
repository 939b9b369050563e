"""The world core: everything the two worlds do the same way.

A world executes the model. The core delivers inputs to `step` and carries
out its effects; runs the processes (start, exit, supervisor restarts,
crashes, twins, the operator, the old binaries of an upgrade); drives the
workload (client requests and their retries, forwarding, hibernation, moves,
the final rounds); cuts machines off the bucket (outages); draws the fate of
every request from the run's one seeded RNG (lost, failed fast, held back and
applied late, its reply lost or slow); ends the faults in a quiet phase; and
keeps the bookkeeping of applied writes that INV-3 needs. It records all of
it in the history.

Two interpreters subclass it, as Stateright's checker and its real runtime
interpret one actor vocabulary: the SimPy world (sim.py: true time is SimPy's
clock, the bucket is simulated) and the real-S3 world (s3.py: true time is
the monotonic clock, the bucket a real endpoint). They supply only what
differs:

- `now` (true time in ms) and `later(delay_ms, fn, *args)`;
- `to_bucket(proc, rid, req, fate)`: the request reaches the bucket now; the
  world applies it and hands the outcome to `bucket_answered`;
- `remove_object(key)`, an operator's mistaken delete, and
  `read_bucket(then)`, the old garbage collection's look at the bucket.

Must not know: any protocol rule (model/ decides; the world keeps its own
notes of what it did, such as which processes it told to drain), SimPy or
boto3.
"""

from __future__ import annotations

import random
from collections import Counter

from history import Clock, History, Process
from history.schema import FIELDS, Event, event
from model.actor_data import DATA_PREFIX
from model.io import (
    DELETE,
    FAILED_FAST,
    GET,
    IF_MATCH,
    IF_NONE_MATCH,
    LIST,
    NOT_FOUND,
    OK,
    PRECONDITION_FAILED,
    PUT,
    TIMED_OUT,
    CancelTimer,
    Command,
    Exit,
    Forward,
    Mark,
    Observe,
    ProcessStarted,
    Reply,
    ReplyArrived,
    Send,
    SetTimer,
    TimerFired,
)
from model.old_lease import OLD_MODEL, gc_collectable
from model.operator import OPERATOR
from model.params import Params
from model.records import NODE_HEADER_3, NODES_PREFIX, OWNERS_PREFIX, RELEASED, node_key, state_line

from .plan import NoRandom
from .processes import Proc, Slot
from .swarm import draw, draw_params

WORLD = -1  # the proc index of events the world itself records

FAILED = Reply(FAILED_FAST)
NO_ANSWER = Reply(TIMED_OUT)
# a `released` node lease: the state line, the second of the body, within its first bytes
RELEASED_LINE = "\n" + RELEASED + " "
RELEASED_AT = len(NODE_HEADER_3) + len(RELEASED_LINE)
# a scripted network rule's action (scenarios.script) -> the fault kind it is, named as drawn ones are
SCRIPTED_FAULTS = {"lose_request": "request_lost", "fail_fast": "fail_fast", "delay_apply": "held_back",
                   "lose_reply": "reply_lost", "delay_reply": "slow_reply"}
FINAL_RETRY_MS = 500  # a final-round request that failed is tried again this much later
FAIL_FAST_MS_MAX = 20  # a refused connection is answered within this
REPLIES_DROPPING = 0.9  # the share of write replies lost during a stretch of dropping
STORM_LOST, STORM_SLOW = 0.5, 0.9  # in a record storm: the share of record writes lost, of their replies slowed
DRAIN_WAITS = 12  # a drain with holds waits up to this many sixths of a lease span for the node to hold one
GUARD_STORM_LOST = 0.8  # in a guard storm: the share of `nodes/` reads lost (two in a round: 0.64 both)
STRAGGLER_MS_MAX = 30_000  # a straggler event ends by then if no `released` write ends it (CS-1)
NO_FAULTS = {"p_fail_fast": 0.0, "p_request_lost": 0.0, "p_late": 0.0, "p_reply_lost": 0.0, "p_slow_reply": 0.0}


_new_tuple = tuple.__new__  # a named tuple made from a tuple of its fields in one call (the hot paths)


def _no_draw(_n):
    raise RuntimeError("a random draw (randint) in a planned run: every decision must come from the plan")


class World:
    """The core of a world; a subclass supplies time, the bucket and the transport."""

    # schedule a request's timeout only once its reply will not come first (it answers nothing
    # otherwise): a world that knows each reply's instant when the bucket answers (the SimPy world)
    lazy_timeouts = False

    def __init__(self, seed: int, model, scenario: str = "swarm", params: Params | dict | None = None,
                 model_name: str = "correct", options: dict | None = None, choices=None, **draw_overrides) -> None:
        self.seed = seed
        self.rng = random.Random(seed)
        # faults as data (scenarios/plan.py): a Choices that records every decision drawn, or a plan
        # to read them from (then nothing is drawn: the RNG refuses)
        self.choices = choices
        if choices is not None and not choices.recording:
            self.rng = NoRandom()
        # the draws below go through getrandbits, as random.Random's own do (see `randint`)
        self._getrandbits = self.rng.getrandbits if choices is None or choices.recording else _no_draw
        # fates drawn straight from the RNG (no Choices to note or read them, no world of its own deciding)
        self._drawn = choices is None and type(self)._fate is World._fate
        # the configuration: given whole (a Params), or drawn for this seed around the pinned values
        if isinstance(params, Params):
            self.params, config = params, "given"
        else:
            self.params, config = draw_params(self.rng, params or {}, scenario)
        self.model = model
        self.options = draw(self.rng, scenario, self.params, **draw_overrides) if options is None else options
        self.options.setdefault("config", config)
        o = self.options
        self._delay_ms_max = o["delay_ms_max"]
        self.tg = self.params.ttl_ms + self.params.grace_ms  # T-5's takeover span: the world's schedule scales with it
        self.net_rules: list = []  # scripted network faults (scenarios.script); none in drawn worlds
        # the fault rates in force: the drawn ones, zero once the quiet phase begins
        self.fault = {k: o[k] for k in ("p_fail_fast", "p_request_lost", "p_late", "p_reply_lost", "p_slow_reply")}
        # losses and delays hit only requests of this [op, key prefix] (None: every request; op None: any op)
        self.fault_target = o.get("fault_target")
        self.in_quiet = False
        self.history = History(seed, model_name, scenario, self.params.to_dict(), o)
        self.rules: Counter = Counter()
        self.bucket_requests = 0
        self.procs: list[Proc] = []
        self.clocks = {m: Clock(off, drift) for m, (off, drift) in o["clocks"].items()}
        self.cut: dict[str, str] = {}  # machine or "*" -> mode, while an outage lasts
        # node ids and actors: n0.. and a0.., or as a plan names them (a shrunk plan drops some)
        ids = o.get("node_ids") or [f"n{i}" for i in range(o["nodes"])]
        self.slots = [Slot(n, "m" + n[1:]) for n in ids]
        self.node_ids = [slot.node_id for slot in self.slots]
        self.request_ids = list(self.node_ids)  # where clients send requests (old ids too, in an upgrade)
        self.old_slots: list[Slot] = []
        self.actors = o.get("actor_ids") or [f"t{k % 2}/c/a{k}" for k in range(o["actors"])]
        self._timer_seq = 0
        self._requests = 0
        self._retries: dict[int, int] = {}  # client request -> retries so far
        self._final_actors: list[str] = []
        self._final_reqs: set[int] = set()  # request ids of the final rounds (membership only)
        self.requests_until = 1 << 62
        self.operator: Proc | None = None
        self.holders: dict[str, str] = {}  # actor -> the node its record names, as the bucket applied it
        self._races: dict[str, int] = {}  # node -> deadline races armed: cut it off after its next acknowledged write
        self._calm: dict[str, int] = {}  # node -> until when no other fault touches it (a race plays out)
        self._lose: dict[str, str] = {}  # node -> key prefix: its next write there is lost on the way
        # node -> (follow-ups, a replacement at once, a replacement at all, give up at): a mistaken
        # delete of nodes/<node> armed to strike right after its next acknowledged lease write
        self._delete_races: dict[str, tuple] = {}
        self._shield: dict[str, int] = {}  # node -> until when no random network fault touches its requests
        self._busy: dict[str, int] = {}  # node -> until when its actors stay busy (no hibernation or move reaches it)
        self._silence_release: dict[str, bool] = {}  # node -> its next `released` write starts a lease outage (CS-2)
        # CS-1: node -> (restart after, give up at): its next event is a straggler, its stop follows
        self._straggle: dict[str, tuple[int, int]] = {}
        self.replies_dropping = False  # a stretch of lost write replies is under way
        self.record_storm = False  # a stretch of lost and slow record writes is under way
        self.guard_storm = False  # a stretch of lost `nodes/` reads as new nodes start (UP-2's guard)

    # --- what a world supplies ----------------------------------------------------------

    @property
    def now(self) -> int:
        raise NotImplementedError

    def later(self, delay_ms: int, fn, *args) -> None:
        """Call fn(*args) `delay_ms` from now (true time)."""
        raise NotImplementedError

    def to_bucket(self, proc: Proc, rid: int, req, fate, sent_ms: int) -> None:
        """The request (sent at true time `sent_ms`) reaches the bucket now: apply it, then call
        bucket_answered()."""
        raise NotImplementedError

    def remove_object(self, key: str) -> None:
        raise NotImplementedError

    def read_bucket(self, then) -> None:
        """then(leases, data_keys): every `leases/` key with its body, every `wal/` key."""
        raise NotImplementedError

    def choose(self, site: str, who: str, draw, *args):
        """A decision of the world's own (not a request's fate): drawn by `draw(*args)`, or noted
        or read by the run's Choices (faults as data, scenarios/plan.py)."""
        ch = self.choices
        return draw(*args) if ch is None else ch.pick(site, who, draw, *args)

    def randint(self, a: int, b: int) -> int:
        """rng.randint(a, b), drawing exactly the same numbers, without its argument checks
        (it is the hot path's most called function): CPython's `Random._randbelow_with_getrandbits`
        inlined (a test compares the two), not three Python calls deep."""
        n = b - a + 1
        k = n.bit_length()
        getrandbits = self._getrandbits
        r = getrandbits(k)
        while r >= n:
            r = getrandbits(k)
        return a + r

    def delay(self) -> int:
        """randint(1, delay_ms_max): a request's or a reply's way to the bucket (every request and reply)."""
        n = self._delay_ms_max
        k = n.bit_length()
        getrandbits = self._getrandbits
        r = getrandbits(k)
        while r >= n:
            r = getrandbits(k)
        return 1 + r

    def below(self, n: int) -> int:
        """rng.randrange(n) for an int n, drawing exactly the same numbers (as `randint`)."""
        if n <= 0:
            raise ValueError("empty range for randrange()")
        k = n.bit_length()
        getrandbits = self._getrandbits
        r = getrandbits(k)
        while r >= n:
            r = getrandbits(k)
        return r

    # --- the run's schedule -------------------------------------------------------------

    def schedule(self) -> int:
        """Schedule everything the drawn options say; returns the run's end (true time)."""
        o = self.options
        tg = self.tg
        up = o.get("upgrade")
        base = up["new_at"] if up else 0  # the new nodes start here; their faults count from here
        if up:
            self.schedule_upgrade(up)
        starts = o.get("starts") or [0] * len(self.node_ids)
        for slot, start in zip(self.slots[: len(self.node_ids)], starts):
            # nodes start spread over a period, so that their lease cadences are not in lockstep
            if base + start:
                self.later(base + start, self._start_slot, slot)
            else:
                self.start_process(slot)
        op = Slot("operator", "op")
        op.wanted = False
        # the operator's commands (FN-7, FN-8); a broken model may bring a broken operator
        self.operator = self.start_process(op, getattr(self.model, "operator", OPERATOR).step, instance="op")
        # a fault a plan removed is None in its list (the others keep their indices)
        for node_id, at in filter(None, o["operator_fences"]):
            self.later(base + at, self._operator, Command("cluster_fence", (node_id,)))
        ch = self.choices
        if ch is not None and not ch.recording:
            self.schedule_workload(ch.workload)
        else:
            if o["request_gap_ms"]:
                self.later(self.randint(0, o["request_gap_ms"]), self._client_request)
            if o["hibernate_gap_ms"]:
                self.later(self.randint(0, 2 * o["hibernate_gap_ms"]), self._hibernate)
            if o["move_gap_ms"]:
                self.later(self.randint(0, 2 * o["move_gap_ms"]), self._move)
        self.schedule_script()
        for who, at, length_ms, mode in filter(None, o["outages"]):
            self.later(base + at, self._outage_begins, who, length_ms, mode)
        for node_id, at in filter(None, o["crashes"]):
            self.later(base + at, self._crash_node, node_id)
        for at in filter(lambda x: x is not None, o.get("deadline_races", ())):
            self.later(base + at, self._arm_race)
        for at, length_ms in filter(None, o.get("reply_drops", ())):
            self.later(base + at, self._replies_drop, True, length_ms)
            self.later(base + at + length_ms, self._replies_drop, False)
        for at, length_ms in filter(None, o.get("record_storms", ())):
            self.later(base + at, self._record_storm, True, length_ms)
            self.later(base + at + length_ms, self._record_storm, False)
        for at, length_ms in filter(None, [up and up.get("guard_storm")]):
            self.later(base + at, self._guard_storm, True, length_ms)
            self.later(base + at + length_ms, self._guard_storm, False)
        for node_id, at in filter(None, o.get("crash_for_good", ())):
            self.later(base + at, self._crash_for_good, node_id)
        for node_id, at in filter(None, o.get("mass", ())):
            self.later(base + at, self._mass_hold, node_id)
        for k, twin in enumerate(o["twins"]):
            if twin:
                node_id, at, life_ms = twin
                self.later(base + at, self._twin_begins, node_id, f"t{k}", life_ms,
                           k in o.get("twin_silences", ()))
        stragglers = o.get("stragglers", ())
        for k, stop in enumerate(o.get("stops", ())):
            if not stop:
                continue
            node_id, at, restart_after_ms = stop
            if k in o.get("stop_silences", ()):
                # CS-2's margin: the stop's first `released` write and its retries are lost for a while
                self.later(base + at, self._silence_next_release, node_id)
            if k in stragglers:
                # CS-1: the stop comes right after the node begins an event that outlasts its wait
                self.later(base + at, self._arm_straggler, node_id, restart_after_ms)
            else:
                self.later(base + at, self._stop_node, node_id, restart_after_ms)
        for node_id, at, after_ms, then, *lose in filter(None, o.get("drains", ())):
            lost = bool(lose and lose[0])
            if lost:
                # an acquisition's record write is lost just before the drain (F-2's precondition)
                self.later(base + at - self.tg // 3, self._lose_next, node_id, OWNERS_PREFIX)
            elif o.get("drains_with_holds"):
                # no random network fault on the node's requests from just before the drain until it
                # must have reported drained: the drain is judged (INV-11) with the holds it drains
                until = base + at + self._drain_bound_ms()
                self.later(base + at - self.tg // 3, self._shield_until, node_id, until)
                if o.get("drains_wait_for_holds"):
                    # and its actors stay busy: no hibernation or move ends its holds for it, so the
                    # drain must release them itself (CS-3), or never reports drained (INV-11)
                    self.later(base + at - self.tg // 3, self._busy_until, node_id, until)
            if lost or o.get("drains_with_holds"):
                # the node is asked for every actor just before: it drains holds, not an empty node (CS-3)
                for actor in self.actors:
                    self.later(base + at - self.tg // 3 + 1, self._ask_new, node_id, actor)
            if not lost and o.get("drains_with_holds") and o.get("drains_wait_for_holds"):
                self.later(base + at, self._drain_holding, node_id, after_ms, then, DRAIN_WAITS)
                continue
            self.later(base + at, self._command_node, node_id, Command("drain"))
            self._after_drain(node_id, base + at + after_ms, then)
        for k, delete in enumerate(o.get("deletes", ())):
            if not delete:
                continue
            node_id, at, replacement, *then = delete
            follow = bool(then and then[0])
            soon = replacement and self.choose("soon", f"delete{k}", self._chance, 0.5)
            if follow or soon:
                # a delete race: right after the node's next acknowledged lease write, while it
                # owns actors, so that it still runs and acts for up to a period (FN-6, FN-7, NL-5)
                self.later(base + at, self._arm_delete, node_id, follow, soon, replacement)
            else:
                self.later(base + at, self._delete, "nodes/" + node_id)
                if replacement:
                    # the operator, thinking the machine gone, starts a replacement under that id
                    self.later(base + at + self.choose("later", "replacement " + node_id, self.randint, 0, tg // 3),
                               self._twin_begins, node_id, "r0", 4 * tg)
        if o.get("blip"):
            at, length_ms, mode = o["blip"]
            self.later(base + at, self._outage_begins, "*", length_ms, mode)
        end = base + o["fault_ms"]
        quiet = o.get("quiet_ms", 0)
        # the run ends on a quiet moment: no new request in its last 4/15 of ttl + grace
        # the quiet phase's schedule scales with its liveness span (ttl + grace, or a floor)
        live = o.get("liveness_ms", tg)
        self.requests_until = end + quiet - 4 * live // 15 if quiet else end
        if quiet:
            self.later(end, self._quiet_begins)
            if o["quiet_crash"]:
                self.later(end + live // 3, self._quiet_crash)
            self.later(end + quiet - 4 * live // 5, self._final_round)
            self.later(end + quiet - 2 * live // 5, self._final_round)
            end += quiet
        return end

    def schedule_workload(self, steps: list) -> None:
        """A plan's workload: [t, "ask", node, actor], [t, "hibernate", actor], [t, "move", actor, target].
        Each kind runs as a chain, as the drawn workload does (each step schedules the next), so that
        steps at one instant keep their order among the other events."""
        for what in ("ask", "hibernate", "move"):
            chain = [step for step in steps if step[1] == what]
            if chain:
                self.later(chain[0][0], self._planned_step, chain, 0)

    def _planned_step(self, chain: list, i: int) -> None:
        _t, what, *args = chain[i]
        if not self.workload_step(what, args):
            return
        if i + 1 < len(chain):
            self.later(chain[i + 1][0] - self.now, self._planned_step, chain, i + 1)

    def workload_step(self, what: str, args) -> bool:
        """One step of a planned workload (a plan's, or the explorer's); False: skipped, for
        hibernations and moves stop with the faults, as drawn ones do."""
        if what == "ask":
            self._requests += 1
            self._ask(args[0], args[1], self._requests)
        elif self.in_quiet:
            return False
        elif what == "hibernate":
            self._broadcast(Command("hibernate", (args[0],)))
        elif what == "move":
            self._move_to(args[0], args[1])
        return True

    def _chance(self, p: float) -> bool:
        return self.rng.random() < p

    def schedule_script(self) -> None:
        """Scripted worlds (scenarios.script) schedule their steps here."""

    def _start_slot(self, slot) -> None:
        if slot.proc is None or not slot.proc.alive:
            self.start_process(slot)

    def finish(self, end: int) -> History:
        h = self.history
        h.end_ms = end
        h.rules = dict(sorted(self.rules.items()))
        h.counts = self.counts()
        return h

    def counts(self) -> dict:
        return {"bucket_requests": self.bucket_requests, "processes": len(self.procs),
                "client_requests": self._requests}

    def record(self, proc: int, kind: str, fields: tuple = ()) -> None:
        self.history.events.append(event(self.now, proc, kind, fields))

    # --- section 6: the old binaries before the switch -------------------------------------

    def schedule_upgrade(self, up: dict) -> None:
        """Old nodes (model/old_lease.py) serve first and stop at old_ms; new ones start at new_at."""
        tg = self.tg
        n = len(self.node_ids)
        self.old_slots = []
        for i in range(n):
            slot = Slot(self.node_ids[i] if up["same_ids"] else f"o{i}", f"om{i}")
            slot.wanted = False  # no supervisor restarts an old binary here
            self.slots.append(slot)
            self.old_slots.append(slot)
            self.start_process(slot, OLD_MODEL.step)
            if slot.node_id not in self.request_ids:
                self.request_ids.append(slot.node_id)
            stop_at = up["old_ms"] + (up["straggle_ms"] if up["straggler"] == i else 0)
            if up["straggler"] == i and up["stall"]:
                self.later(up["old_ms"] - tg // 3, self._old_command, slot, Command("stall_heartbeats"))
            if up["old_stop"][i] == "clean":
                self.later(stop_at, self._old_command, slot, Command("stop"))
            else:
                self.later(stop_at, self._old_crash, slot)
        if up["future_ms"]:
            slot = Slot("retired", "omf")
            slot.wanted = False
            self.slots.append(slot)
            self.old_slots.append(slot)
            self.start_process(slot, OLD_MODEL.step)
            self.later(min(2 * tg // 3, up["old_ms"]), self._old_crash, slot)
        if up["old_restart"]:
            i, after = up["old_restart"]
            self.later(up["new_at"] + after, self._old_restart, self.old_slots[i])
        self.later(up["new_at"], self._old_gc, up["p_gc"])
        for node_id, after, then_fence in filter(None, up.get("forgets", ())):
            # FN-8, then F-6's remedy: a fence of the forgotten id (FN-7) a lease period later
            self.later(up["new_at"] + after, self._operator, Command("cluster_forget", (node_id,)))
            if then_fence:
                self.later(up["new_at"] + after + tg // 3, self._operator, Command("cluster_fence", (node_id,)))

    def _old_command(self, slot, command) -> None:
        if slot.proc is not None and slot.proc.alive:
            self.deliver(slot.proc, command)

    def _old_crash(self, slot) -> None:
        if slot.proc is not None and slot.proc.alive:
            self.crash(slot.proc)

    def _old_restart(self, slot) -> None:
        """An old binary started again after the switch (it must find its id taken, or be refused):
        once a new node runs, so that it meets the new nodes' markers (UP-3, UP-4)."""
        if not any(kind == "guard_passed" for _, _, kind, _ in self.history.events):
            if not self.in_quiet:
                self.later(self.tg // 3, self._old_restart, slot)
            return
        if slot.proc is None or not slot.proc.alive:
            self.start_process(slot, OLD_MODEL.step)
            self.later(4 * self.tg // 3, self._old_command, slot, Command("stop"))

    def _old_gc(self, p_gc) -> None:
        """The old garbage collection runs once at the switch (model.old_lease.gc_collectable
        says what it may delete); it deletes each collectable lease at the drawn rate."""
        if p_gc:
            self.read_bucket(lambda leases, data_keys: self._old_gc_deletes(p_gc, leases, data_keys))

    def _old_gc_deletes(self, p_gc, leases, data_keys) -> None:
        for key in gc_collectable(leases, data_keys):
            if self.choose("gc", key, self._chance, p_gc):
                self._delete(key)

    # --- processes -------------------------------------------------------------------------

    def start_process(self, slot: Slot, step=None, instance: str | None = None) -> Proc:
        if instance is None:
            instance = self.choose("instance", slot.machine, self._instance)
        proc = Proc(len(self.procs), slot.node_id, instance, slot.machine, self.clocks[slot.machine], slot,
                    step or self.model.step)
        self.procs.append(proc)
        slot.proc = proc
        c = proc.clock
        self.history.processes.append(Process(slot.node_id, instance, slot.machine, c.offset_ms, c.drift_ppm))
        self.record(proc.index, "start", (slot.node_id, instance, slot.machine))
        self.deliver(proc, ProcessStarted(slot.node_id, instance, self.params))
        return proc

    def _instance(self) -> str:
        return f"{self.rng.getrandbits(32):08x}"

    def end_process(self, proc: Proc, status: int | None = None) -> None:
        """The process is gone (exit `status`, or a crash when None)."""
        proc.alive = False
        proc.timers.clear()
        proc.pending.clear()
        proc.watched.clear()
        proc.deadlines.clear()
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
        ms = self.choose("restart", slot.machine, self.randint, lo, o["restart_ms_max"])
        self.later(lo if ms is None else ms, self._restart, slot)

    def _restart(self, slot) -> None:
        if slot.wanted and (slot.proc is None or not slot.proc.alive):
            self.start_process(slot)

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

    # --- the model's side ------------------------------------------------------------------

    def deliver(self, proc: Proc, inp) -> None:
        if not proc.alive:
            return
        now = self.now
        c = proc.clock  # the process's local time: Clock.local, inlined (the hottest call of all)
        state, effects = proc.step(proc.state, inp, now + c.offset_ms + now * c.drift_ppm // 1_000_000)
        proc.state = state
        for eff in effects:
            t = type(eff)
            if t is Send:
                self.send(proc, eff)
            elif t is Mark:
                self.rules[eff[0]] += 1
            elif t is SetTimer:
                self.set_timer(proc, eff)
            elif t is Observe:
                kind, fields = eff
                # `record`, inlined: the fields named by the kind (history/schema.py; a model that observes
                # a kind with fields other than the schema's fails here, loudly)
                cls = FIELDS[kind]
                self.history.events.append(_new_tuple(Event, (self.now, proc.index, kind, _new_tuple(cls, fields)
                                                              if len(fields) == len(cls._fields) else cls(*fields))))
                if kind == "served":
                    self._event_begins(proc, fields)
                elif kind == "request_failed" and (self.options["p_client_retry"] or self._final_reqs):
                    self._client_retry(proc, fields)
            elif t is CancelTimer:
                proc.timers.pop(eff.key, None)
            elif t is Forward:
                self.later(self.choose("forward", proc.machine, self.randint, 1, self.options["delay_ms_max"]),
                           self._forwarded, eff.node_id, eff.command)
            elif t is Exit:
                self.record(proc.index, "exit", (eff.status, eff.reason))
                self.end_process(proc, eff.status)
            else:
                raise TypeError(f"not an effect: {eff!r}")

    def set_timer(self, proc: Proc, eff: SetTimer) -> None:
        self._timer_seq += 1
        token = self._timer_seq
        key, at_ms = eff
        proc.timers[key] = token
        c = proc.clock  # (without drift, the true instant is the local one less the offset: Clock.true_at)
        self.later((c.true_at(at_ms) if c.drift_ppm else at_ms - c.offset_ms) - self.now, self._timer_fires, proc,
                   key, token)

    def _timer_fires(self, proc, key, token) -> None:
        if proc.timers.get(key) == token:
            del proc.timers[key]
            self.deliver(proc, _new_tuple(TimerFired, (key,)))  # TimerFired(key), without its __new__

    # --- requests: their fate, the bucket's answer, the reply --------------------------------

    def _is_cut(self, machine: str) -> str | None:
        if not self.cut:
            return None
        return self.cut.get(machine) or self.cut.get("*")

    def send(self, proc: Proc, eff: Send) -> None:
        """A request leaves a process: the fault plan draws its fate; the timeout answers it
        if nothing else does (on the sender's clock)."""
        self.bucket_requests += 1
        rid, req, timeout = eff
        now = self.now
        proc.pending[rid] = now  # its send time
        if req.op == PUT:
            key = req.key
            if key.startswith(DATA_PREFIX):
                proc.watched[rid] = key  # a segment: its failure, when answered, is a world fact (OR-5)
            elif key.startswith(NODES_PREFIX) and key != NODES_PREFIX + proc.node_id:
                # a fence (FN-3, FN-7): the world counts those the process has in flight (BD-1)
                proc.watched[rid] = key
                n = sum(1 for k in proc.watched.values() if k.startswith(NODES_PREFIX))
                self.record(proc.index, "fence_sent", (key, n))
            elif RELEASED_LINE in req.body[:RELEASED_AT] and state_line(req.body).startswith("released "):
                self.record(proc.index, "released_sent", ())  # its own node lease released (CS-1, CS-2)
                if proc.stragglers:
                    self._released_sent(proc)
                if self._silence_release and self._silence_release.pop(proc.node_id, False):
                    self._cut_off(proc.machine, 3 * self.params.attempt_timeout_ms + 2_000, "lease")
        c = proc.clock
        if c.drift_ppm:  # (without drift, `timeout` true ms are `timeout` ms on the sender's clock)
            timeout = c.true_at(c.local(now) + timeout) - now
        lazy = self.lazy_timeouts
        if not lazy:
            self.later(timeout, self._timed_out, proc, rid)
        cuts = self.cut
        cut = (cuts.get(proc.machine) or cuts.get("*")) if cuts else None  # _is_cut, inlined
        if cut == "blackhole" or cut == "lease" and req.op == PUT and req.key == NODES_PREFIX + proc.node_id:
            if lazy:  # ("lease": only the node's own lease writes are lost; see _race_cut)
                self.later(timeout, self._timed_out, proc, rid)
            return
        fate = self.scripted_fate(proc, req) if self.net_rules else None
        if fate is not None:
            action, ms = fate
            if action in SCRIPTED_FAULTS:
                self.note_fault(proc, SCRIPTED_FAULTS[action], req, ms if action.startswith("delay") else None,
                                "scripted")
            if action == "lose_request":
                return
            if action == "fail_fast":
                self.later(1, self._reply, proc, rid, FAILED)
                return
            if action == "delay_apply":
                self.later(ms, self.to_bucket, proc, rid, req, None, now)
                return
        if self._lose and req.op == PUT and self._lose.get(proc.node_id) and req.key.startswith(self._lose[proc.node_id]):
            del self._lose[proc.node_id]
            self.note_fault(proc, "request_lost", req, None, "the write lost just before a drain")
            if lazy:
                self.later(timeout, self._timed_out, proc, rid)
            return
        if cut == "refuse":
            self.note_fault(proc, "fail_fast", req, None, "refused: cut off")
            ms = self.choose("refused", proc.machine, self.randint, 1, FAIL_FAST_MS_MAX)
            if lazy:
                self._await(proc, rid, timeout, ms)
            self.later(ms, self._reply, proc, rid, FAILED)
            return
        what, ms = self._send_fate(proc, req) if self._drawn else self._fate("send", self._send_fate, proc, req)
        if what == "ok":
            if lazy:  # _await, inlined
                if ms >= timeout:
                    self.later(timeout, self._timed_out, proc, rid)
                else:
                    proc.deadlines[rid] = now + timeout
            self.later(ms, self.to_bucket, proc, rid, req, fate, now)
        elif what == "fail_fast":
            self.note_fault(proc, "fail_fast", req)
            if lazy:
                self._await(proc, rid, timeout, ms)
            self.later(ms, self._reply, proc, rid, FAILED)
        elif what == "lost":
            self.note_fault(proc, "request_lost", req)  # lost on the way: never applied, never answered
            if lazy:
                self.later(timeout, self._timed_out, proc, rid)
        else:  # late: applied `ms` after its sender gave up
            self.note_fault(proc, "late", req, timeout + ms, "applied past its timeout")
            if lazy:
                self.later(timeout, self._timed_out, proc, rid)
            self.later(timeout + ms, self.to_bucket, proc, rid, req, fate, now)

    def _await(self, proc: Proc, rid: int, timeout: int, answered_in: int) -> None:
        """Lazy timeouts: schedule the timeout now if the answer comes no sooner; else note when it
        would fire, for the reply's path to schedule it if the reply is lost or comes too late."""
        if answered_in >= timeout:
            self.later(timeout, self._timed_out, proc, rid)
        else:
            proc.deadlines[rid] = self.now + timeout

    def _deadline_due(self, proc: Proc, rid: int, answered_at: int | None) -> None:
        """The reply of a request with a noted deadline is lost (answered_at None) or comes at
        `answered_at`: the timeout is scheduled if it must answer first."""
        deadline = proc.deadlines.get(rid)
        if deadline is not None and (answered_at is None or answered_at >= deadline):
            del proc.deadlines[rid]
            self.later(deadline - self.now, self._timed_out, proc, rid)

    def _fate(self, site: str, draw, proc: Proc, req) -> tuple[str, int]:
        """A request's or a reply's fate: drawn, or noted or read by the run's Choices, keyed by the
        sender's machine and the request (scenarios/plan.py)."""
        ch = self.choices
        return draw(proc, req) if ch is None else ch.pick(site, f"{proc.machine} {req.op} {req.key}", draw, proc, req)

    def _send_fate(self, proc: Proc, req) -> tuple[str, int]:
        """A request's fate, drawn: (ok, delay), (fail_fast, ms to the answer), (lost, 0), or
        (late, ms past its timeout)."""
        f = self.fault if not (self._calm or self._shield) or not self.shielded(proc.node_id) else NO_FAULTS
        rng = self.rng
        if f["p_fail_fast"] and rng.random() < f["p_fail_fast"]:
            return "fail_fast", self.randint(1, FAIL_FAST_MS_MAX)
        hit = self.fault_target is None or self._targeted(req)
        if hit and f["p_request_lost"] and rng.random() < f["p_request_lost"]:
            return "lost", 0
        if self.record_storm and self._stormed(f, req) and rng.random() < STORM_LOST:
            return "lost", 0
        if (self.guard_storm and f is self.fault and req.op == GET and req.key.startswith(NODES_PREFIX)
                and rng.random() < GUARD_STORM_LOST):
            return "lost", 0  # UP-2: a guard read that fails proves nothing about that heartbeat
        o = self.options
        delay = self.delay()
        if o["upload_ms_max"] and req.body is not None and len(req.body) >= 1024:
            delay += self.randint(0, o["upload_ms_max"])  # a segment upload takes its time
        if hit and f["p_late"] and req.op in (PUT, DELETE) and rng.random() < f["p_late"]:
            return "late", self.randint(1, o["late_ms_max"])
        return "ok", delay

    def _stormed(self, f: dict, req) -> bool:
        """In a record storm (OR-7..OR-9: BM-3's race), a record write that no race shields."""
        return f is self.fault and req.op == PUT and req.key.startswith(OWNERS_PREFIX)

    def _targeted(self, req) -> bool:
        op, prefix = self.fault_target
        return (op is None or req.op == op) and req.key.startswith(prefix)

    def scripted_fate(self, proc, request):
        """(action, ms) for a request a scripted rule matches; None otherwise."""
        return None

    def learned(self, proc: Proc, key: str, version: str, serial: int) -> None:
        """`proc` read (or wrote) `version` of `key`, known to the world as `serial` (INV-3)."""
        proc.learned[(key, version)] = serial

    def applied(self, proc: Proc, req, version: str | None, prev_serial: int, serial: int,
                prev_body: str | None, sent_ms: int) -> None:
        """A write or delete of `proc`, sent at `sent_ms`, took effect: `prev_serial` is the object it
        replaced (0: none), `serial` the new one (0: deleted). Records it with the version its
        condition named, as this process knew it before this write (INV-3), and its send time
        (the checkers rebuild validity from it)."""
        key = req.key
        if req.cond == IF_MATCH:
            named = proc.learned.get((key, req.version), -1)
        elif req.cond == IF_NONE_MATCH:
            named = 0
        else:
            named = None
        if req.op == PUT:
            proc.learned[(key, version)] = serial
        state = state_line(req.body)
        self.record(proc.index, "apply", (key, req.op, req.cond, prev_serial, named, serial,
                                          state, state_line(prev_body), sent_ms))
        if key.startswith(OWNERS_PREFIX):
            parts = state.split(" ")
            if parts[0] == "held":
                self.holders[key[len(OWNERS_PREFIX):]] = parts[1]
            else:
                self.holders.pop(key[len(OWNERS_PREFIX):], None)

    def refused(self, proc: Proc, req, met_body: str | None, sent_ms: int, status: str = PRECONDITION_FAILED) -> None:
        """The bucket refused a conditional write of `proc` (412, or 404 for an If-Match on an absent
        object): the world records what it met (INV-10: a process whose write met a fence naming it
        stops)."""
        code = 404 if status == NOT_FOUND else 412
        self.record(proc.index, "refused", (req.key, req.op, req.cond, state_line(met_body), sent_ms, code))

    def conflicted(self, proc: Proc, req, sent_ms: int) -> None:
        """The bucket answered a conditional write of `proc` 409: not applied, its condition not judged
        (CS-2: a conflict on the `released` write is followed by NL-9's re-read, like a 412)."""
        self.record(proc.index, "conflicted", (req.key, req.op, sent_ms))

    def bucket_answered(self, proc: Proc, rid: int, req, reply: Reply, fate) -> None:
        """The bucket answered `req`: the fault plan draws what happens to the reply."""
        if fate is not None:
            if fate[0] in SCRIPTED_FAULTS:
                self.note_fault(proc, SCRIPTED_FAULTS[fate[0]], req, fate[1] if fate[0].startswith("delay") else None,
                                "scripted")
            if fate[0] == "lose_reply":
                return
            if fate[0] == "delay_reply":
                self.later(fate[1], self._reply, proc, rid, reply, req)
                return
        what, ms = self._reply_fate(proc, req) if self._drawn else self._fate("reply", self._reply_fate, proc, req)
        if what == "lost":
            self.note_fault(proc, "reply_lost", req, None, reply.status)
            if proc.deadlines:
                self._deadline_due(proc, rid, None)
            return
        if proc.deadlines:
            self._deadline_due(proc, rid, self.now + ms)
        if what == "slow":
            self.note_fault(proc, "slow_reply", req, ms)
        self.later(ms, self._reply, proc, rid, reply, req)

    def _reply_fate(self, proc: Proc, req) -> tuple[str, int]:
        """A reply's fate, drawn: (ok, delay), (lost, 0) or (slow, delay)."""
        f = self.fault if not (self._calm or self._shield) or not self.shielded(proc.node_id) else NO_FAULTS
        rng = self.rng
        hit = self.fault_target is None or self._targeted(req)
        o = self.options
        lost = f["p_reply_lost"]
        if self.replies_dropping and req.op != GET and f is self.fault:
            lost = REPLIES_DROPPING  # a stretch in which writes land and their replies are lost
        if (hit and lost and (req.op != GET or o.get("read_replies_lost"))
                and rng.random() < lost):
            return "lost", 0
        delay = self.delay()
        if self.record_storm and self._stormed(f, req) and rng.random() < STORM_SLOW:
            # the write landed, its reply comes up to a timeout late, while the client's retry at once
            # starts the same node's next acquisition (OR-7, OR-9)
            return "slow", self.randint(delay, delay + self.params.attempt_timeout_ms)
        if hit and f["p_slow_reply"] and rng.random() < f["p_slow_reply"]:
            a = self.params.attempt_timeout_ms
            tail = o.get("slow_tail", "within")
            if tail == "past" and rng.random() < 0.5:
                return "slow", self.randint(a, 3 * a)  # well past the attempt timeout: the timeout answers
            if tail == "edge" and rng.random() < 0.5:
                return "slow", self.randint(a - a // 10, a - 1)  # just under the attempt timeout
            return "slow", self.randint(delay, delay + a)
        return "ok", delay

    def _reply(self, proc, rid, reply, req=None) -> None:
        sent = proc.pending.pop(rid, None)
        if sent is None:
            return  # timed out already, or the process is gone
        if self.cut and reply.status != FAILED_FAST and self._is_cut(proc.machine) in ("blackhole", "refuse"):
            proc.pending[rid] = sent  # the reply is lost on the way: the timeout answers
            if proc.deadlines:
                self._deadline_due(proc, rid, None)
            return
        if proc.deadlines:
            proc.deadlines.pop(rid, None)
        if proc.watched:
            self._unwatch(proc, rid, reply.status)
        if req is not None and req.op == LIST and reply.status == OK and req.key.startswith(DATA_PREFIX):
            # what a restore saw: the world knows the listing it delivered (INV-8)
            cut = len(req.key)
            self.record(proc.index, "listed", (req.key, [k[cut:] for k, _v in reply.entries], sent))
        self.deliver(proc, _new_tuple(ReplyArrived, (rid, reply)))  # ReplyArrived(rid, reply), without its __new__
        if (self._races and reply.status == OK and req is not None and req.op == PUT
                and req.key == "nodes/" + proc.node_id and self._races.get(proc.node_id)):
            self._race_cut(proc, sent)
        if (self._delete_races and reply.status == OK and req is not None and req.op == PUT
                and req.key == "nodes/" + proc.node_id and proc.node_id in self._delete_races):
            self._delete_race(proc)

    def _timed_out(self, proc, rid) -> None:
        if proc.pending.pop(rid, None) is None:
            return
        if proc.watched:
            self._unwatch(proc, rid, NO_ANSWER.status)
        self.deliver(proc, ReplyArrived(rid, NO_ANSWER))

    def _unwatch(self, proc, rid, status: str) -> None:
        """A watched request (a segment upload, a fence) is answered, by the bucket or its timeout: a fence
        is no longer in flight (BD-1), and a segment that failed is a world fact (OR-5)."""
        key = proc.watched.pop(rid, None)
        if key is not None and status != OK and key.startswith(DATA_PREFIX):
            self.record(proc.index, "upload_failed", (key, status))

    def note_fault(self, proc: Proc, kind: str, req, ms: int | None = None, detail: str = "") -> None:
        """A fault of `kind` (scenarios/faults.py names them) hit the request `req` of `proc`."""
        self.record(proc.index, "fault", (kind, f"{req.op} {req.key}", ms, detail))

    # --- the workload ----------------------------------------------------------------------

    def _forwarded(self, node_id, command) -> None:
        proc = self.live_proc(node_id)
        if proc is not None:
            self.deliver(proc, command)

    def _client_request(self) -> None:
        rng = self.rng
        self._requests += 1
        if self.options["hot_share"] and rng.random() < self.options["hot_share"]:
            actor = self.actors[0]
        else:
            actor = self.actors[self.below(len(self.actors))]
        node_id = self.request_ids[self.below(len(self.request_ids))]
        if self.choices is not None:
            self.choices.note(self.now, "ask", node_id, actor)
        self._ask(node_id, actor, self._requests)
        self.later(self.randint(1, 2 * self.options["request_gap_ms"]), self._client_request)

    def _ask(self, node_id: str, actor: str, req: int) -> None:
        """A client request for `actor` reaches `node_id` (lost if no process serves that id)."""
        if self.now >= self.requests_until:
            return
        proc = self.live_proc(node_id)
        if proc is not None:
            self.record(proc.index, "client", (actor, node_id, req))
            self.deliver(proc, Command("request", (actor, req, 0)))

    def _client_retry(self, proc, fields) -> None:
        """The client saw its request fail; it may try the same node again soon. A final-round
        request is always tried again, at a node that runs, up to three times."""
        actor, req = fields[0], fields[1]
        if req in self._final_reqs:
            tries = self._retries.get(req, 0)
            live = [n for n in self.node_ids if self.live_proc(n) is not None]
            if tries < 3 and live:
                self._retries[req] = tries + 1
                node_id = self.choose("final_node", actor, self._one_of, live)
                self.later(FINAL_RETRY_MS, self._ask, node_id if node_id in live else live[0], actor, req)
            return
        if not self.options["p_client_retry"]:
            return
        tries = self._retries.get(req, 0)
        if tries < 2:
            ms = self.choose("retry", f"{proc.node_id} {actor}", self._retry_after)
            if ms is not None:
                self._retries[req] = tries + 1
                self.later(ms, self._ask, proc.node_id, actor, req)

    def _retry_after(self) -> int | None:
        """Whether the client retries, after how long (None: it does not)."""
        return self.randint(50, 1_000) if self.rng.random() < self.options["p_client_retry"] else None

    def _one_of(self, items: list):
        return items[self.below(len(items))]

    def _broadcast(self, command) -> None:
        """Hibernations and moves reach every process but those a race plays out on, and those of a
        node draining with busy actors."""
        busy = self._busy
        for slot in self.slots:
            if (slot.proc is not None and slot.proc.alive and not (self._calm and self.calm(slot.node_id))
                    and not (busy and busy.get(slot.node_id, -1) >= self.now)):
                self.deliver(slot.proc, command)

    def _hibernate(self) -> None:
        """An actor goes idle: whoever holds it hibernates it."""
        if self.in_quiet:
            return
        rng = self.rng
        actor = self.actors[self.below(len(self.actors))]
        if self.choices is not None:
            self.choices.note(self.now, "hibernate", actor)
        self._broadcast(Command("hibernate", (actor,)))
        self.later(self.randint(1, 2 * self.options["hibernate_gap_ms"]), self._hibernate)

    def _move(self) -> None:
        """An actor is moved to another node: whoever holds it hands it over."""
        if self.in_quiet:
            return
        rng = self.rng
        actor = self.actors[self.below(len(self.actors))]
        # a move hands the actor over: to a node other than the one its record names
        others = [n for n in self.node_ids if n != self.holders.get(actor)] or self.node_ids
        target = others[self.below(len(others))]
        if self.choices is not None:
            self.choices.note(self.now, "move", actor, target)
        self._move_to(actor, target)
        self.later(self.randint(1, 2 * self.options["move_gap_ms"]), self._move)

    def _move_to(self, actor: str, target: str) -> None:
        self._requests += 1
        self.record(WORLD, "moved", (actor, target))
        self._broadcast(Command("move", (actor, target, self._requests)))

    def _command_node(self, node_id, command) -> None:
        if command.name == "drain" and self._disturbs_a_race(node_id):
            return
        proc = self.live_proc(node_id)
        if proc is not None and proc.slot.machine.startswith("m"):
            self.tell(proc, command)

    def _stop_node(self, node_id, restart_after_ms, retire: bool = False) -> None:
        """A clean stop (CS-1) of the node's supervised process, started again `restart_after_ms`
        after it exits (None: it stays down). In the quiet phase only the retirement it draws
        stops a node (`retire`): a stop drawn for the fault phase that comes late is skipped."""
        if self.in_quiet and not retire:
            return
        slot = self.slots[self.node_ids.index(node_id)]
        if slot.proc is not None and slot.proc.alive and not self._disturbs_a_race(node_id):
            slot.restart_after_stop = restart_after_ms
            self.tell(slot.proc, Command("stop"))

    def _operator(self, command) -> None:
        if self._disturbs_a_race(command.args[0]):
            return
        self.record(self.operator.index, "operator", (command.name, command.args[0]))
        self.deliver(self.operator, command)

    def _delete(self, key) -> None:
        """An operator deletes an object by mistake: outside the protocol, so not an `apply`."""
        if key.startswith("nodes/") and self._disturbs_a_race(key[len("nodes/"):]):
            return
        self.record(WORLD, "fault_delete", (key,))
        self.remove_object(key)

    # --- the quiet phase ----------------------------------------------------------------------

    def _quiet_begins(self) -> None:
        """Faults stop; twins go; every node is up again (or stopped cleanly); requests go on."""
        self.in_quiet = True
        self._races.clear()
        self._calm.clear()  # a race's calm ends with the fault phase: the quiet phase's own moves go ahead
        self._delete_races.clear()
        self._shield.clear()
        self._busy.clear()
        self._silence_release.clear()
        self._lose.clear()
        self.replies_dropping = False
        self.record_storm = False
        self.guard_storm = False
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
        # an operator who knows a node gone for good asks `cluster forget` of it once its last write
        # is stale by UP-2's test: its object is in format 3 (fenced, released or live), and FN-8
        # deletes only a retired old-format heartbeat: forget must refuse
        p = self.params
        forget_after = 3 * p.heartbeat_period_ms + p.ttl_ms + p.grace_ms + self.tg // 3
        for slot in self.slots[: len(self.node_ids)]:
            slot.restart_after_stop = self.tg // 15  # one still stopping now comes back once it exits
            if slot.down_for_good:
                if self.options.get("forget_gone"):
                    self.later(forget_after, self._operator, Command("cluster_forget", (slot.node_id,)))
                # its machine is gone: peers fence it (FN-3) to free its records; and where its
                # nodes/<id> was deleted by mistake too, only the operator's fence of the absent
                # object frees them (FN-7), which the operator runs for a machine it knows gone
                if any(f and f[0] == slot.node_id for f in self.options.get("deletes", ())):
                    self.later(self.tg // 3, self._operator, Command("cluster_fence", (slot.node_id,)))
                continue
            if slot.proc is None or not slot.proc.alive:
                self.start_process(slot)
            elif slot.proc.draining:
                self.tell(slot.proc, Command("resume"))
        if self.options.get("quiet_stop"):
            # a node retired for good: stopped cleanly, then revoked by the operator (FN-7),
            # which frees its records even where its stop wrote nothing or nodes/<id> was deleted
            # one that runs now (a dead one would be restarted meanwhile, and its revocation would
            # fence a new process, not the one retired); never the last node standing: somebody
            # must take its actors over
            running = [s for s in self.slots[: len(self.node_ids)]
                       if not s.down_for_good and s.proc is not None and s.proc.alive]
            if len(running) >= 2:
                ids = [s.node_id for s in running]
                node_id = self.choose("quiet_stop", "", self._one_of, ids)
                slot = running[ids.index(node_id) if node_id in ids else 0]
                slot.wanted = False  # retired: no supervisor brings it back
                self._stop_node(slot.node_id, None, retire=True)
                self.later(4 * self.tg // 3, self._operator, Command("cluster_fence", (slot.node_id,)))
                if self.options.get("forget_gone"):
                    self.later(4 * self.tg // 3 + forget_after, self._operator, Command("cluster_forget", (slot.node_id,)))

    def _quiet_crash(self) -> None:
        node_id = self.choose("quiet_crash", "", self._one_of, self.node_ids) or self.node_ids[0]
        proc = self.live_proc(node_id)
        if proc is not None:
            self.crash(proc)

    def _final_round(self) -> None:
        """Every actor is requested once more, at a node that runs, before the end (INV-4)."""
        live = [n for n in self.node_ids if self.live_proc(n) is not None]
        if not self._final_actors:
            # most actors are asked for once more; the rest show whether a record stays held
            # by a live process that no longer serves it (INV-4)
            chosen = self.choose("final_actors", "", self._most_actors)
            self._final_actors = [a for a in self.actors if chosen is None or a in chosen]
        self.record(WORLD, "final_round", (self._final_actors if live else [],))
        for actor in self._final_actors:
            if live:
                self._requests += 1
                self._final_reqs.add(self._requests)
                node_id = self.choose("final_node", actor, self._one_of, live)
                self._ask(node_id if node_id in live else live[0], actor, self._requests)

    def _most_actors(self) -> list[str]:
        return [a for a in self.actors if self.rng.random() < 0.8]

    # --- faults ------------------------------------------------------------------------------

    def _arm_race(self) -> None:
        """A deadline race (T-2, T-5): the node on the slowest clock is cut off right after its next
        acknowledged lease write while it owns actors; the node on the fastest clock is asked for
        them from the instant its clock says the owner's written_at + ttl + grace has passed, and
        the owner too, on both sides of its own deadline. At T-2's equality the takeover may land
        exactly at the owner's last valid instant: any missing margin shows."""
        slow_fast = self.options.get("slow_fast")
        if slow_fast and not self.in_quiet:
            node = "n" + slow_fast[0][1:]
            taker = "n" + slow_fast[1][1:]
            if self._disturbs_a_race(node) or self._disturbs_a_race(taker):
                return  # a race is under way on one of them already
            if self.live_proc(node) is None or self.live_proc(taker) is None:
                return  # one of them is down: no race to run
            self._races[node] = self._races.get(node, 0) + 1
            # nothing else disturbs the two from now until the race is over (set again at the cut)
            self._calm[node] = self._calm[taker] = self.now + 2 * self.tg
            # the owner-to-be is asked for every actor, so that it owns some when it is cut off
            for actor in self.actors:
                self._ask_new(node, actor)

    def _race_cut(self, proc: Proc, sent_ms: int) -> None:
        if self.in_quiet:
            return
        node = proc.node_id
        actors = sorted(a for a, n in self.holders.items() if n == node)
        if not actors or proc.slot is not self.slots[self.node_ids.index(node)]:
            return  # it owns nothing yet (or this is a twin): wait for a later write
        self._races[node] -= 1
        p = self.params
        fast = self.options["slow_fast"][1]
        taker = "n" + fast[1:]
        # the instant the taker's clock reads the owner's written_at + ttl + grace
        t_free = self.clocks[fast].true_at(proc.clock.local(sent_ms) + self.tg)
        self.record(WORLD, "fault", ("deadline_race", proc.machine, None,
                                     f"cut off after an acknowledged lease write; {taker} may free its actors "
                                     f"from {t_free} ms"))
        # the owner's last valid instant, by its own clock
        deadline = proc.clock.true_at(proc.clock.local(sent_ms) + p.lease_span_ms)
        # nothing else disturbs the two until the race is over
        calm_until = max(t_free, deadline) + 2 * p.period_ms + 2 * p.attempt_timeout_ms
        self._calm[node] = self._calm[taker] = calm_until
        lapse = self.options.get("lapse_acquires")
        # cut off from the bucket; or (lapse_acquires) only its lease writes are lost: it reaches
        # the records and the data to the end, and past it (OR-2, OR-4, NL-11 at the deadline)
        self._cut_off(proc.machine, 2 * self.tg + p.period_ms + p.attempt_timeout_ms,
                      "lease" if lapse else "blackhole")
        # the owner is asked up to its deadline and a little past it; the taker from half a
        # takeover span before it may free them (a model that frees early shows) to well after;
        # every eighth of a lease period, for three of the owner's actors at most. With
        # lapse_acquires, the owner hibernates them every sixteenth of a period in its last half
        # period, and is asked for them again from an instant drawn in the last few round trips
        # before its deadline (the workload asks too): each is acquired anew
        # (OR-3) as its lease runs out, between the acquisition's reads and its record write
        # (OR-2: the write only while the lease is valid), then served up to the deadline; actors
        # nobody holds are asked of it likewise
        step = max(1, p.period_ms // 8)
        dense = max(1, p.period_ms // 32)
        trip = 4 * self.options["delay_ms_max"]  # a read there and back, twice (routing, acquisition)
        for actor in actors[:3]:
            if lapse:
                for at in range(deadline - p.period_ms // 2, deadline, max(1, p.period_ms // 16)):
                    self.later(at - self.now, self._command_node_any, node, Command("hibernate", (actor,)))
                first = deadline - self.choose("later", f"lapse {node} {actor}", self.randint, 0, trip)
            else:
                for at in range(deadline - 2 * p.period_ms, deadline - p.period_ms // 2, step):
                    self.later(at - self.now, self._ask_new, node, actor)
                first = deadline - p.period_ms // 2
            # densest where a takeover too early would overlap: the owner's last half period
            for at in range(first, deadline + p.period_ms // 4, dense):
                self.later(at - self.now, self._ask_new, node, actor)
            for at in range(t_free - self.tg // 2, t_free + 2 * p.period_ms, step):
                self.later(at - self.now, self._ask_new, taker, actor)
        if lapse:
            for actor in [x for x in self.actors if x not in self.holders][:3]:
                for at in range(deadline - self.choose("later", f"lapse {node} {actor}", self.randint, 0, trip),
                                deadline + p.period_ms // 4, dense):
                    self.later(at - self.now, self._ask_new, node, actor)

    def _crash_for_good(self, node_id) -> None:
        """A machine dies and never comes back: no supervisor restart, not even in the quiet phase."""
        if self._disturbs_a_race(node_id):
            return
        slot = self.slots[self.node_ids.index(node_id)]
        slot.down_for_good = True
        slot.wanted = False
        self.record(WORLD, "fault", ("gone_for_good", slot.machine, None, "the machine never comes back"))
        if slot.proc is not None and slot.proc.alive:
            self.crash(slot.proc)

    def _record_storm(self, on: bool, length_ms: int | None = None) -> None:
        if on and not self.in_quiet:
            self.record(WORLD, "fault", ("record_storm", OWNERS_PREFIX, length_ms, "record writes lost and slow"))
        self.record_storm = on and not self.in_quiet

    def _guard_storm(self, on: bool, length_ms: int | None = None) -> None:
        if on and not self.in_quiet:
            self.record(WORLD, "fault", ("guard_storm", NODES_PREFIX, length_ms, "nodes/ reads lost"))
        self.guard_storm = on and not self.in_quiet

    def _replies_drop(self, on: bool, length_ms: int | None = None) -> None:
        if on and not self.in_quiet:
            self.record(WORLD, "fault", ("reply_drops", "writes", length_ms, "write replies lost"))
        self.replies_dropping = on and not self.in_quiet

    def _lose_next(self, node_id, prefix) -> None:
        self._lose[node_id] = prefix

    def _mass_hold(self, node_id) -> None:
        """Many actors on one node, then all released while the bucket refuses that node, then does
        not answer it, for less than its lease's span in all: the releases pile up as pending
        entries whose retries meet refusal after refusal (BD-3), then wait in flight (BD-2)."""
        if self._disturbs_a_race(node_id):
            return
        for actor in self.actors:
            self._ask_new(node_id, actor)
        p = self.params
        at = 2 * self.tg
        third = p.lease_span_ms // 3  # the two cut-offs together stay within the lease's span
        self.later(at, self._outage_begins, node_id, third, "refuse")
        self.later(at + third + 1, self._outage_begins, node_id, third, "blackhole")
        for actor in self.actors:
            self.later(at + 10, self._command_node_any, node_id, Command("hibernate", (actor,)))

    def _command_node_any(self, node_id, command) -> None:
        proc = self.live_proc(node_id)
        if proc is not None:
            self.deliver(proc, command)

    # --- events take time (CS-1) ---------------------------------------------------------------

    def _event_begins(self, proc: Proc, fields) -> None:
        """A served request's event runs a while; the world ends it (the model cuts it if its
        lease is lost first). A straggler, served just before a clean stop, runs until the
        process sends its `released` write (or a bound), the worst instant to end."""
        actor, _gen, req = fields
        ms = self.event_ms(proc, actor)
        if ms is None:
            proc.stragglers.append((actor, req))
            ms = STRAGGLER_MS_MAX
        proc.events[(actor, req)] = self.now + ms
        self.later(ms, self._event_end, proc, actor, req)

    def event_ms(self, proc: Proc, actor: str) -> int | None:
        """How long the event of a request `proc` just served runs (None: a straggler)."""
        if self._straggle and proc.node_id in self._straggle and proc.slot.machine.startswith("m"):
            restart_after_ms, _ = self._straggle.pop(proc.node_id)
            self.later(self.choose("later", "straggler " + proc.node_id, self.randint, 1, self.tg // 30),
                       self._stop_node, proc.node_id, restart_after_ms)
            return None
        if not self.options.get("event_ms_max"):
            return 0
        ch = self.choices
        return self._event_draw() if ch is None else ch.pick("event", proc.machine, self._event_draw)

    def _event_draw(self) -> int:
        o = self.options
        if o["p_long_event"] and self.rng.random() < o["p_long_event"]:
            return self.randint(*o["long_event_ms"])
        return self.randint(0, o["event_ms_max"])

    def _event_end(self, proc: Proc, actor: str, req: int) -> None:
        if proc.events.pop((actor, req), None) is not None and proc.alive:
            self.deliver(proc, Command("event_end", (actor, req)))

    def _released_sent(self, proc: Proc) -> None:
        """The process sent its `released` write: its stragglers end right after."""
        for actor, req in proc.stragglers:
            self.record(proc.index, "fault", ("straggler", f"{actor} request {req}", None,
                                              "the event ends just after `released` was sent"))
            proc.events[(actor, req)] = self.now + 1
            self.later(1, self._event_end, proc, actor, req)
        proc.stragglers.clear()

    def _arm_straggler(self, node_id: str, restart_after_ms: int, give_up: int | None = None) -> None:
        """A clean stop with a straggler (CS-1): the node's next event outlasts the stop's bounded
        wait, and the stop follows it at once; clients ask the node until it serves one (or, past
        2 (ttl + grace), the stop comes anyway)."""
        if give_up is None:
            self._straggle[node_id] = (restart_after_ms, self.now + 2 * self.tg)
        elif node_id not in self._straggle:
            return  # it served: the stop is on its way
        elif self.now >= give_up or self.in_quiet:
            del self._straggle[node_id]
            self._stop_node(node_id, restart_after_ms)
            return
        give_up = self._straggle[node_id][1]
        self._ask_holder(node_id)
        self.later(self.tg // 10, self._arm_straggler, node_id, restart_after_ms, give_up)

    def _ask_holder(self, node_id: str) -> None:
        """Requests for the actors whose records name `node_id` (as the bucket applied them), or
        for the hot actor if none does."""
        for actor in [a for a in self.actors if self.holders.get(a) == node_id][:2] or self.actors[:1]:
            self._ask_new(node_id, actor)

    def _arm_delete(self, node_id: str, follow: bool, soon: bool, replacement: bool) -> None:
        if self.in_quiet:
            return
        if self._disturbs_a_race(node_id):  # a deadline race plays out there: after it
            self.later(self.tg // 3, self._arm_delete, node_id, follow, soon, replacement)
            return
        self._delete_races[node_id] = (follow, soon, replacement, self.now + 2 * self.tg)
        for actor in self.actors:  # so that it owns some when the delete strikes
            self._ask_new(node_id, actor)
        self.later(2 * self.tg, self._delete_race_due, node_id)

    def _delete_race_due(self, node_id: str) -> None:
        """No acknowledged write while it owned something: the delete strikes anyway."""
        race = self._delete_races.get(node_id)
        if race is not None and self._disturbs_a_race(node_id):
            self.later(self.tg // 3, self._delete_race_due, node_id)
        elif race is not None and self.now >= race[3]:
            proc = self.live_proc(node_id)
            if proc is not None:
                self._delete_race(proc, anyway=True)
            else:
                del self._delete_races[node_id]

    def _delete_race(self, proc: Proc, anyway: bool = False) -> None:
        """The delete strikes right after an acknowledged lease write of `proc` (its whole period
        ahead of it); the operator fences the absent object (FN-7) soon after, takeover attempts
        begin at once at the other nodes and at the deleted one (it still runs, and acts, until its
        next lease write finds the object gone), or a replacement starts at once under its id."""
        node = proc.node_id
        if self.in_quiet or self._disturbs_a_race(node) or not anyway and (
                proc.slot is not self.slots[self.node_ids.index(node)]
                or not any(n == node for n in self.holders.values())):
            return  # a twin, it owns nothing yet, or a deadline race plays out there: a later write
        follow, soon, replacement, _ = self._delete_races.pop(node)
        self._delete("nodes/" + node)
        P = self.params.period_ms
        # the race plays out undisturbed by random network faults: its own moves, then the
        # deleted node's next lease write, within a period and an attempt
        for n in [node, "operator"] + self.node_ids:
            self._shield[n] = self.now + P + self.params.attempt_timeout_ms
        if follow:
            if not soon:  # (a replacement at once meets the absent object, not the operator's fence)
                self.later(self.choose("later", "fence " + node, self.randint, 1, P // 8),
                           self._operator, Command("cluster_fence", (node,)))
            mine = [a for a in self.actors if self.holders.get(a) == node][:3]
            for k in range(16):
                self.later(k * P // 16 + self.choose("later", "ask " + node, self.randint, 1, P // 16),
                           self._ask_around, node, mine)
        if replacement:
            # the operator, thinking the machine gone, starts a replacement under that id
            lo, hi = (1, P // 8) if soon else (0, self.tg // 3)
            self.later(self.choose("later", "replacement " + node, self.randint, lo, hi), self._twin_begins, node,
                       "r0", 4 * self.tg)

    def _ask_around(self, node_id: str, actors: list[str]) -> None:
        """Requests for `actors` (its own when the race began), at `node_id` and at another node."""
        others = [n for n in self.node_ids if n != node_id]
        for actor in actors:
            self._ask_new(node_id, actor)
            if others:
                other = self.choose("around", node_id, self._one_of, others)
                self._ask_new(other if other in others else others[0], actor)

    def _ask_new(self, node_id: str, actor: str) -> None:
        self._requests += 1
        self._ask(node_id, actor, self._requests)

    def _drain_bound_ms(self) -> int:
        """From a drain to the instant it must have reported drained, judged (INV-11): ttl + grace, and
        an attempt timeout for a request in flight."""
        p = self.params
        return p.ttl_ms + p.grace_ms + p.attempt_timeout_ms

    def _after_drain(self, node_id: str, at: int, then: str) -> None:
        if then == "resume":
            self.later(at - self.now, self._command_node, node_id, Command("resume"))
        else:
            self.later(at - self.now, self._stop_node, node_id, self.tg // 3)

    def _drain_holding(self, node_id: str, after_ms: int, then: str, waits: int) -> None:
        """A drain judged with the holds it drains (CS-3, INV-11): told once an applied record names
        the node (a node still in its start check, or whose asks were forwarded, holds nothing to
        drain); until then, up to `waits` times, it is asked for every actor again a sixth of a
        lease span later, its shield and its busy actors kept on to the drain's bound. Not once the
        quiet phase began (it resumes drained nodes: one drained after it would stay drained)."""
        if self.in_quiet:
            return
        if waits > 0 and node_id not in self.holders.values():
            until = self.now + self.tg // 6 + self._drain_bound_ms()
            self._shield_until(node_id, until)
            self._busy_until(node_id, until)
            for actor in self.actors:
                self._ask_new(node_id, actor)
            self.later(self.tg // 6, self._drain_holding, node_id, after_ms, then, waits - 1)
            return
        self._command_node(node_id, Command("drain"))
        self._after_drain(node_id, self.now + after_ms, then)

    def _silence_next_release(self, node_id: str) -> None:
        """The node's next `released` write (its clean stop's, CS-1) begins an outage of its machine's
        own lease writes, 3 A + 2 s long: the write and its retries are lost past A + 1 s, the span a
        clean stop retries them for (CS-2); then it exits, its lease left live for peers to fence."""
        if not self.in_quiet:
            self._silence_release[node_id] = True

    def _busy_until(self, node_id: str, until: int) -> None:
        if not self.in_quiet:
            self._busy[node_id] = max(self._busy.get(node_id, 0), until)

    def _shield_until(self, node_id: str, until: int) -> None:
        if not self.in_quiet:
            self._shield[node_id] = max(self._shield.get(node_id, 0), until)

    def shielded(self, node_id: str) -> bool:
        """No random network fault touches this node's requests now: a race plays out on it."""
        if self._calm and self.calm(node_id):
            return True
        until = self._shield.get(node_id)
        return until is not None and self.now < until

    def calm(self, node_id: str) -> bool:
        """No fault but the race's own touches this node now (a deadline race plays out on it)."""
        until = self._calm.get(node_id)
        return until is not None and self.now < until

    def _disturbs_a_race(self, node_id: str | None) -> bool:
        """A drawn fault aimed at `node_id` (None: at every node) waits for no race: it is skipped."""
        if not self._calm:
            return False
        return any(self.calm(n) for n in self._calm) if node_id is None else self.calm(node_id)

    def _outage_begins(self, who, length_ms, mode) -> None:
        """Cut the bucket off from node `who`'s machine, or from everyone ("*")."""
        if who != "*" and who.startswith("n"):
            who = "m" + who[1:]
        if self._disturbs_a_race(None if who == "*" else "n" + who[1:]):
            return
        self._cut_off(who, length_ms, mode)

    def _cut_off(self, who, length_ms, mode) -> None:
        self.cut[who] = mode
        self.record(WORLD, "outage", (who, self.now + length_ms))
        self.record(WORLD, "fault", ("outage", who, length_ms, mode))
        self.later(length_ms, self._outage_ends, who)

    def _outage_ends(self, who) -> None:
        self.cut.pop(who, None)

    def _crash_node(self, node_id) -> None:
        if self._disturbs_a_race(node_id):
            return
        for slot in self.slots:
            if slot.node_id == node_id and slot.machine.startswith("m") and slot.proc and slot.proc.alive:
                self.crash(slot.proc)

    def _twin_begins(self, node_id, machine, life_ms, silence: bool = False) -> None:
        """A second process under `node_id` on `machine` for `life_ms`. `silence`: the original's own
        lease writes are lost meanwhile for ttl + grace + a third (an outage of mode "lease"), so that
        the twin's start check finds the object unchanged and writes live over it (NL-5, NL-6); back,
        the original's next write fails its condition and its re-read meets the twin's instance (NL-9,
        NL-10)."""
        if self.in_quiet or self._disturbs_a_race(node_id):
            return  # faults stopped: a twin or replacement drawn for the fault phase comes too late
        slot = Slot(node_id, machine)
        self.slots.append(slot)
        self.record(WORLD, "twin", (node_id, machine))
        self.start_process(slot)
        self.later(life_ms, self._twin_ends, slot)
        if silence:
            self._outage_begins(node_id, self.tg + self.tg // 3, "lease")

    def _twin_ends(self, slot) -> None:
        slot.wanted = False
        if slot.proc and slot.proc.alive:
            self.crash(slot.proc)
