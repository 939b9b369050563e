"""Scripted scenarios for the ADR's verification list, section 4 (clean stop and drain), with the
acknowledgement rule of actor data, the global bucket blip, and the quiet phase's INV-4.

Each test builds a ScriptedWorld (no random fault, fixed small delays, steps at chosen times, network
rules matching requests), runs it and judges the history: the events the scenario is about, and
`check_all(history) == []` for the correct model. Nodes start at t=0 and pass the start check after
ttl + grace = 15 s; a node's lease writes go out at about 15.014 s + k * 3 s. Default params: ttl 10 s,
grace 5 s, safety 2 s, period 3 s, attempt timeout 2 s; every machine's clock reads true time + 100 s.

The broken models of section 4 run the same scripts where one exists, and each must be caught by the
invariant the scenario is about.

A test marked `xfail(strict=True)` pins a finding made while writing these scenarios (its reason says
what); it turns into a failure once the finding is dealt with, so the mark goes with the fix.
"""

from __future__ import annotations

import pytest

from checkers import blip, check_all
from checkers.records import apply_to, names
from model.clean_stop import RELEASE_WAIT_MS, RELEASED_RETRY_MS, STOP_LIMIT_MS
from scenarios.script import NetRule, ScriptedWorld
from historykit import A0, OFFSET_MS, applies, assert_clean, broken, evs, invariants, one, owner_state, procs, true_ms  # noqa: F401

A1 = "t1/c/a1"
PERIOD_MS = 3_000
ATTEMPT_MS = 2_000
TAKEOVER_MS = 15_000  # ttl + grace


# --- reading a history -------------------------------------------------------------------------------


def node_writes(h, node_id, state, **kw):
    """Writes to nodes/<node_id> whose state line begins with `state` (live / released / fenced)."""
    return evs(h, "apply", where=lambda f: f[0] == "nodes/" + node_id and f[6].startswith(state + " "), **kw)


def written_at(state_line):
    """The written_at of a `nodes/` state line ("live <instance> <written_at>")."""
    return int(state_line.split(" ")[2])


def records_at(h, index):
    """The bucket's records (key -> state line) just before event `index`, rebuilt as INV-4/INV-5 do."""
    state: dict[str, str] = {}
    for _t, _p, kind, f in h.events[:index]:
        apply_to(state, kind, f)
    return state


# --- CS-1: a clean stop cuts a straggler before writing `released` ---------------------------------------


def _event_straggler_script(model=None):
    """n0 holds a0; the event of its request of 17.6 s runs on (a straggler: the world would end it right
    after n0 sends `released`); n0 is stopped at 18 s; n1 asks for a0 at 24 s."""
    w = ScriptedWorld(nodes=2, restart=False, model=model)
    w.at(17_000, "request", "n0", A0)
    w.event("n0", None, after_ms=17_500)
    w.at(17_600, "request", "n0", A0)
    w.at(18_000, "command", "n0", "stop")
    w.at(24_000, "request", "n1", A0)
    return w


def test_clean_stop_cuts_an_event_that_outlasts_its_wait():
    """CS-1, OR-5, NL-11: events take time. The release of a0 waits for its running event (the actor stops
    first); the wait is bounded (RELEASE_WAIT_MS), then the lease is made locally invalid and the lost-lease
    cut ends the straggler (event_cut), the release goes out, `released` after it. The straggler never
    answers, and CS-1's world check finds no act after the `released` write was sent."""
    h = _event_straggler_script().run(until_ms=40_000)
    (p0,) = procs(h, "n0")
    _, t_stop, _, _ = one(h, "stop_began", proc=p0)
    i_inv, t_inv, _, _ = one(h, "lease_invalidated", proc=p0)
    i_cut, t_cut, _, cut = one(h, "event_cut", proc=p0)
    i_end, _, _, ended = one(h, "hold_ended", proc=p0)
    assert t_inv == t_cut == t_stop + RELEASE_WAIT_MS and cut[2] == 2 and cut[3] == "clean stop: lease made invalid"
    assert i_inv < i_cut < i_end and ended == (A0, 1, "clean stop")
    assert [f[2] for _, _, _, f in evs(h, "answered", proc=p0)] == [1]  # the first event only
    (_, t_relw, _, _), = node_writes(h, "n0", "released")
    assert t_relw >= t_cut
    assert one(h, "hold_began", proc=procs(h, "n1")[0])[3][:2] == (A0, 2)
    assert_clean(h)


def test_a_stop_that_does_not_cut_leaves_the_straggler_acting_after_released():
    """CS-1 broken (broken_models.stop_without_cut): the same script; the lease is not made invalid and
    nothing is cut, so the straggler answers as owner right after `released` was sent (the world ends it
    at that worst instant), while peers may already free a0 (FN-5). CS-1's check reports it, pointing at
    the `released` write and the answer."""
    model, mod = broken("stop_without_cut")
    assert mod.RULE == "CS-1" and mod.CATCHES == "CS-1"
    h = _event_straggler_script(model).run(until_ms=40_000)
    (p0,) = procs(h, "n0")
    assert evs(h, "event_cut", proc=p0) == []
    i_ans, t_ans, _, ans = evs(h, "answered", proc=p0)[-1]
    (i_relw, _, _, relw), = node_writes(h, "n0", "released")
    assert ans[2] == 2 and t_ans > relw[8]  # after the write's send (it lands after the answer)
    (i_sent,) = [i for i, e in enumerate(h.events) if e[1] == p0 and e[2] == "released_sent"]
    assert h.events[i_sent][0] == relw[8]  # the world saw the write leave when it was sent
    found = [v for v in check_all(h) if v.invariant == "CS-1"]
    assert len(found) == 1 and found[0].events == (i_sent, i_ans), [v.explain(h) for v in check_all(h)]


def test_a_stop_that_does_not_cut_is_caught_when_its_released_write_is_lost_too():
    """CS-1 on the sending, not on the bucket: the same script with n0's `released` writes lost on the way
    (as the swarm's silenced stops lose them, CS-2's margin). Nothing is applied, so peers free nothing
    early, but the straggler still answers after the write left: the broken model is caught all the same
    (the check once read only an applied `released`, and missed it); the correct model stays clean."""
    model, _mod = broken("stop_without_cut")
    w = _event_straggler_script(model)
    w.rule(NetRule("lose_request", node="n0", op="PUT", key="nodes/n0", after_ms=23_000, times=None))
    h = w.run(until_ms=40_000)
    (p0,) = procs(h, "n0")
    assert node_writes(h, "n0", "released") == []  # none applied
    sent = [i for i, e in enumerate(h.events) if e[1] == p0 and e[2] == "released_sent"]
    i_ans, t_ans, _, _ = evs(h, "answered", proc=p0)[-1]
    assert sent and t_ans > h.events[sent[0]][0]
    found = [v for v in check_all(h) if v.invariant == "CS-1"]
    assert len(found) == 1 and found[0].events == (sent[0], i_ans), [v.explain(h) for v in check_all(h)]
    w = _event_straggler_script()
    w.rule(NetRule("lose_request", node="n0", op="PUT", key="nodes/n0", after_ms=23_000, times=None))
    h = w.run(until_ms=40_000)
    assert "CS-1" not in {v.invariant for v in check_all(h)}


def _straggler_script():
    w = ScriptedWorld(nodes=2, restart=False)
    w.at(17_000, "request", "n0", A0)
    # the segment upload of that request (sent about 17.02 s) is applied about 24.52 s: a straggler
    upload = NetRule("delay_apply", node="n0", op="PUT", key="wal/", after_ms=16_000, ms=7_500)
    w.rule(upload)
    # the stop's release never reaches the bucket: the stop waits for it, bounded, then goes on
    w.rule(NetRule("lose_request", node="n0", op="PUT", key="owners/", after_ms=18_500, times=None))
    w.at(19_000, "command", "n0", "stop")
    w.at(21_000, "request", "n0", A0)  # a request during the stop is refused
    # the `released` write (sent at the invalidation, 24 s) is answered 1.5 s late, so the process is still
    # there when the straggler's reply comes back
    released = NetRule("delay_reply", node="n0", op="PUT", key="nodes/n0", after_ms=23_900, ms=1_500)
    w.rule(released)
    w.at(35_500, "request", "n1", A0)  # before the released object's written_at + ttl + grace
    w.at(36_500, "request", "n1", A0)  # after it
    return w, upload, released


def test_clean_stop_cuts_a_straggler_before_writing_released():
    """CS-1, OR-4, OR-5, OR-11, NL-1, FN-5: n0 holds a0 with a segment upload in flight and is stopped.
    In order: the hold ends (clean stop) and its release is waited for, bounded (it never lands: it becomes
    pending); the lease is made locally invalid (lease_invalidated); the lease task stops for good (no live
    write after); `released` is written If-Match the last acknowledged version, naming the instance and
    keeping the last written_at (lease_released); exit 0. The straggler upload lands and is answered after
    the invalidation and is not acknowledged. n1 takes a0 once the released object's kept written_at +
    ttl + grace has passed."""
    w, upload, released = _straggler_script()
    h = w.run(until_ms=38_000)

    (p0,) = procs(h, "n0")
    (p1,) = procs(h, "n1")
    inst = h.processes[p0].instance
    assert upload.times == 0 and released.times == 0  # both rules caught their request

    _, t_stop, _, _ = one(h, "stop_began", proc=p0)
    i_end, t_end, _, ended = one(h, "hold_ended", proc=p0)
    i_inv, t_inv, _, _ = one(h, "lease_invalidated", proc=p0)
    i_rel, t_rel, _, _ = one(h, "lease_released", proc=p0)
    i_exit, t_exit, _, ex = one(h, "exit", proc=p0)
    # CS-1's order
    assert ended == (A0, 1, "clean stop") and t_end == t_stop == 19_000
    assert i_end < i_inv < i_rel < i_exit
    assert ex[0] == 0 and "released" in ex[1] and t_exit == t_rel
    # the release was waited for, bounded: it never landed, so the stop went on after RELEASE_WAIT_MS
    assert one(h, "release_pending", proc=p0)[3] == (A0, 1)
    assert evs(h, "released", proc=p0) == []
    assert t_inv == t_stop + RELEASE_WAIT_MS
    # nothing acts as owner during the stop
    refused = one(h, "request_failed", proc=p0)[3]
    assert refused[0] == A0 and "stopping" in refused[2]
    assert [f[0] for _, _, _, f in evs(h, "served", proc=p0)] == [A0]  # only the request of 17 s

    # the straggler: the upload of 17 s is applied (and answered) after the invalidation, before the exit,
    # and is never acknowledged
    (_, t_up, _, up), = evs(h, "apply", proc=p0, where=lambda f: f[0].startswith("wal/"))
    assert t_inv < t_up < t_exit
    assert evs(h, "data_acked", proc=p0) == []
    assert evs(h, "data_acked", since=t_inv, where=lambda f: f[0] == A0 and f[1] == 1) == []

    # the lease task stopped for good; `released` If-Match the last acknowledged version, written_at kept
    last_live = node_writes(h, "n0", "live", proc=p0)[-1]
    assert last_live[1] < t_inv
    assert node_writes(h, "n0", "live", since=t_inv) == []
    (_, t_relw, _, relw), = node_writes(h, "n0", "released")
    assert t_inv <= t_relw < t_rel
    assert relw[2] == "if-match" and relw[4] == relw[3] == last_live[3][5]
    kept = written_at(last_live[3][6])
    assert relw[6] == f"released {inst} {kept}"
    assert h.rules.get("CS-1", 0) >= 1

    # FN-5: the record still names n0 (its release never landed); `released` frees it at kept + ttl + grace
    refused = one(h, "request_failed", proc=p1)
    assert refused[1] < true_ms(kept) + TAKEOVER_MS and "released" in refused[3][2]
    i_hold, t_hold, _, hold = one(h, "hold_began", proc=p1)
    assert hold[:2] == (A0, 2) and t_hold >= true_ms(kept) + TAKEOVER_MS
    (_, _, _, wr), = applies(h, "owners/" + A0, proc=p1)
    assert wr[7] == owner_state("n0", inst, 1) and wr[6] == owner_state("n1", h.processes[p1].instance, 2)
    assert_clean(h)


# --- CS-3: a drain ends only when no release is pending -------------------------------------------------


def _drain_script(action, times, model=None):
    """n0 holds a0 and a1 and is drained at 20 s; a0's release fails (fail_fast: never reaches the bucket,
    the first retry fails too; lose_reply: it lands, its reply is lost)."""
    w = ScriptedWorld(nodes=2, model=model)
    w.at(17_000, "request", "n0", A0)
    w.at(17_000, "request", "n0", A1)
    w.rule(NetRule(action, node="n0", op="PUT", key="owners/" + A0, after_ms=19_000, times=times))
    w.at(20_000, "command", "n0", "drain")
    w.at(20_100, "request", "n0", A0)  # refused while draining
    w.at(22_000, "request", "n1", A0)  # after drained: free at once
    return w


def test_coverage_counts_a_drain_that_released_busy_holds_not_an_empty_one():
    """Coverage (CS-3's margin), read from world facts: n0 holds a0 and a1 when drained at 20 s, and writes
    both records `nobody` itself before it reports drained: "drain released busy holds". Drained with no
    record naming it (nothing asked of it), the drain is judged all the same, but that point is not reached."""
    from checkers.coverage import reached

    w = ScriptedWorld(nodes=2)
    w.at(17_000, "request", "n0", A0)
    w.at(17_000, "request", "n0", A1)
    w.at(20_000, "command", "n0", "drain")
    h = w.run(until_ms=40_000)
    assert check_all(h) == []
    got = reached(h)
    assert "drain judged" in got and "drain released busy holds" in got
    w = ScriptedWorld(nodes=2)
    w.at(17_000, "request", "n1", A0)
    w.at(20_000, "command", "n0", "drain")
    h = w.run(until_ms=40_000)
    assert check_all(h) == []
    got = reached(h)
    assert "drain judged" in got and "drain released busy holds" not in got


DRAIN_CASES = [("fail_fast", 2, "released"), ("lose_reply", 1, "release_dropped")]


@pytest.mark.parametrize("action,times,ending", DRAIN_CASES, ids=[c[0] for c in DRAIN_CASES])
def test_drain_reports_drained_only_once_no_release_is_pending(action, times, ending):
    """CS-3, OR-5, OR-6, OR-11, BD-4, INV-5: a drain releases every resident actor; a0's release fails and
    becomes pending. The drain reports drained only after that pending release ended: it landed on a retry
    (`released`), or, its first try having landed with the reply lost, a retry failed its condition and
    the read showed the record no longer names this instance (`release_dropped`). At the drained moment no
    record names n0's instance, and n1 acquires a0 at once."""
    h = _drain_script(action, times).run(until_ms=24_000)

    (p0,) = procs(h, "n0")
    (p1,) = procs(h, "n1")
    me = ("n0", h.processes[p0].instance)
    _, t_drain, _, _ = one(h, "drain_began", proc=p0)
    assert sorted(f for _, _, _, f in evs(h, "hold_ended", proc=p0)) == [(A0, 1, "drain"), (A1, 1, "drain")]
    assert one(h, "released", proc=p0, where=lambda f: f[0] == A1)[3] == (A1, 1)
    i_pend, t_pend, _, pend = one(h, "release_pending", proc=p0)
    assert pend == (A0, 1)
    i_done, t_done, _, done = one(h, ending, proc=p0, where=lambda f: f[0] == A0)
    assert done == (A0, 1)
    i_drained, t_drained, _, _ = one(h, "drained", proc=p0)
    # drained only after the pending release ended, and only after a retry (OR-6 backs off from 500 ms)
    assert i_pend < i_done < i_drained and t_drained >= t_pend + 500
    refused = one(h, "request_failed", proc=p0)[3]
    assert refused[0] == A0 and "draining" in refused[2]
    # INV-5 as its checker sees it: at the drained moment no record names n0's instance
    state = records_at(h, i_drained)
    assert {k: v for k, v in state.items() if k.startswith("owners/") and names(v) == me} == {}
    assert state["owners/" + A0] == "nobody 1" and state["owners/" + A1] == "nobody 1"
    # drained means free: n1 takes a0 at once, over "nobody 1"
    _, t_hold, _, hold = one(h, "hold_began", proc=p1)
    assert hold[:2] == (A0, 2) and t_hold < 22_000 + 100
    assert h.rules.get("CS-3", 0) >= 1 and h.rules.get("OR-11", 0) >= 1
    assert_clean(h)


@pytest.mark.parametrize("action,times,ending", DRAIN_CASES, ids=[c[0] for c in DRAIN_CASES])
def test_drain_with_pending_reports_drained_early_and_inv5_catches_it(action, times, ending):
    """CS-3 broken (drain_with_pending): on the same script the drain reports drained as soon as no actor
    is resident, with a0's release still pending; INV-5 names the record still naming n0 and points at the
    write that made it name n0 and at the drained event."""
    model, mod = broken("drain_with_pending")
    assert mod.RULE == "CS-3" and mod.CATCHES == "INV-5"
    h = _drain_script(action, times, model).run(until_ms=24_000)

    (p0,) = procs(h, "n0")
    inst = h.processes[p0].instance
    i_drained, t_drained, _, _ = one(h, "drained", proc=p0)
    i_done, _, _, _ = one(h, ending, proc=p0, where=lambda f: f[0] == A0)
    assert i_drained < i_done and t_drained == 20_000
    (i_held, _, _, held), = applies(h, "owners/" + A0, proc=p0, until=18_000)
    assert held[6] == owner_state("n0", inst, 1)
    found = [v for v in check_all(h) if v.invariant == "INV-5"]
    assert len(found) == 1, [v.explain(h) for v in check_all(h)]
    (v,) = found
    assert v.events == (i_held, i_drained)
    assert f"n0/{inst}" in v.message and "owners/" + A0 in v.message


# --- CS-2: the released write meets its own lost earlier write: adopt and retry ------------------------------


def test_clean_stop_released_write_adopts_its_own_lost_write_and_retries():
    """CS-1, CS-2, NL-9, NL-1: the reply of n0's lease write of about 21.01 s is lost (the write landed). n0 is
    stopped at 22 s, while that attempt is still in flight: the lease is made invalid at once, but the
    attempt is not aborted: `released` goes only after it timed out. Conditioned on the last acknowledged
    version (the write of 18 s), `released` fails; the one re-read finds n0's own live object, adopts its
    version and written_at, and the retry lands: `released` naming the instance, keeping the lost write's
    written_at. Exit 0."""
    w = ScriptedWorld(nodes=2, restart=False)
    w.at(17_000, "request", "n0", A0)
    lost = NetRule("lose_reply", node="n0", op="PUT", key="nodes/n0", after_ms=20_900, times=1)
    w.rule(lost)
    w.at(22_000, "command", "n0", "stop")
    h = w.run(until_ms=26_000)

    (p0,) = procs(h, "n0")
    inst = h.processes[p0].instance
    assert lost.times == 0
    # the write whose reply was lost landed; it was never acknowledged (no lease_valid for its written_at)
    (_, t_lost, _, lost_w), = node_writes(h, "n0", "live", proc=p0, since=20_900, until=21_100)
    w_lost = written_at(lost_w[6])
    assert [f for _, _, _, f in evs(h, "lease_valid", proc=p0) if f[0] == w_lost] == []
    acked = evs(h, "lease_valid", proc=p0)[-1][3][0]
    assert acked == w_lost - PERIOD_MS
    # CS-1: release, invalidate at once; the attempt in flight finishes (times out) before `released` goes
    i_end, _, _, ended = one(h, "hold_ended", proc=p0)
    assert ended == (A0, 1, "clean stop")
    assert one(h, "released", proc=p0)[3] == (A0, 1)
    i_inv, t_inv, _, _ = one(h, "lease_invalidated", proc=p0)
    assert i_end < i_inv and t_inv < true_ms(w_lost) + ATTEMPT_MS
    # CS-2: one `released` landed, If-Match the lost write's version (adopted by the re-read), its written_at kept
    (i_relw, t_relw, _, relw), = node_writes(h, "n0", "released")
    assert t_relw >= true_ms(w_lost) + ATTEMPT_MS
    assert relw[2] == "if-match" and relw[3] == relw[4] == lost_w[5]
    assert relw[6] == f"released {inst} {w_lost}"
    assert h.rules.get("CS-2", 0) >= 1
    i_rel, _, _, _ = one(h, "lease_released", proc=p0)
    i_exit, _, _, ex = one(h, "exit", proc=p0)
    assert i_inv < i_relw < i_rel < i_exit and ex[0] == 0
    assert evs(h, ("lease_lost", "fenced")) == []
    assert w.bucket.objects["nodes/n0"].body.split("\n")[1] == f"released {inst}"
    assert_clean(h)


# --- CS-2: a released write that keeps failing gives up; the lease stays live ---------------------------------


def test_clean_stop_gives_up_released_after_a_plus_1s_and_the_lease_stays_live():
    """CS-1, CS-2, FN-2, FN-3, FN-5, OR-11: n0 holds a0 and is stopped at 22 s. Its release fails (pending),
    so the stop waits RELEASE_WAIT_MS, then makes the lease invalid; every `released` write then fails
    fast. It is retried for A + 1 s (within the stop limit), then the process exits 0 and the node lease
    stays live. Its record still names it: n1 frees a0 only by fencing n0 (after written_at + ttl +
    grace), then takes it at generation 2."""
    w = ScriptedWorld(nodes=2, restart=False)
    w.at(17_000, "request", "n0", A0)
    w.rule(NetRule("fail_fast", node="n0", op="PUT", key="owners/", after_ms=21_500, times=None))
    released = NetRule("fail_fast", node="n0", op="PUT", key="nodes/n0", after_ms=26_950, times=1_000)
    w.rule(released)
    w.at(22_000, "command", "n0", "stop")
    w.at(47_000, "request", "n1", A0)
    h = w.run(until_ms=50_000)

    (p0,) = procs(h, "n0")
    (p1,) = procs(h, "n1")
    inst = h.processes[p0].instance
    _, t_stop, _, _ = one(h, "stop_began", proc=p0)
    assert one(h, "release_pending", proc=p0)[3] == (A0, 1)
    _, t_inv, _, _ = one(h, "lease_invalidated", proc=p0)
    assert t_inv == t_stop + RELEASE_WAIT_MS
    # every `released` try failed; they went on for A + 1 s, every RELEASED_RETRY_MS, then the stop gave up
    tries = 1_000 - released.times
    _, t_exit, _, ex = one(h, "exit", proc=p0)
    assert ex[0] == 0 and "stays live" in ex[1]
    assert t_inv + ATTEMPT_MS + 1_000 - 2 * RELEASED_RETRY_MS <= t_exit <= t_inv + ATTEMPT_MS + 1_000
    assert t_exit <= t_stop + STOP_LIMIT_MS
    assert tries >= (ATTEMPT_MS + 1_000) // (RELEASED_RETRY_MS + 20)
    assert evs(h, "lease_released") == []
    assert node_writes(h, "n0", "released") == []
    # the node lease stays live: the last live write stands until a peer fences it
    last_live = node_writes(h, "n0", "live", proc=p0)[-1]
    assert last_live[1] < t_inv and node_writes(h, "n0", "live", since=t_inv) == []
    kept = written_at(last_live[3][6])
    _, t_fenced, _, fenced = one(h, "fenced", proc=p1)
    assert fenced == ("n0", inst) and t_fenced > true_ms(kept) + TAKEOVER_MS
    (_, _, _, fence), = node_writes(h, "n0", "fenced")
    assert fence[6] == f"fenced {inst} {kept}" and fence[4] == fence[3] == last_live[3][5]
    # then the record naming n0 is free by the fence (FN-5) and n1 takes a0
    _, t_hold, _, hold = one(h, "hold_began", proc=p1)
    assert hold[:2] == (A0, 2) and t_hold > t_fenced
    assert h.rules.get("CS-2", 0) >= 1
    assert_clean(h)


# --- OR-11: a move hands the actor over with the release pending ------------------------------------------


def test_move_hands_the_actor_over_with_the_release_pending():
    """OR-11, OR-5, BD-4, OR-10, INV-6: n0 moves a0 to n1. The release lands but its reply comes 1.5 s late:
    after the foreground try of 1 s (BD-4) it is pending (the ADR's "the release is pending", no longer "the
    lease expires"). The hand-over's request reaches n1, which finds "nobody 1" and acquires at generation 2
    at once. n0's pending retry (If-Match the generation-1 version) then fails, and its read ends it: the
    record names n1, never touched by the retry."""
    w = ScriptedWorld(nodes=2, restart=False)
    w.at(17_000, "request", "n0", A0)
    w.rule(NetRule("delay_reply", node="n0", op="PUT", key="owners/", after_ms=19_000, times=1, ms=1_500))
    w.at(20_000, "move", "n0", A0, "n1")
    h = w.run(until_ms=26_000)

    (p0,) = procs(h, "n0")
    (p1,) = procs(h, "n1")
    i_end, t_end, _, ended = one(h, "hold_ended", proc=p0)
    assert ended == (A0, 1, "move") and t_end == 20_000
    (_, t_nobody, _, nobody), = applies(h, "owners/" + A0, proc=p0, since=t_end)
    assert nobody[6] == "nobody 1"
    i_hold, t_hold, _, hold = one(h, "hold_began", proc=p1)
    assert hold[:2] == (A0, 2) and t_nobody < t_hold < t_end + 100  # handed over at once
    _, t_pend, _, pend = one(h, "release_pending", proc=p0)
    assert pend == (A0, 1) and t_pend == t_end + 1_000 and t_pend > t_hold  # pending after the hand-over
    _, t_drop, _, drop = one(h, "release_dropped", proc=p0)
    assert drop == (A0, 1) and t_drop > t_pend
    assert evs(h, "released", proc=p0) == []
    assert applies(h, "owners/" + A0, since=t_hold) == []  # the retry never applied
    assert [f[1] for _, _, _, f in evs(h, "served", proc=p1)] == [2]
    assert h.rules.get("OR-11", 0) >= 1
    assert_clean(h)


def test_move_whose_release_is_lost_goes_back_to_the_mover():
    """OR-11, OR-10, OR-3, OR-5, INV-6: the move's release never reaches the bucket. The hand-over's
    request reaches n1 at once, while the release is pending: the record still names n0, live, so n1
    forwards it back (OR-10), and n0 acquires at generation 2 over the record naming its own instance
    (OR-3). The pending generation-1 release can then never apply: its retry fails its condition and its
    read ends it. One owner throughout; the actor stays on n0 (the move does not happen)."""
    w = ScriptedWorld(nodes=2, restart=False)
    w.at(17_000, "request", "n0", A0)
    w.rule(NetRule("lose_request", node="n0", op="PUT", key="owners/", after_ms=19_000, times=1))
    w.at(20_000, "move", "n0", A0, "n1")
    w.at(23_000, "request", "n1", A0)
    h = w.run(until_ms=26_000)

    (p0,) = procs(h, "n0")
    (p1,) = procs(h, "n1")
    assert one(h, "hold_ended", proc=p0)[3] == (A0, 1, "move")
    fwd = evs(h, "forwarded", proc=p1)
    assert [f[2] for _, _, _, f in fwd] == ["n0", "n0"]
    holds = evs(h, "hold_began", proc=p0)
    assert [f[1] for _, _, _, f in holds] == [1, 2]
    _, t_pend, _, pend = one(h, "release_pending", proc=p0)
    assert pend == (A0, 1) and t_pend > holds[1][1]
    _, t_drop, _, drop = one(h, "release_dropped", proc=p0)
    assert drop == (A0, 1) and t_drop > t_pend
    assert evs(h, "apply", where=lambda f: f[0] == "owners/" + A0 and f[6].startswith("nobody")) == []
    assert evs(h, "hold_began", proc=p1) == []
    assert [f[1] for _, _, _, f in evs(h, "served", proc=p0)] == [1, 2, 2]
    assert_clean(h)


# --- OR-4: the acknowledgement rule of actor data --------------------------------------------------------


def _late_upload_script(model=None):
    """n0 holds a0 and serves three requests: the first segment lands, the second is applied 5 s late, the
    third's upload fails fast, which abandons the hold (OR-5: a failed upload releases it); n1 then
    acquires a0 and restores before the late segment lands."""
    w = ScriptedWorld(nodes=2, restart=False, model=model)
    late = NetRule("delay_apply", node="n0", op="PUT", key="wal/", after_ms=17_400, times=1, ms=5_000)
    failed = NetRule("fail_fast", node="n0", op="PUT", key="wal/", after_ms=17_700, times=1)
    w.rule(failed)
    w.rule(late)
    w.at(17_000, "request", "n0", A0)
    w.at(17_500, "request", "n0", A0)
    w.at(17_800, "request", "n0", A0)
    w.at(19_000, "request", "n1", A0)
    return w, failed, late


def test_failed_and_late_data_writes_are_not_acknowledged():
    """OR-4 (the acknowledgement rule of Replica::put), OR-3, OR-5, INV-8: a segment is acknowledged only if
    the bucket acknowledged it and is_valid still holds after. The one that landed is acknowledged and the
    next owner's restore lists it; the failed upload is not, and ends the hold (OR-5); the late one lands
    after the hold ended and after n1 restored without it, and is not acknowledged."""
    w, failed, late = _late_upload_script()
    h = w.run(until_ms=26_000)

    (p0,) = procs(h, "n0")
    (p1,) = procs(h, "n1")
    inst = h.processes[p0].instance
    assert failed.times == 0 and late.times == 0
    assert [f[2] for _, _, _, f in evs(h, "served", proc=p0)] == [1, 2, 3]
    segs = [f"000001-{inst}-{k:05d}" for k in range(3)]
    ups = evs(h, "apply", proc=p0, where=lambda f: f[0].startswith("wal/"))
    assert [f[0].rsplit("/", 1)[1] for _, _, _, f in ups] == segs[:2]  # the failed one never landed
    assert [f for _, _, _, f in evs(h, "data_acked", proc=p0)] == [(A0, 1, segs[0])]
    _, t_end, _, ended = one(h, "hold_ended", proc=p0)
    assert "upload failed" in ended[-1]
    i_rest, t_rest, _, rest = one(h, "restored", proc=p1)
    assert rest == (A0, 2, [segs[0]])
    t_late = ups[-1][1]
    assert t_end < t_rest < t_late
    assert_clean(h)


def test_unchecked_data_ack_acknowledges_the_late_write_and_inv8_catches_it():
    """OR-4 broken (unchecked_data_ack): on the same script the late segment is acknowledged when the bucket
    answers, without re-checking is_valid; n1 restored before it landed, so INV-8 reports it missing from
    that restore, pointing at the restore and the acknowledgement."""
    model, mod = broken("unchecked_data_ack")
    assert mod.RULE == "OR-4" and mod.CATCHES == "INV-8"
    w, _, _ = _late_upload_script(model)
    h = w.run(until_ms=26_000)

    (p0,) = procs(h, "n0")
    (p1,) = procs(h, "n1")
    inst = h.processes[p0].instance
    late_seg = f"000001-{inst}-00001"
    acked = evs(h, "data_acked", proc=p0)
    assert [f[2] for _, _, _, f in acked] == [f"000001-{inst}-00000", late_seg]  # the failed one: still not
    i_ack, t_ack, _, _ = acked[-1]
    _, t_end, _, _ = one(h, "hold_ended", proc=p0)
    i_rest, _, _, _ = one(h, "listed", proc=p1, where=lambda f: f.prefix.startswith("wal/"))  # the restore's listing the world delivered
    assert t_ack > t_end
    found = [v for v in check_all(h) if v.invariant == "INV-8"]
    assert len(found) == 1, [v.explain(h) for v in check_all(h)]
    (v,) = found
    assert v.events == (i_rest, i_ack)
    assert late_seg in v.message and A0 in v.message and h.processes[p1].label in v.message


# --- INV-9: a global bucket blip restarts nothing; a one-node outage gets that node fenced ---------------------


def _outage_script(global_blip):
    w = ScriptedWorld(nodes=3)
    w.at(17_000, "request", "n0", A0)
    w.at(17_000, "request", "n1", A1)
    if global_blip:
        # the world's own blip, with INV-9's proviso (blip_alone: no other fault around it)
        w.options.update(blip=[20_000, 30_000, "blackhole"], blip_alone=True)
    else:
        w.at(20_000, "outage", "n0", 30_000)
    w.at(60_000, "request", "n2", A0)
    return w


def test_global_blip_fences_nobody_and_restarts_nothing():
    """INV-9, NL-11, FN-2: every node is cut off from the bucket for 30 s (longer than ttl + grace) at once,
    and all get it back at once, with no other fault. Every lease only ran out; every node's next write
    after the blip succeeds ("recovered") before anyone could fence: no process fenced, none exited. INV-9
    judges this run (its proviso holds) and finds nothing."""
    h = _outage_script(True).run(until_ms=66_000)

    assert blip.judged(h)
    assert one(h, "outage")[3] == ("*", 50_000)
    for node in ("n0", "n1", "n2"):
        (p,) = procs(h, node)
        one(h, "lease_ran_out", proc=p, since=20_000, until=50_000)
        _, t_ok, _, ok = evs(h, ("lease_valid", "lease_lost"), proc=p, since=50_000)[0]
        assert ok[2] == "recovered" and t_ok < 50_000 + PERIOD_MS + ATTEMPT_MS
    assert evs(h, ("fenced", "lease_lost", "exit", "crash")) == []
    assert node_writes(h, "n0", "fenced") == [] and len(h.processes) == 4  # 3 nodes + the operator
    assert one(h, "hold_began", node="n2")[3][:2] == (A0, 2)
    assert_clean(h)


def test_outage_of_one_node_longer_than_ttl_plus_grace_gets_it_fenced():
    """FN-2, FN-3, NL-10, FN-5, the contrast to INV-9: the same 30 s cut off one node only. Its peers keep
    their leases, watch its object unchanged, and fence it once its written_at + ttl + grace has passed;
    when it reaches the bucket again its write fails, the re-read shows the fence, and it exits 1 (and is
    restarted as a new instance). INV-9 does not judge this run (not a global blip)."""
    h = _outage_script(False).run(until_ms=66_000)

    assert not blip.judged(h)
    old = procs(h, "n0")[0]
    inst = h.processes[old].instance
    _, t_fenced, pf, fenced = one(h, "fenced")
    assert fenced == ("n0", inst) and h.processes[pf].node_id in ("n1", "n2") and 20_000 < t_fenced < 50_000
    _, t_lost, _, lost = one(h, "lease_lost", proc=old)
    assert "fenced" in lost[0] and t_lost > 50_000
    _, t_exit, _, ex = one(h, "exit", proc=old)
    assert ex[0] == 1 and t_exit == t_lost
    assert len(procs(h, "n0")) == 2  # the supervisor restarted it
    assert evs(h, "exit", node="n1") == [] and evs(h, "exit", node="n2") == []
    assert one(h, "hold_began", node="n2")[3][:2] == (A0, 2)
    assert_clean(h)


# --- INV-4: a dropped pending release leaves a record stuck ---------------------------------------------------


def _dropped_release_script(model=None, final_actors=()):
    """n0 hibernates a0; the release is lost and becomes pending (OR-5); then a quiet phase of 60 s with the
    world's final rounds requesting `final_actors`."""
    w = ScriptedWorld(nodes=2, model=model)
    w.options.update(quiet_ms=60_000, quiet_crash=False, quiet_stop=False)
    w.actors = list(final_actors)
    w.at(17_000, "request", "n0", A0)
    w.rule(NetRule("lose_request", node="n0", op="PUT", key="owners/", after_ms=19_000, times=1))
    w.at(20_000, "hibernate", "n0", A0)
    return w


def test_dropped_pending_release_leaves_the_record_stuck_and_inv4_catches_it():
    """OR-5, INV-4: with the correct model the lost release is retried and lands, and the quiet phase ends
    with nothing held. With dropped_pending_release (the failed release forgotten instead of kept pending)
    the record keeps naming n0, which runs but no longer holds a0: nobody can take it over, and INV-4
    reports it at the end of the quiet phase (a0 is not requested in the final rounds)."""
    h = _dropped_release_script().run(until_ms=30_000)
    (p0,) = procs(h, "n0")
    assert one(h, "release_pending", proc=p0)[3] == (A0, 1)
    assert one(h, "released", proc=p0)[3] == (A0, 1)
    assert evs(h, "quiet") and h.end_ms == 90_000
    assert_clean(h)

    model, mod = broken("dropped_pending_release")
    assert mod.RULE == "OR-5" and mod.CATCHES == "INV-5"  # in the swarm; INV-4 here, unrequested
    h = _dropped_release_script(model).run(until_ms=30_000)
    (p0,) = procs(h, "n0")
    assert one(h, "release_dropped", proc=p0)[3] == (A0, 1)
    assert evs(h, ("released", "release_pending"), proc=p0) == []
    assert evs(h, "exit") == []
    found = [v for v in check_all(h) if v.invariant == "INV-4"]
    assert len(found) == 1, [v.explain(h) for v in check_all(h)]
    assert "owners/" + A0 in found[0].message and h.processes[p0].label in found[0].message


def test_dropped_pending_release_is_healed_when_the_actor_is_requested_again():
    """OR-10, OR-3: why the world's final rounds hide dropped_pending_release from INV-4. When a0 is requested
    again, the request is forwarded to the live node its record names, and that node acquires it at
    generation + 1 over the record naming its own instance: the stuck record is taken back, and INV-4
    (which asks that every actor requested in the final rounds be held) finds nothing."""
    model, _ = broken("dropped_pending_release")
    h = _dropped_release_script(model, final_actors=[A0]).run(until_ms=30_000)
    (p0,) = procs(h, "n0")
    assert one(h, "release_dropped", proc=p0)[3] == (A0, 1)
    assert [f[1] for _, _, _, f in evs(h, "hold_began", proc=p0)] == [1, 2]
    assert evs(h, "hold_began", node="n1") == []
    assert "INV-4" not in invariants(h)


DROPPED_SCAN_SEEDS = range(0, 80)  # (seed 31 until issue 45 part 4 moved the drains; now 64, 79, 83, ... of 0..119)


def test_dropped_pending_release_is_caught_by_inv5_in_the_sim():
    """OR-5, CS-3, INV-5 on the simulated world: some seed of the 'stops' scenario in the scanned range
    has a drain report drained while a dropped release left a record naming the node. (Not INV-4: the
    next request is forwarded to the named node, which re-acquires over its own instance, OR-3/OR-10;
    see test_dropped_pending_release_is_healed_when_the_actor_is_requested_again.)"""
    from scenarios.sim import run_seed

    model, _ = broken("dropped_pending_release")
    assert model is not None
    for seed in DROPPED_SCAN_SEEDS:
        h = run_seed(seed, model, "stops", None, "dropped_pending_release")
        if any(v.invariant == "INV-5" for v in check_all(h)):
            return
    pytest.fail(f"dropped_pending_release was not caught by INV-5 in the 'stops' scenario over seeds "
                f"{DROPPED_SCAN_SEEDS.start}..{DROPPED_SCAN_SEEDS.stop - 1}")


# --- CS-2: the `released` write's retries are bounded; a clean stop ends ------------------------------------------


def _stop_into_a_refusing_bucket(model=None, model_name: str = "correct"):
    """CS-2: n0 holds a0 and is stopped at 22 s; from 21.5 s for 30 s the bucket refuses n0 (failed fast): every
    `released` write fails at once."""
    w = ScriptedWorld(nodes=2, restart=False, model=model, model_name=model_name)
    w.at(17_000, "request", "n0", A0)
    w.at(21_500, "outage", "n0", 30_000, "refuse")
    w.at(22_000, "command", "n0", "stop")
    return w.run(until_ms=60_000)


def test_cs2_released_retried_for_a_plus_one_second_then_the_stop_ends():
    """CS-2: the correct model tries `released` for A + 1 s (every 200 ms), then exits with its lease live;
    the world saw each try leave (`released_sent`), all within A + 1 s of the first, and the checks pass."""
    h = _stop_into_a_refusing_bucket()
    (p0,) = procs(h, "n0")
    sent = [t for _i, t, _p, _f in evs(h, "released_sent", proc=p0)]
    assert len(sent) >= 3 and sent[-1] - sent[0] <= ATTEMPT_MS + 1_000, sent
    assert "not acknowledged" in one(h, "exit", proc=p0)[3][1]
    assert check_all(h) == [], "\n".join(v.explain(h) for v in check_all(h))


def test_cs2_a_stop_retrying_for_ever_is_caught():
    """CS-2 broken (broken_models.stop_retries_forever): `released` is retried for the whole outage; the world's
    `released_sent` shows a try long after A + 1 s, and the stop did not end within its bound."""
    model, mod = broken("stop_retries_forever")
    assert (mod.RULE, mod.CATCHES) == ("CS-2", "CS-2")
    h = _stop_into_a_refusing_bucket(model, "stop_retries_forever")
    found = [v for v in check_all(h) if v.invariant == "CS-2"]
    assert len(found) == 2, "\n".join(v.explain(h) for v in check_all(h))
    assert "retried for A + 1 s" in found[0].message and "was told to stop" in found[1].message


def test_a_drain_that_releases_nothing_is_caught():
    """CS-3 broken (broken_models.drain_keeps_holds): n0 holds a0 and a1 when drained at 20 s and releases
    neither; with no fault around it, INV-11 finds no `drained` within ttl + grace. The correct model, on the
    same script, releases both and reports drained at once (no fault: nothing pending)."""
    def script(model=None, name="correct"):
        w = ScriptedWorld(nodes=2, model=model, model_name=name)
        w.at(17_000, "request", "n0", A0)
        w.at(17_000, "request", "n0", A1)
        w.at(20_000, "command", "n0", "drain")
        return w.run(until_ms=40_000)

    h = script()
    (p0,) = procs(h, "n0")
    assert evs(h, "drained", proc=p0) and check_all(h) == []
    model, mod = broken("drain_keeps_holds")
    assert (mod.RULE, mod.CATCHES) == ("CS-3", "INV-11")
    h = script(model, "drain_keeps_holds")
    assert evs(h, "drained", proc=procs(h, "n0")[0]) == []
    assert [v.invariant for v in check_all(h)] == ["INV-11"], "\n".join(v.explain(h) for v in check_all(h))


def _silenced_released(seeds) -> int:
    """The silences that began (a `released` write left and the machine's lease writes were cut) in these seeds."""
    from campaign.run import resolve
    from campaign.run import run_one as run_spec

    n = 0
    for seed in seeds:
        _result, h = run_spec(seed, resolve("correct", "swarm"), keep_history=True)
        n += sum(1 for _t, _p, kind, f in h.events if kind == "fault" and f.what == "outage" and f.detail == "lease")
    return n


# swarm seeds with a silenced stop told, at once, in its node's start check (found over the first 60 seeds of
# 0..199 that draw stops, every stop silenced; the world's draw moves them: search again, printing the per-seed
# counts of `_silenced_released` with HOLD_WAITS as it is and at 0). In four others the two orders differ the
# other way (a stop told later meets a crash or the quiet phase), so a sum over many seeds says little.
SILENCED_IN_START_CHECK = (11, 71)


def test_a_silenced_stop_waits_for_its_node_s_lease(monkeypatch):
    """CS-2 (issue 45 part 4): a silenced stop that is no straggler is told once the node's live process holds its
    lease (nodes/<id> live under its instance, as applied), so that its `released` write leaves and is silenced: a
    stop told in the start check of a node restarted a moment ago writes none, and stop_retries_forever passed.
    Every stop silenced here: in these seeds the stop told at once (HOLD_WAITS 0) meets a start check and no
    silence begins; waiting for the lease, it does."""
    from scenarios.faults import stops

    monkeypatch.setattr(stops, "SILENCED", 1.0)
    waits = stops.HOLD_WAITS
    for seed in SILENCED_IN_START_CHECK:
        monkeypatch.setattr(stops, "HOLD_WAITS", waits)
        waited = _silenced_released([seed])
        monkeypatch.setattr(stops, "HOLD_WAITS", 0)
        at_once = _silenced_released([seed])
        assert waited > at_once, (seed, waited, at_once)
