"""The stored plan of each broken model (tests/plans/broken/<name>.json): found, shrunk, written.

Every broken model declares the invariant that must catch it (CATCHES, broken_models/). The
default `pytest` run replays one shrunk plan per model (tests/model/test_broken_caught.py)
instead of the slow demonstration (`python runner.py broken --seeds 200`), so a broken model
that stops being caught by its invariant fails the suite in a second.

Make or remake a model's plan (from the checkout's root):

    python tests/kits/brokenplans.py MODEL [MODEL...] [--seeds 200] [--budget-s 30]

It scans the seeds of the scenario for the first one the declared invariant catches (a seed
that raises is never a catch), records it as a plan, shrinks it keeping that invariant failing
(counterexamples/shrink.py), drops the decisions its replay never reads or reads at their
default (the same run, hash checked) and writes it with no local path in it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PLANS = os.path.join(ROOT, "tests", "plans", "broken")


def plan_path(name: str) -> str:
    return os.path.join(PLANS, f"{name}.json")


def caught_by(seed: int, name: str, scenario: str) -> tuple[set[str], str | None]:
    """(the invariants seed `seed` of model `name` violates, the exception it raised or None)."""
    from broken_models import load_model
    from checkers.verdict import judge
    from scenarios.sim import run_seed

    try:
        history = run_seed(seed, load_model(name), scenario, None, name)
    except Exception as e:  # noqa: BLE001 - a tool failure, never a catch
        return set(), f"{type(e).__name__}: {e}"
    return {v.invariant for v in judge(history).violations}, None


def first_catch(name: str, scenario: str, seeds: range) -> int | None:
    from broken_models import entry

    declared = entry(name).catches
    for s in seeds:
        found, raised = caught_by(s, name, scenario)
        if raised is None and declared in found:
            return s
    return None


def make(name: str, scenario: str, seeds: range, budget_s: float) -> dict | None:
    """The shrunk plan of the first seed of `seeds` that the model's declared invariant catches."""
    from broken_models import entry
    from counterexamples.shrink import Shrinker, record_seed, size

    e = entry(name)
    seed = first_catch(name, scenario, seeds)
    if seed is None:
        return None
    plan, history = record_seed(seed, name, scenario, None)
    before = size(plan, history)
    t0 = time.monotonic()
    shrinker = Shrinker(plan, e.catches, budget_s)
    best = shrinker.run()
    best.update(invariant=e.catches, strict=False, history_sha256=shrinker.history.sha256(),
                source={"seed": seed, "scenario": scenario,
                        "command": f"python tests/kits/brokenplans.py {name} --budget-s {budget_s:g}"},
                shrunk={"before": before, "after": size(best, shrinker.history), "runs": shrinker.runs,
                        "seconds": round(time.monotonic() - t0, 1)})
    return best


def read_decisions(plan: dict) -> tuple[str, set[str]]:
    """(the history hash of the plan's replay, the keys of the decisions it read)."""
    import scenarios.plan as sp
    from counterexamples.shrink import run_plan

    read: set[str] = set()
    pick = sp.Choices.pick

    def noting(self, site, who, draw, *args):
        base = f"{site} {who}"
        read.add(f"{base} #{self._seen[base]}")
        return pick(self, site, who, draw, *args)

    sp.Choices.pick = noting
    try:
        return run_plan(plan).sha256(), read
    finally:
        sp.Choices.pick = pick


def slim(plan: dict) -> dict:
    """The plan without the decisions its replay never reads or reads at their calm default: the same
    run (its history hash checked), a file a few KB long."""
    from scenarios.plan import default

    sha, read = read_decisions(plan)
    kept = {k: v for k, v in plan["choices"].items() if k in read and v != default(k.split(" ", 1)[0], k)}
    out = dict(plan, choices=kept)
    if read_decisions(out)[0] != sha:
        raise AssertionError(f"{plan['model']}: the slimmed plan runs differently")
    return dict(out, history_sha256=sha)


def dump(plan: dict) -> str:
    """JSON, a decision or a workload step a line."""
    lines = []
    for k, v in plan.items():
        if k in ("choices", "workload") and v:
            rows = [f"  {json.dumps(ck)}: {json.dumps(cv)}" for ck, cv in v.items()] if k == "choices" else \
                [f"  {json.dumps(step)}" for step in v]
            o, c = ("{", "}") if k == "choices" else ("[", "]")
            lines.append(f" {json.dumps(k)}: {o}\n" + ",\n".join(rows) + f"\n {c}")
        else:
            lines.append(f" {json.dumps(k)}: " + json.dumps(v, indent=1).replace("\n", "\n "))
    return "{\n" + ",\n".join(lines) + "\n}\n"


def write(path: str, plan: dict) -> None:
    text = dump(plan)
    assert json.loads(text) == plan
    with open(path, "w") as f:
        f.write(text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("models", nargs="+", metavar="MODEL")
    ap.add_argument("--scenario", default="swarm")
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--budget-s", type=float, default=30.0)
    ap.add_argument("--slim", action="store_true", help="only slim the stored plans named (or every one: all)")
    args = ap.parse_args(argv)
    sys.path.insert(0, ROOT)
    from nodelease import compiled

    compiled.install()  # the hot modules compiled, where they match their source

    if args.slim:
        names = sorted(f[:-5] for f in os.listdir(PLANS) if f.endswith(".json")) if args.models == ["all"] \
            else args.models
        for name in names:
            with open(plan_path(name)) as f:
                write(plan_path(name), slim(json.load(f)))
            print(f"{name}: {os.path.getsize(plan_path(name))} bytes", flush=True)
        return 0
    failed = 0
    for name in args.models:
        plan = make(name, args.scenario, range(args.start, args.start + args.seeds), args.budget_s)
        if plan is None:
            print(f"{name}: no seed of {args.start}..{args.start + args.seeds - 1} ({args.scenario}) is caught by "
                  f"its declared invariant", file=sys.stderr)
            failed += 1
            continue
        plan = slim(plan)
        write(plan_path(name), plan)
        a = plan["shrunk"]["after"]
        print(f"{name}: seed {plan['source']['seed']} fails {plan['invariant']}; shrunk to {a['events']} events, "
              f"{a['faults']} faults in {plan['shrunk']['seconds']} s -> {os.path.relpath(plan_path(name))}",
              flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
