"""Breadth-first exploration of every run of a small configuration (issue 15).

A system state is an `ExploreWorld` between two callbacks: every process's state and timers,
the bucket, the requests and replies in flight (each with the instant it lands, once the
explorer chose it), and the budgets left. Its successors are what may happen next:

- a request's fate, when it is sent: applied after 1 ms or after each multiple of the time
  quantum below its attempt timeout; within the fault budget also lost, or (a write) applied
  one quantum after its sender timed out;
- a reply's fate, when the bucket answered: delivered after 1 ms or after each multiple of
  the quantum below the attempt timeout (later is past the timeout: the timeout answers);
  within the fault budget also lost;
- at each multiple of the quantum, before the events of that instant: nothing, or (within
  their budgets) a client request for an actor at a node, a hibernation, a crash of a node's
  process (its supervisor restarts it as the simulated world's does), an operator's `cluster
  fence`, an outage of one node, a twin of one node, a mistaken delete of a node's record;
- nothing is chosen before `from_s` (requests answered in 1 ms, nothing injected);
- timers fire at their instant on their machine's clock, which is true time plus an offset
  from {-max_skew, 0, +max_skew}: each combination is one exploration.

Between two such choices the world runs deterministically (the SimPy world's own core), so
a state is a choice point and a path is a plan (scenarios/plan.py): the counterexample is a
file `--replay` runs in the SimPy world, event for event. States are deduplicated by a
canonical value of everything that decides the future (ExploreWorld.digest), and every new
state's history is judged by every checker, so that the first violation found is one with
the fewest choices. A path that reaches a state already seen is judged up to that point (its
own history) and goes no further; what a merge leaves out is that path's history joined to the
future explored from the other one.

Two counts of states, then (as SPIN counts states stored and transitions). Between two choice
points the system passes through one state per atomic step, each the one successor of the
state before it (a request applied, a reply delivered, a timer fired): `Outcome.steps` counts
those, once per path (TLC's "states generated" counts every successor it computes). Only the
choice points are stored and deduplicated (`Outcome.states` generated, `Outcome.distinct`):
a state with one successor needs no entry of its own in the visited set.
"""

from __future__ import annotations

import gc
import itertools
import json
import math
import time
from collections import deque
from dataclasses import asdict, dataclass, field

from model.params import Params
from scenarios.faults.upgrade import calm_upgrade, old_machines
from scenarios.plan import FORMAT
from scenarios.script import calm_options

from .world import ExploreWorld, NeedDecision

CLOCK_BASE = 100_000  # every clock reads true time + 100 s, +- its offset (local times stay positive)
# the configuration explored unless pinned: every bound of T-2, T-3 and T-4 met with equality,
# in multiples of the default quantum
MARGINS = {"ttl_ms": 6_000, "grace_ms": 500, "safety_ms": 1_500, "max_skew_ms": 1_000,
           "heartbeat_period_ms": 2_000, "attempt_timeout_ms": 1_500}


MAX_STATES = 10_000_000  # states the explorer takes, counted before it begins (12 nodes, 1 actor: at least 6.9 M)
INJECTIONS = {"ask": "requests", "hibernate": "hibernations", "crash": "crashes", "fence": "fences",
              "outage": "outages", "twin": "twins", "stop": "stops", "drain": "drains",
              "delete": "deletes"}  # what -> its budget


@dataclass
class Bounds:
    nodes: int = 2
    actors: int = 1
    horizon_s: float = 20.0
    quantum_ms: int = 500
    faults: int = 1  # requests lost, writes applied late, replies lost
    crashes: int = 0
    requests: int = 1  # client requests
    hibernations: int = 0  # an actor hibernates (every node is told)
    fences: int = 0  # operator `cluster fence`s
    outages: int = 0  # a node's machine cut off the bucket for ttl + grace + one quantum
    twins: int = 0  # a second process under a node's id, on a machine of its own, for twice ttl + grace
    stops: int = 0  # a node stops cleanly (CS-1..CS-4); its supervisor starts it again a quantum later
    drains: int = 0  # a node is drained (OR-11, CS-5), then stopped cleanly ttl + grace + a quantum later
    deletes: int = 0  # an operator deletes a node's `nodes/` record by mistake
    offsets: list | None = None  # [[offset per node], ...]; None: every combination of -s, 0, +s
    delays: list | None = None  # a request's and a reply's delays, ms; None: 1 and each quantum below the timeout
    events: list | None = None  # how long a served request's event may run, ms, or None: until its process
    # sends its `released` write (a straggler, CS-1); events None: every event ends at once
    focus: list | None = None  # ["OP key-prefix", ...]: only matching requests get delays and faults (None: all)
    from_s: float = 0.0  # no choice before this instant: requests answered in 1 ms, nothing injected
    # an upgrade (section 6): an old per-actor-lease binary per node (model/old_lease.py) starts first and is
    # asked for every actor half a quantum in; it stops at old_stop_s (each of old_stops: "clean", "crash", a
    # run each), the new nodes start each of gaps_ms after it; their clocks follow the new nodes' in `offsets`
    upgrade: bool = False
    old_stop_s: float = 2.0
    old_stops: list | None = None  # None: clean and crash
    gaps_ms: list | None = None  # None: 0 (the new nodes start as the old ones stop)
    same_ids: bool = False  # the new nodes take the old ones' ids
    gc: bool = False  # the old garbage collection runs at the switch: each lease it may delete, deleted or not
    max_states: int | None = None
    budget_s: float | None = None

    def clocks(self) -> int:
        """The machines whose clock offsets are explored: the nodes', then (an upgrade) the old ones'."""
        return self.nodes * (2 if self.upgrade else 1)

    def combinations(self, skew: int):
        """The clock offsets of each exploration, one at a time (there are 3^clocks of them: never listed)."""
        if self.offsets is not None:
            return (tuple(c) for c in self.offsets)
        return itertools.product((-skew, 0, skew), repeat=self.clocks())

    def variants(self) -> list:
        """An upgrade's (how the old binaries stop, the gap before the new nodes start, ms), each an
        exploration of its own; [None] without an upgrade."""
        if not self.upgrade:
            return [None]
        return [(stop, gap) for stop in self.old_stops or ("clean", "crash") for gap in self.gaps_ms or (0,)]

    def runs(self, skew: int):
        """Every exploration, one at a time: (clock offsets, upgrade variant or None)."""
        variants = self.variants()
        return ((c, v) for c in self.combinations(skew) for v in variants)

    def count_runs(self) -> int:
        """How many explorations `runs` yields, counted without making them."""
        combos = len(self.offsets) if self.offsets is not None else 3 ** self.clocks()
        return combos * len(self.variants())

    def first_choices(self) -> int:
        """How many successors the first instant of injections has at least (each a state): a request per
        node and actor, a hibernation per actor, each other injection per node, and nothing (an upgrade's new
        nodes have not started then: counted as nothing)."""
        if self.upgrade:
            return 1
        per = {"requests": self.nodes * self.actors, "hibernations": self.actors}
        return 1 + sum(per.get(name, self.nodes) for name in INJECTIONS.values() if getattr(self, name))

    def too_many(self) -> str | None:
        """Why the explorer refuses these bounds before it begins, or None: they have more than MAX_STATES states
        by a count made without making any (each exploration has at least `first_choices` states, and there are
        3^clocks explorations: judged by its logarithm, never even written out)."""
        variants = len(self.variants())
        first = self.first_choices()
        if self.offsets is not None:
            combos = f"{len(self.offsets):,} clock combination{'s' if len(self.offsets) != 1 else ''}"
            digits = math.log10(len(self.offsets) * variants * first)
        else:
            combos = f"3^{self.clocks()} clock combinations (-max_skew, 0, +max_skew per clock)"
            digits = self.clocks() * math.log10(3) + math.log10(variants * first)
        if digits <= math.log10(MAX_STATES):
            return None
        shown = f"{round(10 ** digits):,}" if digits < 12 else f"about 10^{int(digits)}"
        return (f"at least {shown} states ({combos}{f' x {variants} upgrade variants' if variants > 1 else ''}, each "
                f"an exploration of its own, with {first:,} choices at its first instant): more than the "
                f"{MAX_STATES:,} the explorer takes; explore fewer --nodes or --actors, or name the clock "
                f"combinations with --offsets")


def run_label(offsets, variant) -> tuple:
    """An exploration's name in reports: its clock offsets, and an upgrade's variant after them."""
    return tuple(offsets) if variant is None else (*offsets, *variant)


@dataclass
class Outcome:
    status: str = "exhausted"  # exhausted | violation | stopped: <which bound>
    states: int = 0  # states generated (successors built)
    distinct: int = 0
    depth: int = 0
    wall_s: float = 0.0
    combinations: int = 0
    steps: int = 0  # system states generated by atomic steps (one per callback that ran to its end on a path:
    # a request applied, a reply delivered, a timer fired); re-runs for branching not counted
    callbacks: int = 0  # world callbacks run (each an atomic step of the system; re-runs for branching too)
    shared_verdicts: int = 0  # states judged by the verdict of a sibling with the same history (not re-checked)
    violation: object = None
    world: object = None
    plan: dict | None = None  # the counterexample, when a worker process wrote it
    history: object = None
    per_offsets: list = field(default_factory=list)

    @property
    def states_per_s(self) -> float:
        return self.states / self.wall_s if self.wall_s else 0.0

    @property
    def steps_per_s(self) -> float:
        return self.steps / self.wall_s if self.wall_s else 0.0


class Explorer:
    def __init__(self, model, model_name: str, params: Params, bounds: Bounds, progress=None, strict: bool = False,
                 progress_every_s: float = 1.0):
        self.model, self.model_name, self.params, self.bounds = model, model_name, params, bounds
        self.progress = progress
        self.progress_every_s = progress_every_s  # how often `progress` is called (and workers report)
        self.strict = strict
        q = bounds.quantum_ms
        a = params.attempt_timeout_ms
        self.delays = bounds.delays or [1] + [k * q for k in range(1, a // q + 1) if k * q < a]
        self.end = int(bounds.horizon_s * 1000)
        self.start = int(bounds.from_s * 1000)
        self._calm = [("ok", 1)]
        self._delivered = [("ok", d) for d in self.delays]
        self._with_lost = self._delivered + [("lost", 0)]
        self._with_late = self._with_lost + [("late", q)]
        self._instant = [0]
        self._gc = [False, True] if bounds.gc else [False]  # the old garbage collection keeps a lease, or deletes it
        self.steps = 0  # atomic steps taken on paths (Outcome.steps): each callback once, not its re-runs
        self._events = (sorted({e for e in bounds.events if e is not None})
                        + ([None] if None in bounds.events else [])) if bounds.events else self._instant
        self.deadline: float | None = None  # time.monotonic() past which the search stops (--budget-s)

    # --- the initial world ----------------------------------------------------------------

    def options(self, offsets: tuple[int, ...], variant: tuple | None = None) -> dict:
        """The SimPy world's options for one clock combination (and an upgrade's variant): nothing drawn,
        nothing scheduled (the explorer injects) but an upgrade's old binaries, the nodes' machines (then
        the old ones') at their offsets, every other clock at the base."""
        b = self.bounds
        o = calm_options(b.nodes, self.params, versioning="md5")
        o["clocks"] = {m: [CLOCK_BASE, 0] for m in o["clocks"]}
        machines = [f"m{i}" for i in range(b.nodes)] + (old_machines(b.nodes) if variant else [])
        o["clocks"].update({m: [CLOCK_BASE + off, 0] for m, off in zip(machines, offsets)})
        fault_ms = self.end
        if variant is not None:  # section 6, as the upgrade kind schedules it (scenarios/faults/upgrade.py)
            stop, gap = variant
            o["upgrade"] = calm_upgrade(int(b.old_stop_s * 1000), gap, [stop] * b.nodes, b.same_ids,
                                        0.5 if b.gc else 0.0)
            fault_ms -= o["upgrade"]["new_at"]  # counted from the new nodes' start, as every fault's time
        if b.events:  # the replay reads each event's length from the plan (its default: 0 ms)
            o.update(event_ms_max=max([1] + [e for e in b.events if e is not None]), p_long_event=0)
        o.update(actors=b.actors, fault_ms=fault_ms, quiet_ms=0, clock_base=CLOCK_BASE,
                 **{name: [] for name in ("crashes", "operator_fences", "outages", "twins", "stops", "drains",
                                          "deletes")})
        return o

    def initial(self, offsets, variant: tuple | None = None) -> ExploreWorld:
        w = ExploreWorld(0, self.model, "calm", self.params, self.model_name, self.options(offsets, variant))
        w.alternatives = self.alternatives
        b = self.bounds
        if variant is not None:
            w.old_asks_at = b.quantum_ms // 2  # off the quantum: before any injection
        w.budget = {name: getattr(b, name) for name in ("faults", *INJECTIONS.values()) if getattr(b, name)}
        q = b.quantum_ms
        w.next_tick = max(q, -(-self.start // q) * q)  # the first multiple of the quantum from `from_s`
        return w

    # --- successors -------------------------------------------------------------------------

    def successors(self, state: ExploreWorld) -> list[ExploreWorld]:
        """The states one choice away: the world runs on from `state` until a decision with more than
        one alternative, an instant at which something may be injected, or the end of the run."""
        w = state.clone()
        n = 0
        end = self.end
        budget = w.budget
        injecting = any(budget.get(k) for k in INJECTIONS.values())
        if not w.begun:
            try:
                w.advance()  # the start
            except NeedDecision as nd:
                return self.decide(state, n, [], nd)
            n += 1
        # every exit below counts the n callbacks this path ran (decide's re-runs of them are not new)
        agenda = w.agenda  # (the world's own list: a callback pushes to it, never replaces it)
        pop = w.pop
        while True:
            due = agenda[0][0] if agenda else None  # w.next_due(), inlined (once per callback)
            if injecting:
                tick = w.next_tick
                if tick < end and (due is None or due >= tick):
                    self.steps += n
                    return self.injections(w, tick)
            if due is None or due >= end:
                self.steps += n
                return [w] if n else []  # the end of the run: judged like any state
            try:
                pop()  # w.advance() of a begun world
            except NeedDecision as nd:
                self.steps += n
                return self.decide(state, n, [], nd)
            n += 1

    def injections(self, w: ExploreWorld, tick: int) -> list[ExploreWorld]:
        w.next_tick = tick + self.bounds.quantum_ms
        w.t = tick
        out = [w]
        b = w.budget
        choices = []
        if b.get("requests"):
            # in an upgrade, not at a node not started yet (the request would vanish: a run with one fewer)
            choices += [("ask", n, a) for n in w.node_ids for a in w.actors
                        if not w.old_slots or w.live_proc(n) is not None]
        if b.get("hibernations"):
            choices += [("hibernate", None, a) for a in w.actors]
        if b.get("crashes"):
            choices += [("crash", n, None) for n in w.node_ids if w.live_proc(n) is not None]
        if b.get("fences"):
            choices += [("fence", n, None) for n in w.node_ids]
        if b.get("outages"):
            choices += [("outage", n, None) for n in w.node_ids]
        if b.get("twins"):
            choices += [("twin", n, None) for n in w.node_ids]
        if b.get("stops"):
            choices += [("stop", n, None) for n in w.node_ids if w.live_proc(n) is not None]
        if b.get("drains"):
            choices += [("drain", n, None) for n in w.node_ids if w.live_proc(n) is not None]
        if b.get("deletes"):
            choices += [("delete", n, None) for n in w.node_ids if "nodes/" + n in w.bucket.objects]
        q = self.bounds.quantum_ms
        for what, node_id, actor in choices:
            self._in_time()
            c = w.clone()
            c.budget[INJECTIONS[what]] -= 1
            c.inject(what, node_id, actor, q if what == "stop" else
                     (2 if what == "twin" else 1) * self.params.takeover_ms + q)
            c.path.append(f"{tick / 1000:.3f} s  {what} " + " ".join(x for x in (node_id, actor) if x))
            out.append(c)
        return out

    def alternatives(self, w: ExploreWorld, site: str, req) -> list:
        """The fates of a request (site "send") or of its reply ("reply") worth exploring, or how long a
        served request's event runs (site "event", `req` None) (lists made once: every request asks)."""
        focus = self.bounds.focus
        if site == "event":
            return self._events if w.now >= self.start else self._instant
        if site == "gc":
            return self._gc
        if w.now < self.start:
            return self._calm
        if focus is not None and not any(str.startswith(f"{req.op} {req.key}", f) for f in focus):
            return self._calm
        if w.budget.get("faults", 0) > 0:
            return self._with_late if site == "send" and req.op in ("PUT", "DELETE") else self._with_lost
        return self._delivered

    def decide(self, state: ExploreWorld, n: int, queued: list, nd: NeedDecision, labels: tuple = ()) -> list:
        """One successor per alternative of the decision `nd` the (n+1)th callback from `state` met
        (after the decisions `queued` of that callback)."""
        base = state.clone()
        for _ in range(n):
            base.advance()
        result = []
        for alt in nd.alternatives:
            self._in_time()
            w = base.clone()
            w.queue = queued + [alt]
            said = labels + ((f"{nd.key}: runs {alt} ms" if alt is not None else
                              f"{nd.key}: runs until its process sends `released` (a straggler)")
                             if nd.site == "event" else f"{nd.key}: {'deleted' if alt else 'kept'}" if nd.site == "gc"
                             else f"{nd.key}: {alt[0]}{'' if alt[0] == 'lost' else f' {alt[1]} ms'}",)
            try:
                w.advance()
            except NeedDecision as nd2:
                result += self.decide(state, n, queued + [alt], nd2, said)
                continue
            self.steps += 1
            w.path.append(f"{base.t / 1000:.3f} s  " + "; ".join(said))
            result.append(w)
        return result

    def _in_time(self) -> None:
        """The budget bounds every phase (issue 50): a state's successors are many where nodes are many (8 nodes'
        first choice point has 24,057), so each new branch checks it, not only each state taken."""
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise _OutOfTime

    # --- the search -----------------------------------------------------------------------------

    def run(self, workers: int = 1) -> Outcome:
        """Every clock combination in turn (in `workers` processes at once); the first combination, in
        order, with a violation gives the counterexample."""
        combos = self.bounds.runs(self.params.max_skew_ms)
        if workers > 1 and self.bounds.count_runs() > 1:
            return self._run_parallel(combos, workers)
        return self._run(combos)

    def _run_parallel(self, combos, workers: int) -> Outcome:
        """One clock combination per task, in the one worker pool (house/pool.py: forked workers, each with its
        own pipe; a worker that dies is the tool's failure at once). The progress line adds up the finished
        combinations and what each running one last reported from its worker (about once a second, a note up
        its pipe), so that it moves while the combinations run, not only when one ends."""
        from house.pool import run_tasks

        out = Outcome()
        t0 = time.monotonic()
        deadline = None if self.bounds.budget_s is None else time.time() + self.bounds.budget_s
        labels: dict[int, tuple] = {}  # combination -> its label, as handed out (never the whole list: 3^N of them)

        def made():
            for k, (c, v) in enumerate(combos):
                labels[k] = run_label(c, v)
                yield (self.model_name, self.params.to_dict(), asdict(self.bounds), list(c), v, self.strict, deadline,
                       k, self.progress_every_s, self.progress is not None)

        runs = self.bounds.count_runs()
        running: dict[int, tuple] = {}  # combination -> (states, distinct, depth, frontier, steps) as last reported
        finished: set[int] = set()  # a report can arrive after its combination's outcome: ignored
        current = [0]

        def noted(report) -> None:
            k, *figures = report
            if k not in finished:
                running[k] = tuple(figures)

        def show() -> None:
            if self.progress is None:
                return
            live = list(running.values())
            view = Outcome(states=out.states + sum(r[0] for r in live), distinct=out.distinct + sum(r[1] for r in live),
                           combinations=out.combinations, steps=out.steps + sum(r[4] for r in live))
            self.progress(view, max([out.depth] + [r[2] for r in live]), sum(r[3] for r in live),
                          time.monotonic() - t0, labels.get(current[0], ()))

        results = run_tasks(made(), _explore_one, min(workers, runs), on_note=noted, on_tick=show,
                            tick_s=self.progress_every_s, what="the exploration",
                            describe=lambda held: "clock combinations " + ", ".join(str(t[3]) for t in held))
        try:
            for k, part in enumerate(results):
                current[0] = min(k + 1, runs - 1)
                running.pop(k, None)
                labels.pop(k, None)
                finished.add(k)
                out.combinations += 1
                out.states += part.states
                out.distinct += part.distinct
                out.callbacks += part.callbacks
                out.steps += part.steps
                out.shared_verdicts += part.shared_verdicts
                out.depth = max(out.depth, part.depth)
                out.per_offsets += part.per_offsets
                if part.status != "exhausted":
                    out.status, out.violation, out.plan, out.history = part.status, part.violation, part.plan, part.history
                    break
        finally:
            results.close()  # (a violation found: the workers still exploring are stopped)
        out.wall_s = time.monotonic() - t0
        return out

    def _run(self, combos) -> Outcome:
        out = Outcome()
        before = ExploreWorld.callbacks
        self.steps = 0
        # the search allocates millions of short-lived tuples and keeps a growing set of digests and a
        # frontier of worlds: with the default thresholds the cyclic collector takes a fifth of the time
        # scanning them over and over. Collect rarely, not never (clones hold cycles: process <-> slot).
        thresholds = gc.get_threshold()
        gc.set_threshold(50_000, 20, 20)
        t0 = time.monotonic()
        self.deadline = None if self.bounds.budget_s is None else t0 + self.bounds.budget_s
        try:
            return self._search(combos, out)
        except _OutOfTime:  # mid-state: what was found so far stands, the state being expanded is dropped
            out.status = f"stopped: the budget of {self.bounds.budget_s:g} s"
            out.wall_s = time.monotonic() - t0
            return out
        finally:
            self.deadline = None
            gc.set_threshold(*thresholds)
            out.callbacks = ExploreWorld.callbacks - before
            out.steps = self.steps

    def _search(self, combos, out: Outcome) -> Outcome:
        from counterexamples.shrink import violations

        t0 = time.monotonic()
        last = t0
        for offsets, variant in combos:
            label = run_label(offsets, variant)
            out.combinations += 1
            visited: set = set()
            first = self.initial(offsets, variant)
            frontier = deque([(first, 0)])
            visited.add(first.digest())
            out.distinct += 1
            found_before = out.distinct
            while frontier:
                w, depth = frontier.popleft()
                judged = None  # the history of the last successor of `w` judged, which had no violation
                for s in self.successors(w):
                    out.states += 1
                    seen = len(visited)
                    visited.add(s.digest())  # (one hash of the digest, not two: `in`, then `add`)
                    merged = len(visited) == seen
                    if not merged:
                        out.distinct += 1
                        out.depth = max(out.depth, depth + 1)
                    # a prefix of a run, judged as a run that ends now; a path that meets a state seen
                    # before is judged up to the meeting too (its last steps are its own), then ends
                    h = s.history
                    h.end_ms = s.t + 1
                    # the checkers are functions of the history: a sibling with the same history as the one
                    # judged before (an injection's branches, at their instant) has its verdict, none
                    if judged is not None and _same_history(h, judged):
                        found = None
                        out.shared_verdicts += 1
                    else:
                        found = violations(h, self.strict)
                    judged = h
                    if found:
                        out.status = "violation"
                        out.violation, out.world = found[0], s
                        out.wall_s = time.monotonic() - t0
                        out.per_offsets.append((label, out.distinct - found_before + 1))
                        return out
                    if not merged:
                        frontier.append((s, depth + 1))
                now = time.monotonic()
                if self.progress is not None and now - last >= self.progress_every_s:
                    last = now
                    out.steps = self.steps
                    self.progress(out, depth, len(frontier), now - t0, label)
                stop = self._bound_hit(out, now - t0)
                if stop:
                    out.status = f"stopped: {stop}"
                    out.wall_s = now - t0
                    return out
            out.per_offsets.append((label, out.distinct - found_before + 1))
        out.wall_s = time.monotonic() - t0
        return out

    def _bound_hit(self, out: Outcome, elapsed: float) -> str | None:
        b = self.bounds
        if b.budget_s is not None and elapsed >= b.budget_s:
            return f"the budget of {b.budget_s:g} s"
        if b.max_states is not None and out.distinct >= b.max_states:
            return f"{b.max_states} distinct states"
        return None

    # --- the counterexample -------------------------------------------------------------------

    def counterexample(self, out: Outcome) -> tuple[dict, object]:
        """The violating path as a plan, cut 1 ms after the last event the violation names, and its
        run in the SimPy world."""
        from counterexamples.shrink import violations

        w = out.world
        note = {"invariant": out.violation.invariant, "distinct_states": out.distinct}
        cut = max((w.history.events[i].t_ms for i in out.violation.events), default=w.t) + 1
        plan, history = self.as_plan(w, cut, note)
        if out.violation.invariant not in {v.invariant for v in violations(history, self.strict)}:
            # the violation rests on a later event it does not name (UP-2: the node's first lease write):
            # cut where the explorer judged it
            plan, history = self.as_plan(w, w.history.end_ms, note)
        plan["invariant"] = out.violation.invariant
        return plan, history

    def as_plan(self, w: ExploreWorld, cut: int, note: dict | None = None) -> tuple[dict, object]:
        """The path to `w` as a plan that ends at `cut`, and its run in the SimPy world. That run must
        be the explorer's history up to the cut, event for event (anything else is a bug in the
        explorer: FidelityError)."""
        from counterexamples.shrink import run_plan

        base = w.options["upgrade"]["new_at"] if w.options.get("upgrade") else 0  # (faults count from it)
        options = dict(w.options, fault_ms=cut - base, **w.injected)
        plan = {"format": FORMAT, "model": self.model_name, "scenario": "calm", "seed": 0,
                "params": self.params.to_dict(), "options": options, "choices": dict(w.table),
                "workload": [s for s in w.workload if s[0] < cut], "strict": self.strict,
                "source": {"explore": {k: v for k, v in asdict(self.bounds).items() if v is not None},
                           "path": list(w.path), **(note or {})}}
        plan = json.loads(json.dumps(plan))
        history = run_plan(plan)
        rest = w.clone()  # what is due before the cut and not run yet, with the defaults the replay takes
        rest.deciding = False
        while not rest.begun or rest.next_due() is not None and rest.next_due() < cut:
            rest.advance()
        mine = [e for e in rest.history.events if e.t_ms < cut]  # (compared as plain data)
        if json.loads(json.dumps(history.events)) != json.loads(json.dumps(mine)):
            raise FidelityError("the SimPy world's replay of the explored path differs from the explorer's run")
        plan.update(history.hash_fields())
        return plan, history


def _explore_one(task) -> Outcome:
    """One clock combination, in a worker process: its outcome, with the counterexample written."""
    from house.pool import note

    model_name, params, bounds, offsets, variant, strict, deadline, index, every_s, shown = task
    from broken_models import load_model

    b = Bounds(**{**bounds, "offsets": [offsets]})
    if variant is not None:
        b.old_stops, b.gaps_ms = [variant[0]], [variant[1]]
    if deadline is not None:
        b.budget_s = max(0.001, deadline - time.time())
    progress = None
    if shown:
        def progress(out, depth, frontier, _elapsed, _offsets):
            note((index, out.states, out.distinct, depth, frontier, out.steps))
    explorer = Explorer(load_model(model_name), model_name, Params(**params), b, progress, strict=strict,
                        progress_every_s=every_s)
    out = explorer.run()
    if out.violation is not None:
        out.plan, out.history = explorer.counterexample(out)
    out.world = None
    return out


def _same_history(a, b) -> bool:
    """Whether two histories are equal in everything a checker reads (not their caches)."""
    return (a.end_ms == b.end_ms and a.events == b.events and a.processes == b.processes and a.rules == b.rules
            and a.counts == b.counts and a.params == b.params and a.options == b.options and a.seed == b.seed
            and a.model == b.model and a.scenario == b.scenario)


class _OutOfTime(Exception):
    """The budget ran out while a state's successors were being made (Explorer._in_time)."""


class FidelityError(RuntimeError):
    """The explorer's world and the SimPy world disagree on one plan (a bug in explore/world.py)."""


