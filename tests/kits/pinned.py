"""Runs the tests pin, kept as plans (tests/plans/pinned/<name>.json), not as seeds (issue 38).

A test that needs "a run where X happens" once named a seed; the seed's draw moved whenever the world
learnt something new (a fault kind, a workload), and the test failed with it. A plan is the run itself,
as data (counterexamples/shrink.py): the configuration, the drawn options, every decision and the
workload. Its replay draws nothing, so it stays the same run whatever the world draws for a seed, and
its stored history hash says when the world's own behaviour changed under it (the replay then fails,
naming the plan, rather than a test passing on another run).

A test reads its plan by name (`run(name)` for the plan's own model, `run(name, model)` for another
model on the same plan: the same options, and every decision the other model's run meets where the
plan holds it). Each plan was recorded from the seed the test used to name, and shrunk keeping the
test itself passing: the test is the condition, so the shrunk run still shows all it asserts.

Make or remake a plan (from the checkout's root):

    python tests/kits/pinned.py NAME --seed S [--model M] [--scenario X] --test tests/FILE.py::FUNCTION
        [--checkout PATH --drawn-at COMMIT] [--budget-s 60] [--invariant INV | --whole]
    python tests/kits/pinned.py NAME... --again

- `--test` names the test (or a helper taking the plan's name) that must keep passing while the plan
  shrinks (repeated: every test that reads the plan);
- `--invariant INV` shrinks it as a counterexample of INV instead (as `runner.py shrink` does), for a
  test about counterexamples, which must pass on the result;
- `--whole` keeps the whole run, not shrunk (only the decisions it never reads dropped), gzipped
  (<name>.json.gz: a run nobody reads line by line), for a test whose point is the shape of that whole
  run (a classifier's regression: a shrunk run would be the simple case it always saw);
- `--checkout` records the seed in another checkout of the project (the one whose draw the test was
  written against: issue 38 re-pinned its tests from 946554a's, `--drawn-at` names it);
- `--again` shrinks a stored plan again, with the tests and the way its file names.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import gzip
import importlib.util
import inspect
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PINNED = os.path.join(ROOT, "tests", "plans", "pinned")
META = ("history_sha256", "hash_version", "source", "shrunk", "test")  # what a stored plan holds beside the plan itself

_given: dict[str, dict] = {}  # name -> the plan to use instead of the stored one (while shrinking)
_stored: dict[str, dict] = {}
_runs: dict = {}


def path_of(name: str) -> str:
    """The plan's file: <name>.json, or <name>.json.gz for a whole run."""
    whole = os.path.join(PINNED, f"{name}.json.gz")
    return whole if os.path.exists(whole) else os.path.join(PINNED, f"{name}.json")


def plan(name: str) -> dict:
    """The plan `name` (a copy: a test may change it)."""
    if name in _given:
        return copy.deepcopy(_given[name])
    if name not in _stored:
        path = path_of(name)
        with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
            _stored[name] = json.load(f)
    return copy.deepcopy(_stored[name])


def run(name: str, model: str | None = None):
    """The history of plan `name` run by `model` (default: the plan's own), cached per run. The plan's own
    model must replay the history the plan stored (its hash): otherwise the world changed under it."""
    from counterexamples.shrink import run_plan

    p = plan(name)
    model = model or p["model"]
    key = (name, model)
    if name not in _given and key in _runs:
        return _runs[key]
    from history.record import hash_version

    h = run_plan(dict(p, model=model))
    if name not in _given:
        if model == p["model"] and p.get("history_sha256") not in (None, h.sha256(hash_version(p))):
            raise AssertionError(f"{os.path.relpath(path_of(name), ROOT)} no longer replays the run it stored "
                                 f"(history hash {h.sha256(hash_version(p))[:12]}, stored {p['history_sha256'][:12]}): the world's "
                                 f"behaviour changed under it; re-record it (tests/kits/pinned.py) and review what "
                                 f"its test asserts")
        _runs[key] = h
    return h


@contextlib.contextmanager
def given(name: str, candidate: dict):
    """Plan `name` reads as `candidate` meanwhile (the shrinker's candidates, run through the test)."""
    _given[name] = candidate
    try:
        yield
    finally:
        del _given[name]


# --- making a plan -----------------------------------------------------------------------------------------


def record(seed: int, model: str, scenario: str, checkout: str | None) -> dict:
    """The plan of `seed` (its whole run: every decision), recorded here or in another checkout."""
    if checkout is None:
        from counterexamples.shrink import record_seed

        p, h = record_seed(seed, model, scenario, None)
        return dict(p, **h.hash_fields())
    code = ("import json, sys; sys.path.insert(0, '.'); from campaign import compiled; compiled.install(); "
            "from counterexamples.shrink import record_seed; "
            f"p, h = record_seed({seed}, {model!r}, {scenario!r}, None); p.update(h.hash_fields()); "
            "print(json.dumps(p))")
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    out = subprocess.run([sys.executable, "-c", code], cwd=checkout, env=env, capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out)


def load_test(spec: str):
    """`tests/FILE.py::FUNCTION` -> the function (its module imported as pytest would, the kits on the path)."""
    path, _, fn = spec.partition("::")
    for p in (HERE, ROOT, os.path.dirname(os.path.join(ROOT, path))):  # (pytest puts a test's folder on the path)
        if p not in sys.path:
            sys.path.insert(0, p)
    mod_spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], os.path.join(ROOT, path))
    mod = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(mod)
    return getattr(mod, fn)


class _Kept:
    """What the shrinker keeps: the test passing (no violation to cut the run after)."""

    invariant = "the test"
    events: list = []


def keeps_passing(name: str, test):
    """keeps(plan, history) for the shrinker: the test (or a helper of the plan's name) passes on `plan`."""
    takes_name = len(inspect.signature(test).parameters) == 1

    def keeps(candidate: dict, _history):
        with given(name, candidate):
            try:
                test(name) if takes_name else test()
            except AssertionError:
                return None
        return _Kept()

    return keeps


def shrink(name: str, whole: dict, tests: list[str], budget_s: float, source: dict,
           invariant: str | None = None) -> dict:
    """The plan shrunk keeping the tests passing; with `invariant`, shrunk as a counterexample of it instead
    (what `runner.py shrink` does), and the tests must pass on the result."""
    from counterexamples.shrink import Shrinker, run_plan, size

    every = [keeps_passing(name, load_test(spec)) for spec in tests]

    def keeps(candidate: dict, history):
        return _Kept() if all(k(candidate, history) is not None for k in every) else None

    bare = {k: v for k, v in whole.items() if k not in META}
    history = run_plan(bare)
    if invariant is not None:
        t0 = time.monotonic()
        shrinker = Shrinker(bare, invariant, budget_s)
        best = shrinker.run()
        if keeps(best, shrinker.history) is None:
            raise SystemExit(f"{name}: {' or '.join(tests)} fails on the counterexample shrunk for {invariant}")
        return dict(best, **shrinker.history.hash_fields(), test=tests,
                    source=dict(source, invariant=invariant),
                    shrunk={"before": size(bare, history), "after": size(best, shrinker.history),
                            "runs": shrinker.runs, "seconds": round(time.monotonic() - t0, 1)})
    if keeps(bare, history) is None:
        raise SystemExit(f"{name}: {' or '.join(tests)} fails on the recorded plan: nothing to keep")
    t0 = time.monotonic()
    shrinker = Shrinker(bare, "the test", budget_s, keeps=keeps)
    best = shrinker.run()
    return dict(best, **shrinker.history.hash_fields(), test=tests, source=source,
                shrunk={"before": size(bare, history), "after": size(best, shrinker.history), "runs": shrinker.runs,
                        "seconds": round(time.monotonic() - t0, 1)})


def main(argv: list[str] | None = None) -> int:
    from brokenplans import write

    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("names", nargs="+", metavar="NAME")
    ap.add_argument("--seed", type=int)
    ap.add_argument("--model", default="correct")
    ap.add_argument("--scenario", default="swarm")
    ap.add_argument("--test", action="append", help="tests/FILE.py::FUNCTION that must keep passing (repeat: all)")
    ap.add_argument("--checkout", help="record the seed in this checkout of the project")
    ap.add_argument("--budget-s", type=float, default=60.0)
    ap.add_argument("--whole", action="store_true", help="keep the whole run (not shrunk), gzipped")
    ap.add_argument("--invariant", help="shrink as a counterexample of this invariant (the tests must pass on it)")
    ap.add_argument("--drawn-at", help="the commit whose draw the checkout holds (default: its git HEAD)")
    ap.add_argument("--again", action="store_true", help="shrink the stored plans again")
    args = ap.parse_args(argv)
    sys.modules.setdefault("pinned", sys.modules[__name__])  # the tests' `import pinned` is this module
    for p in (HERE, ROOT):
        if p not in sys.path:
            sys.path.insert(0, p)
    from campaign import compiled

    compiled.install()
    os.makedirs(PINNED, exist_ok=True)
    for name in args.names:
        if args.again:
            whole = plan(name)
            source, test = whole["source"], whole["test"]
        else:
            if args.seed is None or not args.test:
                ap.error("a new plan needs --seed and --test")
            whole = record(args.seed, args.model, args.scenario, args.checkout)
            source = {"seed": args.seed, "scenario": args.scenario, "model": args.model,
                      "drawn_at": args.drawn_at or _commit(args.checkout or ROOT)}
            test = args.test
        keep_whole = args.whole or (args.again and path_of(name).endswith(".gz"))
        invariant = args.invariant or (source.get("invariant") if args.again else None)
        out = shrink(name, whole, test if isinstance(test, list) else [test], 0 if keep_whole else args.budget_s,
                     {k: v for k, v in source.items() if k != "invariant"}, invariant)
        for old in (os.path.join(PINNED, f"{name}.json"), os.path.join(PINNED, f"{name}.json.gz")):
            if os.path.exists(old):
                os.remove(old)
        if keep_whole:
            del out["shrunk"]
            with open(os.path.join(PINNED, f"{name}.json.gz"), "wb") as f:
                f.write(gzip.compress(json.dumps(out, indent=0).encode(), 9, mtime=0))
            print(f"{name}: seed {source['seed']} ({source['model']}, {source['scenario']}) kept whole, "
                  f"{len(out['choices'])} decisions ({os.path.getsize(path_of(name))} bytes)", flush=True)
            continue
        write(path_of(name), out)
        a = out["shrunk"]["after"]
        print(f"{name}: seed {source['seed']} ({source['model']}, {source['scenario']}) shrunk to {a['events']} "
              f"events, {a['faults']} faults, {len(out['choices'])} decisions in {out['shrunk']['seconds']} s "
              f"({os.path.getsize(path_of(name))} bytes)", flush=True)
    return 0


def _commit(checkout: str) -> str | None:
    r = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=checkout, capture_output=True, text=True)
    return r.stdout.strip() or None


if __name__ == "__main__":
    sys.exit(main())
