"""The necessity replay (counterexamples/necessity.py, issue 44 part 2): a finding excuses a violation only if
the seed's plan, replayed without the chain's cause (the plan's own fault entries, removed as the shrinker
removes them), no longer shows it. A bug grafted on the process a chain names sits inside the chain's window
and scope (sufficiency cannot tell it from the finding), but shows without the cause: the run fails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checkers import check_all
from checkers.findings import classify_chains
from checkers.verdict import judge
from counterexamples import necessity
from counterexamples.shrink import run_plan
from scenarios.script import ScriptedWorld

PLANS = Path(__file__).parents[1] / "plans"


def _plan(name: str) -> dict:
    return json.loads((PLANS / f"{name}.json").read_text())


@pytest.mark.parametrize("name, removed", [
    ("f2-acquire-write-conflicted", "`conflict owners/t0/c/a2 #0`"),
    ("f2-acquire-write-failed-fast", "`send m0 PUT owners/t0/c/a2 #0`"),
    ("f3-fence-met-then-replaced-by-a-twin", "`twins` entry 0"),
    ("f3-check-writes-lost-then-deleted", "`deletes` entry 0"),
    pytest.param("f4-fence-sent-before-the-fencer-lapsed", "`blip`", marks=pytest.mark.skip(
        reason="issue 47: on the monotonic clock the kept F-4 plan shows no F-4 (tests/checkers/test_findings.py)")),
    ("f6-old-heartbeat-over-a-new-node", "`send om1 PUT nodes/n1 #3`"),
])
def test_a_findings_violation_goes_away_without_its_cause(name, removed):
    """Each kept finding plan (the correct model): its chain's cause is a plan entry; without it, no violation
    of the same invariant naming the same processes and actors remains, so the finding stands."""
    plan = _plan(name)
    h = run_plan(plan)
    _un, found, chains = classify_chains(h, check_all(h))
    assert found and chains
    recorded = necessity.record(h, plan)
    assert recorded is not None
    for v, c in chains:
        cut = necessity.without(*recorded, c.cause)
        assert cut is not None and removed in cut[1]
        again = run_plan(cut[0])
        assert necessity._signature(h, v) not in {necessity._signature(again, x) for x in check_all(again)}
    assert necessity.check(h, chains, plan) == []


def test_a_bug_on_the_drained_process_beside_f2_fails_the_run():
    """F-2's kept plan (the acquisition's write failed fast, the drain waits on its resolver for ever) run under
    drain_keeps_holds (CS-3: a drain releases nothing). The chain holds on world facts for the drained process
    (its lost acquisition, its reads of that record, no other record naming it when judged), so sufficiency
    alone excuses its INV-11 as F-2; replayed without the lost write, the drain still never ends: the
    violation is the bug's, and the run fails, naming both runs."""
    plan = dict(_plan("f2-acquire-write-failed-fast"), model="drain_keeps_holds")
    h = run_plan(plan)
    alone = judge(h)
    assert not alone.failed and "F-2" in alone.findings
    v = judge(h, necessity=lambda hist, chains: necessity.check(hist, chains, plan))
    assert v.failed and [x.invariant for x in v.violations] == ["INV-11"]
    msg = v.violations[0].message
    assert "not F-2's: without its cause" in msg and "`send m0 PUT owners/t0/c/a2 #0`" in msg
    assert f"seed {plan['seed']}" in msg


def test_a_seed_is_recorded_as_the_run_it_was_and_a_script_is_not():
    """A campaign's history is recorded again as a plan (the same hash), with when each decision was made; a
    scripted world's cannot be (its steps are not options): the chain decides alone there."""
    from campaign.run import run_one
    from scenarios.spec import RunSpec

    _r, h = run_one(0, RunSpec.of("correct", "swarm"), keep_history=True)
    plan, times = necessity.record(h)
    assert run_plan(plan).sha256() == h.sha256()
    assert times and all(isinstance(t, int) for t in times.values())
    w = ScriptedWorld(nodes=1)
    w.at(20_000, "delete", "nodes/n0")
    assert necessity.record(w.run(until_ms=30_000)) is None
