"""The upgrade's races around the switch (section 6, issue 29), drawn as fault kinds: the straggler's
stalled heartbeat beating again and a retired node's future-dated one while guards run (UP-2), marker
writes lost, applied late or answered 409 (marker_writes.py, UP-3), seeding reads lost or failed
(seed_reads.py, UP-3), the old garbage collection between a new node's read of a lease and its
marker write (UP-3), a twin and an old binary started during the switch (UP-1, UP-2, UP-4). Each
has a coverage point (checkers/upgrade_coverage.py) that small upgrade seeds reach, the correct
model passing them; the races replay from a plan and the shrinker removes each alone. The upgrade seeds
that reach every point between them are kept whole as plans (tests/plans/pinned/upgrade-races-s*.json.gz).
"""

from __future__ import annotations

import copy

import pytest

import pinned
from checkers import coverage
from checkers.registry import points
from checkers.verdict import judge
from counterexamples.shrink import record_seed, run_plan
from model import MODEL
from scenarios.faults import KINDS
from scenarios.sim import SimWorld

RACE_POINTS = [p.name for p in points() if p.module == "checkers.upgrade_coverage"]
SEEDS = (0, 1, 3, 7, 9)  # upgrade-scenario seeds (946554a's draw) that reach every race's point between them
RACES = ("beat_resume", "marker_faults", "seed_faults", "gc_race", "switch_twin", "switch_restart")


def _histories() -> dict:
    return {seed: pinned.run(f"upgrade-races-s{seed}") for seed in SEEDS}


@pytest.fixture(scope="module")
def histories():
    return _histories()


def _replays(name: str) -> None:
    """(tests/kits/pinned.py's condition for each: the correct model's run, which it keeps whole)"""
    assert judge(pinned.run(name)).violations == []


def test_every_race_point_is_reached_and_the_correct_model_passes(histories):
    """UP-1..UP-4 survive the races: the runs of seeds 0, 1, 3, 7 and 9 of `--scenario upgrade` reach every
    race's coverage point, with no violation."""
    assert len(RACE_POINTS) == 11
    reached: set[str] = set()
    for seed, h in histories.items():
        reached |= set(coverage.reached(h))
        assert judge(h).violations == [], seed
    assert [p for p in RACE_POINTS if p not in reached] == []


def test_the_races_strike_in_the_world(histories):
    """What each race's entry asks for happens: a 409 answered to a marker write (the `conflict` fate),
    the old GC's delete of a lease a new node just read, the switch's twin on machine tu, an old binary
    started again soon after the switch, the straggler's stalled heartbeat beating again."""
    h0, h9 = histories[0], histories[9]
    assert any(e.kind == "fault" and e.fields.what == "conflict" and e.fields.target.startswith("PUT leases/")
               for e in h9.events)
    assert any(e.kind == "fault_delete" and e.fields.key.startswith("leases/") for e in h0.events)
    assert any(e.kind == "twin" and e.fields.machine == "tu" for e in histories[3].events)
    up = h0.options["upgrade"]
    i, after = up["switch_restart"]
    restarts = [e.t_ms for e in h0.events if e.kind == "start" and e.proc >= 0
                and h0.processes[e.proc].machine == f"om{i}" and e.t_ms > 0]
    assert restarts and restarts[0] == up["new_at"] + after
    h7 = histories[7]
    up = h7.options["upgrade"]
    resumed = up["new_at"] + up["beat_resume"]
    beats = [e.t_ms for e in h7.events if e.kind == "apply" and e.fields.key.startswith("nodes/")
             and h7.processes[e.proc].machine == f"om{up['straggler']}"]
    stalled = up["old_ms"] - (h7.params["ttl_ms"] + h7.params["grace_ms"]) // 3
    assert up["stall"] and [t for t in beats if stalled + 3_100 < t < resumed] == []
    assert [t for t in beats if resumed <= t < resumed + 3_100]


def _first_seeds_drawing(races: tuple, limit: int = 60) -> list[int]:
    """The first upgrade seeds, in 0..limit-1, that draw each of `races` between them (found, not named)."""
    seeds: list[int] = []
    for race in races:
        seed = next((s for s in range(limit) if SimWorld(s, MODEL, "upgrade").options["upgrade"].get(race)), None)
        assert seed is not None, f"no upgrade seed of 0..{limit - 1} draws {race}"
        if seed not in seeds:
            seeds.append(seed)
    return seeds


@pytest.mark.parametrize("seed", _first_seeds_drawing(("marker_faults", "seed_faults", "gc_race")))
def test_the_races_replay_from_a_plan(seed):
    """The fates the new kinds draw (a marker's 409, lost and late writes, lost seeding reads) are
    noted per request, and the GC race's decision through `world.choose`: the plan's run is the
    seed's run, hash for hash (in the first seeds drawing each)."""
    plan, history = record_seed(seed, "correct", "upgrade", {})
    assert run_plan(copy.deepcopy(plan)).sha256() == history.sha256()


def test_the_shrinker_removes_each_race_alone(histories):
    o = copy.deepcopy(histories[0].options)
    atoms = [(kind.id, a) for kind in KINDS.values() for a in kind.atoms(o)]
    drawn = [name for name in RACES if o["upgrade"].get(name)]
    assert drawn and all(("upgrade", name) in [a for _k, a in atoms] for name in drawn)
    for kind_id, atom in atoms:
        if atom[0] == "upgrade" and atom[1] in drawn:
            cand = copy.deepcopy(o)
            KINDS[kind_id].remove(cand, atom)
            assert cand["upgrade"][atom[1]] is None
            assert [n for n in drawn if n != atom[1] and not cand["upgrade"][n]] == []
    # the whole upgrade removed first, a race after it: nothing to remove, no error
    KINDS["upgrade"].remove(o, ("upgrade", None))
    KINDS["marker_writes"].remove(o, ("upgrade", "marker_faults"))
    KINDS["upgrade"].remove(o, ("upgrade", "gc_race"))
    assert o["upgrade"] is None and not any(KINDS[k].active(o) for k in ("guard_storms", "marker_writes", "seed_reads"))


def test_the_races_are_drawn_only_in_upgrade_seeds():
    """Drawn last and only in upgrade seeds: a swarm seed without an upgrade draws no race, and the
    new kinds' hooks are not installed there."""
    for seed in range(40):
        w = SimWorld(seed, MODEL, "swarm")
        kinds = [k for k in ("marker_writes", "seed_reads") if KINDS[k].active(w.options)]
        if not w.options["upgrade"]:
            # (a restart race's hook sees answers in any seed: restart_races.py, issue 39)
            assert kinds == [] and [h for h in w.answered_hooks if h is not KINDS["restart_races"].on_answered] == [], seed
            assert KINDS["marker_writes"].send_early not in w.send_early
