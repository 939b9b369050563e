"""Scripted scenarios for the ADR's verification list, section 6 (upgrading from per-actor leases):
UP-1..UP-4, with FN-5 and FN-8 where old formats meet the node lease, and INV-1, INV-2 and INV-8
judged across the switch.

ScriptedWorld starts only new nodes, all at t=0. Here `UpgradeWorld` starts nothing by itself: the
script starts old binaries (model/old_lease.py, `OLD_MODEL`) on machines om<i> and new nodes on
m<i> when it says so, and addresses requests and commands to a machine, since a node id may run on
two machines at once across the switch. Every machine's clock reads true time + 100 s. Default
params: ttl 10 s, grace 5 s, safety 2 s, max skew 1 s, period 3 s (the old heartbeat's too).

What the numbers come from:
- an old binary writes its heartbeat `nodes/<id>` (format 1 or 2) at start and every 3 s; it holds
  an actor by its per-actor lease `leases/<actor>` (`wasmkeep-lease 1`), renewed every ttl / 3;
- a new node's start guard (UP-2) waits while an old-format heartbeat was written less than
  horizon + ttl + grace = 3 * 3 s + 15 s = 24 s ago, re-reading every P / 2 = 1.5 s; a heartbeat
  dated in the future lapses 24 s + max skew = 25 s after the guard first read that body;
- the start check (NL-5) runs beside it and takes ttl + grace = 15 s; the first lease write waits
  for both.

The broken models of section 6 run the same scripts where one exists, and each must be caught by
the invariant its module names (`CATCHES`). The runner's own `upgrade` scenario is run at the end.

A test marked `xfail(strict=True)` pins a finding made while writing these scenarios (its reason
says where); it turns into a failure once the finding is dealt with, so the mark goes with the fix.
Two are pinned: a heartbeat dated a little ahead (more than max skew, less than the wait) holds the
start guard past its 25 s bound, and a new node logs an old version running while its guard still
waits on that very heartbeat.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from checkers import check_all, nothing_lost
from model.records import (
    LIVE,
    Marker,
    NodeRecord,
    OldHeartbeat,
    OldLease,
    decode_lease,
    encode_node,
    encode_old_heartbeat,
    encode_old_lease,
    segment_generation,
)
from scenarios.script import NetRule, ScriptedWorld, UpgradeWorld  # noqa: F401
from historykit import A0, applies, assert_clean, broken, evs, invariants, one, owner_state, true_ms  # noqa: F401
from history import event

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

A1 = "t1/c/a1"
PERIOD_MS = 3_000
HALF_PERIOD_MS = PERIOD_MS // 2  # the start guard re-reads every P / 2 (UP-2)
TAKEOVER_MS = 15_000  # ttl + grace
HORIZON_MS = 3 * PERIOD_MS  # UP-2's horizon: three heartbeat periods
GUARD_SPAN_MS = HORIZON_MS + TAKEOVER_MS  # 24 s: an old heartbeat younger than this holds the start
MAX_SKEW_MS = 1_000
SLACK_MS = 50  # a few scripted round trips (every delay is 1..5 ms)


# --- the world -----------------------------------------------------------------------------------------


def old_heartbeat(node_id: str, written_at_ms: int, fmt: int = 2) -> str:
    return encode_old_heartbeat(OldHeartbeat(fmt, node_id, written_at_ms))


# --- reading a history ---------------------------------------------------------------------------------


def proc_on(h, machine, k=0):
    """The index of the k-th process started on `machine`."""
    found = [p for p, pr in enumerate(h.processes) if pr.machine == machine]
    assert len(found) > k, f"no process {k} on {machine}\n{h.timeline()}"
    return found[k]


def last_old_heartbeat_ms(h, node_id):
    """The true time of the last heartbeat an old binary wrote to nodes/<node_id>."""
    hb = [t for _, t, p, f in applies(h, "nodes/" + node_id) if f[6] == f"node {node_id}"]
    assert hb, h.timeline()
    return hb[-1]


# --- UP-3: the first acquisition seeds above every existing segment ----------------------------------


def seeded_script(leases: str, model=None, model_name: str = "correct") -> UpgradeWorld:
    """Old node o0 holds a0 twice (generations 1 and 2), writing a segment at each, and hibernates it:
    leases/a0 is a released old lease at generation 2. Then leases/a0 is collected by the old GC
    (`collected`), replaced by an older copy at generation 1 (`lower`), or by one at generation 5
    above every key (`higher`). o0 stops cleanly at 6 s; new node n0 starts at 7 s and is asked for
    a0 at 34 s, once its start guard has let it start."""
    w = UpgradeWorld(model=model, model_name=model_name)
    w.at(0, "old_start", "o0", "om0")
    w.at(1_000, "ask", "om0", A0)  # generation 1 (no lease: one above the keys, none yet)
    w.at(2_000, "tell", "om0", "hibernate", A0)
    w.at(3_000, "ask", "om0", A0)  # generation 2, If-Match over the released lease
    w.at(3_500, "ask", "om0", A0)
    w.at(4_000, "tell", "om0", "hibernate", A0)
    if leases == "collected":
        w.at(5_000, "delete", "leases/" + A0)
    elif leases == "lower":
        w.at(5_000, "put_raw", "leases/" + A0, encode_old_lease(OldLease("o0", 1, 0)))
    elif leases == "higher":
        w.at(5_000, "put_raw", "leases/" + A0, encode_old_lease(OldLease("o0", 5, 0)))
    w.at(6_000, "tell", "om0", "stop")
    w.at(7_000, "new_start", "n0", "m0")
    w.at(34_000, "ask", "m0", A0)
    return w


@pytest.mark.parametrize("leases, seed, cond", [
    ("collected", 2, "if-none-match"),
    ("lower", 2, "if-match"),
    ("higher", 5, "if-match"),
])
def test_upgrade_seeds_generations_above_every_existing_segment(leases, seed, cond):
    """UP-3, INV-2, INV-8: the new node's first acquisition of a0 reads leases/ (absent, or an old
    lease not live), lists a0's keys, and leaves a marker carrying max(old generation, highest key
    generation): 2 where the old lease was collected or older than the keys, 5 where it is above
    them. owners/ is then created at that + 1 with If-None-Match, and the new owner restores every
    segment the old holds acknowledged."""
    h = seeded_script(leases).run(until_ms=38_000)

    old, new = proc_on(h, "om0"), proc_on(h, "m0")
    inst = h.processes[new].instance
    old_gens = [f[1] for _, _, _, f in evs(h, "hold_began", proc=old)]
    assert old_gens == [1, 2]
    old_segments = [f[2] for _, _, _, f in evs(h, "data_acked", proc=old)]
    keys_gen = max(segment_generation("x/" + s) for s in old_segments)
    assert keys_gen == 2 and len(old_segments) == 3

    # the marker: If-None-Match over nothing, or If-Match on the old lease's very version
    (_, t_mark, _, mark) = one(h, "apply", proc=new, where=lambda f: f[0] == "leases/" + A0)
    assert mark[2] == cond and mark[6] == f"marker {seed}"
    if cond == "if-none-match":
        assert mark[3] == 0 and mark[4] == 0
    else:
        assert mark[4] == mark[3] and mark[7].startswith("old-lease o0 ")
    assert one(h, "marked", proc=new)[3] == (A0, seed)
    assert seed == max(keys_gen, {"collected": 0, "lower": 1, "higher": 5}[leases])
    # then owners/ at seed + 1, created (If-None-Match), after the marker landed
    (_, t_own, _, own) = one(h, "apply", proc=new, where=lambda f: f[0] == "owners/" + A0)
    assert own[2] == "if-none-match" and own[6] == owner_state("n0", inst, seed + 1) and t_own > t_mark
    _, _, _, began = one(h, "hold_began", proc=new)
    assert began[:2] == (A0, seed + 1) and began[1] > max(old_gens)
    # INV-8 across the switch: every segment the old holds acknowledged is in the new owner's restore
    _, _, _, restored = one(h, "restored", proc=new)
    assert set(old_segments) <= set(restored[2])
    assert h.rules.get("UP-3", 0) >= 1
    assert_clean(h)


@pytest.mark.parametrize("leases, caught", [("collected", True), ("lower", True), ("higher", False)])
def test_seed_from_old_lease_only_reuses_a_generation(leases, caught):
    """UP-3 broken (broken_models.seed_from_old_lease_only): seeding from the old lease alone, where
    the lease was collected or is older than the keys, creates owners/ at a generation an old hold
    already used, and INV-2 catches it. Where the old lease is above every key the seed is the same,
    and nothing is wrong."""
    model, mod = broken("seed_from_old_lease_only")
    h = seeded_script(leases, model, mod.MODEL.name).run(until_ms=38_000)
    new = proc_on(h, "m0")
    _, _, _, began = one(h, "hold_began", proc=new)
    if caught:
        assert began[1] <= 2
        assert mod.CATCHES == "INV-2" and "INV-2" in invariants(h)
    else:
        assert began[1] == 6
        assert_clean(h)


# --- UP-3: leases/ is marked for found actors and new actors -------------------------------------------


def test_upgrade_marks_leases_for_found_and_new_actors():
    """UP-3, OR-3: old node o0 crashes holding a0 (its old lease stays, expiring); a1 was never held.
    The new node's first acquisitions: a0's old lease, present and not live (expires_at + grace
    passed), is replaced by the marker with If-Match on the version read, at its generation 1, and
    owners/a0 created at 2; a1's leases/ is absent: the marker is created with If-None-Match at
    generation 0, and owners/a1 at 1. Each marker lands before its owners/ create. Later holds of the
    same actors go through owners/ alone: leases/ is marked once and for good."""
    w = UpgradeWorld()
    w.at(0, "old_start", "o0", "om0")
    w.at(1_000, "ask", "om0", A0)
    w.at(3_000, "kill", "om0")  # holding a0: its lease stays, expiring at about 11 s
    w.at(4_000, "new_start", "n0", "m0")
    w.at(30_000, "ask", "m0", A0)
    w.at(30_000, "ask", "m0", A1)
    w.at(32_000, "tell", "m0", "hibernate", A0)
    w.at(33_000, "ask", "m0", A0)
    h = w.run(until_ms=36_000)

    old, new = proc_on(h, "om0"), proc_on(h, "m0")
    inst = h.processes[new].instance
    assert one(h, "hold_began", proc=old)[3][:2] == (A0, 1)
    old_lease_serial = applies(h, "leases/" + A0, proc=old)[-1][3][5]

    # a found actor: the old lease replaced, If-Match on the version the new node read
    (_, t_m0, _, m0) = one(h, "apply", proc=new, where=lambda f: f[0] == "leases/" + A0)
    assert m0[2] == "if-match" and m0[3] == old_lease_serial and m0[4] == old_lease_serial
    assert m0[7].startswith("old-lease o0 ") and m0[6] == "marker 1"
    # a new actor: the marker created, If-None-Match
    (_, t_m1, _, m1) = one(h, "apply", proc=new, where=lambda f: f[0] == "leases/" + A1)
    assert m1[2] == "if-none-match" and m1[3] == 0 and m1[6] == "marker 0"
    assert sorted(f for _, _, _, f in evs(h, "marked", proc=new)) == sorted([(A0, 1), (A1, 0)])
    # then owners/ at the marker's generation + 1, created after the marker
    own0 = applies(h, "owners/" + A0, proc=new)
    own1 = applies(h, "owners/" + A1, proc=new)
    assert own0[0][3][2] == "if-none-match" and own0[0][3][6] == owner_state("n0", inst, 2) and own0[0][1] > t_m0
    assert own1[0][3][2] == "if-none-match" and own1[0][3][6] == owner_state("n0", inst, 1) and own1[0][1] > t_m1
    # the second hold of a0: owners/ If-Match at 3, leases/ untouched
    assert [f[1] for _, _, _, f in evs(h, "hold_began", proc=new, where=lambda f: f[0] == A0)] == [2, 3]
    assert own0[-1][3][2] == "if-match" and own0[-1][3][6] == owner_state("n0", inst, 3)
    assert decode_lease(w.bucket.objects["leases/" + A0].body) == Marker(1)
    assert decode_lease(w.bucket.objects["leases/" + A1].body) == Marker(0)
    assert_clean(h)


# --- UP-3: a live old record naming the starting node's own id is refused ------------------------------


def own_id_script(model=None, model_name: str = "correct") -> UpgradeWorld:
    """Old node n0 (om0) holds a0 and keeps renewing it while its heartbeat has stalled from 4 s (a
    stalled listing); a new node starts under the same id n0 (m0) at 5 s, and its start guard lets
    it start once that stalled heartbeat (3 s) is 24 s old. It is asked for a0 at 32 s while the old
    process still renews a0's lease; the old process serves a0 at 33 s and stops cleanly at 35 s
    (releasing its lease); the new node is asked again at 37 s."""
    w = UpgradeWorld(model=model, model_name=model_name)
    w.at(0, "old_start", "n0", "om0")
    w.at(1_000, "ask", "om0", A0)
    w.at(4_000, "tell", "om0", "stall_heartbeats")
    w.at(5_000, "new_start", "n0", "m0")
    w.at(32_000, "ask", "m0", A0)
    w.at(33_000, "ask", "om0", A0)
    w.at(35_000, "tell", "om0", "stop")
    w.at(37_000, "ask", "m0", A0)
    return w


def test_live_old_lease_naming_own_id_is_refused():
    """UP-3, UP-2, INV-1: an old record has no instance to tell a predecessor from a past hold of this
    process, so a live old lease refuses the first acquisition whatever node it names, this node's
    own id included: the new n0's request fails with "held by a live old lease naming n0" and
    writes nothing to leases/ or owners/, while the old n0 goes on serving. Once the old process
    released its lease (expires_at 0), the new n0 replaces it with the marker at generation 1 and
    holds a0 at 2."""
    w = own_id_script()
    h = w.run(until_ms=40_000)

    old, new = proc_on(h, "om0"), proc_on(h, "m0")
    assert h.processes[old].node_id == h.processes[new].node_id == "n0"
    # the guard let the new n0 start while the old one still renewed (its heartbeat stalled)
    _, t_passed, _, _ = one(h, "guard_passed", proc=new)
    assert t_passed >= last_old_heartbeat_ms(h, "n0") + GUARD_SPAN_MS
    renewals = [t for _, t, _, f in evs(h, "hold_valid", proc=old)]
    assert any(t > t_passed for t in renewals)

    _, t_refused, _, refused = one(h, "request_failed", proc=new, until=35_000)
    assert refused[0] == A0 and refused[2] == "acquire: held by a live old lease naming n0"
    assert evs(h, "apply", proc=new, until=35_000, where=lambda f: f[0] in ("leases/" + A0, "owners/" + A0)) == []
    assert one(h, "served", proc=old, since=33_000)[3][:2] == (A0, 1)  # still the owner
    # after the old release: the marker over the released lease, owners/ at 2
    (_, _, _, mark) = one(h, "apply", proc=new, where=lambda f: f[0] == "leases/" + A0)
    assert mark[2] == "if-match" and mark[6] == "marker 1"
    _, t_began, _, began = one(h, "hold_began", proc=new)
    assert began[:2] == (A0, 2) and t_began > 35_000
    assert_clean(h)


def test_old_lease_own_id_gives_two_owners():
    """UP-3 broken (broken_models.old_lease_own_id, a documented survivor of the random world): taking
    a live old lease naming this node's own id as its own, the new n0 replaces the old n0's live
    lease with the marker and holds a0 while the old process's renewed lease is still valid: two
    owners (INV-1), and the old hold's write after the new restore is lost to it (INV-8)."""
    model, mod = broken("old_lease_own_id")
    h = own_id_script(model, mod.MODEL.name).run(until_ms=40_000)

    old, new = proc_on(h, "om0"), proc_on(h, "m0")
    _, t_began, _, began = one(h, "hold_began", proc=new, until=35_000)
    assert began[:2] == (A0, 2)
    assert one(h, "served", proc=old, since=t_began)[3][:2] == (A0, 1)  # the old hold still acts
    found = invariants(h)
    assert mod.CATCHES in found and "INV-1" in found


# --- FN-5, UP-2: an old-format heartbeat frees nothing --------------------------------------------------


@pytest.mark.parametrize("age", ["fresh", "stale"])
def test_old_format_heartbeat_frees_nothing(age):
    """FN-5, UP-2, FN-8, FN-7: n1 holds a0 and crashes; nodes/n1 is then overwritten with an
    old-format heartbeat (fresh: written now; stale: written a minute ago). A record naming n1 is
    free only on a format-3 object not live naming its instance: the old format frees nothing, so
    n0's requests for a0 are refused, long after n1's ttl + grace, and n0 never fences over it. n0
    logs the old heartbeat as an old version running (fresh) or a retired node's (stale).
    With the stale one the operator's way out: `cluster forget n1` deletes it (FN-8), an absent
    nodes/n1 frees nothing either, and `cluster fence n1` creates a fence (FN-7) that frees a0
    once its written_at + ttl + grace has passed: n0 takes a0 at generation 2."""
    w = ScriptedWorld(nodes=2, restart=False)
    w.at(16_000, "request", "n1", A0)
    w.at(17_500, "crash", "n1")
    written_at = w.clocks["m0"].local(18_000) - (0 if age == "fresh" else 60_000)
    w.at(18_000, "put_raw", "nodes/n1", old_heartbeat("n1", written_at))
    w.at(40_000, "request", "n0", A0)
    w.at(55_000, "request", "n0", A0)
    if age == "stale":
        w.at(56_000, "forget", "n1")
        w.at(57_000, "request", "n0", A0)
        w.at(58_000, "fence", "n1")
        w.at(75_000, "request", "n0", A0)
    h = w.run(until_ms=78_000)

    p0 = [p for p, pr in enumerate(h.processes) if pr.node_id == "n0"][0]
    p1 = [p for p, pr in enumerate(h.processes) if pr.node_id == "n1"][0]
    assert one(h, "hold_began", proc=p1)[3][:2] == (A0, 1)
    refused = evs(h, "request_failed", proc=p0, until=56_000)
    old_format = "acquire: held by n1: nodes/n1 is in an old format, which frees nothing"
    assert [f[2] for _, _, _, f in refused] == [old_format] * 2
    assert evs(h, ("fenced", "hold_began"), proc=p0, until=56_000) == []
    assert applies(h, "owners/" + A0, proc=p0, until=56_000) == []
    assert evs(h, "old_version_running" if age == "fresh" else "old_retired", proc=p0,
               where=lambda f: f == ("n1",))
    if age == "stale":
        _, t_forgot, _, forgot = one(h, "operator_done", where=lambda f: f[0] == "cluster_forget")
        assert forgot == ("cluster_forget", "n1", "done")
        (_, _, _, deleted) = one(h, "apply", where=lambda f: f[0] == "nodes/n1" and f[1] == "DELETE")
        assert deleted[2] == "if-match"
        absent = one(h, "request_failed", proc=p0, since=56_000)[3]
        assert absent[2] == "acquire: held by n1: nodes/n1 is absent, which frees nothing"
        (_, t_fence, _, fence) = one(h, "apply", where=lambda f: f[0] == "nodes/n1" and f[6].startswith("fenced"))
        assert fence[2] == "if-none-match" and fence[6].startswith("fenced -")
        _, t_began, _, began = one(h, "hold_began", proc=p0)
        assert began[:2] == (A0, 2) and t_began >= t_fence + TAKEOVER_MS
    else:
        assert evs(h, "hold_began", proc=p0) == []
    assert_clean(h)


# --- UP-2: the start guard ---------------------------------------------------------------------------


def test_start_guard_waits_on_a_fresh_old_heartbeat():
    """UP-2, UP-1, NL-7: old node o0 stops cleanly at 6 s (its last heartbeat at about 6 s); new node
    n0 starts at 7 s. Its start guard waits (it does not exit) while that heartbeat is younger than
    horizon + ttl + grace = 24 s, saying how long is left, and passes within one re-read (P / 2)
    after; its start check's 15 s ran out meanwhile, and the first lease write waits for the guard."""
    w = UpgradeWorld()
    w.at(0, "old_start", "o0", "om0")
    w.at(6_000, "tell", "om0", "stop")
    w.at(7_000, "new_start", "n0", "m0")
    w.at(35_000, "ask", "m0", A0)
    h = w.run(until_ms=37_000)

    new = proc_on(h, "m0")
    hb = last_old_heartbeat_ms(h, "o0")
    _, t_wait, _, wait = one(h, "guard_waiting", proc=new)
    assert 7_000 < t_wait < 7_000 + SLACK_MS
    assert abs(wait[0] - (hb + GUARD_SPAN_MS - t_wait)) <= SLACK_MS
    _, t_passed, _, _ = one(h, "guard_passed", proc=new)
    assert hb + GUARD_SPAN_MS <= t_passed <= hb + GUARD_SPAN_MS + HALF_PERIOD_MS + SLACK_MS
    # the start check ended long before; its first write waits for the guard and follows it
    _, t_check, _, _ = one(h, "check_passed", proc=new)
    first = applies(h, "nodes/n0", proc=new)[0]
    assert t_passed <= t_check < t_passed + SLACK_MS and first[1] > t_passed
    assert evs(h, ("exit", "check_refused"), proc=new) == []
    assert one(h, "hold_began", proc=new)[3][:2] == (A0, 1)
    assert h.rules.get("UP-2", 0) >= 1
    assert_clean(h)


def test_start_guard_exits_when_an_old_heartbeat_keeps_being_rewritten():
    """UP-2: old node o0 keeps running; new node n0 starts at 5 s. Its guard waits on o0's fresh
    heartbeat, sees it rewritten at its next re-reads (o0 writes every 3 s), and exits with status 2
    and why, as the start check does for a twin, having written nothing: an old node is running."""
    w = UpgradeWorld()
    w.at(0, "old_start", "o0", "om0")
    w.at(5_000, "new_start", "n0", "m0")
    h = w.run(until_ms=20_000)

    new = proc_on(h, "m0")
    _, t_wait, _, _ = one(h, "guard_waiting", proc=new)
    _, t_exit, _, ex = one(h, "exit", proc=new)
    assert ex[0] == 2 and "UP-2" in ex[1] and "nodes/o0" in ex[1] and "old node is running" in ex[1]
    assert one(h, "check_refused", proc=new)[3][0] == ex[1]
    # two rewrites seen: within about two old heartbeat periods of the start
    assert t_wait < t_exit <= 5_000 + 2 * PERIOD_MS + HALF_PERIOD_MS + SLACK_MS
    assert evs(h, ("guard_passed", "check_passed", "apply"), proc=new) == []
    assert evs(h, "exit", proc=proc_on(h, "om0")) == []  # the old node is not disturbed
    assert_clean(h)


def test_guard_ignoring_old_heartbeats_starts_beside_an_old_node():
    """UP-2 broken (broken_models.guard_ignores_old_heartbeats): the same old node keeps running, and the
    broken guard passes on its first round, so n0 starts and writes its lease beside a running old
    binary, which the correct guard refuses (above). UP-3's read of leases/ refuses the actor the old node
    holds, so no other invariant breaks; UP-2's world check (checkers/start_guard.py) catches the guard
    itself: it passed while o0's heartbeat, applied by the bucket, was fresh."""
    model, mod = broken("guard_ignores_old_heartbeats")
    w = UpgradeWorld(model=model, model_name=mod.MODEL.name)
    w.at(0, "old_start", "o0", "om0")
    w.at(1_000, "ask", "om0", A0)
    w.at(5_000, "new_start", "n0", "m0")
    w.at(22_000, "ask", "m0", A0)
    h = w.run(until_ms=25_000)

    new, old = proc_on(h, "m0"), proc_on(h, "om0")
    _, t_passed, _, _ = one(h, "guard_passed", proc=new)
    assert t_passed < 5_000 + SLACK_MS and evs(h, ("guard_waiting", "exit"), proc=new) == []
    t_lease = applies(h, "nodes/n0", proc=new)[0][1]
    assert any(t > t_lease for _, t, _, _ in applies(h, "nodes/o0", proc=old))  # both running
    assert one(h, "request_failed", proc=new)[3][2] == "acquire: held by a live old lease naming o0"
    found = check_all(h)
    assert [v.invariant for v in found] == ["UP-2"], [v.explain(h) for v in found]
    assert "nodes/o0" in found[0].message and found[0].events[-1] == one(h, "guard_passed", proc=new)[0]


def test_guard_without_horizon_passes_a_horizon_early_and_up2_computes_its_own_test():
    """UP-2's arithmetic broken (broken_models.guard_without_horizon: ttl + grace, no horizon): the script of
    test_start_guard_waits_on_a_fresh_old_heartbeat. The broken guard passes 9 s (the horizon) early;
    UP-2's check, which computes the stale test from the rule's text (checkers.start_guard.stale_after_ms)
    and not from the model's code, catches it, and nothing else does."""
    from checkers.start_guard import stale_after_ms
    from model.params import Params

    assert stale_after_ms(Params()) == GUARD_SPAN_MS
    model, mod = broken("guard_without_horizon")
    w = UpgradeWorld(model=model, model_name=mod.MODEL.name)
    w.at(0, "old_start", "o0", "om0")
    w.at(6_000, "tell", "om0", "stop")
    w.at(7_000, "new_start", "n0", "m0")
    h = w.run(until_ms=37_000)

    new = proc_on(h, "m0")
    hb = last_old_heartbeat_ms(h, "o0")
    _, t_passed, _, _ = one(h, "guard_passed", proc=new)
    assert hb + TAKEOVER_MS <= t_passed <= hb + TAKEOVER_MS + HALF_PERIOD_MS + SLACK_MS
    found = check_all(h)
    assert [v.invariant for v in found] == ["UP-2"], [v.explain(h) for v in found]
    assert "nodes/o0" in found[0].message


@pytest.mark.parametrize("timing,beats_ms,renews_ms", [
    (None, 3_000, 3_333),  # the ADR's: a heartbeat every 3 s, renewals ttl / 3 after the previous returned
    ([1_000, 2_000], 1_000, 2_000),  # its own configuration, given by the world (option old_timing)
])
def test_old_binary_runs_at_its_own_cadence(timing, beats_ms, renews_ms):
    """The old binary (model/old_lease.py, section 6) heartbeats and renews at its own configuration
    (`OldTiming`, the world's option `old_timing`), whatever the new nodes' timing: its heartbeats
    land every heartbeat period, its renewals of a held actor every renewal interval after the
    previous one returned (a scripted round trip: a few ms)."""
    w = UpgradeWorld()
    if timing is not None:
        w.options["old_timing"] = timing
    w.at(0, "old_start", "o0", "om0")
    w.at(1_000, "ask", "om0", A0)
    h = w.run(until_ms=12_000)

    old = proc_on(h, "om0")
    beats = [t for _, t, p, f in applies(h, "nodes/o0", proc=old)]
    gaps = [b - a for a, b in zip(beats, beats[1:])]
    assert len(gaps) >= 3 and all(beats_ms - 10 <= g <= beats_ms + 10 for g in gaps), gaps
    renewals = [t for _, t, p, f in applies(h, "leases/" + A0, proc=old)]
    gaps = [b - a for a, b in zip(renewals, renewals[1:])]
    assert len(gaps) >= 2 and all(renews_ms <= g <= renews_ms + SLACK_MS for g in gaps), gaps
    assert_clean(h)


@pytest.mark.parametrize("ahead_ms", [
    600_000,
    20_000,
    5_000,
])
def test_future_dated_old_heartbeat_cannot_hold_the_cluster_forever(ahead_ms):
    """UP-2: a retired node's clock ran ahead: nodes/o9 holds an old heartbeat dated `ahead_ms` in the
    future (10 minutes, 20 s, 5 s), never rewritten. By the age rule it would hold every new node for
    that long + 24 s; instead it lapses at the latest horizon + ttl + grace + max_skew = 25 s after
    this node first read that body, on this node's own count. The guard waits (saying 25 s are
    left), passes within one re-read after that, and never before; then n0 writes its lease and
    serves."""
    w = UpgradeWorld()
    future = w.local("m0", 500) + ahead_ms
    w.at(500, "put_raw", "nodes/o9", old_heartbeat("o9", future, fmt=1))
    w.at(1_000, "new_start", "n0", "m0")
    w.at(48_000, "ask", "m0", A0)
    h = w.run(until_ms=50_000)

    new = proc_on(h, "m0")
    lapse = GUARD_SPAN_MS + MAX_SKEW_MS
    _, t_wait, _, wait = one(h, "guard_waiting", proc=new)
    # the guard's first read of the body came a round trip or two before it decided to wait
    first_read = t_wait
    assert 1_000 < t_wait < 1_000 + SLACK_MS and wait == (lapse,)
    _, t_passed, _, _ = one(h, "guard_passed", proc=new)
    assert first_read - SLACK_MS + lapse <= t_passed <= first_read + lapse + HALF_PERIOD_MS + SLACK_MS
    # sooner than the age rule would have it
    assert t_passed < true_ms(future) + GUARD_SPAN_MS
    assert applies(h, "nodes/n0", proc=new)[0][1] > t_passed
    assert one(h, "hold_began", proc=new)[3][:2] == (A0, 1)
    assert_clean(h)


# --- UP-1: the start order --------------------------------------------------------------------------------


def test_start_order_bucket_check_first():
    """UP-1: a new node's first request is the bucket check (LIST nodes/); the start check's read of
    nodes/<id> and the start guard's listing go out only after it answered. A failing bucket check
    (failed fast) is retried, and nothing else starts meanwhile."""
    w = UpgradeWorld()
    w.rule(NetRule("fail_fast", node="n0", op="LIST", key="nodes/", times=1))
    w.at(0, "new_start", "n0", "m0")
    h = w.run(until_ms=20_000)

    new = proc_on(h, "m0")
    reqs = [(t, op, key) for t, p, op, key in w.sent if p == new]
    assert reqs[0] == (0, "LIST", "nodes/")  # the bucket check, failed fast
    t_retry, op, key = reqs[1]
    assert (op, key) == ("LIST", "nodes/") and t_retry >= 1_000  # retried, nothing sent between
    # then the start check's read and the guard's listing (and the fence listing), together
    assert [(op, key) for _, op, key in reqs[2:5]] == [("GET", "nodes/n0"), ("LIST", "nodes/"), ("LIST", "nodes/")]
    assert all(t_retry < t < t_retry + SLACK_MS for t, _, _ in reqs[2:5])
    _, t_began, _, _ = one(h, "check_began", proc=new)
    assert t_began > t_retry
    assert h.rules.get("UP-1", 0) == 2  # the first try and its retry
    assert one(h, "guard_passed", proc=new)  # no old heartbeat: it passes on its first round
    assert one(h, "check_passed", proc=new)[1] >= t_retry + TAKEOVER_MS
    assert_clean(h)


# --- UP-4: old binaries after the switch -------------------------------------------------------------------


def test_old_binary_after_the_switch_never_takes_a_marked_actor():
    """UP-4, UP-3, UP-2: o0 held a1 before the switch; new node n0 takes a0 (new: marker created) and
    a1 (found: marker over the old lease), then hibernates a1. An old binary o1 started after the
    switch decodes only `wasmkeep-lease 1`: it reads both markers as corrupt, its requests fail, and
    it never writes leases/ or owners/, whether the new version holds the actor (a0) or not (a1).
    n0 logs o1's heartbeat as an old version running."""
    w = UpgradeWorld()
    w.at(0, "old_start", "o0", "om0")
    w.at(1_000, "ask", "om0", A1)
    w.at(2_000, "tell", "om0", "stop")
    w.at(3_000, "new_start", "n0", "m0")
    w.at(30_000, "ask", "m0", A0)
    w.at(30_000, "ask", "m0", A1)
    w.at(31_000, "tell", "m0", "hibernate", A1)
    w.at(32_000, "old_start", "o1", "om1")
    w.at(33_000, "ask", "om1", A0)
    w.at(34_000, "ask", "om1", A1)
    h = w.run(until_ms=40_000)

    new, late = proc_on(h, "m0"), proc_on(h, "om1")
    assert sorted(f[:2] for _, _, _, f in evs(h, "hold_began", proc=new)) == [(A0, 1), (A1, 2)]
    failed = evs(h, "request_failed", proc=late)
    assert [(f[0], f[2]) for _, _, _, f in failed] == [(A0, "leases/ record unreadable (corrupt)"),
                                                       (A1, "leases/ record unreadable (corrupt)")]
    assert evs(h, ("hold_began", "served"), proc=late) == []
    assert evs(h, "apply", proc=late, where=lambda f: not f[0].startswith("nodes/")) == []
    assert decode_lease(w.bucket.objects["leases/" + A0].body) == Marker(0)
    assert decode_lease(w.bucket.objects["leases/" + A1].body) == Marker(1)
    assert h.rules.get("UP-4", 0) == 2
    assert evs(h, "old_version_running", proc=new, since=32_000, where=lambda f: f == ("o1",))
    # n0 still owns a0
    assert evs(h, "hold_ended", proc=new, where=lambda f: f[0] == A0) == []
    assert_clean(h)


def test_old_binary_exits_when_a_new_node_uses_its_id():
    """UP-4: an old binary started after the switch cannot read a format-3 `nodes/<id>`: its start
    check reports its id as taken (exit 2) and it writes nothing, not even a heartbeat; the new n0
    goes on undisturbed."""
    w = UpgradeWorld()
    w.at(0, "new_start", "n0", "m0")
    w.at(17_000, "ask", "m0", A0)
    w.at(20_000, "old_start", "n0", "om0")
    w.at(21_000, "ask", "om0", A0)
    h = w.run(until_ms=25_000)

    new, old = proc_on(h, "m0"), proc_on(h, "om0")
    _, t_exit, _, ex = one(h, "exit", proc=old)
    assert ex[0] == 2 and "the id is taken" in ex[1] and 20_000 <= t_exit < 20_000 + SLACK_MS
    assert evs(h, "apply", proc=old) == []
    assert evs(h, ("exit", "lease_lost", "hold_ended"), proc=new) == []
    assert w.bucket.objects["nodes/n0"].body.startswith("wasmkeep-node 3")
    assert_clean(h)


# --- UP-3: a crash between the two writes -----------------------------------------------------------------


@pytest.mark.parametrize("crash", [True, False])
def test_lost_owners_create_is_recovered_from_the_marker(crash):
    """UP-3, OR-7: old node o0 held a0 at generation 1 and crashed. The new n0's first acquisition
    lands the marker (If-Match over the expired old lease, generation 1), but its owners/ create is
    lost on the way. Either n0 crashes right then (restarted as a new instance, it goes through its
    start check again), or the acquisition times out and stays unresolved. The next acquisition
    finds no owners/, reads the marker, seeds from it (and the keys) the same way without writing
    leases/ again, and creates owners/ at marker + 1 = 2."""
    w = UpgradeWorld()
    w.at(0, "old_start", "o0", "om0")
    w.at(1_000, "ask", "om0", A0)
    w.at(3_000, "kill", "om0")
    w.at(4_000, "new_start", "n0", "m0")
    lost = NetRule("lose_request", node="n0", op="PUT", key="owners/")
    w.rule(lost)
    w.at(30_000, "ask", "m0", A0)
    if crash:
        w.at(30_500, "kill", "m0")
        w.at(30_600, "new_restart", "m0")
        w.at(48_000, "ask", "m0", A0)
    else:
        w.at(35_000, "ask", "m0", A0)
    h = w.run(until_ms=52_000)

    assert lost.times == 0
    first = proc_on(h, "m0")
    second = proc_on(h, "m0", 1) if crash else first
    (_, t_mark, _, mark) = one(h, "apply", where=lambda f: f[0] == "leases/" + A0 and f[6].startswith("marker"))
    assert mark[2] == "if-match" and mark[6] == "marker 1" and mark[7].startswith("old-lease o0 ")
    assert one(h, "marked", proc=first)[3] == (A0, 1)
    # no hold from the first acquisition: none before the next one is asked for (at 35 s, or 48 s after the crash)
    assert evs(h, "hold_began", proc=first, until=min(t_mark + 5_000, 48_000 if crash else 35_000)) == []
    if crash:
        assert one(h, "crash", proc=first)
    else:
        assert one(h, "acquire_unresolved", proc=first)[3] == (A0, 2)
        assert one(h, "request_failed", proc=first, until=35_000)[3][2] == "acquire: outcome unknown"
    # the next acquisition: no second marker write, owners/ created at 2
    (_, t_own, _, own) = one(h, "apply", where=lambda f: f[0] == "owners/" + A0)
    inst = h.processes[second].instance
    assert own[2] == "if-none-match" and own[6] == owner_state("n0", inst, 2) and t_own > t_mark + 4_000
    assert one(h, "hold_began", proc=second)[3][:2] == (A0, 2)
    assert len(evs(h, "marked")) == 1 and len(applies(h, "leases/" + A0, since=t_mark + 1)) == 0
    assert decode_lease(w.bucket.objects["leases/" + A0].body) == Marker(1)
    assert_clean(h)


# --- FN-8: cluster forget ------------------------------------------------------------------------------------


def test_cluster_forget_deletes_only_a_stale_old_heartbeat():
    """FN-8, UP-2: old node o0 crashes at 4 s (its last heartbeat at about 3 s). `cluster forget o0`
    is refused while that heartbeat is younger than horizon + ttl + grace (24 s), and deletes it
    after, with If-Match on the version read. A format-3 object is never forgotten (a node lease is
    freed by a fence or a release, not deleted: FN-6)."""
    w = UpgradeWorld()
    w.at(0, "old_start", "o0", "om0")
    w.at(4_000, "kill", "om0")
    w.at(5_000, "forget", "o0")
    w.at(5_000, "put_raw", "nodes/n5", encode_node(NodeRecord(LIVE, "i5", w.local("m0", 5_000) - 60_000, "n5")))
    w.at(6_000, "forget", "n5")
    w.at(29_000, "forget", "o0")
    h = w.run(until_ms=31_000)

    hb = last_old_heartbeat_ms(h, "o0")
    done = [(t, f) for _, t, _, f in evs(h, "operator_done")]
    assert [f for _, f in done] == [
        ("cluster_forget", "o0", "refused: not a stale old-format heartbeat"),
        ("cluster_forget", "n5", "refused: not a stale old-format heartbeat"),
        ("cluster_forget", "o0", "done"),
    ]
    assert done[0][0] < hb + GUARD_SPAN_MS <= done[2][0]
    (_, t_del, _, deleted) = one(h, "apply", where=lambda f: f[1] == "DELETE")
    assert deleted[0] == "nodes/o0" and deleted[2] == "if-match" and deleted[4] == deleted[3]
    assert "nodes/o0" not in w.bucket.objects and "nodes/n5" in w.bucket.objects
    assert h.rules.get("FN-8", 0) == 3
    assert_clean(h)


# --- INV-8 across the switch ---------------------------------------------------------------------------------


def test_data_acknowledged_under_the_old_version_is_restored_by_the_new_owner():
    """INV-8, UP-3: o0 serves a0 (then crashes holding it) and a1 (then stops cleanly), writing
    segments it acknowledges by its own per-actor leases; the new owner n0's restores list every one
    of them. The checker judges the old holds' acknowledgements against the new restores: a restore
    without one of those segments is caught."""
    w = UpgradeWorld()
    w.at(0, "old_start", "o0", "om0")
    for t in (1_000, 1_500, 2_000):
        w.at(t, "ask", "om0", A0)
        w.at(t + 100, "ask", "om0", A1)
    w.at(2_500, "tell", "om0", "hibernate", A1)
    w.at(3_000, "ask", "om0", A1)
    w.at(3_500, "kill", "om0")
    w.at(5_000, "new_start", "n0", "m0")
    w.at(30_000, "ask", "m0", A0)
    w.at(30_000, "ask", "m0", A1)
    h = w.run(until_ms=33_000)

    old, new = proc_on(h, "om0"), proc_on(h, "m0")
    for actor, n_segments in ((A0, 3), (A1, 4)):
        acked = [f[2] for _, _, _, f in evs(h, "data_acked", proc=old, where=lambda f, a=actor: f[0] == a)]
        assert len(acked) == n_segments
        (_, _, _, restored) = one(h, "restored", proc=new, where=lambda f, a=actor: f[0] == a)
        assert set(acked) <= set(restored[2])
    assert_clean(h)

    # the same history with one old segment missing from the listing the world delivered to the new
    # owner's restore: INV-8 catches it
    # (its first listing of the actor seeds the generation, UP-3; the last is the restore)
    i, t, p, f = evs(h, "listed", proc=new, where=lambda f: f[0] == f"wal/{A0}/")[-1]
    h.events[i] = event(t, p, "listed", (f[0], f[1][1:], f[2]))
    h.cache.clear()
    violations = nothing_lost.check(h)
    assert [v.invariant for v in violations] == ["INV-8"] and f[1][0] in violations[0].message


# --- findings --------------------------------------------------------------------------------------------------


def test_no_old_version_error_while_the_guard_waits():
    """UP-2: before the switch a fresh old heartbeat is what the start guard waits for (logging how long
    is left), not an error; `old_version_running` is for old heartbeats seen after the switch."""
    w = UpgradeWorld()
    w.at(0, "old_start", "o0", "om0")
    w.at(6_000, "tell", "om0", "stop")
    w.at(7_000, "new_start", "n0", "m0")
    h = w.run(until_ms=35_000)

    new = proc_on(h, "m0")
    _, t_passed, _, _ = one(h, "guard_passed", proc=new)
    assert evs(h, "old_version_running", proc=new, until=t_passed) == []


# --- the runner's upgrade scenario --------------------------------------------------------------------------


def run_runner(tmp_path, *args):
    report = tmp_path / "report.json"
    proc = subprocess.run([sys.executable, "runner.py", *args, "--report", str(report)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    data = json.loads(report.read_text()) if report.exists() else None
    return proc, data


def test_runner_upgrade_scenario_passes_and_hits_every_up_rule(tmp_path):
    """UP-1..UP-4 in the random world: `--scenario upgrade` passes, and its report's rules_hit counts
    every UP rule."""
    proc, report = run_runner(tmp_path, "--scenario", "upgrade", "--seeds", "40")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert report["passed"] and report["scenario"] == "upgrade"
    for rule in ("UP-1", "UP-2", "UP-3", "UP-4"):
        assert report["rules_hit"].get(rule, 0) >= 1, (rule, report["rules_hit"])


def test_runner_catches_seed_from_old_lease_only(tmp_path):
    """UP-3 broken: the runner's upgrade scenario catches seed_from_old_lease_only (first at seed 2),
    by INV-2, and exits 1."""
    proc, report = run_runner(tmp_path, "--model", "seed_from_old_lease_only", "--scenario", "upgrade",
                              "--seeds", "40")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert report["failing_seeds"] and "INV-2" in {f["invariant"] for f in report["failures"]}


def test_runner_runs_a_documented_survivor(tmp_path):
    """The survivor of section 6 (old_lease_own_id) can be run by name, as
    `--broken` runs them (the runner once refused them as unknown models, exit 2)."""
    proc, _report = run_runner(tmp_path, "--model", "old_lease_own_id", "--scenario", "upgrade", "--seeds", "1",
                               "--workers", "1")
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
