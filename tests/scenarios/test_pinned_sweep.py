"""The correct model over pinned configurations (issue 44, part 7): a checker that cries wolf is a defect
too. `python runner.py --seeds 1 --start 3 --param ttl_ms=10000` failed CONV-2 on the correct model (a read
of its own object counted as knowing its lease valid). The CI sweep draws most timing on the ADR's bounds,
but a false alarm that needs one configuration can hide there; so each T-rule at its bound, and a pinned ttl
of 2, 10 and 30 s, 500 seeds each, must pass. Every configuration is pinned whole, so that each one keeps
ttl - safety > P + A (a configuration without it lets a lease run out between two writes: issue 47 refuses
those up front). Marked slow (about 3,000 seeds); CI runs it as a step of its own (.ci/run)."""

from __future__ import annotations

import os

import pytest

from campaign.run import run_seeds
from model.params import Params
from scenarios.spec import RunSpec
from scenarios.swarm import on_bounds

SEEDS = 500
# name -> the whole configuration (ttl, grace, safety, max_skew, heartbeat period, attempt timeout), ms
CONFIGS = {
    "T-2 at its bound": (10_000, 0, 2_000, 1_000, 3_000, 2_000),  # grace + safety = 2 max_skew
    "T-3 at its bound": (10_000, 5_000, 2_000, 1_000, 3_333, 2_000),  # P = ttl / 3
    "T-4 at its bound": (10_000, 5_000, 2_000, 1_000, 3_000, 2_666),  # A = (ttl - safety) / 3
    "ttl 2 s": (2_000, 0, 500, 250, 500, 375),
    "ttl 10 s": (10_000, 5_000, 2_000, 1_000, 3_000, 2_000),  # T-1's defaults
    "ttl 30 s": (30_000, 5_000, 2_000, 1_000, 3_000, 2_000),
}
NAMES = ("ttl_ms", "grace_ms", "safety_ms", "max_skew_ms", "heartbeat_period_ms", "attempt_timeout_ms")


def _params(values) -> Params:
    return Params(**dict(zip(NAMES, values)))


def test_each_configuration_is_what_its_name_says():
    """The T-rules accept each one (Params validates T-2..T-4), each T-rule's own sits on that bound, and
    every one keeps ttl - safety > P + A."""
    for name, values in CONFIGS.items():
        p = _params(values)
        assert p.ttl_ms - p.safety_ms > p.heartbeat_period_ms + p.attempt_timeout_ms, name
        if name.startswith("T-"):
            assert name.split(" ")[0] in on_bounds(p), name
    assert {CONFIGS[n][0] for n in ("ttl 2 s", "ttl 10 s", "ttl 30 s")} == {2_000, 10_000, 30_000}


def test_ci_runs_this_sweep():
    with open(os.path.join(os.path.dirname(__file__), "..", "..", ".ci", "run")) as fh:
        assert "python -m pytest -m slow tests/scenarios/test_pinned_sweep.py -q" in fh.read()


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CONFIGS))
def test_the_correct_model_passes_every_seed(name):
    spec = RunSpec.of("correct", "swarm", _params(CONFIGS[name]))
    failed = [(r.seed, r.failures[0][:2] if r.failures else r.tool_failure[0])
              for r in run_seeds(spec, 0, SEEDS, workers=2) if r.failures or r.tool_failure]
    assert failed == [], f"{name}: {len(failed)} failing seeds, the first {failed[:3]}"
