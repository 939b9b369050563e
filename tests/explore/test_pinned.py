"""Small explorations pinned, as Stateright's examples pin `unique_state_count` and
`assert_discovery`: the states generated, the distinct states, the depth, and for a broken model
the counterexample's path. A change of the model, the world or the explorer that changes a state
space fails here, so the new figures come in as a reviewed diff (and the figures in docs/ with
them).

Bounds are in tests/kits/explorekit.py, shared with tests/explore/test_explore.py (which checks the same explorations replay in
the SimPy world); both read one run of each (the `explored` fixture).
"""

from __future__ import annotations

from explorekit import BM1, BM2, CALM, UP_GC, UP_GUARD


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


def test_the_correct_model_s_upgrade_is_exhausted(explored):
    # section 6: an old binary serves the actor, stops (clean, crash); a new node starts then or 6 s
    # later; the GC keeps or deletes the released lease; one fault on a nodes/ read (UP-2's guard)
    _explorer, out = explored("correct", **UP_GUARD)
    assert _figures(out) == {"status": "exhausted", "states": 6913, "distinct": 4811, "depth": 100}
    assert out.combinations == 4 and out.violation is None


def test_up3_seed_from_old_lease_only_state_space_and_discovery(explored):
    # UP-3 broken: the first acquisition seeds from the old lease alone, which the GC deleted
    explorer, out = explored("seed_from_old_lease_only", **UP_GC)
    assert _figures(out) == {"status": "violation", "states": 216, "distinct": 164, "depth": 40}
    plan, _history = explorer.counterexample(out)
    assert (plan["invariant"], plan["source"]["path"]) == ("INV-2", [
        "8.000 s  gc leases/t0/c/a0 #0: deleted",  # the old lease, released at the clean stop, collected
        "15.000 s  ask n0 t0/c/a0",  # owners/ created at the old hold's generation: INV-2
    ])
    assert plan["options"]["upgrade"]["old_stop"] == ["clean"] and plan["options"]["upgrade"]["new_at"] == 8_000


def test_up3_unconditional_marker_state_space_and_discovery(explored):
    explorer, out = explored("unconditional_marker", **UP_GC)
    assert _figures(out) == {"status": "violation", "states": 75, "distinct": 55, "depth": 28}
    plan, _history = explorer.counterexample(out)
    assert (plan["invariant"], plan["source"]["path"]) == ("INV-3", ["13.500 s  ask n0 t0/c/a0"])


def test_up2_guard_fails_open_state_space_and_discovery(explored):
    # UP-2 broken: a guard read of the old heartbeat that is lost counts as no heartbeat
    explorer, out = explored("guard_fails_open", **UP_GUARD)
    assert _figures(out) == {"status": "violation", "states": 57, "distinct": 51, "depth": 11}
    plan, _history = explorer.counterexample(out)
    assert (plan["invariant"], plan["source"]["path"]) == ("UP-2", [
        "0.000 s  send om0 GET nodes/o0 #0: ok 1 ms",  # the old binary's start check
        "0.000 s  reply om0 GET nodes/o0 #0: ok 1 ms",
        "2.002 s  send m0 GET nodes/n0 #0: ok 1 ms",  # the new node's start check
        "2.002 s  reply m0 GET nodes/n0 #0: ok 1 ms",
        "2.004 s  send m0 GET nodes/o0 #0: lost",  # its guard's read of the old heartbeat: the guard passes
        "2.500 s  ask n0 t0/c/a0",  # (the request spent: no choice point at every quantum after it)
    ])
