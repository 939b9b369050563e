"""The kinds that make issue 45's situations common (part 3): a twin meeting an open entry
(scenarios/faults/twin_entries.py) and an old lease read at the margins of its expiry while its owner renews it
(old_margins.py); acquire_crowd.py's resolver at BD-2's cap is with the other crowds (test_crowds.py).

Each draws from its own stream (only in the seeds it strikes does any other part of the run move); its share
forced to all here, the correct model reaches its point in most seeds and breaks nothing; a seed of each
recorded as a plan replays to the same history (its strikes are decided through the run's Choices, never in a
request's fate hook, which a planned run skips).
"""

from __future__ import annotations

import pytest

from campaign.run import run_one
from counterexamples.shrink import record_seed, run_plan
from scenarios import swarm
from scenarios.faults import old_margins, twin_entries
from scenarios.streams import Streams


def _drawn(option: str, scenario: str, seeds) -> list[int]:
    out = []
    for seed in seeds:
        streams = Streams(seed)
        params, _family = swarm.draw_params(streams, scenario=scenario)
        if swarm.draw(streams, scenario, params)[option]:
            out.append(seed)
    return out


@pytest.fixture
def every_twin_entry(monkeypatch):
    monkeypatch.setattr(twin_entries, "SHARE", 1.0)
    return _drawn("twin_entries", "swarm", range(80))[:20]


@pytest.fixture
def every_old_margin(monkeypatch):
    monkeypatch.setattr(old_margins, "SHARE", 1.0)
    return _drawn("old_margins", "upgrade", range(12))[:6]


def test_a_twin_meets_an_open_entry(every_twin_entry):
    """OR-7, OR-8, NL-12: the first process's read-back finds its own node id under the twin's instance at the
    generation it tried, in about two seeds of five (14 of the first 34 drawn, after issue 47 gated 409s on a racing
    write; the others: a client's retry elsewhere took the actor first, the twin's start check met the first
    process's late write); nothing breaks (the first process, back, loses its lease: NL-10)."""
    assert len(every_twin_entry) == 20
    runs = [run_one(s, "correct", "swarm", None) for s in every_twin_entry]
    assert sum("same id met an open entry" in r.coverage for r in runs) >= 5, [r.seed for r in runs]
    assert all(not r.failures for r in runs), [(r.seed, r.failures) for r in runs if r.failures]


def test_an_old_lease_is_read_at_the_margins_of_its_expiry(every_old_margin):
    """UP-3: a new node's first acquisition reads the straggler's lease within safety before or grace after its
    expires_at, and the straggler's renewal lands after that read; nothing breaks (the new node refuses it)."""
    assert len(every_old_margin) == 6
    runs = [run_one(s, "correct", "upgrade", None) for s in every_old_margin]
    assert sum("old lease at the margins of its expiry" in r.coverage for r in runs) >= 2, [r.seed for r in runs]
    assert all(not r.failures for r in runs), [(r.seed, r.failures) for r in runs if r.failures]


def test_the_draws_stay_off_where_they_must():
    """twin_entries: the swarm only, never beside a lost zone or a `mass` crowd, never on a crowd's node;
    old_margins: upgrade seeds only, its straggler's heartbeat stalled for good (no `beat_resume`)."""
    for seed in range(200):
        streams = Streams(seed)
        params, _family = swarm.draw_params(streams)
        o = swarm.draw(streams, "swarm", params)
        if o["twin_entries"]:
            assert not (o["fence_crowd"] or o["mass"])
            crowd_nodes = {x[0] for k in ("release_crowd", "acquire_crowd") for x in o[k] or ()}
            assert not {e[0] for e in o["twin_entries"]} & crowd_nodes
            assert twin_entries.MACHINE in o["clocks"]
        assert not o["old_margins"] or o["upgrade"]
        if o["old_margins"]:
            assert o["upgrade"]["stall"] and o["upgrade"]["straggler"] is not None
            assert o["upgrade"]["beat_resume"] is None
    for scenario in ("calm", "deadline", "fence"):
        for seed in range(40):
            streams = Streams(seed)
            params, _family = swarm.draw_params(streams, scenario=scenario)
            o = swarm.draw(streams, scenario, params)
            assert not o["twin_entries"] and not o["old_margins"], (scenario, seed)


@pytest.mark.parametrize("scenario,seed", [("swarm", 11), ("swarm", 3), ("upgrade", 7)])
def test_a_seed_with_the_kinds_replays_from_its_plan(scenario, seed):
    """A planned run reads every decision from its plan: the strikes of twin_entries and old_margins, and the
    acquire crowd's stall, happen there too (the same history, hash for hash)."""
    plan, history = record_seed(seed, "correct", scenario, None)
    assert history.options.get("twin_entries") or history.options.get("old_margins") \
        or history.options.get("acquire_crowd")
    assert run_plan(plan).sha256() == history.sha256()


@pytest.fixture
def every_slow_quiet_crash(monkeypatch):
    from scenarios.faults import quiet_crash

    monkeypatch.setattr(quiet_crash, "SLOW_BACK", 1.0)
    return _drawn("quiet_crash", "swarm", range(30))[:12]


def test_a_quiet_crash_down_long_leaves_its_failover_to_a_peer_s_fence(every_slow_quiet_crash):
    """INV-7, T-5, FN-3 (issue 45 part 4): a quiet crash whose machine stays down 2 to 3 ttl + grace (SLOW_BACK, here
    forced to all) is fenced by a peer before its supervisor starts it again, where another node runs; the correct
    model breaks nothing, and `late_fence_decision` (a fence a period late) is caught by INV-7 in some of them (a
    restart sooner replaced the dead object first, and nothing was late)."""
    from campaign.run import resolve
    from campaign.run import run_one as run_spec

    fenced, caught = [], []
    for seed in every_slow_quiet_crash:
        result, h = run_spec(seed, resolve("correct", "swarm"), keep_history=True)
        assert not result.failures, (seed, result.failures)
        quiet = next(e.t_ms for e in h.events if e.kind == "quiet")
        crash = next((e for e in h.events if e.kind == "crash" and e.t_ms >= quiet), None)
        if crash is None:
            continue  # (the node drawn no longer ran: one node left, a crowd's)
        node = h.processes[crash.proc].node_id
        tg = h.params["ttl_ms"] + h.params["grace_ms"]
        back = next((e.t_ms for e in h.events if e.kind == "start" and e.t_ms > crash.t_ms
                     and h.processes[e.proc].node_id == node), None)
        fence = next((e.t_ms for e in h.events if e.kind == "apply" and e.t_ms > crash.t_ms and e.proc != crash.proc
                      and e.fields.key == "nodes/" + node and e.fields.state.startswith("fenced ")), None)
        if back is None or back - crash.t_ms >= 2 * tg:
            fenced.append(seed if fence is not None and (back is None or fence < back) else None)
        late = run_one(seed, "late_fence_decision", "swarm", None)
        caught += [seed] if "INV-7" in {f[0] for f in late.failures} else []
    assert sum(s is not None for s in fenced) >= 5, fenced
    assert len(caught) >= 2, caught


def test_a_quiet_crash_gone_for_good_is_fenced_by_a_peer_and_never_restarted(monkeypatch):
    """INV-7, INV-4, FN-3, FN-5 (issue 47q): a quiet crash whose process renewed its lease in the quiet phase, where
    another node runs, is gone for good in a share of the draws (GONE, here forced to all): no process of its id
    starts again, a peer fences its object (never its restart), the correct model breaks nothing (its records freed
    by the fencer), and `late_fence_decision` is caught by INV-7 in some of them."""
    from campaign.run import resolve
    from campaign.run import run_one as run_spec
    from scenarios.faults import quiet_crash

    monkeypatch.setattr(quiet_crash, "GONE", 1.0)
    gone, caught = [], []
    for seed in _drawn("quiet_crash", "swarm", range(30))[:12]:
        result, h = run_spec(seed, resolve("correct", "swarm"), keep_history=True)
        assert not result.failures, (seed, result.failures)
        quiet = next(e.t_ms for e in h.events if e.kind == "quiet")
        mark = next((e for e in h.events if e.kind == "fault" and e.fields.what == "gone_for_good"
                     and e.t_ms > quiet), None)
        if mark is None:
            continue  # (the node drawn was still in its start check, or ran alone)
        node = "n" + mark.fields.target[1:]
        assert not [e for e in h.events if e.kind == "start" and e.t_ms > mark.t_ms
                    and h.processes[e.proc].node_id == node], seed
        fence = next((e for e in h.events if e.kind == "apply" and e.t_ms > mark.t_ms
                      and e.fields.key == "nodes/" + node), None)
        assert fence is not None and fence.fields.state.startswith("fenced "), (seed, fence)
        gone.append(seed)
        late = run_one(seed, "late_fence_decision", "swarm", None)
        caught += [seed] if "INV-7" in {f[0] for f in late.failures} else []
    assert len(gone) >= 5, gone
    assert len(caught) >= 2, caught
