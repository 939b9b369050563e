"""The section 4 checkers on hand-built histories: INV-4 nothing stays held, INV-5 drained means free,
INV-7 failover, INV-8 nothing lost, INV-9 a blip restarts nothing; `runner.py --broken` listing every
broken model; and the property that the correct model passes every checker on any seed.

Histories are built with the field order model.observations.KINDS gives, so a field added at the end of
a kind does not break them. Every clock here reads true time (offset 0, no drift) and the params are the
defaults (ttl 10 s, grace 5 s, safety 2 s, period 3 s, attempt timeout 2 s, max skew 1 s).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from checkers import CHECKERS, History, check_all, measure_all
from checkers.history import Process
from model.observations import KINDS

INV_4 = CHECKERS["INV-4"]
INV_5 = CHECKERS["INV-5"]
INV_7 = CHECKERS["INV-7"]
INV_8 = CHECKERS["INV-8"]
INV_9 = CHECKERS["INV-9"]

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
A0 = "t0/c/a0"
A1 = "t1/c/a1"
WORLD = -1


def fields(kind: str, **values) -> tuple:
    """The fields of an event of `kind`, in KINDS order; names not given default to ''."""
    unknown = set(values) - set(KINDS[kind])
    assert not unknown, f"{kind} has no fields {unknown}"
    return tuple(values.get(name, "") for name in KINDS[kind])


def history(*procs: tuple, options: dict | None = None, end_ms: int = 0) -> History:
    """procs: (node_id, instance); every process on a machine of its own with a clock reading true time."""
    h = History(seed=0, model="hand", scenario="hand", params={}, options=dict(options or {}))
    for k, (node_id, instance) in enumerate(procs):
        h.processes.append(Process(node_id=node_id, instance=instance, machine=f"m{k}", offset_ms=0, drift_ppm=0))
    h.end_ms = end_ms
    return h


def ev(h: History, t_ms: int, proc: int, kind: str, **values) -> int:
    """Append an event; its index."""
    h.add(t_ms, proc, kind, fields(kind, **values))
    return len(h.events) - 1


def valid(h: History, t_ms: int, proc: int, until_ms: int) -> int:
    return ev(h, t_ms, proc, "lease_valid", written_at_ms=t_ms, until_ms=until_ms, how="ack")


def put(h: History, t_ms: int, proc: int, key: str, state: str, serial: int, prev: int = 0) -> int:
    """A conditional write that took effect, as the world records it."""
    return ev(h, t_ms, proc, "apply", key=key, op="PUT", cond="if-match" if prev else "if-none-match",
              prev_serial=prev, named_serial=prev, serial=serial, state=state, prev_state="")


def hold(h: History, t_ms: int, proc: int, actor: str, generation: int) -> int:
    return ev(h, t_ms, proc, "hold_began", actor=actor, generation=generation, version=f"w{generation}", how="ack")


# --- INV-4 nothing stays held --------------------------------------------------------------------------------


def _quiet_run(owner_exits: bool, freed_by_fence: bool = False, unserved: bool = False) -> tuple[History, dict]:
    """n0/a owns a0 (record "held n0 a 1"). The quiet phase begins at 50 s, the final round at 90 s requests
    a0, the run ends at 100 s. `owner_exits`: n0/a exits 1 at 60 s and nothing takes a0 over.
    `freed_by_fence`: n1/b owned a1 and crashed early; nodes/n1 was fenced long ago; n1/c runs, holding
    nothing. `unserved`: a record of a1 names n0/a, which never held it (a release dropped)."""
    h = history(("n0", "a"), ("n1", "b"), ("n1", "c"), end_ms=100_000)
    ix = {}
    put(h, 1_000, 0, "nodes/n0", "live a 1000", 1)
    valid(h, 1_000, 0, 200_000)
    valid(h, 1_000, 1, 5_000)
    put(h, 2_000, 0, "owners/" + A0, "held n0 a 1", 2)
    ix["hold"] = hold(h, 2_001, 0, A0, 1)
    if freed_by_fence:
        put(h, 2_000, 1, "owners/" + A1, "held n1 b 1", 3)
        hold(h, 2_001, 1, A1, 1)
        ev(h, 3_000, 1, "crash")
        put(h, 30_000, 0, "nodes/n1", "fenced b 1000", 4)  # freed at 1000 + ttl + grace = 16 s
        valid(h, 31_000, 2, 200_000)  # n1's new process (c) runs to the end, holding nothing
    if unserved:
        put(h, 40_000, 0, "owners/" + A1, "held n0 a 4", 9)  # no hold_began: n0/a does not hold a1
    ix["quiet"] = ev(h, 50_000, WORLD, "quiet")
    if owner_exits:
        ix["exit"] = ev(h, 60_000, 0, "exit", status=1, reason="NL-10: lease lost")
    ix["final_round"] = ev(h, 90_000, WORLD, "final_round", actors=[A0])
    target = 2 if freed_by_fence else 0
    ev(h, 90_000, target, "client", actor=A0, node=h.processes[target].node_id, request=1)
    if not owner_exits and not freed_by_fence:
        ev(h, 90_001, 0, "served", actor=A0, generation=1, request=1)
    return h, ix


def test_inv4_passes_when_the_requested_actor_is_held_by_a_serving_process():
    """INV-4: at the end a0's record names n0/a, which runs and holds it validly."""
    h, _ = _quiet_run(owner_exits=False)
    assert INV_4(h) == []


def test_inv4_passes_when_a_gone_owners_record_is_freed_by_its_fence():
    """INV-4, FN-5: n1/b crashed holding a1 (not requested at the end); nodes/n1 is `fenced` naming b, whose
    kept written_at + ttl + grace passed long before the end: the record is free, not stuck."""
    h, _ = _quiet_run(owner_exits=False, freed_by_fence=True)
    assert INV_4(h) == []


def test_inv4_not_judged_without_a_quiet_phase():
    h, ix = _quiet_run(owner_exits=True)
    del h.events[ix["quiet"]]
    assert INV_4(h) == []


def test_inv4_record_naming_an_exited_process_stays_held_violates():
    """INV-4: n0/a exited; its record still names it and nodes/n0 is still `live a` (no fence, no
    `released`): a0, requested in the final round, is held by nobody at the end, and the record stays held.
    The first violation names the actor and the process and points at the final round."""
    h, ix = _quiet_run(owner_exits=True)
    found = INV_4(h)
    assert [v.invariant for v in found] == ["INV-4", "INV-4"]
    requested, stuck = found
    assert requested.events == (ix["final_round"],)
    assert A0 in requested.message and "n0/a" in requested.message and "has exited" in requested.message
    assert "owners/" + A0 in stuck.message and "n0/a" in stuck.message and "stays held" in stuck.message
    assert "live a 1000" in stuck.message


def test_inv4_record_naming_a_running_process_that_does_not_serve_it_violates():
    """INV-4: a record names n0/a, which runs, but n0/a holds no hold of it at the end (its release was
    dropped) and a1 is not requested in the final rounds: nobody can take it over."""
    h, _ = _quiet_run(owner_exits=False, unserved=True)
    (v,) = INV_4(h)
    assert v.invariant == "INV-4"
    assert "owners/" + A1 in v.message and "n0/a" in v.message and "runs but does not serve it" in v.message


# --- INV-5 drained means free --------------------------------------------------------------------------------


def _drain_run(drained_before_release: bool) -> tuple[History, dict]:
    h = history(("n0", "a"), ("n0", "z"))
    ix = {}
    valid(h, 1_000, 0, 9_000)
    ix["held"] = put(h, 2_000, 0, "owners/" + A0, "held n0 a 1", 1)
    put(h, 2_000, 0, "owners/" + A1, "held n0 a 1", 2)
    put(h, 2_500, 1, "owners/t0/c/a9", "held n0 z 1", 3)  # another instance of n0: not this process
    ev(h, 3_000, 0, "drain_began")
    put(h, 3_010, 0, "owners/" + A1, "nobody 1", 4, prev=2)
    if drained_before_release:
        ix["drained"] = ev(h, 3_020, 0, "drained")
        put(h, 4_000, 0, "owners/" + A0, "nobody 1", 5, prev=1)
    else:
        put(h, 4_000, 0, "owners/" + A0, "nobody 1", 5, prev=1)
        ix["drained"] = ev(h, 4_001, 0, "drained")
    return h, ix


def test_inv5_drained_after_every_release_landed_passes():
    """INV-5: drained once no record names n0/a (a record naming another instance of n0 does not count)."""
    h, _ = _drain_run(drained_before_release=False)
    assert INV_5(h) == []


def test_inv5_drained_with_a_release_pending_violates():
    """INV-5: n0/a reports drained while owners/a0 still names it; the violation points at the write that
    made the record name it and at the drained event."""
    h, ix = _drain_run(drained_before_release=True)
    (v,) = INV_5(h)
    assert v.invariant == "INV-5"
    assert v.events == (ix["held"], ix["drained"])
    assert "n0/a" in v.message and "owners/" + A0 in v.message and "drained" in v.message


# --- INV-7 failover --------------------------------------------------------------------------------------


def _failover_run(new_hold_at: int | None) -> tuple[History, dict]:
    """n0/a owns a0; its last acknowledged lease write is at 1 s; it crashes at 10 s, in the quiet phase.
    n1/b is valid throughout; the bound from the last write is ttl + grace + P + A + skew = 21 s, so a0 had
    to be acquirable by 22 s; it is requested at n1 at 30 s (deadline 30 s + 2 A = 34 s)."""
    h = history(("n0", "a"), ("n1", "b"), end_ms=100_000)
    ix = {}
    valid(h, 0, 1, 200_000)
    valid(h, 1_000, 0, 200_000)
    hold(h, 2_000, 0, A0, 1)
    ev(h, 5_000, WORLD, "quiet")
    ix["crash"] = ev(h, 10_000, 0, "crash")
    ev(h, 30_000, 1, "client", actor=A0, node="n1", request=1)
    if new_hold_at is not None:
        ix["new"] = hold(h, new_hold_at, 1, A0, 2)
    return h, ix


def test_inv7_takeover_within_the_bound_passes_and_is_measured():
    """INV-7: n1 acquires a0 right after the request; failover measured from the last acknowledged write."""
    h, _ = _failover_run(new_hold_at=30_050)
    assert INV_7(h) == []
    assert measure_all(h)["failover_ms"] == [30_050 - 1_000]


def test_inv7_takeover_past_the_deadline_violates():
    """INV-7: the new hold begins only at 40 s; the violation names the actor and the dead owner and points
    at the death and at the late hold."""
    h, ix = _failover_run(new_hold_at=40_000)
    (v,) = INV_7(h)
    assert v.invariant == "INV-7"
    assert v.events == (ix["crash"], ix["new"])
    assert A0 in v.message and "n0/a" in v.message and "only at 40.000 s" in v.message


def test_inv7_never_taken_over_violates():
    h, ix = _failover_run(new_hold_at=None)
    (v,) = INV_7(h)
    assert v.invariant == "INV-7" and v.events == (ix["crash"],)
    assert A0 in v.message and "n0/a" in v.message and "never" in v.message


def test_inv7_request_before_the_bound_is_not_judged():
    """INV-7: a request before the actor had to be free (22 s) judges nothing; the one after it does."""
    h, _ = _failover_run(new_hold_at=None)
    h.events = [e for e in h.events if e[2] != "client"]
    ev(h, 15_000, 1, "client", actor=A0, node="n1", request=1)
    assert INV_7(h) == []


# --- INV-8 nothing lost ----------------------------------------------------------------------------------


def _data_run(restore_before_ack: bool) -> tuple[History, dict]:
    h = history(("n0", "a"), ("n1", "b"))
    ix = {}
    ev(h, 1_000, 0, "restored", actor=A0, generation=1, segments=[])
    ix["acked0"] = ev(h, 1_100, 0, "data_acked", actor=A0, generation=1, segment="000001-a-00000")
    ev(h, 1_200, 0, "restored", actor=A1, generation=1, segments=[])
    if restore_before_ack:
        ix["restore"] = ev(h, 5_000, 1, "restored", actor=A0, generation=2, segments=["000001-a-00000"])
        ix["acked1"] = ev(h, 6_000, 0, "data_acked", actor=A0, generation=1, segment="000001-a-00001")
    else:
        ix["acked1"] = ev(h, 4_000, 0, "data_acked", actor=A0, generation=1, segment="000001-a-00001")
        ix["restore"] = ev(h, 5_000, 1, "restored", actor=A0, generation=2,
                           segments=["000001-a-00000", "000001-a-00001"])
    return h, ix


def test_inv8_every_acknowledged_segment_restored_passes():
    h, _ = _data_run(restore_before_ack=False)
    assert INV_8(h) == []


def test_inv8_restore_at_the_same_generation_judges_nothing():
    """INV-8 is about later owners: a restore at the writing hold's own generation does not count."""
    h, _ = _data_run(restore_before_ack=False)
    ev(h, 7_000, 0, "data_acked", actor=A1, generation=1, segment="000001-a-00002")
    ev(h, 7_100, 1, "restored", actor=A1, generation=1, segments=[])
    assert INV_8(h) == []


def test_inv8_segment_acknowledged_after_a_later_restore_violates():
    """INV-8: segment 00001 of generation 1 is acknowledged after n1/b restored generation 2 without it; the
    violation names the actor, the segment and the restoring process, and points at the restore and at the
    acknowledgement."""
    h, ix = _data_run(restore_before_ack=True)
    (v,) = INV_8(h)
    assert v.invariant == "INV-8"
    assert v.events == (ix["restore"], ix["acked1"])
    assert A0 in v.message and "000001-a-00001" in v.message and "n1/b" in v.message


# --- INV-9 a bucket blip never restarts a cluster -------------------------------------------------------------

BLIP = {"blip": [20_000, 30_000, "blackhole"], "blip_alone": True}  # judged until 50 s + 20 s = 70 s


def _blip_run(options: dict, bad: str | None) -> tuple[History, dict]:
    h = history(("n0", "a"), ("n1", "b"), options=options)
    ix = {}
    valid(h, 1_000, 0, 9_000)
    valid(h, 1_000, 1, 9_000)
    ev(h, 20_000, WORLD, "outage", machine="*", until_ms=50_000)
    ev(h, 26_000, 0, "lease_ran_out", until_ms=26_000)
    ev(h, 26_000, 1, "lease_ran_out", until_ms=26_000)
    ev(h, 50_010, 0, "lease_valid", written_at_ms=50_000, until_ms=58_000, how="recovered")
    if bad == "exit":
        ix["bad"] = ev(h, 51_000, 1, "exit", status=1, reason="NL-10: lease lost")
    elif bad == "fenced":
        ix["bad"] = ev(h, 45_000, 0, "fenced", node="n1", instance="b")
        ev(h, 51_000, 1, "exit", status=1, reason="NL-10: lease lost")
    ev(h, 60_000, 1, "exit", status=0, reason="clean stop: node lease released")  # a clean stop is no restart
    ev(h, 80_000, 0, "lease_lost", reason="fenced by the operator")  # after the window: another story
    return h, ix


def test_inv9_blip_with_no_restart_passes():
    h, _ = _blip_run(BLIP, bad=None)
    assert INV_9(h) == []


@pytest.mark.parametrize("bad", ["exit", "fenced"])
def test_inv9_exit_or_fence_after_a_blip_violates(bad):
    """INV-9: after a global blip meeting the proviso, a process exits non-zero (or is fenced) within the
    window; the violation names the process and points at the event."""
    h, ix = _blip_run(BLIP, bad=bad)
    (v,) = INV_9(h)
    assert v.invariant == "INV-9" and v.events == (ix["bad"],)
    who = "n1/b" if bad == "exit" else "n0/a"
    assert who in v.message and "blip" in v.message
    assert ("exited" if bad == "exit" else "fenced n1") in v.message


def test_inv9_judges_only_runs_meeting_its_proviso():
    """INV-9's proviso: a blip not alone (other faults around it) is not judged, nor a run without a blip."""
    h, _ = _blip_run({**BLIP, "blip_alone": False}, bad="exit")
    assert INV_9(h) == [] and measure_all(h)["blip_judged"] == 0
    h, _ = _blip_run({}, bad="exit")
    assert INV_9(h) == []
    h, _ = _blip_run(BLIP, bad=None)
    assert measure_all(h)["blip_judged"] == 1


# --- runner.py --broken ----------------------------------------------------------------------------------


@pytest.mark.slow
def test_runner_broken_lists_every_broken_model(tmp_path):
    """`python runner.py --broken --seeds 30` runs the correct model and every broken model of
    broken_models.BROKEN over the same seeds and lists each in its table and its report. Run from a copy of
    the code, so its per-model reports land in the copy's reports/, not the repository's. (About 25 s.)"""
    from broken_models import BROKEN

    work = tmp_path / "repo"
    work.mkdir()
    for module in ("runner.py", "reporting.py"):
        shutil.copy(os.path.join(REPO, module), work)
    for pkg in ("model", "checkers", "scenarios", "broken_models"):
        shutil.copytree(os.path.join(REPO, pkg), work / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    report = str(tmp_path / "broken.json")
    env = dict(os.environ, COLUMNS="200")
    env.pop("PYTHONHASHSEED", None)
    r = subprocess.run([sys.executable, "runner.py", "--broken", "--seeds", "30", "--report", report],
                       cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode in (0, 1), r.stdout[-3000:] + r.stderr[-3000:]
    assert "Traceback" not in r.stderr
    with open(report) as f:
        rep = json.load(f)
    listed = [row["model"] for row in rep["models"]]
    assert listed == ["correct"] + list(BROKEN)
    assert rep["seeds"] == {"start": 0, "count": 30}
    for name in BROKEN:
        assert name in r.stdout, name
    control = rep["models"][0]
    assert control["ok"] and control["failing_seeds"] == 0  # the correct model passes its 30 seeds
    for row in rep["models"][1:]:
        assert row["seeds_run"] == 30 and row["must_catch"] in CHECKERS


# --- the property: the correct model passes every checker ---------------------------------------------------


def test_correct_model_passes_every_checker_on_any_seed():
    """INV-1..INV-9, LEASE-1: for any seed (swarm and stops scenarios) the correct model's history has no
    violation. About 0.07 s a seed."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from model import MODEL
    from scenarios.sim import run_seed

    @settings(max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.integers(0, 1_000_000), st.sampled_from(["swarm", "stops"]))
    def prop(seed, scenario):
        h = run_seed(seed, MODEL, scenario, None, "correct")
        violations = check_all(h)
        assert violations == [], (f"seed {seed} ({scenario}): "
                                  + "\n".join(v.explain(h) for v in violations))

    prop()
