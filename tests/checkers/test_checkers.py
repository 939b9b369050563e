"""The checkers on hand-built histories (LEASE-1, INV-3), and LEASE-1 biting a broken model (NL-9).

Histories are built with the field order model.observations.KINDS gives, so a
field added at the end of a kind does not break them. LEASE-1's histories are world
facts (checkers/facts.py): a node lease is valid from the instant one of its `live` writes
took effect to that write's send time on the writer's clock + ttl - safety (NL-4), never
from the model's `lease_valid` claims.
"""

from __future__ import annotations

import copy
import dataclasses

import pytest

from checkers import CHECKERS, check_all
from history import History
from history import Process
from model.observations import KINDS
from model.params import Params

import pinned
from factkit import finish
from factkit import live as live_write

LEASE_1 = CHECKERS["LEASE-1"]
INV_3 = CHECKERS["INV-3"]


def fields(kind: str, **values) -> tuple:
    """The fields of an event of `kind`, in KINDS order; names not given default to ''."""
    unknown = set(values) - set(KINDS[kind])
    assert not unknown, f"{kind} has no fields {unknown}"
    return tuple(values.get(name, "") for name in KINDS[kind])


def history(*procs: tuple) -> History:
    """procs: (node_id, instance, machine, offset_ms, drift_ppm)."""
    h = History(seed=0, model="hand", scenario="hand", params={}, options={})
    for node_id, instance, machine, offset_ms, drift_ppm in procs:
        h.processes.append(Process(node_id=node_id, instance=instance, machine=machine,
                                   offset_ms=offset_ms, drift_ppm=drift_ppm))
    return h


def live(h: History, sent_ms: int, proc: int) -> int:
    """A `live` write of proc's node lease, sent at true time sent_ms and taking effect at once, its
    written_at the sender's clock at send: valid over [sent_ms, true_at(local(sent_ms) + ttl - safety)),
    8 s at the defaults (NL-4)."""
    return live_write(h, sent_ms, proc, lag=0)


def apply(h: History, t_ms: int, proc: int, key: str, cond, prev: int, named, serial: int, state: str,
          op: str = "PUT", prev_state: str = "") -> int:
    h.add(t_ms, proc, "apply", fields("apply", key=key, op=op, cond=cond, prev_serial=prev, named_serial=named,
                                      serial=serial, state=state, prev_state=prev_state))
    return len(h.events) - 1


# --- LEASE-1 --------------------------------------------------------------------------------------------


def test_lease1_successive_processes_of_one_node_pass():
    """LEASE-1: the first process exits (NL-10) before the second becomes valid: no overlap, even
    though the first one's until (9 s) had not passed when the second's write took effect (8 s)."""
    h = history(("n1", "a", "m0", 0, 0), ("n1", "b", "m0", 0, 0))
    live(h, 1_000, 0)  # valid over [1 s, 9 s)
    h.add(4_000, 0, "lease_lost", fields("lease_lost", reason="fenced"))
    h.add(4_000, 0, "exit", fields("exit", status=1, reason="NL-10"))
    live(h, 8_000, 1)
    finish(h)
    assert LEASE_1(h) == []
    del h.events[2]  # the control: without the exit, the windows overlap over [8 s, 9 s)
    h.cache.clear()
    assert [v.invariant for v in LEASE_1(h)] == ["LEASE-1"]


def test_lease1_two_nodes_may_overlap():
    h = history(("n1", "a", "m0", 0, 0), ("n2", "b", "m1", 0, 0))
    live(h, 1_000, 0)
    live(h, 2_000, 1)
    finish(h)
    assert LEASE_1(h) == []


def test_lease1_window_ends_at_until_converted_to_true_time():
    """LEASE-1: validity ends at until on the process's own clock: a clock 1 s ahead ends 1 s earlier
    in true time. Half-open windows: touching is not overlapping."""
    h = history(("n1", "a", "m0", 1_000, 0), ("n1", "b", "m1", 0, 0))
    live(h, 0, 0)  # written_at 1 000 on m0; until local 9 000 on m0 is true 8 000
    live(h, 8_000, 1)
    finish(h)
    assert LEASE_1(h) == []


def test_lease1_overlapping_windows_of_two_processes_of_one_node_violate():
    """LEASE-1: two processes of n1 valid at once; the violation names both applied live writes."""
    h = history(("n1", "a", "m0", 1_000, 0), ("n1", "b", "t0", 0, 0))
    ix = {"a": live(h, 0, 0)}  # valid over true [0, 8000)
    h.add(5_000, -1, "twin", fields("twin", node_id="n1", machine="t0"))
    ix["b"] = live(h, 7_999, 1)  # 1 ms too early
    finish(h, ix)
    ea, eb = ix["a"], ix["b"]
    (v,) = LEASE_1(h)
    assert v.invariant == "LEASE-1"
    assert set(v.events) == {ea, eb}
    assert "n1/a" in v.message and "n1/b" in v.message and "t0" in v.message
    text = v.explain(h)
    assert all(f"#{i}" in text for i in (ea, eb)) and "apply" in text and "live a 1000" in text


def test_lease1_crash_ends_the_window():
    h = history(("n1", "a", "m0", 0, 0), ("n1", "b", "m0", 0, 0))
    live(h, 1_000, 0)
    h.add(2_000, 0, "crash", ())
    live(h, 3_000, 1)
    finish(h)
    assert LEASE_1(h) == []


def test_lease1_a_ran_out_lease_renewed_late_by_the_same_process_is_not_a_violation():
    """LEASE-1 compares processes: one process's own windows merge."""
    h = history(("n1", "a", "m0", 0, 0),)
    live(h, 1_000, 0)
    live(h, 4_000, 0)
    live(h, 30_000, 0)  # NL-11: recovered after running out
    finish(h)
    assert LEASE_1(h) == []


def test_lease1_a_fence_or_release_keeps_the_written_at_it_replaces():
    """NL-1 (FN-3, FN-7, CS-1): a fence over `live a 4000` names a and keeps 4000; one dated 0 (a fence that
    would free n1's records at once: broken_models/fence_dated_zero) is reported; so is a `released` with
    another instance's name. A fence of an absent object (the operator's, FN-7) replaces nothing: no rule."""
    h = history(("n1", "a", "m0", 0, 0), ("n2", "b", "m1", 0, 0))
    apply(h, 1_000, 0, "nodes/n1", "if-none-match", 0, 0, 1, "live a 1000")
    apply(h, 4_000, 0, "nodes/n1", "if-match", 1, 1, 2, "live a 4000", prev_state="live a 1000")
    apply(h, 30_000, 1, "nodes/n1", "if-match", 2, 2, 3, "fenced a 4000", prev_state="live a 4000")
    apply(h, 31_000, 1, "nodes/n3", "if-none-match", 0, 0, 4, "fenced - 31000")
    finish(h)
    assert [v for v in LEASE_1(h) if "NL-1" in v.message] == []
    h = history(("n1", "a", "m0", 0, 0), ("n2", "b", "m1", 0, 0))
    apply(h, 4_000, 0, "nodes/n1", "if-none-match", 0, 0, 1, "live a 4000")
    bad = apply(h, 30_000, 1, "nodes/n1", "if-match", 1, 1, 2, "fenced a 0", prev_state="live a 4000")
    apply(h, 31_000, 0, "nodes/n2", "if-none-match", 0, 0, 3, "live b 31000")
    bad2 = apply(h, 32_000, 1, "nodes/n2", "if-match", 3, 3, 4, "released a 31000", prev_state="live b 31000")
    finish(h)
    found = [v for v in LEASE_1(h) if "NL-1" in v.message]
    assert [v.events for v in found] == [(bad,), (bad2,)], [v.message for v in found]
    assert '"fenced a 0" over "live a 4000"' in found[0].message


def test_lease1_judges_the_start_check_wait_on_world_facts():
    """NL-5 (broken_models/short_start_check): n1/a started at 1 s (its clock reads true time); the start check
    waits ttl + grace (15 s at T-1's defaults) in every case: a first live write sent at 16.4 s passes, one
    sent at 12 s is reported. The shortcut: a fenced object of n1 whose kept written_at (0) + ttl + grace
    passed by the write's send allows a write sent at 15.5 s by a process started at 5 s."""
    def run(started: int, sent: int, fence: bool):
        h = history(("n1", "a", "m0", 0, 0), ("n2", "b", "m1", 0, 0))
        h.add(started, 0, "start", fields("start", node_id="n1", instance="a", machine="m0"))
        if fence:
            apply(h, 2_000, 1, "nodes/n1", "if-match", 1, 1, 2, "fenced z 0", prev_state="live z 0")
        h.add(sent + 20, 0, "apply", fields("apply", key="nodes/n1", op="PUT", cond="if-match", prev_serial=2,
                                          named_serial=2, serial=3, state=f"live a {sent}", sent_ms=sent))
        finish(h)
        return [v for v in LEASE_1(h) if "NL-5" in v.message]

    assert run(1_000, 16_400, False) == []
    (v,) = run(1_000, 12_000, False)
    assert "11.000 s after it started" in v.message
    assert run(5_000, 15_500, True) == [] and len(run(5_000, 15_500, False)) == 1


def test_inv1_judges_fn5_on_the_bucket_states_of_nodes_a():
    """FN-5 (broken_models/absent_frees): n2 takes a record naming n1/a at 40 s. If nodes/n1 was deleted at
    20 s (absent: frees nothing), INV-1 names the acquisition; if it held `fenced a 4000` (free from
    4000 + ttl + grace = 19 s on n2's clock), nothing is reported."""
    def run(fenced: bool):
        h = history(("n1", "a", "m0", 0, 0), ("n2", "b", "m1", 0, 0))
        apply(h, 4_000, 0, "nodes/n1", "if-none-match", 0, 0, 1, "live a 4000")
        apply(h, 5_000, 0, "owners/t/c/x", "if-none-match", 0, 0, 2, "held n1 a 1")
        if fenced:
            apply(h, 20_000, 1, "nodes/n1", "if-match", 1, 1, 3, "fenced a 4000", prev_state="live a 4000")
        else:
            h.add(20_000, -1, "fault_delete", fields("fault_delete", key="nodes/n1"))
        apply(h, 40_000, 1, "owners/t/c/x", "if-match", 2, 2, 4, "held n2 b 2", prev_state="held n1 a 1")
        finish(h)
        return [v for v in CHECKERS["INV-1"](h) if "FN-5" in v.message]

    assert run(fenced=True) == []
    (v,) = run(fenced=False)
    assert "nodes/n1 held only absent" in v.message and "n1/a" in v.message


def test_fence1_judges_a_peers_fence_on_world_facts():
    """FN-1, FN-2, FN-3 (broken_models/short_watch): n2/b's lease is valid from 1 s (live writes every 3 s,
    T-1's defaults: P 3 s, A 2 s, ttl 10 s, safety 2 s, grace 5 s). A fence of n1 sent at 20 s, over
    `live a 4000` (4000 + 15 s passed at 20 s), passes. Sent at 1.5 s, 0.5 s into n2's first window, the
    watch (P + A = 5 s) cannot have run: FN-2. Over `live a 9000` at 20 s: 9000 + 15 s has not passed: FN-3.
    Sent at 40 s, after n2's last write lapsed: FN-1."""
    def run(fence_at: int, written_at: int):
        h = history(("n1", "a", "m0", 0, 0), ("n2", "b", "m1", 0, 0))
        for sent in range(1_000, 31_000, 3_000):
            live_write(h, sent, 1)
        apply(h, written_at, 0, "nodes/n1", "if-none-match", 0, 0, 1, f"live a {written_at}")
        h.add(fence_at, 1, "fence_sent", fields("fence_sent", key="nodes/n1", in_flight=1))
        h.add(fence_at + 20, 1, "apply", fields("apply", key="nodes/n1", op="PUT", cond="if-match", prev_serial=1,
                                              named_serial=1, serial=2, state=f"fenced a {written_at}",
                                              prev_state=f"live a {written_at}", sent_ms=fence_at))
        finish(h)
        return [v.message for v in CHECKERS["FENCE-1"](h)]

    assert run(20_000, 4_000) == []
    assert "(FN-2)" in run(1_500, 0)[0]
    assert "(FN-3)" in run(20_000, 9_000)[0]
    assert "(FN-1)" in run(40_000, 4_000)[0]


# --- INV-3 --------------------------------------------------------------------------------------------


def test_inv3_a_conditional_chain_passes():
    h = history(("n1", "a", "m0", 0, 0), ("n9", "-", "m1", 0, 0))
    apply(h, 1_000, 0, "nodes/n1", "if-none-match", 0, 0, 1, "live a")
    apply(h, 4_000, 0, "nodes/n1", "if-match", 1, 1, 2, "live a")
    apply(h, 7_000, 0, "nodes/n1", "if-match", 2, 2, 3, "live a")
    apply(h, 7_500, 1, "nodes/n9", None, 0, None, 4, "node n9")  # an old binary's heartbeat (section 6)
    apply(h, 8_000, 1, "wal/t/c/x/1", None, 0, None, 5, "")  # not a protocol key
    assert INV_3(h) == []


def test_inv3_unconditional_write_on_nodes_violates():
    """INV-3: a format-3 write to nodes/ names no predecessor; the violation names that event."""
    h = history(("n1", "a", "m0", 0, 0),)
    apply(h, 1_000, 0, "nodes/n1", "if-none-match", 0, 0, 1, "live a")
    bad = apply(h, 4_000, 0, "nodes/n1", None, 1, None, 2, "live a")
    (v,) = INV_3(h)
    assert v.invariant == "INV-3" and v.events == (bad,)
    assert "unconditional" in v.message and "nodes/n1" in v.message and "n1/a" in v.message


def test_inv3_unconditional_marker_on_leases_violates():
    """INV-3, UP-3: every write to leases/ is conditional (the old binary's acquisitions and
    renewals, and the marker replacing a dead old lease); a marker written blind over an old
    lease names no predecessor (broken_models/unconditional_marker.py)."""
    h = history(("n1", "a", "m0", 0, 0), ("n2", "b", "m1", 0, 0))
    apply(h, 1_000, 0, "leases/t/c/x", "if-none-match", 0, 0, 1, "old n1 1")
    apply(h, 4_000, 0, "leases/t/c/x", "if-match", 1, 1, 2, "old n1 1")
    bad = apply(h, 5_000, 1, "leases/t/c/x", None, 2, None, 3, "marker 1")
    (v,) = INV_3(h)
    assert v.events == (bad,) and "unconditional" in v.message and "leases/t/c/x" in v.message


def test_inv3_stale_if_match_after_aba_violates():
    """INV-3: with MD5 ETags an If-Match naming an older version succeeds after A-B-A: the write
    replaced version #2 but named #1; the violation names the write of #1 and the offending one."""
    h = history(("n1", "a", "m0", 0, 0), ("n2", "b", "m1", 0, 0))
    w1 = apply(h, 1_000, 0, "nodes/n1", "if-none-match", 0, 0, 1, "live a")
    apply(h, 4_000, 1, "nodes/n1", "if-match", 1, 1, 2, "fenced a")
    bad = apply(h, 5_000, 0, "nodes/n1", "if-match", 2, 1, 3, "live a")
    (v,) = INV_3(h)
    assert v.events == (w1, bad)
    assert "#1" in v.message and "#2" in v.message and "n1/a" in v.message


def test_inv3_fork_violates():
    h = history(("n1", "a", "m0", 0, 0), ("n2", "b", "m1", 0, 0))
    apply(h, 1_000, 0, "owners/t/c/x", "if-none-match", 0, 0, 1, "held n1 a 1")
    e2 = apply(h, 2_000, 0, "owners/t/c/x", "if-match", 1, 1, 2, "held n1 a 2")
    e3 = apply(h, 2_001, 1, "owners/t/c/x", "if-match", 1, 1, 3, "held n2 b 2")
    violations = INV_3(h)
    assert any(set(v.events) == {e2, e3} and "successors" in v.message for v in violations)


def test_inv3_create_delete_create_is_one_chain():
    """INV-3: a key created, deleted (If-Match) and created again (If-None-Match) has one history."""
    h = history(("n1", "a", "m0", 0, 0),)
    apply(h, 1_000, 0, "owners/t/c/x", "if-none-match", 0, 0, 1, "held n1 a 1")
    apply(h, 2_000, 0, "owners/t/c/x", "if-match", 1, 1, 0, "", op="DELETE")
    apply(h, 3_000, 0, "owners/t/c/x", "if-none-match", 0, 0, 2, "held n1 a 2")
    assert INV_3(h) == []


# --- LEASE-1 bites: a model that adopts any instance on a conflict (breaks NL-9) ---------------------------------


def test_broken_models_state_their_rule_and_checker():
    """STYLE.md 8: every broken model names the rule it breaks and the checker that must catch it."""
    from broken_models import entries, load

    for name in [e.name for e in entries() if e.kind != "correct"]:
        mod = load(name)
        assert mod.RULE and mod.CATCHES in CHECKERS, name
        assert mod.RULE in mod.__doc__ and mod.CATCHES in mod.__doc__, name
        assert callable(mod.step) and mod.MODEL is not None


def test_lease1_bites_adopt_any_instance(twins_catch):
    """NL-9 without the instance check lets a twin adopt the other's write: LEASE-1 catches it
    (scenario 'twins'), and the violation names the two processes' applied live writes."""
    from broken_models import load

    assert load("adopt_any_instance").CATCHES == "LEASE-1"
    seed, violations = twins_catch
    # the harm (two processes of one id both holding the lease, their two applied writes named) or
    # the twin's own claim: valid longer than any write of its own that took effect allows
    both = [v for v in violations if "both held node lease" in v.message]
    claims = [v for v in violations if "believes its node lease valid" in v.message]
    assert all(len(v.events) == 2 for v in both) and (both or claims), [v.message for v in violations]


def test_correct_model_passes_lease1_over_the_same_seeds(twins_catch):
    """The control: the correct model over the seeds scanned up to the catch has no LEASE-1 violation."""
    from model import MODEL
    from scenarios.sim import run_seed

    seed, _ = twins_catch
    for s in range(0, max(seed + 1, 20)):
        h = run_seed(s, MODEL, "twins", None, "correct")
        assert [v.message for v in check_all(h) if v.invariant == "LEASE-1"] == [], f"seed {s}"


@pytest.mark.slow
def test_lease1_sweep_broken_caught_and_correct_clean():
    """The long version: 300 twins seeds each, for both models."""
    from broken_models import load
    from model import MODEL
    from scenarios.sim import run_seed

    broken = load("adopt_any_instance").MODEL
    caught = [s for s in range(300)
              if any(v.invariant == "LEASE-1" for v in check_all(run_seed(s, broken, "twins", None, "adopt_any_instance")))]
    assert caught
    clean = [s for s in range(300)
             if any(v.invariant == "LEASE-1" for v in check_all(run_seed(s, MODEL, "twins", None, "correct")))]
    assert clean == []


# --- the clock conversion LEASE-1 relies on ------------------------------------------------------------


def test_lease1_clock_true_at_is_the_first_instant_reading_the_local_time():
    """LEASE-1 ends a window at true_at(until): the first true instant whose local reading is >= until."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from history import Clock

    @settings(max_examples=500, deadline=None)
    @given(st.integers(-10**6, 10**6), st.integers(-1_000, 1_000), st.integers(-10**7, 10**9))
    def prop(offset_ms, drift_ppm, local_ms):
        c = Clock(offset_ms, drift_ppm)
        t = c.true_at(local_ms)
        assert c.local(t) >= local_ms > c.local(t - 1)

    prop()


# --- BD-1: fences in flight, counted by the world --------------------------------------------------


def test_bd1_nine_fence_writes_in_flight_violate():
    """BD-1 (broken_models/unbounded_fences): the world counts, at each fence write a process sends, the
    fence writes it has in flight; a ninth while eight are unanswered is reported, once per process."""
    h = history(("n0", "a", "m0", 0, 0),)
    for k in range(1, 10):
        h.add(1_000 + k, 0, "fence_sent", fields("fence_sent", key=f"nodes/n{k}", in_flight=k))
    (v,) = CHECKERS["BD-1"](h)
    assert v.invariant == "BD-1" and v.events == (8,) and "9 fences' requests in flight" in v.message
    h.events = h.events[:8]
    assert CHECKERS["BD-1"](h) == []


def test_bd1_the_mass_fault_puts_more_than_eight_fences_in_flight():
    """BD-1 (broken_models/unbounded_fences) in the swarm's mass fault (10 nodes, nine gone at once, the one
    left cut off meanwhile): back, it fences all nine together, its reads quick and its fence writes
    answered slowly, before the quiet phase stops the slow replies. The plan (shrunk from seed 21's run,
    a mass seed) has the broken model put nine fences in flight, and BD-1 names it; the correct model on
    the same plan has at most eight, and it passes."""
    o = pinned.plan("bd1-mass-fault")["options"]
    assert o["mass"] and o["delay_ms_max"] == 5
    h = pinned.run("bd1-mass-fault")
    assert max(e.fields.in_flight for e in h.events if e.kind == "fence_sent") == 9
    assert [v.invariant for v in CHECKERS["BD-1"](h)] == ["BD-1"]
    h = pinned.run("bd1-mass-fault", "correct")
    assert max(e.fields.in_flight for e in h.events if e.kind == "fence_sent") <= 8
    assert check_all(h) == [], "\n".join(v.explain(h) for v in check_all(h))


def test_a_record_storm_catches_the_unlocked_resolver_in_the_swarm():
    """OR-9 broken (broken_models.unlocked_resolver, BM-3) in the swarm's record storms: for a stretch half
    the record writes are lost and most replies to the rest come slowly, while clients retry at once at
    the same node, so a resolver reads between a same-generation write landing and its reply. The plan
    (shrunk from seed 19's run) draws a storm: the broken model is caught (two owners, INV-1, or an act outside a
    hold, INV-6); the correct model on the same plan passes."""
    o = pinned.plan("record-storm-unlocked-resolver")["options"]
    assert o["record_storms"] and o["p_client_retry"] == 0.9
    h = pinned.run("record-storm-unlocked-resolver")
    assert any(e.kind == "fault" and e.fields.what == "record_storm" for e in h.events)
    assert {v.invariant for v in check_all(h)} & {"INV-1", "INV-6"}
    h = pinned.run("record-storm-unlocked-resolver", "correct")
    assert check_all(h) == [], "\n".join(v.explain(h) for v in check_all(h))


def test_a_guard_storm_catches_a_guard_failing_open_in_the_swarm():
    """UP-2 broken (broken_models.guard_fails_open: a failed guard read counts as no old heartbeat) in the
    swarm's guard storms: as the new nodes start after an upgrade, most of their `nodes/` reads are lost
    for a stretch, so a guard round fails to read every heartbeat that is still fresh. The plan (shrunk
    from seed 66's run) draws an upgrade with a storm: the broken model is caught (UP-2); the correct model on the
    same plan passes, and reaches the coverage point that names the margin."""
    from checkers.coverage import reached

    assert pinned.plan("guard-storm-fails-open")["options"]["upgrade"]["guard_storm"]
    h = pinned.run("guard-storm-fails-open")
    assert any(e.kind == "fault" and e.fields.what == "guard_storm" for e in h.events)
    assert {v.invariant for v in check_all(h)} == {"UP-2"}
    h = pinned.run("guard-storm-fails-open", "correct")
    assert check_all(h) == [], "\n".join(v.explain(h) for v in check_all(h))
    assert "guard read lost on a fresh heartbeat" in reached(h)


def test_a_drain_waits_for_holds_and_catches_a_drain_that_keeps_them():
    """CS-3 broken (broken_models.drain_keeps_holds: a drain releases nothing and waits for holds to end by
    themselves). The plan (shrunk from seed 15's run) draws a drain of n1 at 1.1 s, while n1 is still in
    its start check: the world asks it for every actor, and tells it to drain only once an applied record names it
    (past 10 s), its actors kept busy (no hibernation or move reaches it) to the drain's bound. The
    broken model never reports drained (INV-11); the correct model, on the same plan, releases them and
    passes."""
    o = pinned.plan("drain-keeps-holds")["options"]
    assert o["drains"][0][:2] == ["n1", 1139] and o["drains_wait_for_holds"]
    h = pinned.run("drain-keeps-holds")
    i = next(k for k, e in enumerate(h.events) if e.kind == "told" and e.fields.command == "drain")
    assert h.events[i].t_ms > 10_000
    named = {}
    for t, _p, kind, f in h.events[:i]:
        if kind == "apply" and f.key.startswith("owners/"):
            named[f.key] = f.state
    assert any(state.startswith("held n1 ") for state in named.values()), named
    assert [v.invariant for v in check_all(h)] == ["INV-11"]
    h = pinned.run("drain-keeps-holds", "correct")
    assert check_all(h) == [], "\n".join(v.explain(h) for v in check_all(h))
    assert any(e.kind == "drained" for e in h.events)


def test_a_silencing_twin_wins_and_catches_adopting_any_instance():
    """NL-9 broken (broken_models.adopt_any_instance: a re-read after a failed condition adopts a `live`
    object of any instance). The plan (shrunk from seed 1's run) draws a twin of n1 at 97.1 s that silences
    n1's own lease writes through its start check (an outage of mode "lease"): the twin writes live over n1's
    object; back, n1's write fails its condition and its re-read meets the twin's instance. The broken n1
    adopts it: two processes hold n1's node lease (LEASE-1). The correct n1, on the same plan, exits
    (NL-10) and the run passes, reaching "twin won"."""
    from checkers.coverage import reached

    o = pinned.plan("silencing-twin-adopted")["options"]
    assert o["twins"][0][0] == "n1" and o["twin_silences"] == [0]
    h = pinned.run("silencing-twin-adopted")
    assert any(e.kind == "fault" and (e.fields.what, e.fields.target, e.fields.detail) == ("outage", "m1", "lease")
               for e in h.events)
    assert "LEASE-1" in {v.invariant for v in check_all(h)}
    h = pinned.run("silencing-twin-adopted", "correct")
    assert check_all(h) == [], "\n".join(v.explain(h) for v in check_all(h))
    assert any(e.kind == "exit" and "live under another instance" in e.fields.reason for e in h.events)
    assert "twin won" in reached(h)


def test_a_silenced_release_catches_a_stop_that_retries_forever():
    """CS-2 broken (broken_models.stop_retries_forever: a clean stop retries its failing `released` write for
    ever). The plan (shrunk from seed 31's run) draws silenced stops of n2: when its process sends its
    `released` write, its machine's own lease writes are lost for 3 A + 2 s, so the write and its retries
    fail past A + 1 s. The broken model keeps retrying (CS-2); the correct model, on the same plan, gives up
    after A + 1 s and exits."""
    o = pinned.plan("silenced-release-retried")["options"]
    assert o["stop_silences"] and o["stops"][0][0] == "n2"
    h = pinned.run("silenced-release-retried")
    assert "CS-2" in {v.invariant for v in check_all(h)}
    h = pinned.run("silenced-release-retried", "correct")
    assert check_all(h) == [], "\n".join(v.explain(h) for v in check_all(h))
    (cut,) = [k for k, e in enumerate(h.events) if e.kind == "fault"
              and (e.fields.what, e.fields.target, e.fields.detail) == ("outage", "m2", "lease")]
    t = h.events[cut].t_ms
    sent = [e for e in h.events if e.kind == "released_sent" and e.t_ms == t]
    assert sent and h.processes[sent[0].proc].machine == "m2"  # the outage begins as the write leaves
    assert any(e.kind == "exit" and e.proc == sent[0].proc for e in h.events)


def test_bd1_the_world_counts_a_fence_in_flight_until_its_answer():
    """BD-1, FN-7: the operator fences n1 twice, the second after the first's reply: each fence_sent counts
    one in flight (the first was answered, so it no longer counts); the node's own lease writes never count."""
    from scenarios.script import ScriptedWorld

    w = ScriptedWorld(nodes=2)
    w.at(20_000, "fence", "n1")
    w.at(25_000, "fence", "n1")
    h = w.run(until_ms=30_000)
    sent = [(h.processes[e.proc].node_id, e.fields) for e in h.events if e.kind == "fence_sent"]
    assert sent and all((f.key, f.in_flight) == ("nodes/n1", 1) for _n, f in sent), sent
    assert {n for n, _f in sent} <= {"operator", "n0"}


# --- CS-2: `released` retries, on the stopping process's own clock -------------------------------------


def _released_retries(gap_ms: int, drift_ppm: int = 0, conflict: str | None = None) -> History:
    """n0/a sends `released` at 10 s and again `gap_ms` later (true time); `conflict`: the first try was
    answered 409 ("conflicted") or 412 ("refused") on its own key."""
    h = history(("n0", "a", "m0", 0, drift_ppm))
    h.params = Params().to_dict()
    h.add(10_000, 0, "released_sent", ())
    if conflict == "conflicted":
        h.add(10_010, 0, "conflicted", fields("conflicted", key="nodes/n0", op="PUT", sent_ms=10_000))
    elif conflict == "refused":
        h.add(10_010, 0, "refused", fields("refused", key="nodes/n0", op="PUT", cond="if-match",
                                           met="live a 1", sent_ms=10_000, status=412))
    h.add(10_000 + gap_ms, 0, "released_sent", ())
    finish(h, {})
    return h


def test_cs2_released_retries_are_bounded_by_a_plus_one_second():
    """CS-2: retried for A + 1 s from the first try; one millisecond more is a violation."""
    a = Params().attempt_timeout_ms
    assert CHECKERS["CS-2"](_released_retries(a + 1_000)) == []
    (v,) = CHECKERS["CS-2"](_released_retries(a + 1_001))
    assert v.invariant == "CS-2" and "retried for A + 1 s" in v.message


def test_cs2_a_step_of_the_wall_clock_moves_nothing_of_the_window():
    """CS-2, T-1 (seed 3307 of the merged draw: n2's clock stepped 1.6 s forward between its first `released`
    write and a retry sent 3.6 s later, true): the window and the attempt timeouts run on the monotonic clock
    (issue 47), so a step of the wall clock, forward or back, is no time the process counted."""
    a = Params().attempt_timeout_ms
    gap = a + 1_000 - 500  # within the bound on a clock never stepped
    h = _released_retries(gap)
    assert CHECKERS["CS-2"](h) == []
    forward = copy.deepcopy(h)
    forward.processes[0] = dataclasses.replace(forward.processes[0], steps=((10_100, 900),))
    forward.cache.clear()
    assert forward.processes[0].clock.local(10_000 + gap) - forward.processes[0].clock.local(10_000) > a + 1_000
    assert CHECKERS["CS-2"](forward) == []
    back = copy.deepcopy(h)
    back.processes[0] = dataclasses.replace(back.processes[0], steps=((10_100, -900),))
    back.cache.clear()
    assert CHECKERS["CS-2"](back) == []
    late = _released_retries(a + 1_000 + 800)
    late.processes[0] = dataclasses.replace(late.processes[0], steps=((10_100, 900),))
    late.cache.clear()
    (v,) = CHECKERS["CS-2"](late)  # past the bound even without the step: still a violation
    assert v.invariant == "CS-2"


@pytest.mark.parametrize("conflict", ["refused", "conflicted"])
def test_cs2_a_conflict_allows_the_reread_and_the_adopted_write(conflict):
    """CS-2, NL-9: after a conflict on its own key, a 412 or a 409 (the bucket's "conflicted", a world
    fact since seed 2513 of a 20,000-seed sweep showed a 409 judged as no conflict), the re-read and the
    adopted write add two attempt timeouts."""
    a = Params().attempt_timeout_ms
    assert CHECKERS["CS-2"](_released_retries(3 * a + 1_000, conflict=conflict)) == []
    assert CHECKERS["CS-2"](_released_retries(3 * a + 1_001, conflict=conflict))
    assert CHECKERS["CS-2"](_released_retries(3 * a + 1_000))  # no conflict: the bound is A + 1 s


def test_cs2_counts_on_the_processs_own_clock():
    """CS-2 (seed 16603 of a 20,000-seed sweep): a wall clock 1.5 % slow; its machine's monotonic clock, on
    which the model times the window (issue 47), runs slow only as far as NTP slews it (0.05 %), and counts
    A + 1 s over that much more true time: the bound is on that clock, as the model counts it."""
    a = Params().attempt_timeout_ms
    true_gap = (a + 1_000) * 1_000_000 // (1_000_000 - 500)
    assert CHECKERS["CS-2"](_released_retries(true_gap, drift_ppm=-15_000)) == []
    assert CHECKERS["CS-2"](_released_retries(true_gap + 50, drift_ppm=-15_000))
