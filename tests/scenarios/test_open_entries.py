"""The kind `open_entries` (scenarios/faults/open_entries.py; issue 37, part 3): an acquisition's write
held back past its timeout (OR-7), its read-back sometimes lost, and a drain or a move told while the
read-back is in flight or the entry unresolved (CS-3, OR-8, OR-11): the situations CONV-2 needs."""

from __future__ import annotations

from checkers import records_converge as rc
from checkers.facts import facts
from checkers.registry import Context
from counterexamples.shrink import record_seed, run_plan
from model import MODEL
from scenarios.faults import KINDS
from scenarios.sim import SimWorld
from scenarios.swarm import draw, draw_params

KIND = KINDS["open_entries"]


def _drawn(seed: int, scenario: str) -> dict:
    params, _family = draw_params(seed, {}, scenario)
    return draw(seed, scenario, params)


def test_drawn_in_the_swarm_only_and_never_with_a_crowd_or_a_lone_blip():
    on = 0
    for seed in range(200):
        o = _drawn(seed, "swarm")
        if KIND.active(o):
            on += 1
            assert not o.get("mass") and not o.get("blip_alone"), seed
            assert o["p_open_entry"] in (0.1, 0.3, 0.5) and 4 <= o["open_entry_tells"] <= 12, seed
        assert not KIND.active(_drawn(seed, "calm")), seed
    assert 80 <= on <= 140, on  # (drawn in 60 % of the seeds that have neither)


def _reaches(history) -> tuple[set, set]:
    c = Context(history, facts(history))
    return rc.told_while(c, "readback"), rc.told_while(c, "unresolved")


def test_it_holds_writes_back_loses_read_backs_and_tells_while_entries_are_open():
    """Some seed of 0..39 with the kind on shows it all: an acquisition's write applied past its timeout
    (a `late` fault on a `held` record write), a read-back lost on the way, and a drain told both while a
    read-back was in flight and while an acquisition was unresolved (the coverage points read world facts
    only). Its recorded plan replays to the same history: the tells are decisions of the run's Choices."""
    for seed in range(40):
        w = SimWorld(seed, MODEL, "swarm")
        if not KIND.active(w.options):
            continue
        h = w.run()
        readback, unresolved = _reaches(h)
        if "drain" in readback and "drain" in unresolved:
            break
    else:
        raise AssertionError("no seed of 0..39 tells a drain both while a read-back is in flight and while unresolved")
    faults = [h.events[i].fields for i in h.of_kind("fault")]
    assert any(f.what == "late" and f.target.startswith("PUT owners/") and (f.state or "").startswith("held ")
               for f in faults), seed
    assert any(f.what == "request_lost" and f.target.startswith("GET owners/") for f in faults), seed
    plan, recorded = record_seed(seed, "correct", "swarm", None)
    assert recorded.sha256() == h.sha256()
    replayed = run_plan(plan)
    assert replayed.sha256() == h.sha256(), seed
    assert any(k.startswith("entry_tell ") for k in plan["choices"]), seed

