"""Small explorations pinned, as Stateright's examples pin `unique_state_count` and
`assert_discovery`: the states generated, the distinct states, the depth, and for a broken model
the counterexample's path. A change of the model, the world or the explorer that changes a state
space fails here, so the new figures come in as a reviewed diff (and the figures in docs/ with
them).

Bounds are in tests/kits/explorekit.py, shared with tests/explore/test_explore.py (which checks the same explorations replay in
the SimPy world); both read one run of each (the `explored` fixture).
"""

from __future__ import annotations

from explorekit import BM1, BM2, CALM


def _figures(out) -> dict:
    return {"status": out.status, "states": out.states, "distinct": out.distinct, "depth": out.depth}


def test_bm1_unconditional_fence_state_space_and_discovery(explored):
    explorer, out = explored("unconditional_fence", **BM1)
    assert _figures(out) == {"status": "violation", "states": 72, "distinct": 67, "depth": 15}
    plan, _history = explorer.counterexample(out)
    assert (plan["invariant"], plan["source"]["path"]) == ("INV-3", ["7.000 s  outage n0"])


def test_bm2_reused_generation_state_space_and_discovery(explored):
    explorer, out = explored("reused_generation", **BM2)
    assert _figures(out) == {"status": "violation", "states": 3397, "distinct": 2398, "depth": 20}
    plan, _history = explorer.counterexample(out)
    assert plan["invariant"] == "INV-2"
    assert plan["source"]["path"] == [
        "7.000 s  ask n0 t0/c/a0",
        "7.009 s  send m0 PUT owners/t0/c/a0 #0: ok 1 ms",
        "7.010 s  reply m0 PUT owners/t0/c/a0 #0: ok 1 ms",
        "7.500 s  hibernate t0/c/a0",
        "7.500 s  send m0 PUT owners/t0/c/a0 #1: lost",  # the release lost (OR-3)
        "8.000 s  ask n0 t0/c/a0",  # re-acquired at the same generation: INV-2
    ]


def test_the_correct_model_s_small_state_space_is_exhausted(explored):
    _explorer, out = explored("correct", **CALM)
    assert _figures(out) == {"status": "exhausted", "states": 346, "distinct": 290, "depth": 22}
    assert out.combinations == 2 and out.violation is None
