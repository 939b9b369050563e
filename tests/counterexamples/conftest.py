"""Shared by the counterexample tests: the three named broken models (BM-1..BM-3) shrunk once per
session from their first failing seed in 0..199 (the shrink is the expensive part: about a
minute on this machine, paid once, not once per test module)."""

from __future__ import annotations

import pytest

NAMED = ("unconditional_fence", "reused_generation", "unlocked_resolver")


@pytest.fixture(scope="session")
def shrunk_named():
    """model -> (seed, invariant, the recorded plan, its history, the shrunk plan, the shrinker)."""
    from counterexamples.shrink import Shrinker, record_seed
    from campaign.run import run_one

    out = {}
    for name in NAMED:
        found = next(((seed, r.failures[0][0]) for seed in range(200)
                      for r in [run_one(seed, name, "swarm", {})] if r.failures), None)
        if found is None:
            pytest.fail(f"{name} is not caught in 200 seeds")
        seed, inv = found
        plan, history = record_seed(seed, name, "swarm", {})
        shrinker = Shrinker(plan, inv, budget_s=120)
        out[name] = (seed, inv, plan, history, shrinker.run(), shrinker)
    return out
