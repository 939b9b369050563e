"""The crowds that bring BD-1..BD-3's bounds within reach (issue 39 part 5): a zone lost at once
(scenarios/faults/fence_crowd.py: more peers to fence than BD-1's 8), a crowd of actors released into
a hanging bucket partition (release_crowd.py: more pending entries than BD-2's 32, refusals in a row past
BD-3's 32), and a crowd of acquisitions left unresolved at once by a stalling partition (acquire_crowd.py:
the resolver at BD-2's cap, issue 45).

Each is drawn from its own stream in a share of the swarm's seeds; here its share is forced to all
(`SHARE`), so that the same seeds show what it does: the correct model reaches the bound's coverage
point and breaks nothing, and the broken model of the bound (unbounded_fences, unbounded_pending,
endless_pass, resolver_release_uncounted) is caught by the invariant it declares, on world facts (checkers/bounds.py,
pending_entries.py, refusals.py).
"""

from __future__ import annotations

from collections import Counter

import pytest

from campaign.run import run_one
from scenarios import swarm
from scenarios.faults import acquire_crowd, fence_crowd, release_crowd
from scenarios.streams import Streams

SEEDS = range(12)


def _drawn(option: str, seeds) -> list[int]:
    out = []
    for seed in seeds:
        streams = Streams(seed)
        params, _family = swarm.draw_params(streams)
        if swarm.draw(streams, "swarm", params)[option]:
            out.append(seed)
    return out


def _runs(model: str, seeds) -> list:
    return [run_one(seed, model, "swarm", None) for seed in seeds]


@pytest.fixture
def every_release_crowd(monkeypatch):
    monkeypatch.setattr(release_crowd, "SHARE", 1.0)
    return _drawn("release_crowd", SEEDS)[:3]


@pytest.fixture
def every_acquire_crowd(monkeypatch):
    monkeypatch.setattr(acquire_crowd, "SHARE", 1.0)
    return _drawn("acquire_crowd", SEEDS)[:4]


@pytest.fixture
def every_fence_crowd(monkeypatch):
    monkeypatch.setattr(fence_crowd, "SHARE", 1.0)
    return _drawn("fence_crowd", SEEDS)[:5]


def test_a_released_crowd_reaches_bd2_s_cap_and_bd3_s_streak(every_release_crowd):
    """BD-2, BD-3, OR-5: the crowd's releases pile up behind the cap of 32, their retries hang together and
    32 refusals come in a row; the correct model's bounds hold on world facts and its releases land."""
    assert len(every_release_crowd) == 3
    for r in _runs("correct", every_release_crowd):
        assert {"bound BD-2", "bound BD-3"} <= set(r.coverage), r.seed
        assert not r.failures, (r.seed, r.failures)


@pytest.mark.parametrize("model,invariant", [("endless_pass", "BD-3"), ("unbounded_pending", "BD-2")])
def test_a_released_crowd_catches_a_wrong_count(every_release_crowd, model, invariant):
    """BD-3: a pass that never stops retries an entry that was waiting, due, when the 32nd refusal came,
    before its back-off from then; BD-2: a task without the cap has more than 32 requests in flight."""
    for r in _runs(model, every_release_crowd):
        assert invariant in {f[0] for f in r.failures}, (r.seed, r.failures)


def test_an_acquired_crowd_reaches_the_resolver_at_bd2_s_cap(every_acquire_crowd):
    """BD-2, OR-7, OR-8: the crowd's writes held by the stalling partition, their read-backs hanging, the whole
    crowd is unresolved at once and the resolver's reads fill the cap of 32; the writes land as the stall ends,
    the resolver releases them (OR-8), and the correct model breaks nothing."""
    assert len(every_acquire_crowd) == 4
    runs = _runs("correct", every_acquire_crowd)
    assert sum("resolver at BD-2's cap" in r.coverage for r in runs) >= 3
    assert all(not r.failures for r in runs), [(r.seed, r.failures) for r in runs if r.failures]


def test_an_acquired_crowd_catches_an_uncounted_release(every_acquire_crowd):
    """BD-2 (OR-9): a resolver whose release in flight is not counted lets a 33rd request go while its releases
    are answered slowly after the stall."""
    caught = [r for r in _runs("resolver_release_uncounted", every_acquire_crowd) if "BD-2" in {f[0] for f in r.failures}]
    assert len(caught) >= 3


def test_a_lost_zone_reaches_bd1_s_cap(every_fence_crowd):
    """BD-1, FN-2: the node left finds ten to twelve peers lapsed at the same listing, more than the 8 it
    may fence at once, in most seeds (a peer's late write or an earlier exit may split them); the correct
    model breaks nothing, and a model without the cap has more than 8 fence writes in flight."""
    assert len(every_fence_crowd) == 5  # (issue 47 moved which crowds split: 6 of the first 8 reach it, as before)
    correct = _runs("correct", every_fence_crowd)
    assert sum("bound BD-1" in r.coverage for r in correct) >= 3
    assert all(not r.failures for r in correct), [(r.seed, r.failures) for r in correct if r.failures]
    # BD-1 across passes (issue 45): the bucket loses the node's fence writes for P + A from its first, so the
    # eight fences of a pass are still at work when the next listing ends with more peers due
    assert sum("fences due past BD-1's cap across two passes" in r.coverage for r in correct) >= 2
    caught = [r for r in _runs("unbounded_fences", every_fence_crowd) if "BD-1" in {f[0] for f in r.failures}]
    assert len(caught) >= 3


def test_each_crowd_is_drawn_in_its_share_of_the_swarm_only():
    """Each from its own stream: in about its share of the swarm's seeds (fewer: never in an upgrade, a
    `mass` crowd, around a lone blip; a release or an acquire crowd never beside a fence crowd, the two of them
    on nodes of their own when drawn together), never in calm or a preset's race."""
    seen: Counter = Counter()
    for seed in range(400):
        streams = Streams(seed)
        params, _family = swarm.draw_params(streams)
        o = swarm.draw(streams, "swarm", params)
        seen["fence"] += bool(o["fence_crowd"])
        seen["release"] += bool(o["release_crowd"])
        seen["acquire"] += bool(o["acquire_crowd"])
        assert not (o["fence_crowd"] and (o["release_crowd"] or o["acquire_crowd"]))
        assert not (o["fence_crowd"] or o["release_crowd"] or o["acquire_crowd"]) or not (
            o["upgrade"] or o["mass"] or o["blip_alone"])
        if o["release_crowd"] and o["acquire_crowd"]:
            assert o["release_crowd"][0][0] != o["acquire_crowd"][0][0]
        if o["fence_crowd"]:
            assert o["nodes"] in fence_crowd.NODES and len(o["starts"]) == o["nodes"]
    assert 0.5 * fence_crowd.SHARE <= seen["fence"] / 400 <= fence_crowd.SHARE
    # (never beside a fence crowd: of the seeds without one)
    rest = 1 - seen["fence"] / 400
    assert 0.5 * release_crowd.SHARE * rest <= seen["release"] / 400 <= release_crowd.SHARE
    assert 0.5 * acquire_crowd.SHARE * rest <= seen["acquire"] / 400 <= acquire_crowd.SHARE
    for scenario in ("calm", "deadline", "fence"):
        for seed in range(60):
            streams = Streams(seed)
            params, _family = swarm.draw_params(streams, scenario=scenario)
            o = swarm.draw(streams, scenario, params)
            assert not o["acquire_crowd"], (scenario, seed)
            assert not o["fence_crowd"] and not o["release_crowd"], (scenario, seed)
