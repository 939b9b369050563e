"""The request ledger (issue 48, part 1): every request the world saw leave a process, with its fate, its key
class, its phase and its cause (checkers/ledger.py), summed and priced by the report (campaign/cost.py)."""

from __future__ import annotations

import pytest

from broken_models import load_model
from checkers import ledger
from history.schema import Sent
from scenarios.sim import run_seed


@pytest.fixture(scope="module")
def swarm3():
    return run_seed(3, load_model("correct"))


def test_every_request_sent_is_in_the_ledger_once(swarm3):
    h = swarm3
    extra = sum(1 for s in h.requests if s.sdk_retry)  # an SDK's retry is a request of its own at the bucket
    assert len(h.requests) == h.counts["bucket_requests"] + extra
    assert all(s.answer is not None for s in h.requests if s.sent_ms < h.end_ms - 10_000)


def test_the_ledger_does_not_move_the_history_hash():
    h = run_seed(3, load_model("correct"))
    before = h.sha256()
    h2 = run_seed(3, load_model("correct"))
    h2.requests = None
    h2._sha = None
    assert h2.sha256() == before


def test_rows_have_a_class_an_outcome_a_phase_and_a_cause(swarm3):
    rows = ledger.rows(swarm3)
    assert {r.phase for r in rows} >= {"fault", "quiet"}
    assert {r.key_class for r in rows} <= set(ledger.KEY_CLASSES)
    lease = [r for r in rows if r.sent.purpose == "lease_write"]
    assert lease and all(r.key_class == "nodes/<own>" and r.cause == "lease cadence" for r in lease)
    assert any(r.outcome == "lost" for r in rows) and any(r.outcome.endswith("reply lost") for r in rows)
    # the quiet phase has no fault: every request sent in it well before the end was answered 2xx or 404/412
    assert all(r.outcome in ("2xx", "404", "412", "409") for r in rows
               if r.phase == "quiet" and r.sent.sent_ms > swarm3.end_ms - 40_000 and r.sent.sent_ms < swarm3.end_ms - 5_000)


def test_a_purpose_on_a_request_of_another_shape_is_refused():
    s = Sent(0, 0, "PUT", "owners/t0/c/a1", "lease_write")
    with pytest.raises(ledger.MislabelledRequest, match="lease_write"):
        ledger.cause_of(s, ledger.key_class(s.op, s.key, "n0"))
    # a purpose the table does not know (a broken model's own) gets its key class's cause
    s = Sent(0, 0, "GET", "leases/t0/c/a1", "lease_peek")
    assert ledger.cause_of(s, ledger.key_class(s.op, s.key, "n0")) == "upgrade marker"


def test_phases_follow_the_world_s_instructions():
    told = [(10, "drain"), (20, "resume"), (30, "stop")]
    assert ledger.phase_at(5, 100, told) == "fault"
    assert ledger.phase_at(15, 100, told) == "drain"
    assert ledger.phase_at(25, 100, told) == "fault"
    assert ledger.phase_at(25, 20, told) == "quiet"
    assert ledger.phase_at(35, 20, told) == "stop"


def test_outcomes_and_billing():
    assert ledger.outcome(Sent(0, 0, "GET", "k", "x", "never_arrived")) == "lost"
    assert ledger.outcome(Sent(0, 0, "GET", "k", "x", "412", True)) == "412, reply lost"
    assert ledger.billing_status("412, reply lost") == "412"
    assert ledger.billing_status("lost") == "never_arrived"


def test_the_report_sums_and_prices_the_ledger(swarm3):
    from campaign import cost

    s = ledger.summary(swarm3)
    block = cost.ledger_block([s, s])
    assert block["seeds"] == 2
    assert sum(block["requests"].values()) == 2 * len(swarm3.requests)
    c = cost.cost_block(block)
    assert c["quiet"]["requests_per_node_day"] > 0
    assert 0 < c["usd_per_node_day"]["aws-s3-standard-us-east-1"] < 10
    rows = cost.figure_rows({"cost": c})
    assert rows[0][0] == "cost, quiet phase" and "per node-day" in rows[0][1]
    props = dict(cost.junit_properties({"ledger": block, "cost": c}))
    assert props["ledger.quiet.lease_cadence"] > 0


def test_the_ledger_by_cause_for_people(swarm3):
    lines = ledger.by_cause_lines(swarm3)
    assert lines[0].split()[:3] == ["cause", "fault", "quiet"]
    listing = next(x for x in lines if x.startswith("listing"))
    assert "lost" in listing  # the fault phase's lost listings are named
    assert lines[-1].startswith("total") and int(lines[-1].split()[1]) + int(lines[-1].split()[2]) == len(swarm3.requests)
