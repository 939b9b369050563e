"""The amendments for F-5 and F-6 (issue 31): each finding's reproductions violate under the
correct model and no longer do under its variant, by the mechanism the variant claims.

F-5 (NL-7, NL-9, INV-9): amendments/f5_first_reread_until_answered.py, on F-5's two scripted forms
(tests/checkers/test_findings.py has the same scripts). F-6 (NL-10, FN-5, UP-2, INV-4, INV-7):
amendments/f6_old_format_releases_first.py, on F-6's three kept plans (tests/plans/f6-*.json).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from amendments import variant
from checkers import check_all
from checkers.findings import classify
from counterexamples.shrink import run_plan, violations
from historykit import evs, procs
from scenarios.script import NetRule, ScriptedWorld
from history.record import hash_version

F5 = "f5_first_reread_until_answered"
F6 = "f6_old_format_releases_first"
PLANS = Path(__file__).parents[1] / "plans"


def _f5_world(form: str, name: str) -> ScriptedWorld:
    """F-5's scripts: n0's first lease write (If-None-Match) lands just before a 5 s global blip and its
    reply is slowed into it ("reply"), or it is applied late, inside the blip ("apply")."""
    model = variant(name).load() if name != "correct" else None
    w = ScriptedWorld(nodes=2, model=model, model_name=name)
    if form == "reply":
        w.options.update(starts=[0, 0], blip=[15_500, 5_000, "blackhole"], blip_alone=True)
        w.rule(NetRule("delay_reply", node="n0", op="PUT", key="nodes/n0", ms=1_500, times=1))
    else:
        w.options.update(starts=[0, 0], blip=[15_300, 5_000, "blackhole"], blip_alone=True)
        w.rule(NetRule("delay_apply", node="n0", op="PUT", key="nodes/n0", ms=600, times=1))
    return w


def _fences(h, node_id):
    return evs(h, "apply", where=lambda f: f.key == f"nodes/{node_id}" and f.state.startswith("fenced "))


@pytest.mark.parametrize("form", ["reply", "apply"])
def test_f5_still_restarts_a_node_under_the_correct_model(form):
    """The base: under model/ the blip gets n0 fenced (INV-9), recognised as F-5."""
    h = _f5_world(form, "correct").run(until_ms=45_000)
    (p0,) = procs(h, "n0")[:1]
    assert len(evs(h, "check_began", proc=p0)) == 2  # back to the check after the failed re-read (NL-7)
    assert _fences(h, "n0") and evs(h, "exit", proc=p0)[0].fields.status == 1
    unexplained, found = classify(h, check_all(h))
    assert unexplained == [] and list(found) == ["F-5"] and found["F-5"][0].invariant == "INV-9"


@pytest.mark.parametrize("form", ["reply", "apply"])
def test_f5_amendment_re_reads_until_answered_and_adopts_its_write(form):
    """NL-7 amended: n0 re-reads nodes/n0 through the blip without going back to the check; the first
    answer after the blip shows its own live object, which it adopts (NL-9): nobody is fenced, nobody
    exits, and no violation at all (not even a finding)."""
    h = _f5_world(form, F5).run(until_ms=45_000)
    (p0,) = procs(h, "n0")
    assert len(evs(h, "check_began", proc=p0)) == 1
    adopted = evs(h, "lease_valid", proc=p0, where=lambda f: f.how == "adopt")
    assert adopted and adopted[0].t_ms >= 20_300  # after the blip ended, not before
    assert _fences(h, "n0") == [] and evs(h, "exit") == []
    assert check_all(h) == []


def test_f5_amendment_still_goes_back_to_the_check_when_the_first_write_did_not_land():
    """The amendment waits only for an answer: a first write lost on its way (never applied) is re-read,
    the read answers "absent", and n0 goes back to the start check as NL-7 says (a second check)."""
    model = variant(F5).load()
    w = ScriptedWorld(nodes=2, model=model, model_name=F5)
    w.options.update(starts=[0, 0])
    w.rule(NetRule("lose_request", node="n0", op="PUT", key="nodes/n0", times=1))
    h = w.run(until_ms=60_000)
    (p0,) = procs(h, "n0")
    assert len(evs(h, "check_began", proc=p0)) == 2
    assert evs(h, "lease_valid", proc=p0)  # its second check's first write landed
    assert check_all(h) == []


def _plan(name: str) -> dict:
    return json.loads((PLANS / f"{name}.json").read_text())


F6_PLANS = ["f6-old-heartbeat-over-a-new-node", "f6-old-heartbeat-delays-a-failover",
            "f6-old-heartbeat-forgotten-not-fenced"]


def test_f6_amendment_declares_every_kept_plan():
    assert sorted(variant(F6).plans) == sorted(f"tests/plans/{n}.json" for n in F6_PLANS)


@pytest.mark.parametrize("name", F6_PLANS)
def test_f6_plans_fail_strict_under_the_correct_model(name):
    plan = _plan(name)
    h = run_plan(plan)
    assert h.sha256(hash_version(plan)) == plan["history_sha256"]
    assert plan["invariant"] in {v.invariant for v in violations(h, strict=True)}


@pytest.mark.parametrize("name", F6_PLANS)
def test_f6_plans_pass_strict_under_the_amendment_which_releases_first(name):
    """Under the variant the old heartbeat still lands over the new node's live object, and the node
    still exits non-zero, but only after its record was released (If-Match on the hold's version):
    no violation, strict (F-6 is not merely absorbed as a finding)."""
    h = run_plan(dict(_plan(name), model=F6))
    (over,) = evs(h, "apply", where=lambda f: f.key.startswith("nodes/") and f.prev_state.startswith("live ")
                  and f.state.startswith("node "))
    victim = over.fields.prev_state.split()[1]  # the instance whose live object the old heartbeat replaced
    (p,) = [p for p, info in enumerate(h.processes) if info.instance == victim]
    (ex,) = evs(h, "exit", proc=p)
    assert ex.fields.status == 1 and "records released first" in ex.fields.reason
    released = evs(h, "apply", proc=p, where=lambda f: f.key.startswith("owners/") and f.state.startswith("nobody"))
    assert released and over.t_ms < released[0].t_ms <= ex.t_ms
    assert violations(h, strict=True) == []


def test_f6_amendment_leaves_a_fence_to_nl10_exit_at_once_releasing_nothing():
    """The amendment is for an old format only: a running node whose next write meets an operator's fence
    (FN-7) still exits at once and releases nothing (NL-10: the fence frees its records)."""
    from historykit import A0

    model = variant(F6).load()
    w = ScriptedWorld(nodes=2, model=model, model_name=F6, restart=False)
    w.at(20_000, "request", "n0", A0)
    w.at(25_000, "fence", "n0")
    h = w.run(until_ms=45_000)
    (p0,) = procs(h, "n0")
    assert evs(h, "hold_began", proc=p0)
    (ex,) = evs(h, "exit", proc=p0)
    assert ex.fields.status == 1 and "records released first" not in ex.fields.reason
    assert evs(h, "apply", proc=p0, where=lambda f: f.key.startswith("owners/") and f.state.startswith("nobody")) == []
    assert check_all(h) == []
