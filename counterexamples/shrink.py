"""Counterexamples a person can read: a failing seed as data, shrunk (issue 13).

A *plan* is one simulated run as data (scenarios/plan.py): the model, the configuration, the
world's options (which hold the scheduled faults), every decision the world drew (request and
reply fates, delays, event lengths, instances) and the workload (client requests,
hibernations, moves). A plan recorded from a seed replays that seed exactly; a plan is also
the counterexample file `--shrink` writes and `--replay FILE` runs.

Shrinking (Zeller's delta debugging, with Hypothesis's order: delete first, then simplify)
keeps the plan failing the same invariant while it cuts the run short after the violation,
removes scheduled faults, nodes, actors, drawn faults and client requests, resets the
harmless decisions to their calm defaults (a whole site at once, then a few at a time), and
sets clocks, timing and fault lengths to defaults where the failure allows. Every step is one
run of the simulated world and the checkers; the best plan so far is kept when the budget runs
out, without the decisions its run never reads or reads at their defaults (`slim`).
"""

from __future__ import annotations

import copy
import json
import time

from house.errors import UsageError
from scenarios import faults
from scenarios.plan import Choices, default, is_fault

# what the shrinker may remove, shorten, and which entries name a node: the fault kinds say
# (scenarios/faults/: each kind's `scheduled`, `flags`, `durations`, `node_field`, `atoms`)
PLAN_KEYS = ("format", "model", "scenario", "seed", "params", "options", "choices", "workload")


# --- a plan: record it from a seed, run it, judge it -------------------------------------------


def record_seed(seed: int, model_name: str, scenario: str, params, kinds_off: tuple = ()) -> tuple[dict, object]:
    """Run `seed` recording every decision: (its plan, its history); the kinds of `kinds_off` held off (a
    report's seed as the report's tool drew it: scenarios/spec.py)."""
    from broken_models import load_model
    from scenarios.plan import FORMAT, Choices
    from scenarios.sim import SimWorld

    choices = Choices()
    world = SimWorld(seed, load_model(model_name), scenario, params, model_name, choices=choices, kinds_off=kinds_off)
    history = world.run()
    plan = {"format": FORMAT, "model": model_name, "scenario": scenario, "seed": seed,
            "params": dict(history.params), "options": history.options, "choices": choices.table,
            "workload": choices.workload}
    return json.loads(json.dumps(plan)), history  # as the file will hold it (tuples become lists)


class _Noting(Choices):
    """A plan's Choices that notes the key of every decision the run reads (`read`, in the order read)."""

    def __init__(self, table: dict, workload: list, read: dict) -> None:
        super().__init__(table, workload)
        self.read = read

    def pick(self, site: str, who: str, draw, *args):
        base = f"{site} {who}"
        self.read[f"{base} #{self._seen[base]}"] = None
        return super().pick(site, who, draw, *args)


def run_plan(plan: dict, read: dict | None = None):
    """The history of a plan's run in the simulated world (nothing drawn: every decision is read);
    `read`, if given, gets the key of every decision the run read, in the order read (a dict's keys)."""
    from model.params import Params
    from broken_models import load_model
    from scenarios.sim import SimWorld

    choices = Choices(plan["choices"], plan["workload"]) if read is None else \
        _Noting(plan["choices"], plan["workload"], read)
    world = SimWorld(plan["seed"], load_model(plan["model"]), plan["scenario"], Params(**plan["params"]),
                     plan["model"], options=plan_options(plan), choices=choices)
    return world.run()


def continue_run(plan: dict, seed: int):
    """A plan replayed until the code diverges from it, the rest drawn from `seed`'s streams (scenarios/plan.py,
    `Continuing`): (the run's history, its Choices: where it diverged, the whole run's decisions). A plan the
    shrinker slimmed (`shrunk`) lacks its decisions at their defaults: those are read as such."""
    from model.params import Params
    from broken_models import load_model
    from scenarios.plan import Continuing
    from scenarios.sim import SimWorld

    complete = not plan.get("shrunk") and "explore" not in (plan.get("source") or {})  # (recorded: every decision)
    choices = Continuing(plan["choices"], plan["workload"], complete)
    world = SimWorld(seed, load_model(plan["model"]), plan["scenario"], Params(**plan["params"]), plan["model"],
                     options=plan_options(plan), choices=choices)
    choices.clock = lambda: world.now
    return world.run(), choices


def plan_options(plan: dict) -> dict:
    """A plan's options, a copy, with every fault kind's option it lacks at its off value (a kind added to the
    tool since the plan was written is off in its run; the run's hash leaves such options out)."""
    return {**faults.defaults(), **copy.deepcopy(plan["options"])}


def slim(plan: dict) -> dict:
    """The plan without the decisions its replay never reads (a decision about a request the shrunk
    run no longer sends) or reads at their calm default (what a missing entry gives): the same run,
    its history hash checked. A recorded plan notes every decision the seed drew; its shrunk
    counterexample keeps only those that make it the run it is."""
    read: dict = {}
    sha = run_plan(plan, read).sha256()
    # in the order the run reads them (`replay --continue` reads a plan in its order: scenarios/plan.py)
    table = plan["choices"]
    kept = {k: table[k] for k in read if k in table and table[k] != default(k.split(" ", 1)[0], k)}
    out = dict(plan, choices=kept)
    if run_plan(out).sha256() != sha:
        raise AssertionError(f"{plan['model']}: the slimmed plan runs differently")
    return out


def violations(history, strict: bool = False) -> list:
    """The violations that fail a history (with `strict`, those known findings explain too)."""
    from checkers.verdict import judge

    return judge(history, strict=strict).violations


def size(plan: dict, history) -> dict:
    """What a reader has to take in: nodes, actors, faults, client requests, events, seconds."""
    o = plan["options"]
    drawn = sum(1 for k, v in plan["choices"].items() if is_fault(k, v))
    scheduled = sum(len(kind.atoms(o)) for kind in faults.KINDS.values())
    return {"nodes": len(_node_ids(o)), "actors": len(_actor_ids(o)),
            "processes": len(history.processes) - 1,  # the operator is not a node process
            "faults": drawn + scheduled, "client_requests": sum(1 for s in plan["workload"] if s[1] == "ask" and len(s) < 5),
            "events": len(history.events), "simulated_s": round(history.end_ms / 1000, 1)}


def _node_ids(o: dict) -> list[str]:
    return list(o.get("node_ids") or [f"n{i}" for i in range(o["nodes"])])


def _actor_ids(o: dict) -> list[str]:
    return list(o.get("actor_ids") or [f"t{k % 2}/c/a{k}" for k in range(o["actors"])])


# --- the file --------------------------------------------------------------------------------


def write_plan(path: str, plan: dict) -> None:
    import os

    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    try:
        with open(path, "w") as f:
            json.dump(plan, f, indent=1, sort_keys=False)
            f.write("\n")
    except OSError as e:
        raise UsageError(f"cannot write the counterexample {path}: {e.strerror}") from None


def is_plan(doc) -> bool:
    from scenarios.plan import FORMAT

    return isinstance(doc, dict) and doc.get("format") == FORMAT


def check_plan(doc: dict, path: str) -> dict:
    """A counterexample file's plan, checked enough to run (one-line errors otherwise)."""
    from history.record import check_hash_version
    from model.params import Params, ParamsError

    for key in PLAN_KEYS:
        if key not in doc:
            raise UsageError(f"the counterexample {path} has no {key!r} field")
    check_hash_version(doc, f"the counterexample {path}")
    if not isinstance(doc["seed"], int) or not isinstance(doc["options"], dict) \
            or not isinstance(doc["choices"], dict) or not isinstance(doc["workload"], list):
        raise UsageError(f"the counterexample {path} is malformed (seed, options, choices or workload)")
    for step in doc["workload"]:
        if not (isinstance(step, list) and len(step) >= 3 and isinstance(step[0], int)
                and step[1] in ("ask", "hibernate", "move")):
            raise UsageError(f"the counterexample {path} has a malformed workload step {step!r}")
    try:
        Params(**doc["params"])
    except (TypeError, ParamsError) as e:
        raise UsageError(f"the counterexample {path} has invalid params: {e}") from None
    return doc


# --- shrinking ---------------------------------------------------------------------------------


class Shrinker:
    """Delta debugging over a plan, keeping `invariant` failing, within `budget_s`. `keeps(plan,
    history)`, if given, says more narrowly what must stay: the violation (of `invariant`) a candidate
    must still show, or None (a known finding's own, not any violation of its invariant; a broken
    model's, with the correct model passing the same plan)."""

    def __init__(self, plan: dict, invariant: str, budget_s: float, strict: bool = False, say=None,
                 keeps=None) -> None:
        self.best = plan
        self.invariant = invariant
        self.keeps = keeps
        self.deadline = time.monotonic() + budget_s
        self.strict = strict
        self.say = say or (lambda _line: None)
        self.runs = 0
        self.accepted = 0
        self.history = None
        self.violation = None
        self.t0 = time.monotonic()

    # one run: does the candidate still fail the same way?
    def fails(self, plan: dict) -> bool:
        if not clocks_valid(plan):
            return False  # outside the protocol's assumption (T-2): not a counterexample
        self.runs += 1
        try:
            history = run_plan(plan)
            if self.keeps is not None:
                found = [v for v in [self.keeps(plan, history)] if v is not None]
            else:
                found = [v for v in violations(history, self.strict) if v.invariant == self.invariant]
        except Exception:  # noqa: BLE001 - a candidate the world cannot run (an entry it needs was removed)
            return False
        if not found:
            return False
        self.history, self.violation = history, found[0]
        return True

    def out_of_time(self) -> bool:
        return time.monotonic() >= self.deadline

    def accept(self, plan: dict, what: str) -> None:
        self.best = plan
        self.accepted += 1
        s = size(plan, self.history)
        self.say(f"  {what}: {s['events']} events, {s['nodes']} nodes, {s['actors']} actors, {s['faults']} faults, "
                 f"{s['client_requests']} requests, {s['simulated_s']} s "
                 f"[{self.runs} runs, {time.monotonic() - self.t0:.0f} s]")

    def attempt(self, plan: dict, what: str) -> bool:
        if self.out_of_time() or not self.fails(plan):
            return False
        self.accept(plan, what)
        return True

    def run(self) -> dict:
        if not self.fails(self.best):
            raise UsageError(f"the plan does not fail {self.invariant}: nothing to shrink")
        passes = (self.cut_short, self.drop_scheduled, self.drop_nodes, self.drop_actors, self.drop_drawn,
                  self.drop_workload, self.calm_decisions, self.simplify)
        while not self.out_of_time():
            while not self.out_of_time():  # the structure first: fewer nodes, actors, faults, requests
                before = self.accepted
                for p in passes:
                    if self.out_of_time():
                        break
                    p()
                if self.accepted == before:
                    break
            before = self.accepted
            self.calm_each()  # then the decisions left, once nothing more can go
            if self.accepted == before:
                break
        self.best = slim(self.best)  # the same run: only the decisions it reads away from their defaults
        self.fails(self.best)  # leave history and violation those of the best plan
        return self.best

    # --- the passes --------------------------------------------------------------------------

    def ddmin(self, items: list, without, what: str) -> None:
        """Remove as many of `items` as the failure allows: without(plan, removed) -> candidate."""
        n = 2
        while items and not self.out_of_time():
            chunk = max(1, -(-len(items) // n))
            for i in range(0, len(items), chunk):
                removed = items[i:i + chunk]
                if self.attempt(without(self.best, removed), f"{what}: -{len(removed)}"):
                    items = items[:i] + items[i + chunk:]
                    n = max(2, n - 1)
                    break
            else:
                if chunk == 1:
                    return
                n = min(2 * n, len(items))

    def cut_short(self) -> None:
        """End the run soon after the violation (a safety violation needs no quiet phase)."""
        h, v = self.history, self.violation
        o = self.best["options"]
        base = o["upgrade"]["new_at"] if o.get("upgrade") else 0
        t_v = max((h.events[i].t_ms for i in v.events if 0 <= i < len(h.events)), default=h.end_ms)
        fault_ms = min(o["fault_ms"], max(1, t_v - base + 1_000))
        for quiet in (0, o.get("quiet_ms", 0)):
            if (fault_ms, quiet) != (o["fault_ms"], o.get("quiet_ms", 0)):
                cand = copy.deepcopy(self.best)
                cand["options"].update(fault_ms=fault_ms, quiet_ms=quiet)
                if self.attempt(_drop_after(cand), "cut short after the violation"):
                    return

    def drop_scheduled(self) -> None:
        o = self.best["options"]
        atoms = [(kind.id, atom) for kind in faults.KINDS.values() for atom in kind.atoms(o)]
        self.ddmin(atoms, _without_scheduled, "scheduled faults")

    def drop_nodes(self) -> None:
        o = self.best["options"]
        if o.get("upgrade"):
            return  # old binaries pair with node indices: the upgrade goes first (drop_scheduled)
        for node in reversed(_node_ids(o)):
            if len(_node_ids(self.best["options"])) > 1 and not self.out_of_time():
                self.attempt(_without_node(self.best, node), f"node {node} removed")

    def drop_actors(self) -> None:
        for actor in reversed(_actor_ids(self.best["options"])):
            if len(_actor_ids(self.best["options"])) > 1 and not self.out_of_time():
                self.attempt(_without_actor(self.best, actor), f"actor {actor} removed")

    def drop_drawn(self) -> None:
        keys = [k for k, v in self.best["choices"].items() if is_fault(k, v)]
        self.ddmin(keys, _without_choices, "drawn faults")

    def drop_workload(self) -> None:
        self.ddmin([json.dumps(s) for s in self.best["workload"]], _without_steps, "client requests and moves")

    def calm_decisions(self) -> None:
        """Every harmless decision (delays, event lengths) to its calm default, site by site."""
        sites = sorted({k.split(" ", 1)[0] for k, v in self.best["choices"].items() if not is_fault(k, v)})
        sites = [s for s in sites if s != "instance"]
        if sites and self.attempt(_without_sites(self.best, sites), "every delay and length at its default"):
            return
        for site in sites:
            self.attempt(_without_sites(self.best, [site]), f"{site} decisions at their defaults")

    def calm_each(self) -> None:
        """The harmless decisions a whole site could not lose, to their defaults a few at a time: a
        failure that needs one delay of a lease write rarely needs the thousand others of the run,
        and each one kept is a line of the counterexample to read (and of the file to store)."""
        keys = [k for k, v in self.best["choices"].items()
                if not is_fault(k, v) and not k.startswith("instance ") and v != default(k.split(" ", 1)[0], k)]
        self.ddmin(keys, _without_choices, "delays and lengths at their defaults")

    def simplify(self) -> None:
        """Clocks true, timing at T-1's defaults, faults shorter."""
        from model.params import Params

        o = self.best["options"]
        base = o.get("clock_base")
        if base is not None:
            for m, (off, drift) in sorted(o["clocks"].items()):
                if (off != base or drift) and m != "omf":
                    cand = copy.deepcopy(self.best)
                    cand["options"]["clocks"][m] = [base, 0]
                    self.attempt(cand, f"clock {m} true")
        defaults = Params().to_dict()
        # (timing at the defaults only where the run gets no longer: a longer ttl + grace lengthens the quiet phase)
        at_defaults = _with_params(self.best, defaults)
        if self.best["params"] != defaults and not (_end(at_defaults) <= _end(self.best)
                                                    and self.attempt(at_defaults, "timing at the defaults")):
            for k, v in defaults.items():
                if self.best["params"][k] != v:
                    params = dict(self.best["params"], **{k: v})
                    try:
                        Params(**params)
                    except Exception:
                        continue  # T-2..T-4 would not hold
                    cand = _with_params(self.best, params)
                    if _end(cand) <= _end(self.best):
                        self.attempt(cand, f"{k} at its default")
        if any(self.best["options"].get("starts") or ()):
            cand = copy.deepcopy(self.best)
            cand["options"]["starts"] = [0] * len(cand["options"]["starts"])
            self.attempt(cand, "every node starts at once")
        for name, at in faults.durations().items():
            for i, x in enumerate(self.best["options"].get(name) or ()):
                if x is not None and x[at] > 1:
                    cand = copy.deepcopy(self.best)
                    cand["options"][name][i][at] = x[at] // 2
                    self.attempt(cand, f"{name} {i} half as long")
        for k, v in list(self.best["choices"].items()):
            if k.startswith("send ") and v[0] == "late" and v[1] > 1:
                cand = copy.deepcopy(self.best)
                cand["choices"][k] = ["late", v[1] // 2]
                self.attempt(cand, "a late write less late")


def clocks_valid(plan: dict) -> bool:
    """Every machine's clock within max_skew of true time over the whole run (T-2's assumption;
    the upgrade's retired machine omf is future-dated on purpose)."""
    o = plan["options"]
    base = o.get("clock_base")
    if base is None:
        return True
    skew = plan["params"]["max_skew_ms"]
    end = (o["upgrade"]["new_at"] if o.get("upgrade") else 0) + o["fault_ms"] + o.get("quiet_ms", 0)
    horizon = end + 2 * (plan["params"]["ttl_ms"] + plan["params"]["grace_ms"])
    for m, (off, drift) in o["clocks"].items():
        if m != "omf" and max(abs(off - base), abs(off - base + drift * horizon // 1_000_000)) > skew:
            return False
    return True


# --- the edits a pass tries (each returns a new plan) ---------------------------------------------


def _end(plan: dict) -> int:
    """The run's planned end: the upgrade's switch, the fault phase, the quiet phase."""
    o = plan["options"]
    return (o["upgrade"]["new_at"] if o.get("upgrade") else 0) + o["fault_ms"] + o.get("quiet_ms", 0)


def _with_params(plan: dict, params: dict) -> dict:
    """Other timing; the clocks keep their places in the skew band (scaled to the new max_skew),
    and the quiet phase stays long enough for every bound to pass (INV-4, INV-7)."""
    cand = copy.deepcopy(plan)
    o = cand["options"]
    old, new = plan["params"]["max_skew_ms"], params["max_skew_ms"]
    base = o.get("clock_base")
    if base is not None and old:
        o["clocks"] = {m: (c if m == "omf" else [base + (c[0] - base) * new // old, c[1] * new // old])
                       for m, c in o["clocks"].items()}
        # a clock step's target keeps its place in the band too (T-1: clock_steps.py)
        o["clock_steps"] = [None if e is None else [e[0], e[1], e[2] * new // old] for e in o.get("clock_steps") or ()]
    tg = params["ttl_ms"] + params["grace_ms"]
    if o.get("liveness_ms", 0) < tg:
        o["liveness_ms"] = tg
        if o.get("quiet_ms"):
            o["quiet_ms"] = max(o["quiet_ms"], 4 * tg)
    cand["params"] = dict(params)
    return cand



def _drop_after(plan: dict) -> dict:
    """Workload steps after the run's end go (they would never run)."""
    o = plan["options"]
    end = (o["upgrade"]["new_at"] if o.get("upgrade") else 0) + o["fault_ms"] + o.get("quiet_ms", 0)
    plan["workload"] = [s for s in plan["workload"] if s[0] < end]
    return plan


def _without_scheduled(plan: dict, atoms: list) -> dict:
    cand = copy.deepcopy(plan)
    o = cand["options"]
    for kind_id, atom in atoms:
        faults.KINDS[kind_id].remove(o, atom)
    return cand


def _without_node(plan: dict, node: str) -> dict:
    cand = copy.deepcopy(plan)
    o = cand["options"]
    ids = _node_ids(o)
    k = ids.index(node)
    o["node_ids"] = ids[:k] + ids[k + 1:]
    if o.get("starts"):
        o["starts"] = o["starts"][:k] + o["starts"][k + 1:]
    for kind in faults.KINDS.values():
        kind.drop_node(o, node)
    cand["workload"] = [s for s in cand["workload"] if node not in s[2:]]
    return cand


def _without_actor(plan: dict, actor: str) -> dict:
    cand = copy.deepcopy(plan)
    o = cand["options"]
    o["actor_ids"] = [a for a in _actor_ids(o) if a != actor]
    cand["workload"] = [s for s in cand["workload"] if actor not in s[2:]]
    return cand


def _without_choices(plan: dict, keys: list) -> dict:
    cand = dict(plan)
    drop = set(keys)
    cand["choices"] = {k: v for k, v in plan["choices"].items() if k not in drop}
    return cand


def _without_sites(plan: dict, sites: list) -> dict:
    cand = dict(plan)
    cand["choices"] = {k: v for k, v in plan["choices"].items()
                       if is_fault(k, v) or k.split(" ", 1)[0] not in sites}
    return cand


def _without_steps(plan: dict, steps: list) -> dict:
    cand = dict(plan)
    drop = set(steps)  # steps as JSON text: removed by what they are, not where they stand
    cand["workload"] = [s for s in plan["workload"] if json.dumps(s) not in drop]
    return cand
