"""Process pauses (issue 47, part 3; scenarios/faults/pauses.py): a process takes no step for a span while its
clocks run on, its timers come due and its inputs queue; on resuming it gets them in arrival order."""

from __future__ import annotations

from checkers import check_all
from checkers.coverage import reached
from model.params import Params
from scenarios.faults import pauses
from scenarios.script import ScriptedWorld
from scenarios.swarm import draw, draw_params


def _drawn(seed: int, scenario: str = "swarm"):
    p = draw_params(seed, scenario=scenario)[0]
    return p, draw(seed, scenario, p)


def test_pauses_are_drawn_in_a_share_of_the_swarm_from_a_few_ms_to_twice_the_ttl():
    """Own stream, a share of the swarm's seeds (never calm); every span from a few ms to 2 * ttl, the four aims
    all drawn."""
    on, aims = 0, set()
    for seed in range(100):
        p, o = _drawn(seed)
        for node, at, length, then, aim in o["pauses"]:
            assert pauses.FEW_MS <= length <= 2 * p.ttl_ms and then in pauses.THEN and 0 <= at <= o["fault_ms"]
            aims.add(aim)
        on += bool(o["pauses"])
        assert _drawn(seed, "calm")[1]["pauses"] == []
    assert 35 <= on <= 75, on
    assert aims == set(pauses.AIMS)


def test_a_pause_past_the_lease_or_to_its_end_is_drawn_two_in_seven_each():
    """NL-4, OR-4 (issue 47q): "long" and "deadline" pauses, the hazard itself (a holder stopped past its lease's end
    or to within a few ms of it), are each drawn twice as often as the other aims."""
    drawn: dict[str, int] = {}
    for seed in range(200):
        for entry in _drawn(seed)[1]["pauses"]:
            drawn[entry[4]] = drawn.get(entry[4], 0) + 1
    for aim in ("long", "deadline"):
        for other in ("any", "write", "in flight"):
            assert drawn[aim] > 1.4 * drawn[other], drawn


def test_a_restart_race_waits_for_a_paused_process_to_resume():
    """NL-4, FN-5 (issue 47q): a restart race (restart_races.py) that comes due on a process stopped in a pause
    strikes once it resumed (the pause ends in what queued, the race still runs); the correct model passes."""
    from campaign.run import resolve
    from campaign.run import run_one as run_spec

    raced = 0
    for seed in range(40):
        result, h = run_spec(seed, resolve("correct", "swarm"), keep_history=True)
        assert not result.failures, (seed, result.failures)
        paused: dict[str, list] = {}  # machine -> [(from, to)]
        for e in h.events:
            if e.kind == "fault" and e.fields.what == "pause":
                paused.setdefault(e.fields.target, []).append((e.t_ms, e.t_ms + e.fields.ms))
        for e in h.events:
            if e.kind == "fault" and e.fields.what == "restart_race" and e.fields.target in paused:
                raced += 1
                assert not [s for s, t in paused[e.fields.target] if s <= e.t_ms < t], (seed, e)
    assert raced >= 5, raced


def _paused_holder(model=None):
    """n0 holds t1/c/a0 (served at 17 s) and is paused at 20 s for 12 s, past its lease (valid 8 s after each
    send, a write every 3 s); clients ask it for the actor every half second meanwhile."""
    w = ScriptedWorld(nodes=2, params=Params(), restart=False, model=model)
    w.options["pauses"] = [["n0", 20_000, 12_000, "resume", "long"]]
    w.at(17_000, "request", "n0", "t1/c/a0")
    for t in range(20_500, 31_000, 500):
        w.at(t, "request", "n0", "t1/c/a0")
    return w.run(until_ms=45_000)


def test_a_paused_holder_resumes_to_find_its_lease_gone_and_serves_nothing_of_what_queued():
    """NL-4, OR-4: the requests that queued in the pause, and the lease's deadline timer that came due in it,
    are delivered in arrival order at 32 s; the correct model reads its clock for each: the lease ran out, it
    serves none of them. The moments are coverage points."""
    h = _paused_holder()
    assert check_all(h) == []
    n0 = next(k for k, pr in enumerate(h.processes) if pr.node_id == "n0")
    (resumed,) = [e for e in h.events if e.kind == "fault" and e.fields.what == "resumed"]
    assert resumed.t_ms == 32_000 and resumed.proc == n0
    assert "timers 0" not in resumed.fields.detail and "commands 21" in resumed.fields.detail
    assert not [e for e in h.events if e.kind == "served" and e.proc == n0 and 20_000 < e.t_ms <= 32_000]
    failed = [e for e in h.events if e.kind == "request_failed" and e.proc == n0 and e.t_ms == 32_000]
    assert [e.fields.request for e in failed] == sorted(e.fields.request for e in failed)  # in arrival order
    assert {"paused past its lease", "timer came due in a pause"} <= set(reached(h))


def test_a_model_that_acts_after_a_pause_without_checking_validity_again_is_caught():
    """acts_after_pause trusts its lease until the deadline timer says otherwise: the requests that queued before
    that timer came due are served at 32 s, on a lease that ran out in the pause: INV-1."""
    from broken_models import load_model

    h = _paused_holder(load_model("acts_after_pause"))
    assert "INV-1" in {v.invariant for v in check_all(h)}
