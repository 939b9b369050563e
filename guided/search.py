"""The guided search: a corpus of plans kept for what they newly reach, mutated (issue 30).

A uniform campaign runs seed after seed, each drawn afresh. The guided search runs plans: it
starts from a few drawn seeds, keeps a run in its corpus when it reaches something no run before
it reached (a *feature*), and spends most runs on mutants of the corpus's plans (guided/mutate.py),
choosing parents by how rare their features are. The features of a run (all read from its judged
history, the same verdict a campaign gives, checkers.verdict):

- `p:` every coverage point it reaches (checkers/coverage.py);
- `r:` every protocol rule it exercises, by how often (1, 2-3, 4-7, ... times: AFL's buckets);
- `k:` every pair of a fault kind active in it and a rule it exercises (new combinations);
- `m:` every margin (checkers/margins.py) below each power of two of milliseconds, and below zero:
  a run that comes closer to a timing rule's bound than any before it is kept, so the search
  climbs towards the bounds, as Hypothesis's `target()` does.

Each run is judged by every checker. The first run that fails (a violation no known finding
explains) ends the search: it is run again as a plain plan (nothing drawn, scenarios/plan.py),
judged again, and written as a counterexample that `replay` and `shrink` take as they take any.

Determinism: one RNG, seeded with the search's seed, decides every parent, operator and fresh
seed, and seeds each run's own draws; a run's features depend only on its plan. So the i-th run of
two searches with the same seed, model, scenario and pins is the same run, on any machine: the
budget (CPU-seconds, or runs) decides only how far along that sequence a search gets.

Must not know: which model is broken, or how (a search for a bug it was told of is a demo).
"""

from __future__ import annotations

import copy
import json
import random
import time
from dataclasses import dataclass, field

from checkers.result import judge as judge_run
from house.errors import ToolError
from scenarios.spec import RunSpec
from scenarios import faults
from scenarios.plan import FORMAT, Branching

from . import mutate

INITIAL = 16  # drawn seeds before any mutant
P_FRESH = 0.15  # a drawn seed now and then, so the corpus does not close on itself
WEIGHTS = (("redraw", 3), ("reseed", 4), ("shift", 2), ("clock", 1))  # the operators' odds
MARGIN_LEVELS = tuple(1 << k for k in range(0, 18))  # 1 ms .. 131 s


@dataclass
class Entry:
    """A run kept in the corpus: its whole plan and when each decision was made."""

    index: int  # the run's number in the search (1: the first)
    plan: dict
    times: dict
    end_ms: int
    features: tuple  # in the order first met (never a set: reports and picks iterate it)
    marks: dict  # label -> the first instant the run met it (an event kind, a fault): where to reseed
    op: str
    picked: int = 0


@dataclass
class Outcome:
    """What a search did: its runs, its corpus, and the failing plan if it found one."""

    runs: int = 0
    cpu_s: float = 0.0
    results: list = field(default_factory=list)  # every run's SeedResult (its seed field: the run's number)
    failure: dict | None = None  # the counterexample (a plan, replayed and checked)
    failure_run: int | None = None
    failure_cpu_s: float | None = None
    growth: list = field(default_factory=list)  # [run, cpu_s, corpus size, features] at each admission
    ops: dict = field(default_factory=dict)  # operator -> [runs, kept in the corpus, failures]
    corpus: list = field(default_factory=list)
    replay_mismatch: int = 0  # failing runs whose plain replay did not fail (never expected)


def features_of(result, options: dict) -> list[str]:
    out = [f"p:{p}" for p in result.coverage]
    for rule, n in result.rules.items():
        out.append(f"r:{rule}:{int(n).bit_length()}")
    kinds = [k.id for k in faults.KINDS.values() if k.active(options)]
    for kind in kinds:
        out += [f"k:{kind}:{rule}" for rule in result.rules]
    for name, v in result.margin_ms.items():
        if v < 0:
            out.append(f"m:{name}:<0")
        out += [f"m:{name}:<{edge}" for edge in MARGIN_LEVELS if v < edge]
    return out


def marks_of(history) -> dict:
    """label -> the first instant of each kind of event and each fault the run met."""
    out: dict = {}
    for e in history.events:
        label = e.kind if e.kind != "fault" else f"fault:{e.fields[0]}"
        if label not in out:
            out[label] = e.t_ms
    return out


class Search:
    """One guided search. `run()` until the budget is spent or a run fails."""

    def __init__(self, spec: RunSpec, seed: int, *, budget_s: float | None = None, max_runs: int | None = None,
                 say=None, judge=None) -> None:
        self.spec, self.seed = spec, seed
        self.model_name, self.scenario, self.strict = spec.model, spec.scenario, spec.strict
        self.model = spec.load_model()
        self.budget_s, self.max_runs = budget_s, max_runs
        self.rng = random.Random(seed)  # the search's one RNG: parents, operators, fresh seeds, each run's draws
        self.say = say or (lambda line: None)
        # (index, history, strict) -> the run's SeedResult (checkers/result.py, the one result type: a campaign's
        # report sums the search's runs as it sums seeds)
        self.judge = judge or (lambda index, history, strict: judge_run(index, history, strict=strict))
        self.corpus: list[Entry] = []
        self.hits: dict[str, int] = {}  # feature -> runs that reached it
        self.mark_hits: dict[str, int] = {}  # mark -> corpus entries that have it
        self.out = Outcome(ops={op: [0, 0, 0] for op in ("fresh", *mutate.OPERATORS)})

    # --- one run ------------------------------------------------------------------------------

    def _execute(self, seed: int, plan: dict | None, until_ms: int | None):
        """Run a drawn seed (plan None) or a candidate plan, recording every decision and its instant."""
        from model.params import Params
        from scenarios.sim import SimWorld

        if plan is None:
            choices = Branching({}, [], 0)
            world = SimWorld(seed, self.model, self.scenario, self.spec.world_params or None, self.model_name,
                             choices=choices)
        else:
            choices = Branching(plan["choices"], plan["workload"], until_ms)
            world = SimWorld(seed, self.model, self.scenario, Params(**plan["params"]), self.model_name,
                             options=copy.deepcopy(plan["options"]), choices=choices)
        choices.clock = lambda: world.now
        history = world.run()
        whole = {"format": FORMAT, "model": self.model_name, "scenario": self.scenario, "seed": seed,
                 "params": dict(history.params), "options": history.options, "choices": choices.table,
                 "workload": choices.workload}
        return json.loads(json.dumps(whole)), choices.times, history

    def _judge(self, index: int, history):
        return self.judge(index, history, self.strict)

    def _one(self, op: str, seed: int, plan: dict | None, until_ms: int | None) -> bool:
        """Run and judge one candidate; keep it if it reaches something new. True: it failed."""
        index = self.out.runs + 1
        try:
            whole, times, history = self._execute(seed, plan, until_ms)
        except Exception as e:  # a mutant the world cannot run is the search's bug: say it, never a catch
            raise ToolError(f"guided run {index} ({op}) raised {type(e).__name__}: {e}") from e
        result = self._judge(index, history)
        self.out.runs = index
        self.out.results.append(result)
        stats = self.out.ops[op]
        stats[0] += 1
        if result.tool_failure is not None:
            raise ToolError(f"guided run {index} ({op}): a checker raised: {result.tool_failure[0]}")
        feats = features_of(result, whole["options"])
        new = [f for f in feats if f not in self.hits]
        for f in feats:
            self.hits[f] = self.hits.get(f, 0) + 1
        if result.failures:
            stats[2] += 1
            if self._confirm(whole, index):
                return True
        if new or not self.corpus:
            stats[1] += 1
            marks = marks_of(history)
            for label in marks:
                self.mark_hits[label] = self.mark_hits.get(label, 0) + 1
            self.corpus.append(Entry(index, whole, times, history.end_ms, tuple(feats), marks, op))
            self.out.growth.append([index, round(self._cpu(), 2), len(self.corpus), len(self.hits)])
        return False

    def _confirm(self, whole: dict, index: int) -> bool:
        """The failing run as a plain plan: replayed with nothing drawn, judged again, slimmed."""
        from counterexamples.shrink import run_plan, slim, violations

        history = run_plan(whole)
        found = violations(history, self.strict)
        if not found:
            self.out.replay_mismatch += 1
            return False
        plan = slim(whole)
        history = run_plan(plan)
        plan.update(invariant=found[0].invariant, strict=self.strict, **history.hash_fields(),
                    source={"guided": {"seed": self.seed, "run": index, "model": self.model_name,
                                       "scenario": self.scenario}})
        self.out.failure, self.out.failure_run, self.out.failure_cpu_s = plan, index, round(self._cpu(), 3)
        return True

    # --- the loop -----------------------------------------------------------------------------

    def _cpu(self) -> float:
        return time.process_time() - self._t0

    def _spent(self) -> bool:
        if self.max_runs is not None and self.out.runs >= self.max_runs:
            return True
        return self.budget_s is not None and self._cpu() >= self.budget_s

    def _parent(self) -> Entry:
        """A corpus entry, by the rarity of its features (the sum of 1 / runs that reached each), and
        less as it is picked again (AFL's energy, roughly)."""
        hits = self.hits
        weights = [sum(1.0 / hits[f] for f in e.features) / (1 + e.picked) ** 0.5 for e in self.corpus]
        e = self.rng.choices(self.corpus, weights)[0]
        e.picked += 1
        return e

    def _instants(self, e: Entry) -> list[tuple[str, int]]:
        """The parent's moments, rarest in the corpus first: where a reseed branches."""
        return sorted(e.marks.items(), key=lambda kv: (self.mark_hits.get(kv[0], 0), kv[1]))

    def _candidate(self) -> tuple[str, mutate.Candidate | None]:
        parent = self._parent()
        ops, weights = zip(*WEIGHTS)
        for _ in range(4):  # an operator with nothing to change in this parent: another one
            op = self.rng.choices(ops, weights)[0]
            if op == "reseed":
                cand = mutate.reseed(parent, self.rng, self._instants(parent))
            else:
                cand = getattr(mutate, op)(parent, self.rng)
            if cand is not None:
                return op, cand
        return "fresh", None

    def run(self) -> Outcome:
        self._t0 = time.process_time()
        last = time.monotonic()
        while not self._spent():
            if len(self.corpus) < INITIAL or self.out.runs < INITIAL or self.rng.random() < P_FRESH:
                op, cand = "fresh", None
            else:
                op, cand = self._candidate()
            seed = self.rng.getrandbits(31)
            failed = self._one(op, seed, cand.plan if cand else None, cand.until_ms if cand else None)
            if failed:
                break
            if time.monotonic() - last >= 10:
                last = time.monotonic()
                self.say(f"guided: {self.out.runs} runs, {self._cpu():.0f} CPU-s, corpus {len(self.corpus)}, "
                         f"{len(self.hits)} features")
        self.out.cpu_s = round(self._cpu(), 3)
        self.out.corpus = [{"run": e.index, "op": e.op, "features": len(e.features), "picked": e.picked}
                           for e in self.corpus]
        return self.out
