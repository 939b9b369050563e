"""F-1 and F-3 under their amendment (issue 31): amendments/f3_failed_first_write_exits.py and its
F-1 twin, amendments/f1_failed_first_write_exits.py (the same NL-7 decision: a first write that may
have reached the bucket, and whose NL-9 re-read does not show it as this process's own live write,
ends the instance; the process exits and its restart takes a new instance).

Each scripted reproduction of tests/checkers/test_findings.py is run twice, once with the correct
model (the finding is there: the test can fail) and once with the variant substituted (it is gone).
F-3's kept plan is replayed with the variant, judged strict. A 2,000-seed campaign may see neither
finding (1 and 7 seeds of 20,000 with the correct model), so these scripts and the plan are the
evidence. What the variant leaves is pinned too: F-1's held-back write still lands and frees the
other process's records (FN-5), and F-3's instance still writes again when its re-read fails.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from amendments import variant
from checkers import check_all
from checkers.findings import classify
from historykit import A0, evs, procs
from counterexamples.shrink import run_plan, violations
from nodelease.amendments import run_plans
from scenarios.script import NetRule, ScriptedWorld
from history.record import hash_version

F1 = "f1_failed_first_write_exits"
F1_WAIT = "f1_other_instance_frees_after_a_wait"
F1_NARROW = "f1_reread_shows_another_object_exits"
F3 = "f3_failed_first_write_exits"
F3_PLAN = "tests/plans/f3-fence-met-then-replaced-by-a-twin.json"


REPO = Path(__file__).parents[2]


def _model(name):
    return None if name == "correct" else variant(name).load()


def _judged(h):
    """(the invariants no finding explains, finding id -> the invariants it explains)."""
    unexplained, found = classify(h, check_all(h))
    return sorted({v.invariant for v in unexplained}), {k: sorted({v.invariant for v in vs}) for k, vs in found.items()}


# --- F-1 (NL-5, NL-7, LEASE-1) ------------------------------------------------------------------------


def _f1_world(model, restart=False):
    """test_f1_a_twin_straddling_a_delete_holds_the_lease_beside_the_other's script: a twin of n0 starts
    with n0's process, its first write (If-None-Match) is held back 6 s, nodes/n0 is deleted at 20.9 s."""
    w = ScriptedWorld(nodes=2, restart=restart, model=_model(model), model_name=model)
    w.at(0, "twin", "n0", "t0")
    w.rule(NetRule("delay_apply", machine="t0", op="PUT", key="nodes/n0", ms=6_000, times=1))
    # n0's first write lands 30 ms late: the twin's last check read, sent just before, finds no object
    w.rule(NetRule("delay_apply", machine="m0", op="PUT", key="nodes/n0", ms=30, times=1))
    w.at(20_900, "delete", "nodes/n0")
    return w.run(until_ms=40_000)


def test_f1_the_correct_model_reaches_it():
    h = _f1_world("correct")
    assert _judged(h) == ([], {"F-1": ["LEASE-1"]})


@pytest.mark.parametrize("name", [F1, F3])
def test_f1_the_twin_exits_before_its_held_back_write_lands(name):
    """NL-7 amended: the twin's first write timed out and its re-read (NL-9) showed n0's live object, so
    the twin exits at about 17 s; its write still lands at 21 s on the key the delete emptied, but it
    grants no running process a lease: no LEASE-1, nothing unexplained."""
    h = _f1_world(name)
    first, twin = procs(h, "n0")
    (exit_,) = evs(h, "exit", proc=twin)
    assert exit_.fields.status == 1 and "NL-7 (amended)" in exit_.fields.reason
    landed = evs(h, "apply", proc=twin, where=lambda f: f.key == "nodes/n0" and f.cond == "if-none-match")
    assert landed and landed[0].t_ms > 20_900 > exit_.t_ms  # the held-back write landed after the twin exited
    assert _judged(h) == ([], {})


def test_f1_with_a_supervisor_the_variant_still_holds():
    """The same script with the supervisor restarting exited processes (the swarm's world): the twin's
    restart is a new instance that goes through the start check; nothing unexplained, no F-1."""
    h = _f1_world(F1, restart=True)
    unexplained, found = _judged(h)
    assert unexplained == [] and "F-1" not in found


def _f1_records_freed_world(model):
    """F-1's ghost freeing records: the twin's write, held back 3.48 s, lands at 18.5 s on nodes/n0 just
    deleted (18.3 s), after n0's renewal at 18.02 s; n0's next renewal (21.02 s) is held back 1.9 s, so n0
    stays valid and serving; n1's listing (21 s) sees the twin's live object and, asked for A0 at 21.2 s,
    frees n0's record at once (FN-5: live naming another instance) and takes A0; n0 serves A0 at 21.5 s."""
    w = ScriptedWorld(nodes=2, restart=False, model=_model(model), model_name=model)
    w.at(0, "twin", "n0", "t0")
    w.rule(NetRule("delay_apply", machine="t0", op="PUT", key="nodes/n0", ms=3_480, times=1))
    # n0's first write lands 30 ms late: the twin's last check read, sent just before, finds no object
    w.rule(NetRule("delay_apply", machine="m0", op="PUT", key="nodes/n0", ms=30, times=1))
    w.rule(NetRule("delay_apply", machine="m0", op="PUT", key="nodes/n0", after_ms=21_000, ms=1_900, times=1))
    w.at(16_000, "request", "n0", A0)
    w.at(18_300, "delete", "nodes/n0")
    w.at(21_200, "request", "n1", A0)
    w.at(21_500, "request", "n0", A0)
    return w.run(until_ms=45_000)


@pytest.mark.parametrize("name", ["correct", F1])
def test_f1_residue_the_held_back_write_still_frees_the_others_records(name):
    """What NL-7's amendment cannot remove: the held-back write lands whether or not its process still
    runs, and FN-5 frees every record naming n0's instance at once on it, while n0 is valid until its next
    renewal meets it. Two owners act (INV-1) and n0's acknowledged write is lost to n1's restore (INV-8),
    under the correct model as under the variant. F-1's second consequence (checkers/findings.py, chain
    step 5): its classifier, once of one node's processes only, left this unexplained; it now sees the
    chain. Without the delete (doctored: the fault is gone) nothing explains the two owners."""
    h = _f1_records_freed_world(name)
    first, twin = procs(h, "n0")
    (n1,) = procs(h, "n1")
    took = evs(h, "apply", proc=n1, where=lambda f: f.key == "owners/" + A0)
    served = evs(h, "served", proc=first, since=took[0].t_ms)
    assert took and served  # n1 took A0 and n0 still served it
    unexplained, found = _judged(h)
    assert unexplained == [] and {"INV-1", "INV-8"} <= set(found["F-1"]), (unexplained, found)
    import copy

    doctored = copy.deepcopy(h)
    doctored._sha = None
    doctored.cache.clear()
    (gone,) = [i for i, e in enumerate(doctored.events) if e.kind == "fault_delete"]
    del doctored.events[gone]
    unexplained, found = classify(doctored, check_all(doctored))
    assert {"INV-1", "INV-8"} <= {v.invariant for v in unexplained} and "F-1" not in found


def test_f1_residue_is_removed_by_fn5s_wait_on_another_instance():
    """f1_other_instance_frees_after_a_wait (FN-5 amended, re-based on the NL-7 exit): n1 first saw the twin's
    instance live at its 21 s listing, so its acquisition at 21.2 s is refused (seen for less than ttl +
    grace); n0 keeps A0 until its renewal meets the twin's object and it exits. No two owners, nothing lost."""
    h = _f1_records_freed_world(F1_WAIT)
    (n1,) = procs(h, "n1")
    assert not evs(h, "apply", proc=n1, where=lambda f: f.key == "owners/" + A0)
    assert _judged(h) == ([], {})
    assert _judged(_f1_world(F1_WAIT)) == ([], {})  # and F-1's own script, as under the NL-7 exit alone


def _restart_world(model):
    """n0 holds A0, crashes at 20 s and is restarted (a new instance, whose check ends at about 35 s); n1 is
    asked for A0 every second from 36 s."""
    w = ScriptedWorld(nodes=2, restart=True, model=_model(model), model_name=model)
    w.at(16_000, "request", "n0", A0)
    w.at(20_000, "crash", "n0")
    for t in range(36_000, 60_000, 1_000):
        w.at(t, "request", "n1", A0)
    return w.run(until_ms=70_000)


def test_fn5s_wait_costs_a_restarted_nodes_failover_ttl_plus_grace():
    """The cost of that FN-5: after a crash and a restart, the new instance's live object no longer frees the
    old instance's records at once. Under the correct model A0 is held again 36.0 s in (16 s after the
    crash: the restart's own check); under the variant only once n1 has seen the new instance for ttl + grace,
    about 52 s in, past INV-7's bound of ttl + grace + P + A + 2 max_skew after the last lease write (about
    40 s; INV-7 judges only deaths in a quiet phase, which this script has not, so it is measured here)."""
    took = {}
    for name in ("correct", F1_WAIT):
        h = _restart_world(name)
        old = procs(h, "n0")[0]
        took[name] = min(e.t_ms for e in evs(h, "hold_began") if e.proc != old)
    assert took["correct"] < 37_000 and took[F1_WAIT] - took["correct"] >= 15_000


# --- F-3 (NL-7, FN-5, INV-10) -----------------------------------------------------------------------


def _f3_world(model, reread_fails=False):
    """test_f3_a_fence_gone_before_the_check_read_it_lets_its_instance_write_again's script: n0's first
    write is held back 6 s (it lands at 21 s), the operator fences it at 21.3 s, and deletes nodes/n0 by
    mistake at 21.5 s. `reread_fails`: NL-9's re-read of that first write fails fast too."""
    w = ScriptedWorld(nodes=2, restart=False, model=_model(model), model_name=model)
    w.rule(NetRule("delay_apply", node="n0", op="PUT", key="nodes/n0", ms=6_000, times=1))
    if reread_fails:
        w.rule(NetRule("fail_fast", node="n0", op="GET", key="nodes/n0", after_ms=16_000, times=1))
    w.at(21_300, "fence", "n0")
    w.at(21_500, "delete", "nodes/n0")
    return w.run(until_ms=45_000)


def _live_again(h):
    (p0,) = procs(h, "n0")
    me = h.processes[p0].instance
    fenced = evs(h, "apply", where=lambda f: f.key == "nodes/n0" and f.state.startswith(f"fenced {me} "))
    return fenced and evs(h, "apply", proc=p0, since=fenced[0].t_ms,
                          where=lambda f: f.key == "nodes/n0" and f.state.startswith(f"live {me} "))


def test_f3_the_correct_model_reaches_it():
    h = _f3_world("correct")
    assert _live_again(h)
    assert _judged(h) == ([], {"F-3": ["INV-10"]})


@pytest.mark.parametrize("name", [F3, F1])
def test_f3_the_instance_whose_first_write_was_lost_never_writes_again(name):
    """NL-7 amended: n0's first write timed out and its re-read found no object (the write was still held
    back), so n0's instance exits at about 17 s; the write lands at 21 s and is fenced, the fence deleted,
    and no process writes that instance live again: INV-10 holds."""
    h = _f3_world(name)
    (p0,) = procs(h, "n0")
    (exit_,) = evs(h, "exit", proc=p0)
    assert exit_.fields.status == 1 and "NL-7 (amended)" in exit_.fields.reason and exit_.t_ms < 21_000
    assert not _live_again(h)
    assert _judged(h) == ([], {})


def test_f3_residue_a_failed_reread_still_goes_back_to_the_check():
    """What the variant keeps from the correct model: when NL-9's re-read of the lost first write fails too,
    nothing was learnt, and n0 goes back to the check keeping its instance (so that a blip's lost reply,
    F-5, is left as it is); the held-back write lands, is fenced, the fence deleted, and that instance
    writes live again: F-3 in its residual form, under the variant as under the correct model."""
    for name in ("correct", F3):
        h = _f3_world(name, reread_fails=True)
        assert _live_again(h), name
        assert _judged(h) == ([], {"F-3": ["INV-10"]}), name


def test_f3_the_kept_plan_passes_strict_only_under_the_variant():
    """Seed 13073's plan (the first write met the fence naming it, a twin wrote over that fence before the
    check read it): INV-10 under the correct model; under the variant the 412's re-read shows the twin's
    live object and the instance exits within INV-10's bound."""
    assert run_plans("correct", [F3_PLAN]) == {F3_PLAN: ["INV-10"]}
    assert run_plans(F3, [F3_PLAN]) == {F3_PLAN: []}
    assert variant(F3).plans == (F3_PLAN,)


def test_f3_the_variant_also_ends_the_form_with_two_unanswered_writes():
    """Seed 13963's plan (NL-7, INV-10: two writes of the check unanswered, the second's object fenced, the
    fence deleted and the absent object fenced by the operator): INV-10 under the correct model; under the
    variant NL-9's re-read after the first write's timeout finds no object, not the instance's own write, so
    the instance exits and its restart takes a new one. Not in the variant's recorded plans (its verdicts
    were recorded before this form was kept)."""
    plan = "tests/plans/f3-check-writes-lost-then-deleted.json"
    assert run_plans("correct", [plan]) == {plan: ["INV-10"]}
    assert run_plans(F3, [plan]) == {plan: []}


# --- what the variant must not change ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["correct", F3])
def test_a_blip_swallowing_a_first_write_reply_is_still_f5_not_worse(name):
    """F-5's script (tests/checkers/test_findings.py): the re-read fails in the blip, so the variant, like
    the correct model, goes back to the check; the node is fenced and restarted (F-5), nothing else."""
    w = ScriptedWorld(nodes=2, model=_model(name), model_name=name)
    w.options.update(starts=[0, 0], blip=[15_500, 5_000, "blackhole"], blip_alone=True)
    w.rule(NetRule("delay_reply", node="n0", op="PUT", key="nodes/n0", ms=1_500, times=1))
    h = w.run(until_ms=45_000)
    assert _judged(h) == ([], {"F-5": ["INV-9"]})


@pytest.mark.parametrize("name", ["correct", F3])
def test_a_late_first_write_with_no_fault_after_it_costs_one_restart_either_way(name):
    """A first write held back past its timeout, with no fence by the operator and no delete. The correct
    model goes back to the check, reads its own late write and waits on it, and n1 fences it (n0's object
    was unchanged for ttl + grace): n0 exits and is restarted. The variant exits at once (its re-read found
    no object) and its restart, a new instance, waits out the late write. One restart either way, nothing
    unexplained, and n0 holds its lease at the end."""
    w = ScriptedWorld(nodes=2, model=_model(name), model_name=name)
    w.rule(NetRule("delay_apply", node="n0", op="PUT", key="nodes/n0", ms=6_000, times=1))
    h = w.run(until_ms=60_000)
    assert _judged(h) == ([], {})
    first, last = procs(h, "n0")
    (exit_,) = evs(h, "exit", proc=first)
    assert exit_.fields.status == 1 and (exit_.t_ms < 21_000) == (name == F3)
    assert evs(h, "lease_valid", proc=last, since=50_000)


# --- the narrower NL-7 exit, and the counterexamples the campaigns kept -------------------------------------


def _plan_violations(path, model):
    """The invariants a kept plan fails (strict) with `model` substituted; the plan's own model replays it
    byte for byte."""
    plan = json.loads((REPO / path).read_text())
    h = run_plan(dict(plan, model=model))
    if model == plan["model"]:
        assert h.sha256(hash_version(plan)) == plan["history_sha256"]
    return sorted({v.invariant for v in violations(h, strict=True)})


S398 = "amendments/plans/f3-failed-first-write-exits-s398-inv9.json"
S2 = "amendments/plans/f1-other-instance-frees-after-a-wait-s2-inv7.json"


def test_seed_398_a_blip_restarts_a_node_under_the_nl7_exit_only():
    """f3_failed_first_write_exits' counterexample (seed 398 of its 2,000-seed campaign): n0's start check
    ends inside a global blip (its reads failing), its first write is sent into the blip and never lands,
    and its re-read after the blip finds no object: the variant exits (INV-9: the blip restarted a node).
    The correct model goes back to the check; so does the narrower variant (no object: back to the check)."""
    assert _plan_violations(S398, F3) == ["INV-9"]
    assert _plan_violations(S398, "correct") == []
    assert _plan_violations(S398, F1_NARROW) == []


def test_seed_2_fn5s_wait_breaks_the_failover_bound():
    """f1_other_instance_frees_after_a_wait's counterexample (seed 2 of 300, shrunk): a restarted node's new
    instance no longer frees its predecessor's records at once, and the actor is writable again past
    INV-7's bound; the correct model meets it."""
    assert _plan_violations(S2, F1_WAIT) == ["INV-7"]
    assert _plan_violations(S2, "correct") == []


def test_the_narrower_exit_removes_f1s_script_and_f3s_plan_not_f3s_script():
    """f1_reread_shows_another_object_exits: the twin's re-read shows n0's object, so it exits (F-1's script:
    nothing left); seed 13073's first write met its fence and the re-read showed the twin's object (F-3's
    plan passes strict); but F-3's scripted first write is re-read as absent (still held back), so the node
    goes back to its check keeping its instance, and F-3 is there as under the correct model."""
    assert _judged(_f1_world(F1_NARROW)) == ([], {})
    assert run_plans(F1_NARROW, [F3_PLAN]) == {F3_PLAN: []}
    h = _f3_world(F1_NARROW)
    assert _live_again(h) and _judged(h) == ([], {"F-3": ["INV-10"]})
