"""Issue 37's two kinds, the situations CONV-2 and CONV-1 need made common.

- `open_entries` (scenarios/faults/open_entries.py): an acquisition's write held back past its timeout
  (OR-7), its read-back sometimes lost, and a drain or a move told while the read-back is in flight or the
  entry unresolved (CS-3, OR-8, OR-11).
- `crossed_fences` (scenarios/faults/crossed_fences.py): the operator's `cluster fence` (FN-7) crossing a
  node's fence slowed on the network, so the node's fence is refused (FN-3, FN-4); and a drain or a move
  told while a node's fences in flight fill BD-1's cap (CS-3)."""

from __future__ import annotations

from checkers import records_converge as rc
from checkers.facts import facts
from checkers.registry import Context
from counterexamples.shrink import record_seed, run_plan
from model import MODEL
from scenarios.faults import KINDS
from scenarios.faults.crossed_fences import CAP
from scenarios.sim import SimWorld
from scenarios.swarm import draw, draw_params

KIND = KINDS["open_entries"]
CROSSED = KINDS["crossed_fences"]


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


# --- crossed_fences ---------------------------------------------------------------------------------


def test_crossed_fences_drawn_in_the_swarm_only_and_in_every_crowd():
    on = 0
    for seed in range(200):
        o = _drawn(seed, "swarm")
        on += CROSSED.active(o)
        if o.get("mass"):
            assert CROSSED.active(o), seed  # (the cap is full only in a crowd)
        assert not CROSSED.active(_drawn(seed, "calm")), seed
    assert 110 <= on <= 180, on  # (drawn in 75 % of the seeds without a lone blip)


def _operator(h):
    return next(pr for pr in h.processes if pr.machine == "op")


def test_a_node_s_fence_is_crossed_by_the_operator_s_and_refused():
    """Some seed of 0..59 with the kind on: a node sends a fence, the operator's fence of the same node lands
    first (its `apply`), and the node's fence meets it: refused (412) by its condition, a fence the object
    outran (FN-4). The run's plan replays to the same history (the crossing is a decision of its Choices)."""
    for seed in range(60):
        w = SimWorld(seed, MODEL, "swarm")
        if not CROSSED.active(w.options) or w.options.get("mass"):
            continue
        h = w.run()
        ev, op = h.events, h.processes.index(_operator(h))
        crossed = [i for i in h.of_kind("refused") if ev[i].proc != op and ev[i].fields.key.startswith("nodes/")
                   and ev[i].fields.key != "nodes/" + h.processes[ev[i].proc].node_id  # (a fence: not its own lease)
                   and ev[i].fields.met.startswith("fenced ")
                   and any(ev[j].proc == op and ev[j].fields.key == ev[i].fields.key and ev[j].fields.state == ev[i].fields.met
                           and ev[i].fields.sent_ms <= ev[j].t_ms <= ev[i].t_ms for j in h.of_kind("apply"))]
        if crossed:
            break
    else:
        raise AssertionError("no seed of 0..59 has a node's fence crossed by the operator's")
    plan, recorded = record_seed(seed, "correct", "swarm", None)
    assert recorded.sha256() == h.sha256() == run_plan(plan).sha256(), seed
    assert any(k.startswith("fence_cross ") and v for k, v in plan["choices"].items()), seed


def test_a_drain_is_told_while_the_fence_cap_is_full():
    """The first crowd of seeds 0..399 drawing the tell at the cap whose node sends a fence with the cap full (eight in
    flight): a drain or a move is told to that node while they are (the coverage point, on world facts)."""
    for seed in range(400):
        drawn = _drawn(seed, "swarm")
        if not (drawn.get("mass") or drawn.get("fence_crowd")) or not drawn.get("fence_cap_tells"):
            continue
        h = SimWorld(seed, MODEL, "swarm").run()
        if any(h.events[i].fields.in_flight >= CAP for i in h.of_kind("fence_sent")):
            break
    else:
        raise AssertionError("no crowd of seeds 0..399 fills the fence cap")
    assert rc.told_while(Context(h, facts(h)), "fences"), seed
