"""The stored plan of each broken model (tests/plans/broken/<name>.json): found, shrunk, written.

Every broken model declares the invariant that must catch it (CATCHES, broken_models/). The
default `pytest` run replays one shrunk plan per model (tests/model/test_broken_caught.py)
instead of the slow demonstration (`python runner.py broken --seeds 200`), so a broken model
that stops being caught by its invariant fails the suite in a second.

Make or remake a model's plan (from the checkout's root):

    python tests/kits/brokenplans.py MODEL [MODEL...] [--seeds 200] [--budget-s 30]

It scans the seeds of the scenario for the first one the declared invariant catches (a seed
that raises is never a catch), records it as a plan, shrinks it keeping that invariant failing
and the correct model passing it (counterexamples/shrink.py; the shrinker drops the decisions
its replay never reads or reads at their default: the same run, hash checked) and writes it
with no local path in it.

Shrink a stored plan again (a broken model's, or a finding's of tests/plans/), keeping what the
tests that load it need: a broken model caught by its declared invariant and the correct model
not; a finding's replay showing the same findings under the same invariants and nothing else;
for the plans AGAIN names, their own condition:

    python tests/kits/brokenplans.py --again PLAN.json [PLAN.json...] [--budget-s 120]
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
    shrinker = Shrinker(plan, e.catches, budget_s, keeps=caught_alone(e.catches))
    best = shrinker.run()
    best.update(invariant=e.catches, strict=False, **shrinker.history.hash_fields(),
                source={"seed": seed, "scenario": scenario,
                        "command": f"python tests/kits/brokenplans.py {name} --budget-s {budget_s:g}"},
                shrunk={"before": before, "after": size(best, shrinker.history), "runs": shrinker.runs,
                        "seconds": round(time.monotonic() - t0, 1)})
    return best


# --- what a shrunk plan must keep ---------------------------------------------------------------------


def caught_alone(declared: str):
    """keeps(plan, history) for a broken model's plan: a violation of `declared`, while the correct model
    on the same plan has none (tests/checkers/test_broken_caught.py asserts both)."""
    from checkers.verdict import judge
    from counterexamples.shrink import run_plan

    def keeps(plan: dict, history):
        caught = [v for v in judge(history).violations if v.invariant == declared]
        if not caught:
            return None
        control = run_plan(dict(plan, model="correct"))
        return None if declared in {v.invariant for v in judge(control).violations} else caught[0]

    return keeps


def findings_of(history) -> tuple[list, dict[str, list[str]]]:
    """(the violations no known finding explains, finding id -> the invariants it explains)."""
    from checkers import check_all
    from checkers.findings import classify

    unexplained, found = classify(history, check_all(history))
    return unexplained, {f: sorted({v.invariant for v in vs}) for f, vs in found.items()}


def same_findings(wanted: dict[str, list[str]]):
    """keeps(plan, history) for a finding's plan: these findings under these invariants, nothing
    unexplained (tests/checkers/test_findings.py's `_found`)."""

    def keeps(_plan: dict, history):
        unexplained, found = findings_of(history)
        if unexplained or found != wanted:
            return None
        from checkers import check_all

        return next(v for v in check_all(history) if v.invariant in wanted[min(wanted)])

    return keeps


def fn2_fence_retry(plan: dict, history):
    """fn2-fence-retry-after-own-lapse.json (tests/scenarios/test_scenarios_fencing_ownership.py): the
    correct model passes it; the model whose fence retry skips FN-2's watch fails FENCE-1 on it, with a
    fence sent by a node whose own lease ran out, within the watch from its recovery, which the correct
    model's same node waits out."""
    from checkers import check_all
    from counterexamples.shrink import run_plan
    from model.node import Model
    from model.params import Params

    if check_all(history):
        return None
    check = Model.watched_long_enough
    Model.watched_long_enough = lambda self, st, seen, now_ms: True
    try:
        without = run_plan(plan)
    finally:
        Model.watched_long_enough = check
    caught = [v for v in check_all(without) if v.invariant == "FENCE-1"]
    if not caught:
        return None
    recovered, sent = (without.events[i] for i in (caught[0].events[0], caught[0].events[-1]))
    fencer, back = sent.proc, recovered.t_ms
    p = Params(**history.params)
    mine = [e for e in history.events if e.proc == fencer]
    lapses = [e.t_ms for e in mine if e.kind == "lease_ran_out" and e.t_ms < back]
    if (lapses and any(e.kind == "fence_sent" and e.fields.key == sent.fields.key and e.t_ms < lapses[-1]
                       for e in mine)
            and any(e.kind == "apply" and e.t_ms == back for e in mine)
            and not any(e.kind == "fence_sent" and back <= e.t_ms < back + p.period_ms + p.attempt_timeout_ms - 200
                        for e in mine)):
        return caught[0]
    return None


def f4_fence_lands_after_the_lapse(plan: dict, history):
    """f4-fence-sent-before-the-fencer-lapsed.json (tests/checkers/test_findings.py): F-4 alone, and its
    fence of nodes/n1 sent on the fencer's valid lease lands after that lease ran out (the form the
    classifier once missed)."""
    v = same_findings({"F-4": ["INV-9"]})(plan, history)
    fences = [e for e in history.events if e.kind == "apply" and e.fields.key == "nodes/n1"
              and e.fields.state.startswith("fenced ")]
    if v is None or len(fences) != 1:
        return None
    sent = next((e for e in history.events if e.kind == "fence_sent" and e.fields.key == "nodes/n1"
                 and e.t_ms == fences[0].fields.sent_ms), None)
    lapsed = sent is not None and any(e.kind == "lease_ran_out" and e.proc == sent.proc
                                      and sent.t_ms < e.t_ms < fences[0].t_ms for e in history.events)
    return v if lapsed else None


AGAIN = {"fn2-fence-retry-after-own-lapse": fn2_fence_retry,
         "f4-fence-sent-before-the-fencer-lapsed": f4_fence_lands_after_the_lapse}


def stored_as(path: str) -> str:
    """The plan's path from the checkout's root (for a copy elsewhere, its place under tests/plans/): never
    a local path."""
    rel = os.path.relpath(os.path.abspath(path), ROOT)
    if not rel.startswith(".."):
        return rel.replace(os.sep, "/")
    name = os.path.basename(path)
    return f"tests/plans/broken/{name}" if os.path.exists(os.path.join(PLANS, name)) else f"tests/plans/{name}"


def again(path: str, budget_s: float) -> dict:
    """The stored plan at `path` shrunk again, keeping what its tests need (AGAIN, a finding's or a broken
    model's), its metadata kept and its size and history hash updated."""
    from broken_models import entry
    from counterexamples.shrink import Shrinker, run_plan, size

    with open(path) as f:
        plan = json.load(f)
    name = os.path.basename(path)[:-len(".json")]
    from history.record import hash_version

    history = run_plan(plan)
    if history.sha256(hash_version(plan)) != plan["history_sha256"]:
        raise SystemExit(f"{path}: its replay is not the run it stored (re-record it first)")
    if name in AGAIN:
        keeps = AGAIN[name]
    elif plan["model"] != "correct":
        keeps = caught_alone(entry(plan["model"]).catches)
    else:
        unexplained, found = findings_of(history)
        if unexplained or not found:
            raise SystemExit(f"{path}: a correct model's plan shows no finding alone; name its condition in AGAIN")
        keeps = same_findings(found)
    stored = {k: v for k, v in plan.items() if k not in ("history_sha256", "hash_version", "source", "shrunk")}
    t0 = time.monotonic()
    shrinker = Shrinker(stored, plan["invariant"], budget_s, keeps=keeps)
    best = shrinker.run()
    shrunk = dict(plan.get("shrunk") or {}, after=size(best, shrinker.history))
    shrunk["again"] = {"from": size(plan, history), "runs": shrinker.runs,
                       "seconds": round(time.monotonic() - t0, 1),
                       "command": f"python tests/kits/brokenplans.py --again {stored_as(path)}"}
    return dict(best, **shrinker.history.hash_fields(), source=plan.get("source"), shrunk=shrunk)


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
    ap.add_argument("--again", action="store_true", help="shrink the stored plans given by path again")
    args = ap.parse_args(argv)
    sys.path.insert(0, ROOT)
    from campaign import compiled

    compiled.install()  # the hot modules compiled, where they match their source

    if args.again:
        for path in args.models:
            before = os.path.getsize(path)
            plan = again(path, args.budget_s)
            write(path, plan)
            a = plan["shrunk"]["after"]
            print(f"{os.path.relpath(path)}: {before} -> {os.path.getsize(path)} bytes, {a['events']} events, "
                  f"{len(plan['choices'])} decisions ({plan['shrunk']['again']['runs']} runs, "
                  f"{plan['shrunk']['again']['seconds']} s)", flush=True)
        return 0
    if args.slim:
        from counterexamples.shrink import slim

        names = sorted(f[:-5] for f in os.listdir(PLANS) if f.endswith(".json")) if args.models == ["all"] \
            else args.models
        for name in names:
            with open(plan_path(name)) as f:
                write(plan_path(name), slim(json.load(f)))  # the same run: the same history hash
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
        write(plan_path(name), plan)
        a = plan["shrunk"]["after"]
        print(f"{name}: seed {plan['source']['seed']} fails {plan['invariant']}; shrunk to {a['events']} events, "
              f"{a['faults']} faults in {plan['shrunk']['seconds']} s -> {os.path.relpath(plan_path(name))}",
              flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
