"""COST-1..COST-6 (checkers/cost.py): the ADR's request counts judged on the ledger. Each check's broken model
is caught on its kept plan (tests/checkers/test_broken_caught.py); here, the cases the correct model reaches
that look like a violation and are not, each met first by a seed of the swarm, and the checks' situations."""

from __future__ import annotations

import pytest

from broken_models import load_model
from checkers import cost
from scenarios.sim import run_seed


@pytest.fixture(scope="module")
def runs():
    return {seed: run_seed(seed, load_model("correct")) for seed in (0, 3, 194)}


def test_an_sdk_retry_is_not_the_process_s_second_write(runs):
    """COST-3 (and COST-4): seed 0's acquisition write was applied, its answer lost, and the SDK sent it again
    (answered 412): one write of the process's, two requests at the bucket."""
    h = runs[0]
    assert any(s.sdk_retry and s.key.startswith("owners/") for s in h.requests)
    assert cost.check_hold_requests(h) == [] and cost.check_upgrade_once(h) == []


def test_a_hold_written_again_after_a_write_never_learnt_of_is_no_renewal(runs):
    """COST-5: seed 3's n0 wrote owners/t1/c/a7 as "held n0 05459258 1", never learnt of it, and its next
    acquisition wrote the same state: a new acquisition at the same generation."""
    h = runs[3]
    ev = h.events
    writes = [ev[i].fields for i in h.of_kind("record_reply")
              if ev[i].fields.key == "owners/t1/c/a7" and ev[i].fields.op == "PUT"
              and ev[i].fields.state == "held n0 05459258 1"]
    assert len(writes) >= 2 and writes[0].status != "ok"
    assert cost.check_no_renewals(h) == []


def test_a_validity_learnt_of_after_it_ended_runs_nothing_out(runs):
    """COST-6: seed 194's n2 learnt of its first write (by NL-9's re-read) after that write's validity had
    ended: it granted nothing, so no run-out is judged from it."""
    assert cost.check_two_retries(runs[194]) == []


def test_every_check_has_its_situation_in_a_swarm_seed(runs):
    h = runs[3]
    run = cost.run_of(h)
    assert any(r.sent.purpose == "listing_get" for r in run.rows)
    assert any(cost.attempts(run, p) for p in run.node_procs())
    judged = cost._run_outs(run_seed(6, load_model("correct")))
    assert judged and all(v is None and n >= 2 for v, n in judged)


def test_a_history_without_a_ledger_is_judged_by_none():
    h = run_seed(3, load_model("correct"))
    h.requests = None
    h.cache.clear()
    for check in (cost.check_lease_cadence, cost.check_listing, cost.check_hold_requests, cost.check_upgrade_once,
                  cost.check_no_renewals, cost.check_two_retries):
        assert check(h) == []


def test_a_history_without_a_ledger_does_not_judge_the_cost_checks():
    from checkers.verdict import not_judged

    h = run_seed(3, load_model("correct"))
    assert not any(k.startswith("COST-") for k in not_judged(h))
    h.requests = None
    skipped = not_judged(h)
    assert sorted(k for k in skipped if k.startswith("COST-")) == [f"COST-{n}" for n in range(1, 7)]
    assert "no request ledger" in skipped["COST-1"]


def test_a_first_write_adopted_late_is_not_held_to_two_retries():
    """COST-6: in seed 59 (restore_lists_twice, whose change touches no lease), n3's first write lost its
    reply and NL-9's slow re-read adopted it 7.8 s after its send: the lease task starts from there, one
    period before the run-out. The ADR's "after a write acknowledged at t, the next go at t + 3 and t + 6"
    has a whole attempt less here: a validity learnt of later than an attempt after its send is not judged."""
    h = run_seed(59, load_model("restore_lists_twice"), "swarm", None, "restore_lists_twice")
    assert cost.check_two_retries(h) == []


def test_a_hold_written_again_before_the_process_learnt_it_landed_is_no_renewal():
    """COST-5: in seed 151 (lease_tick_from_reply), n1 wrote owners/t1/c/a5 at generation 4 again at
    52.971 s; the read that showed it its first write had landed was answered at 53.119 s, after: no
    renewal (the process could not have known)."""
    h = run_seed(151, load_model("lease_tick_from_reply"), "swarm", None, "lease_tick_from_reply")
    assert cost.check_no_renewals(h) == []
