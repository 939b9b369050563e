"""CONV-2 (every record converges: held by the instance it names, or worked on by it), on hand-made
histories of world facts, and on the broken models that only it catches (OR-5, OR-6, OR-7, OR-8, CS-3).

A hand-made history here is one process n0/a whose node lease the world acknowledged to it (`record_reply`
of its own `live` writes, NL-4), a record `owners/t0/c/a0` naming it, and what the world saw it send on
that record (`record_reply`: the request and the answer the world delivered, or its timeout).
"""

from __future__ import annotations

import copy
import json
import os

import pytest

from brokenplans import plan_path
from checkers import records_converge
from checkers.verdict import judge
from counterexamples.shrink import run_plan
from factkit import ev, finish, history, local, put
from history.record import MONO_SLEW_PPM, hash_version
from model.params import Params

P = Params()  # ttl 10 s, grace 5 s, safety 2 s, A 2 s, P 3 s
KEY = "owners/t0/c/a0"
HELD = "held n0 a 1"
END = 60_000
QUIET = 20_000


def _world(lease_until: int = END, quiet: int = QUIET, drift_ppm: int = 0):
    """n0/a (its clock drifting by `drift_ppm`), its lease written every P and acknowledged to it until
    `lease_until`, a quiet phase from `quiet`; the record lands at 1 s, written by n0/a."""
    h = history(("n0", "a", "m0", 0, drift_ppm), params=P, options={"delay_ms_max": 50}, end_ms=END)
    for s in range(0, END, P.period_ms):
        put(h, s + 10, 0, "nodes/n0", f"live a {local(h, 0, s)}", sent=s)
        if s < lease_until:
            ev(h, s + 20, 0, "record_reply", key="nodes/n0", op="PUT", status="ok", state=f"live a {local(h, 0, s)}",
               serial=-1, named_serial=-1, sent_ms=s)
    ev(h, quiet, -1, "quiet")
    return h


def _reply(h, sent: int, op: str, status: str, state: str, answered: int | None = None):
    return ev(h, sent + 20 if answered is None else answered, 0, "record_reply", key=KEY, op=op, status=status,
              state=state, serial=-1, named_serial=-1, sent_ms=sent)


def _conv2(h):
    return [v for v in records_converge.check(finish(h)) if v.invariant == "CONV-2"]


def test_a_record_its_writer_never_learned_and_never_read_again_is_a_violation():
    """OR-7, OR-8: the acquisition's write timed out, landed late; nothing the process sent afterwards
    touched the record while its lease was valid, as it knew: the resolver never read it."""
    h = _world()
    _reply(h, 500, "PUT", "timed_out", HELD, answered=2_500)
    put(h, 1_000, 0, KEY, HELD, sent=500)
    (v,) = _conv2(h)
    assert "owners/t0/c/a0 named n0/a at generation 1" in v.message and "did not know that record" in v.message
    assert "(version 2, written by n0/a at 1.000 s" in v.message  # (serial 1: its first lease write)


def test_the_resolver_reading_it_and_releasing_it_passes():
    """The read-back after the write's timeout, then the resolver's read showing the record landed (it
    learns it), and its release (it gives generation 1 up), which lands."""
    h = _world()
    _reply(h, 500, "PUT", "timed_out", HELD, answered=2_500)
    put(h, 1_000, 0, KEY, HELD, sent=500)
    _reply(h, 2_500, "GET", "ok", HELD)
    _reply(h, 2_600, "PUT", "ok", "nobody 1")
    put(h, 2_610, 0, KEY, "nobody 1", sent=2_600)
    assert _conv2(h) == []


def test_a_held_record_passes_and_so_does_silence_while_the_lease_is_not_known_valid():
    """Acknowledged (the process holds it): nothing to work on. And a record it never learned, landed at
    6 s, while no lease write of its own was acknowledged to it after its first (valid to 8 s: its lease
    ran out as it knew it, and OR-6 pauses the resolver), is judged only to 8 s: off duty after."""
    h = _world()
    _reply(h, 500, "PUT", "ok", HELD, answered=1_020)
    put(h, 1_000, 0, KEY, HELD, sent=500)
    assert _conv2(h) == []
    h = _world(lease_until=1)
    _reply(h, 5_500, "PUT", "timed_out", HELD, answered=7_500)
    put(h, 6_000, 0, KEY, HELD, sent=5_500)
    assert _conv2(h) == []


def test_a_read_of_its_own_object_that_is_not_nl9_s_reread_grants_no_duty():
    """Issue 44 part 7 (seed 3 at ttl 10 s cried wolf): the lease acknowledged to n0/a only once (valid to
    8 s on its clock), a record it never learned lands at 6 s, and a read of nodes/n0 it sent at 6.5 s (FN-5's
    read to free a record, not NL-9's re-read: no lease write of it had failed) shows its own object written
    at 6 s. The process adopts nothing from such a read (NL-4, NL-9): its lease as it knew it ran out at 8 s,
    and its silence after is off duty. The same read sent as NL-9's re-read, after its lease write at 6 s was
    refused, is one it adopts (valid to 14 s): the silence from 8 s on is then on duty, a violation."""
    def world(refused: bool):
        h = _world(lease_until=1)
        if refused:
            ev(h, 6_400, 0, "record_reply", key="nodes/n0", op="PUT", status="precondition_failed",
               state=f"live a {local(h, 0, 6_300)}", serial=-1, named_serial=-1, sent_ms=6_300)
        _reply(h, 5_500, "PUT", "timed_out", HELD, answered=7_500)
        put(h, 6_000, 0, KEY, HELD, sent=5_500)
        ev(h, 6_520, 0, "record_reply", key="nodes/n0", op="GET", status="ok", state=f"live a {local(h, 0, 6_000)}",
           serial=-1, named_serial=None, sent_ms=6_500 if not refused else 6_400)
        return h
    assert _conv2(world(refused=False)) == []
    (v,) = _conv2(world(refused=True))
    assert "did not know that record" in v.message


def test_a_released_record_left_unretried_is_a_violation_and_retried_passes():
    """OR-5, OR-6: it held the record, released it (the release timed out), and never tried it again,
    though its lease was valid: nobody else can free it (FN-5). Retried within the back-off's bound, and
    landing, it passes."""
    h = _world()
    _reply(h, 500, "PUT", "ok", HELD, answered=1_020)
    put(h, 1_000, 0, KEY, HELD, sent=500)
    _reply(h, 5_000, "PUT", "timed_out", "nobody 1", answered=6_000)
    vs = _conv2(h)
    assert vs and "it gave it up" in vs[0].message
    h = _world()
    _reply(h, 500, "PUT", "ok", HELD, answered=1_020)
    put(h, 1_000, 0, KEY, HELD, sent=500)
    _reply(h, 5_000, "PUT", "timed_out", "nobody 1", answered=6_000)
    _reply(h, 6_500, "PUT", "ok", "nobody 1")
    put(h, 6_510, 0, KEY, "nobody 1", sent=6_500)
    assert _conv2(h) == []


def test_a_release_waiting_behind_bd2_s_cap_is_not_silent_while_the_task_is_full():
    """BD-2, OR-5, OR-6: a release that timed out, retried 14 s after it was sent (beyond the bound of a
    back-off and two attempts) is a violation; but not when its process's background task had 32 requests
    in flight (the world's count, BD-2's cap) for 6 s of that silence: the entry waited for a slot, and each
    side of the wait is within the bound (a crowd released at once, scenarios/faults/release_crowd.py)."""
    def conv2(full: bool):
        h = _world()
        _reply(h, 500, "PUT", "ok", HELD, answered=1_020)
        put(h, 1_000, 0, KEY, HELD, sent=500)
        _reply(h, 5_000, "PUT", "timed_out", "nobody 1", answered=6_000)
        if full:
            ev(h, 9_000, 0, "background_sent", op="PUT", key="owners/t2/crowd/a1", version="v", state="nobody 1",
               timeout_ms=2_000, in_flight=32)
            ev(h, 15_000, 0, "background_answered", op="PUT", key="owners/t2/crowd/a1", version="v",
               status="timed_out", state="", sent_ms=9_000)
        _reply(h, 19_000, "PUT", "ok", "nobody 1")
        put(h, 19_010, 0, KEY, "nobody 1", sent=19_000)
        return _conv2(h)

    (v,) = conv2(False)
    assert "it gave it up" in v.message and "from 5.000 s to 19.000 s" in v.message
    assert conv2(True) == []


def test_a_release_that_never_ends_is_a_violation_whatever_the_record_says():
    """OR-5: a release answered 409 (not applied) is pending until it lands or a refusal of it is
    followed by a read showing the record changed. The record changed meanwhile (another write of its
    own, at generation 2, over it): the entry must still end; left untried to the end, it is a
    violation (a drain waits on it, CS-3). Refused, then read, it ended."""
    def base():
        h = _world()
        _reply(h, 500, "PUT", "ok", HELD, answered=1_020)
        put(h, 1_000, 0, KEY, HELD, sent=500)
        _reply(h, 5_000, "PUT", "conflict", "nobody 1")
        _reply(h, 5_100, "PUT", "ok", "held n0 a 2")
        put(h, 5_110, 0, KEY, "held n0 a 2", sent=5_100)
        return h
    (v,) = _conv2(base())
    assert "released owners/t0/c/a0 at generation 1" in v.message and "never ended" in v.message
    h = base()
    _reply(h, 6_000, "PUT", "precondition_failed", "nobody 1")
    _reply(h, 6_030, "GET", "ok", "held n0 a 2")
    assert _conv2(h) == []


def test_the_margin_is_the_least_slack_and_negative_where_it_flags():
    h = _world()
    _reply(h, 500, "PUT", "timed_out", HELD, answered=2_500)
    put(h, 1_000, 0, KEY, HELD, sent=500)
    h = finish(h)
    _resolve, _release = records_converge.bounds(h, records_converge.facts(h))
    vs, least = records_converge._verdict(h)
    assert vs and least is not None and least < 0


# --- the broken models only CONV-2 catches ----------------------------------------------------------


KEPT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "plans")


@pytest.mark.parametrize("name, path", [
    ("parked_release_never_retried", plan_path("parked_release_never_retried")),
    ("failed_readback_records_nothing", plan_path("failed_readback_records_nothing")),
    ("resolver_ends_unchanged", plan_path("resolver_ends_unchanged")),
    # a documented survivor of 200 seeds (its SURVIVOR says why): its plan kept beside the findings' plans
    ("drain_drops_unresolved", os.path.join(KEPT, "conv2-drain-drops-unresolved.json")),
])
def test_each_broken_model_leaves_a_record_its_instance_no_longer_works_for(name, path):
    """Each breaks one rule (OR-6, OR-7, OR-8, CS-3) so that a record is left naming a live instance that
    neither holds it nor works on it; on its stored plan CONV-2 names it, and the correct model does not."""
    with open(path) as f:
        plan = json.load(f)
    assert plan["model"] == name
    v = judge(run_plan(plan))
    caught = [x for x in v.violations if x.invariant == "CONV-2"]
    assert caught, (name, [x.invariant for x in v.violations])
    assert not [x for x in judge(run_plan(dict(plan, model="correct"))).violations if x.invariant == "CONV-2"]


# --- what the 20,000-seed sweep at ab1ad2a taught CONV-2 (each seed shrunk and kept as a plan) -------------------
# Each kept run passes with the correct model; each, doctored to lose the fact that explains it, is a violation:
# the refinement is what makes it pass, not a blind spot.


def _kept(name: str):
    with open(os.path.join(os.path.dirname(__file__), "..", "plans", f"{name}.json")) as f:
        plan = json.load(f)
    h = run_plan(plan)
    assert h.sha256(hash_version(plan)) == plan["history_sha256"]
    return h


def _doctored(h, drop=lambda e: False, processes=None):
    """A copy of h without the events `drop` picks (and with other processes, if given), judged afresh."""
    d = copy.deepcopy(h)
    d._sha = None
    d.cache.clear()
    d.events = [e for e in d.events if not drop(e)]
    if processes is not None:
        d.processes = processes
    return records_converge.check(d)


def test_the_resolvers_bound_is_timed_on_its_own_monotonic_clock():
    """T-1, OR-8 (issue 47): the resolver's back-off runs on the monotonic clock, which NTP slews 500 ppm at
    most, whatever the wall clock's drift: 2 A on a machine whose wall clock is 3 % slow is 4,003 true ms (on
    that wall clock it would be 4,124). A gap of 4,500 true ms between its reads (bound 2 A + four trips +
    slack: 4,450 true ms) is a violation on either machine; 4,450 is work on both."""
    def run(drift, gap=4_500):
        h = _world(drift_ppm=drift)
        _reply(h, 500, "PUT", "timed_out", HELD, answered=2_500)
        put(h, 1_000, 0, KEY, HELD, sent=500)
        _reply(h, 2_500, "GET", "timed_out", "", answered=4_500)
        _reply(h, 2_500 + gap, "GET", "ok", HELD)
        _reply(h, 2_600 + gap, "PUT", "ok", "nobody 1")
        put(h, 2_610 + gap, 0, KEY, "nobody 1", sent=2_600 + gap)
        return _conv2(h)
    (v,) = run(0)
    assert "from 2.500 s to 7.000 s" in v.message
    assert len(run(-30_000)) == 1
    assert run(0, 4_450) == run(-30_000, 4_450) == []


def test_a_seed_whose_resolver_ran_on_a_slow_clock():
    """Seed 4309 (kept): n0's wall clock runs 1.5 % slow; its resolver's back-off reached A and the gap between
    two reads was 2 A. Before issue 47 its timers ran on that clock (A = 8 s ran 8.26 s true) and the bound
    stretched with it; now they run on its monotonic clock, which NTP slews 500 ppm at most: A runs 8.004 s,
    the bound stretches that little, and the run is work within it."""
    h = _kept("conv2-resolver-on-a-slow-clock")
    assert records_converge.check(h) == []
    slow = [pr for pr in h.processes if pr.drift_ppm < -MONO_SLEW_PPM]
    assert slow and all(8_000 < records_converge.on_clock(pr, 8_000) <= 8_006 for pr in slow)


def test_an_acquisitions_marker_read_and_listing_are_work_on_its_record():
    """OR-3, UP-3: between the resolver's reads a new acquisition of the actor runs under its lock: the
    marker read (`leases_reply`) and the data listing (`listed`), each slow, then its conditional write on
    the record. Those steps are work on the record; without them the gap is a violation."""
    def run(steps: bool):
        h = _world()
        _reply(h, 500, "PUT", "timed_out", HELD, answered=2_500)
        put(h, 1_000, 0, KEY, HELD, sent=500)
        if steps:
            ev(h, 4_000, 0, "leases_reply", key="leases/t0/c/a0", op="GET", status="ok", state="marker 0",
               sent_ms=2_600)
            ev(h, 6_000, 0, "listed", prefix="wal/t0/c/a0/", keys=[], sent_ms=4_100)
        _reply(h, 6_100, "PUT", "precondition_failed", "held n0 a 1")
        _reply(h, 6_200, "GET", "ok", HELD)
        _reply(h, 6_300, "PUT", "ok", "nobody 1")
        put(h, 6_310, 0, KEY, "nobody 1", sent=6_300)
        return _conv2(h)
    (v,) = run(False)
    assert "did not know that record" in v.message
    assert run(True) == []


def test_a_seed_whose_acquisition_steps_ran_between_the_resolvers_reads():
    """Seed 16683 (kept): the acquisition's marker read and listing, slow, between its read of the record and
    its write. Without the world's record of those two steps, the same run is a violation."""
    h = _kept("conv2-acquisition-steps-between-the-resolvers-reads")
    assert records_converge.check(h) == []
    assert any(v.invariant == "CONV-2" for v in _doctored(
        h, drop=lambda e: e.kind in ("leases_reply", "listed") and e.proc >= 0
        and (getattr(e.fields, "key", "") or getattr(e.fields, "prefix", "")).startswith(("leases/t0/c/a6", "wal/t0/c/a6/"))))


def test_an_answer_after_a_lapse_begins_the_hold_again():
    """OR-4, NL-11: a lapse ends the hold learned before it; once the lease is valid again an answer showing
    the record (here the acquisition's own acknowledgement, delayed past the lapse) begins a hold afresh.
    Without that answer the record is left unworked from the lease's return to the end: a violation."""
    def run(late_ack: bool):
        h = history(("n0", "a"), params=P, options={"delay_ms_max": 50}, end_ms=END)
        for s in range(0, END, P.period_ms):
            if 3_000 <= s < 15_000:
                continue  # the lease lapses at 8 s (its write at 0 s valid to ttl - safety) until 15 s
            put(h, s + 10, 0, "nodes/n0", f"live a {local(h, 0, s)}", sent=s)
            ev(h, s + 20, 0, "record_reply", key="nodes/n0", op="PUT", status="ok",
               state=f"live a {local(h, 0, s)}", serial=-1, named_serial=-1, sent_ms=s)
        ev(h, QUIET, -1, "quiet")
        put(h, 1_000, 0, KEY, HELD, sent=500)
        _reply(h, 1_100, "GET", "ok", HELD)
        if late_ack:
            _reply(h, 500, "PUT", "ok", HELD, answered=16_000)
        return _conv2(h)
    (v,) = run(False)
    assert "lapsed at 8.000 s" in v.message
    assert run(True) == []


def test_a_seed_whose_acquisition_was_acknowledged_after_a_lapse():
    """Seed 2479 (kept): the acquisition's reply was delayed 8.5 s, past a lapse of n3's lease and its renewal;
    the acknowledgement began the hold (OR-4). Without it, the record named n3 unworked: a violation."""
    h = _kept("conv2-acknowledged-after-a-lapse")
    assert records_converge.check(h) == []
    acks = [e for e in h.events if e.kind == "record_reply" and e.fields.key.startswith("owners/")
            and e.fields.op == "PUT" and e.fields.status == "ok" and e.fields.state.startswith("held ")
            and e.t_ms - e.fields.sent_ms > 5_000]
    assert acks
    assert any(v.invariant == "CONV-2" for v in _doctored(h, drop=lambda e: e in acks))


def test_a_background_read_cut_by_a_crash_is_work_sent():
    """OR-8 (seed 9859 of the merged draw): the resolver's read left (the world saw it: `background_sent`) and
    its process crashed 700 ms later, so no answer and no `record_reply` ever came. The read is work: the
    silence ends at its send. Without the world's record of it, the gap runs to the crash: a violation."""
    def run(seen: bool):
        h = _world()
        _reply(h, 500, "PUT", "timed_out", HELD, answered=2_500)
        put(h, 1_000, 0, KEY, HELD, sent=500)
        _reply(h, 2_500, "GET", "timed_out", "", answered=4_500)
        if seen:
            ev(h, 6_500, 0, "background_sent", op="GET", key=KEY, version=None, state="", timeout_ms=2_000,
               in_flight=1)
        ev(h, 7_200, 0, "crash")
        return _conv2(h)
    (v,) = run(False)
    assert "from 2.500 s to 7.20" in v.message
    assert run(True) == []
