"""Every broken model caught by the invariant it declares (STYLE.md 8, BM-1..BM-3 and the rest of
broken_models/), in the default run and fast: each has a shrunk plan in tests/plans/broken/, and
replaying it must violate the model's CATCHES, with no exception, while the correct model on the
same plan does not. The slow demonstration is `python runner.py broken --seeds 200`; a plan is
made or remade with `python tests/kits/brokenplans.py MODEL`.

The documented survivors (SURVIVOR: caught by nothing in this world) are left out by name.
"""

from __future__ import annotations

import json
import os

import pytest

from broken_models import entries, entry, load
from brokenplans import PLANS, caught_by, plan_path
from checkers.verdict import judge
from counterexamples.shrink import run_plan

BROKEN = [e.name for e in entries() if e.kind == "broken"]
SURVIVORS = [e.name for e in entries() if e.kind == "survivor"]
# every model but the control; a survivor is shown skipped, with why (its SURVIVOR)
MODELS = [pytest.param(e.name, marks=pytest.mark.skip(reason=f"survivor: {load(e.name).SURVIVOR}"))
          if e.kind == "survivor" else e.name for e in entries() if e.kind != "correct"]
SCAN = range(0, 12)  # the seeds a missing plan's failure tries, to say where to start


def _replayed(plan: dict):
    """The plan's history; a raise is the tool's failure, said in one line (never a catch)."""
    try:
        return run_plan(plan)
    except Exception as e:  # noqa: BLE001
        pytest.fail(f"replaying the plan of {plan['model']} raised {type(e).__name__}: {e} (a tool failure, "
                    f"not a catch)", pytrace=False)


@pytest.mark.parametrize("name", MODELS)
def test_every_broken_model_is_caught_by_the_invariant_it_declares(name):
    declared = entry(name).catches
    path = plan_path(name)
    if not os.path.exists(path):
        tried = {s: sorted(caught_by(s, name, "swarm")[0]) for s in SCAN}
        hits = [s for s, found in tried.items() if declared in found]
        pytest.fail(f"{name} has no stored plan ({os.path.relpath(path)}); seeds {SCAN.start}..{SCAN.stop - 1} "
                    f"caught by {declared}: {hits or 'none'} (violations: {tried}); make it with "
                    f"`python tests/kits/brokenplans.py {name}` (or --start/--seeds to scan further)",
                    pytrace=False)
    with open(path) as f:
        plan = json.load(f)
    assert plan["model"] == name and plan["invariant"] == declared, (plan["model"], plan["invariant"])
    found = sorted({v.invariant for v in judge(_replayed(plan)).violations})
    assert declared in found, f"{name} is no longer caught by {declared} on its plan (violations: {found})"
    control = sorted({v.invariant for v in judge(_replayed(dict(plan, model="correct"))).violations})
    assert declared not in control, f"the correct model fails {declared} on {name}'s plan too: {control}"


def test_every_stored_plan_is_of_a_broken_model():
    stored = sorted(f[:-len(".json")] for f in os.listdir(PLANS) if f.endswith(".json"))
    assert [n for n in stored if n not in BROKEN] == [], "a plan of a survivor, or of a model that is gone"


def test_a_stored_plan_holds_no_local_path():
    for f in sorted(os.listdir(PLANS)):
        with open(os.path.join(PLANS, f)) as fh:
            text = fh.read()
        assert "/tmp/" not in text and "/work/" not in text and "/home/" not in text, f
