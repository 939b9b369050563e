"""Shared by the counterexample tests: the three named broken models (BM-1..BM-3) shrunk once per
session from their first seed in 0..199 that breaks the invariant each declares (CATCHES: a seed
another invariant catches first, as COST-5 catches BM-2's reused generation written again, is
passed over, so the picture is of the violation the ADR names) (the shrink is the expensive part: about a
minute on this machine, paid once, not once per test module)."""

from __future__ import annotations

import pytest

NAMED = ("unconditional_fence", "reused_generation", "unlocked_resolver")


@pytest.fixture(scope="session")
def shrunk_named():
    """model -> (seed, invariant, the recorded plan, its history, the shrunk plan, the shrinker)."""
    from counterexamples.shrink import Shrinker, record_seed
    from broken_models import entry
    from campaign.run import run_one

    out = {}
    for name in NAMED:
        inv = entry(name).catches
        seed = next((seed for seed in range(200)
                     if any(f[0] == inv for f in run_one(seed, name, "swarm", {}).failures)), None)
        if seed is None:
            pytest.fail(f"{name} is not caught by {inv} in 200 seeds")
        plan, history = record_seed(seed, name, "swarm", {})
        shrinker = Shrinker(plan, inv, budget_s=120)
        out[name] = (seed, inv, plan, history, shrinker.run(), shrinker)
    return out
