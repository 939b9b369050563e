"""The explorer's world: the SimPy world's core, with its clock and its choices in the explorer's hands.

`ExploreWorld` is `scenarios.sim.SimWorld` with two things replaced, nothing else:

- **time**: an agenda of callbacks ordered exactly as SimPy's event queue orders them (due
  time, then the order they were scheduled in), held as plain data (the process and slot a
  callback names are kept by index) so that a world can be copied in microseconds;
- **decisions**: where the simulated world draws a request's or a reply's fate, this world
  takes the next decision the explorer queued for it, or stops the callback with
  `NeedDecision` so that the explorer can branch on every alternative. Every other decision
  takes the calm default a plan's replay takes (scenarios/plan.py), so that a path is a plan:
  the SimPy world replays it event for event, with the same history hash.

The explorer (search.py) also schedules the faults and the workload it injects (a client
request, a crash, an operator's fence) where a plan's replay schedules them, so that they
keep their order among the events of their instant.
"""

from __future__ import annotations

from heapq import heappop, heappush

from model.frozen import FrozenDict
from model.io import Command
from scenarios.plan import DEFAULTS, decision_key, default
from scenarios.processes import Proc, Slot
from scenarios.sim import SimWorld

# the sites the explorer decides: a request's fate ("send"), its reply's ("reply") and how long a served
# request's event runs ("event"); every other takes its default
CALM_FATE = tuple(DEFAULTS["send"])  # a request's and a reply's default: delivered after 1 ms
assert CALM_FATE == tuple(DEFAULTS["reply"])

# where a plan's replay (scenarios/core.py `schedule`) puts what the explorer injects: after what
# the nodes' starts scheduled, before every event scheduled later, the operator's fences first,
# then the first client request, then the crashes (the order `schedule` calls `later` in)
FENCE_AT, OUTAGE_AT, CRASH_AT, TWIN_AT, STOP_AT, DRAIN_AT, DELETE_AT = 0.1, 0.6, 0.7, 0.8, 0.84, 0.87, 0.9
FIRST_STEP_AT = {"ask": 0.5, "hibernate": 0.52}  # a workload chain's first step (core `schedule_workload`)


class Tally(dict):
    """A count per key, 0 when absent: what `decision_key` needs of a Counter, with a dict's copy
    (every clone copies it; Counter's copy goes through `update` and took 4 % of a search)."""

    __slots__ = ()

    def __missing__(self, key) -> int:
        return 0

    def copy(self) -> "Tally":
        return Tally(self)


class NeedDecision(Exception):
    """A callback reached a decision the explorer has not made yet."""

    def __init__(self, key: str, site: str, proc: Proc, req, alternatives: list) -> None:
        super().__init__(key)
        self.key, self.site, self.proc, self.req, self.alternatives = key, site, proc, req, alternatives


class ExploreWorld(SimWorld):
    """The simulated world, stepped by the explorer one callback at a time."""

    def __init__(self, seed, model, scenario, params, model_name, options) -> None:
        super().__init__(seed, model, scenario, params, model_name, options=options)
        self.now = 0  # true time: a plain attribute (the core reads it at every step), `t` for the explorer
        self.agenda: list = []  # heap of (due, seq, method's function, args)
        self.seq = 0
        self.queue: list = []  # decisions queued for the callback about to run
        self.table: dict = {}  # the decisions this path took, keyed as a plan keys them
        self.seen = Tally()  # decisions per site and who (`decision_key`), as a plan's replay counts them
        self.decided: dict = {}  # (site, who...) -> the decisions the explorer made about it so far (`_decide`)
        self.workload: list = []  # the client requests injected, as a plan's workload
        self.injected: dict = {"crashes": [], "operator_fences": [], "outages": [], "twins": [], "stops": [],
                               "drains": [], "deletes": []}
        self.chain_seq: dict = {}  # workload kind -> where its next step sits among the events of its instant
        self.base_seq = 0  # the last seq the start scheduled (`advance`)
        self.budget: dict = {}
        self.path: list = []  # what the explorer chose, for people
        self.begun = False
        self.alternatives = None  # (world, site, request) -> the fates to explore (the explorer's)
        self.deciding = True  # False: every decision takes its default (the run after a violation)
        self.old_asks_at: int | None = None  # an upgrade's old binaries are asked for every actor then (`advance`)
        self.old_asks: list = []  # those not injected yet: each after the one before ran, as a plan's chain

    def advance(self) -> None:
        """One callback: the start (the nodes start, as a plan's replay starts them), then the
        next one due."""
        if self.begun:
            self.pop()
            return
        self.schedule()
        self.begun = True
        self.base_seq = self.seq
        self.chain_seq = {k: self.base_seq + at for k, at in FIRST_STEP_AT.items()}
        self.seq += 1
        if self.old_asks_at is not None:  # the old binaries serve first (section 6): one for each actor, 1 ms apart
            self.old_asks = [(self.old_asks_at + k, self.old_slots[k % len(self.old_slots)].node_id, actor)
                             for k, actor in enumerate(self.actors)]
            t, node_id, actor = self.old_asks.pop(0)
            self.inject("ask", node_id, actor, at=t)

    def inject(self, what: str, node_id: str, actor: str | None = None, length_ms: int = 0,
               at: int | None = None) -> None:
        """A client request for `actor` at `node_id` ("ask"), a crash of `node_id`'s process, an
        operator's `cluster fence` of it, an outage cutting its machine off the bucket for
        `length_ms` (requests and replies vanish), a twin (a second process under its id, on a machine
        of its own, for `length_ms`), a clean stop (its supervisor starts it again `length_ms` after it
        exits), a drain followed `length_ms` later by a clean stop, or an operator deleting its
        `nodes/` record by mistake, now (or `at`, later): scheduled where a plan's replay schedules it."""
        t = self.now if at is None else at
        if what == "ask":
            self.workload.append([t, "ask", node_id, actor])
            self.push(t, self.chain_seq["ask"], self._explored_step, ("ask", node_id, actor))
        elif what == "hibernate":
            self.workload.append([t, "hibernate", actor])
            self.push(t, self.chain_seq["hibernate"], self._explored_step, ("hibernate", actor))
        elif what == "crash":
            self.injected["crashes"].append([node_id, t])
            self.push(t, self.base_seq + CRASH_AT + len(self.injected["crashes"]) * 1e-6, self.crash_node, (node_id,))
        elif what == "fence":
            self.injected["operator_fences"].append([node_id, t])
            self.push(t, self.base_seq + FENCE_AT + len(self.injected["operator_fences"]) * 1e-6, self.operator_command,
                      (Command("cluster_fence", (node_id,)),))
        elif what == "outage":
            self.injected["outages"].append([node_id, t, length_ms, "blackhole"])
            self.push(t, self.base_seq + OUTAGE_AT + len(self.injected["outages"]) * 1e-6, self.outage,
                      (node_id, length_ms, "blackhole"))
        elif what == "twin":
            k = len(self.injected["twins"])
            self.injected["twins"].append([node_id, t, length_ms])
            self.push(t, self.base_seq + TWIN_AT + (k + 1) * 1e-6, self.start_twin, (node_id, f"t{k}", length_ms))
        elif what == "stop":  # CS-1..CS-4: a clean stop; the supervisor starts it again `length_ms` after
            k = len(self.injected["stops"])
            self.injected["stops"].append([node_id, t, length_ms])
            self.push(t, self.base_seq + STOP_AT + (k + 1) * 1e-6, self.stop_node, (node_id, length_ms))
        elif what == "drain":  # OR-11, CS-5: a drain, then a clean stop `length_ms` later (a rolling restart)
            k = len(self.injected["drains"])
            self.injected["drains"].append([node_id, t, length_ms, "stop"])
            at = self.base_seq + DRAIN_AT + (k + 1) * 1e-6
            self.push(t, at, self.command_node, (node_id, Command("drain")))
            self.push(t + length_ms, at + 1e-7, self.stop_node, (node_id, self.tg // 3))
        elif what == "delete":
            self.injected["deletes"].append([node_id, t, False])
            self.push(t, self.base_seq + DELETE_AT + len(self.injected["deletes"]) * 1e-6, self.delete_record,
                      ("nodes/" + node_id,))
        else:
            raise ValueError(f"unknown injection {what!r}")

    def _explored_step(self, what: str, *args) -> None:
        # as a plan's workload step (core `_planned_step`): the next one of its kind is scheduled from
        # here, after what this one caused
        self.workload_step(what, args)
        self.seq += 1
        self.chain_seq[what] = self.seq
        if what == "ask" and self.old_asks:
            t, node_id, actor = self.old_asks.pop(0)
            self.inject("ask", node_id, actor, at=t)

    # --- time: an agenda in SimPy's order --------------------------------------------------

    @property
    def t(self) -> int:
        return self.now

    @t.setter
    def t(self, value: int) -> None:
        self.now = value

    def later(self, delay_ms: int, fn, *args) -> None:
        self.seq += 1
        self.kernel_events += 1
        if fn.__self__ is not self:  # `push`, inlined (every callback schedules one or more)
            raise TypeError(f"the explorer schedules only the world's own methods, not {fn!r}")
        heappush(self.agenda, (self.now + (delay_ms if delay_ms > 0 else 0), self.seq, fn.__func__, args))

    def push(self, due: int, seq: int, fn, args) -> None:
        if fn.__self__ is not self:
            raise TypeError(f"the explorer schedules only the world's own methods, not {fn!r}")
        heappush(self.agenda, (due, seq, fn.__func__, args))  # the function: `pop` calls it on this world

    def next_due(self) -> int | None:
        return self.agenda[0][0] if self.agenda else None

    callbacks = 0  # callbacks run by every world of this process (the explorer's work, re-runs too)

    def pop(self) -> None:
        """Run the next callback (its decisions from `queue`, or NeedDecision)."""
        ExploreWorld.callbacks += 1
        due, _seq, fn, args = heappop(self.agenda)
        self.now = due
        fn(self, *args)

    # --- decisions ------------------------------------------------------------------------

    def choose(self, site: str, who: str, draw, *args):
        if site == "gc":  # the old garbage collection at an upgrade's switch deletes this lease, or not (UP-3)
            return self._decide(("gc", who), None, None, False)
        return default(site, decision_key(self.seen, site, who))

    def _fate(self, site: str, draw, proc: Proc, req) -> tuple[str, int]:
        value = self._decide((site, proc.machine, req.op, req.key), proc, req, CALM_FATE)
        if value[0] != "ok":
            self.budget["faults"] -= 1
        return value

    def event_ms(self, proc: Proc, actor: str) -> int | None:
        """How long a served request's event runs (CS-1): 0 ms unless the bounds name lengths, then
        each of them is a branch (keyed as a plan's replay reads it: scenarios/core.py `event_ms`);
        None: a straggler, which runs until its process sends its `released` write."""
        if not self.options.get("event_ms_max"):
            return 0
        return self._decide(("event", proc.machine), proc, None, 0)

    def _decide(self, who: tuple, proc: Proc, req, calm):
        """The next decision about `who` (its site, then what it is about; `proc` None for the old garbage
        collection's): queued by the explorer, the only alternative, or NeedDecision. Keyed as a plan
        keys it (scenarios/plan.py `decision_key`: "<site> <who> #<k>"), counted without formatting the
        key: it is spelled out only for a choice or a value other than `calm`, which a replay must read
        (a plan's missing key takes the default)."""
        k = self.decided.get(who, 0)
        self.decided[who] = k + 1
        if not self.deciding:
            return calm
        if self.queue:
            value = self.queue.pop(0)
        else:
            alts = self.alternatives(self, who[0], req)
            if len(alts) > 1:
                raise NeedDecision(f"{' '.join(who)} #{k}", who[0], proc, req, alts)
            value = alts[0]  # no choice here: the run goes on
        if value != calm:
            self.table[f"{' '.join(who)} #{k}"] = list(value) if type(value) is tuple else value
        return value

    # --- a copy for each branch -----------------------------------------------------------

    def clone(self) -> "ExploreWorld":
        """A copy sharing everything immutable (model states, requests, events)."""
        w = object.__new__(ExploreWorld)
        d = self.__dict__.copy()
        w.__dict__ = d
        mutable = _MUTABLE.get(tuple(d))
        if mutable is None:
            mutable = _MUTABLE[tuple(d)] = [k for k, v in d.items() if type(v) in (dict, list, Tally, set)
                                            and k not in _SHARED]
        for name in mutable:
            d[name] = d[name].copy()
        procs = [_copy_proc(p) for p in self.procs]
        copies: dict = {}  # id(process or slot) -> its copy: the supervised slots and the operator's
        for s in self.slots + [p.slot for p in self.procs]:
            if id(s) not in copies:
                t = copies[id(s)] = _copy_slot(s)
                if t.proc is not None:
                    t.proc = procs[t.proc.index]
        for p in procs:
            p.slot = copies[id(p.slot)]
        w.slots = [copies[id(s)] for s in self.slots]
        w.procs = procs
        w.network = self.network.for_world(w)  # (the network decides with its own world's state)
        w.old_slots = [copies[id(s)] for s in self.old_slots]  # an upgrade's old binaries (section 6)
        if self.operator is not None:
            w.operator = procs[self.operator.index]
        for old, new in zip(self.procs, procs):
            copies[id(old)] = new
        # the callbacks due name the copies (an id in `copies` is a live process's or slot's: no other
        # live object has it); the heap's order is the entries' (due, seq), unchanged
        get = copies.get
        w.agenda = [(due, seq, fn, tuple([get(id(a), a) for a in args])) for due, seq, fn, args in self.agenda]
        w.injected = {k: list(v) for k, v in self.injected.items()}
        b = w.bucket = _shallow(self.bucket)  # (copy.copy goes through __reduce_ex__: 4x slower)
        b.objects = b.objects.copy()
        b._keys = b._keys.copy()
        w.history = self.history.growing_copy()
        return w

    # --- the state, as a value --------------------------------------------------------------

    def digest(self) -> tuple:
        """Everything that decides this world's future, as a hashable value: two worlds with one
        digest behave alike from here on, whatever their histories (which the digest leaves out,
        with the bookkeeping that only feeds the history: serial numbers, what each process
        learned, what it is reading (`reading`), the requests whose answers it records (`record_reqs`, `asked`),
        decision counters)."""
        agenda = sorted(self.agenda)
        live_timer = {}
        for p in self.procs:
            for key, token in p.timers.items():
                live_timer[token] = (p.index, key)
        slot_index = {id(s): i for i, s in enumerate(self.slots)}
        items = []
        for due, seq, fn, args in agenda:
            name = fn.__name__
            if name == "_timer_fires":
                items.append((due, name, args[0].index, args[1], live_timer.get(args[2]) is not None))
            else:
                items.append((due, name, tuple(("p", a.index) if type(a) is Proc else ("s", slot_index[id(a)])
                                               if type(a) is Slot else _canon(a) for a in args)))
        chain_ranks = tuple(sum(1 for e in agenda if e[1] < seq) for _k, seq in sorted(self.chain_seq.items()))
        procs = tuple((p.alive, _canon_state(p.state), tuple(sorted(p.pending.items())),
                       tuple(sorted(p.deadlines.items())), p.draining, p.resume_when_drained,
                       tuple(sorted(p.events.items())),
                       tuple(p.stragglers), p.slot.wanted, p.slot.proc is p) for p in self.procs)
        objects = self.bucket.objects
        bucket = tuple((k, objects[k].body, objects[k].write_token, objects[k].read_token) for k in self.bucket._keys)
        slots = tuple((s.wanted, s.restart_after_stop, s.down_for_good, s.proc.index if s.proc is not None else None)
                      for s in self.slots)  # a clean stop's restart (CS-4) is the slot's
        return (self.now, tuple(items), chain_ranks, procs, bucket, tuple(sorted(self.cut.items())),
                tuple(sorted(self.budget.items())), self._requests, slots)


_MUTABLE: dict = {}  # the world's attribute names -> those holding a dict, list, Tally or set
_SHARED = frozenset({"options"})  # set up once, never changed by a callback: every copy shares it


def _shallow(obj):
    """A shallow copy of a plain object (its attributes in a new __dict__)."""
    c = object.__new__(type(obj))
    c.__dict__.update(obj.__dict__)
    return c


def _copy_proc(p: Proc) -> Proc:
    q = Proc(p.index, p.node_id, p.instance, p.machine, p.clock, p.slot, p.step)
    q.state, q.alive, q.draining, q.resume_when_drained = p.state, p.alive, p.draining, p.resume_when_drained
    q.timers, q.pending, q.deadlines, q.learned = p.timers.copy(), p.pending.copy(), p.deadlines.copy(), p.learned.copy()
    q.stragglers, q.events, q.watched = p.stragglers.copy(), p.events.copy(), p.watched.copy()
    q.reading = None if p.reading is None else p.reading.copy()
    q.record_reqs, q.asked = p.record_reqs.copy(), p.asked.copy()  # (history bookkeeping: CONV-1, CONV-2)
    q.paused_until = p.paused_until
    q.background, q.bg_ctx, q.waited = p.background.copy(), p.bg_ctx, p.waited.copy()
    # what the world knows of the requests in flight on nodes/ and owners/ (BD-1's fences, the listing's chain):
    # a clone that started them empty counted a fence's requests differently from the replay (FidelityError)
    q.keyed, q.answering, q.fences = p.keyed.copy(), p.answering, p.fences.copy()
    q.chain = None if p.chain is None else p.chain.copy()
    return q


def _copy_slot(s: Slot) -> Slot:
    t = Slot(s.node_id, s.machine)
    t.wanted, t.proc, t.restart_after_stop, t.down_for_good = s.wanted, s.proc, s.restart_after_stop, s.down_for_good
    return t


def _canon(x):
    """A hashable value equal for equal model values (a FrozenDict as the set of its items)."""
    t = type(x)
    if t is str or t is int or x is None or t is bool:
        return x
    if t is FrozenDict:
        return frozenset((k, _canon(v)) for k, v in x.items()) if x else ()
    if isinstance(x, tuple):
        return (t.__name__, *map(_canon, x)) if hasattr(x, "_fields") else tuple(map(_canon, x))
    if t is list:
        return tuple(map(_canon, x))
    return x  # Params and the like: frozen dataclasses, hashable


_CANON: dict = {}  # id(model state) -> (the state, kept alive so its id is not reused; its canon)


def _canon_state(st):
    if st is None:
        return None
    hit = _CANON.get(id(st))
    if hit is not None and hit[0] is st:
        return hit[1]
    if len(_CANON) > 500_000:
        _CANON.clear()
    c = _canon(st)
    _CANON[id(st)] = (st, c)
    return c
