"""A seed's world and history are freed when the seed ends, by reference counting (issue 46, part 5).

A world's processes, network, timers and fault kinds refer back to it, and the checkers' shared results to the
history: left as they were, each seed's world and history waited for the cyclic collector's next full pass,
which a campaign's worker (its thresholds raised, campaign/run.py) runs tens of seeds apart, and its peak memory
grew with them (120 -> 198 MB). `run_one` closes the world and drops the checkers' cache."""

from __future__ import annotations

import gc
import weakref

from campaign.run import resolve, run_one


def test_a_seed_s_history_goes_with_its_last_reference():
    spec = resolve("correct", "swarm", count=2)
    gc.disable()  # nothing but reference counting may free them
    try:
        result, history = run_one(1, spec, keep_history=True)
        assert result.sha256 == history.sha256()
        gone = weakref.ref(history)
        del history
        assert gone() is None
    finally:
        gc.enable()


def test_a_closed_world_holds_nothing():
    spec = resolve("correct", "swarm", count=2)
    world = spec.world(0)
    history = world.run()
    world.close()
    assert vars(world) == {}
    assert history.events  # the history taken before stays whole
