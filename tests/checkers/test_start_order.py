"""UP-1 (checkers/start_order.py): a new process's first lease write follows its start guard (UP-2) and its
start check (NL-5), and is conditioned on the check's last read (NL-7); and UP-2's refinements that the
world's `read` events allow (a future-dated heartbeat counted from this node's first read of that body).

Each clause fails on a doctored hand-made history and passes on the right one; the correct model passes
UP-1 over 200 seeds of the upgrade scenario, where every clause's situation occurs; the three broken
models only UP-1 catches are caught on their stored plans by tests/checkers/test_broken_caught.py.
"""

from __future__ import annotations

from factkit import ev, finish, fence, history, live, put, read, refused

from checkers import check_all
from checkers.lease import start_writes
from checkers.start_order import check as up1
from checkers.start_guard import check as up2
from model.io import IF_MATCH, IF_NONE_MATCH

KEY = "nodes/n0"
SPAN_MS = 10_000 + 5_000  # T-1: ttl + grace


def _start(guard_at=1_200, first_read_at=1_100, write_at=16_100, reads=None, cond="auto", named=None,
           before=None):
    """n0 (process 0, a new node on m0) starts at 1 s; its start check reads nodes/n0 at `first_read_at` and
    every 3 s (or at `reads`), its guard passes at `guard_at`, and its first lease write is sent at
    `write_at`: applied (the protocol's condition on what is there, or `cond` None: unconditional), or
    refused naming `named` (`cond` If-Match / If-None-Match). `before(h, ix)` adds events first."""
    h = history(("n0", "new"), ("n0", "old", "m9", 0, 0), ("n1", "peer"), end_ms=40_000)
    ix: dict = {}
    if before is not None:
        before(h, ix)
    ix["start"] = ev(h, 1_000, 0, "start", node_id="n0", instance="new", machine="m0")
    for k, t in enumerate(reads if reads is not None else range(first_read_at, write_at + 1, 3_000)):
        ix[f"read{k}"] = read(h, t, 0, KEY)
    if (write_at - first_read_at) % 3_000 and reads is None:
        ix["read_last"] = read(h, write_at, 0, KEY)  # the read at the deadline the write follows
    ix["guard"] = ev(h, guard_at, 0, "guard_passed")
    if named is None:
        ix["write"] = live(h, write_at, 0) if cond == "auto" else put(h, write_at + 20, 0, KEY, f"live new {write_at}",
                                                                      sent=write_at, cond=cond)
    else:
        ix["write"] = refused(h, write_at + 20, 0, KEY, cond, named, sent=write_at)
    finish(h, ix)
    return h, ix


def _messages(h):
    return [v.message for v in up1(h)]


def test_a_start_in_order_passes():
    """UP-1: guard passed at 1.2 s, the check read from 1.1 s every P, the first write If-None-Match on the
    read at 16.1 s (1.1 + 15): every clause holds, and no other checker finds anything."""
    h, _ = _start()
    assert check_all(h) == [], "\n".join(v.explain(h) for v in check_all(h))


def test_the_first_write_before_the_guard_passed_violates():
    """UP-1, first clause: the guard's claim comes at 17 s, after the write (16.1 s)."""
    h, ix = _start(guard_at=17_000)
    found = up1(h)
    assert len(found) == 1 and "before its start guard passed" in found[0].message
    assert found[0].events == (ix["write"], ix["guard"])


def test_a_write_with_no_guard_claim_at_all_violates_where_the_guard_runs():
    """UP-1: another process said its guard passed (this world runs the guard); n0 never did."""
    h, _ = _start()
    h.events = [e for e in h.events if e.kind != "guard_passed"]
    h.cache.clear()
    assert _messages(h) == []  # no guard_passed anywhere: a history of a world without the guard
    h2, _ = _start(before=lambda h, ix: ev(h, 500, 2, "guard_passed"))
    h2.events = [e for e in h2.events if not (e.kind == "guard_passed" and e.proc == 0)]
    h2.cache.clear()
    assert any("its start guard never passed" in m for m in _messages(h2))


def test_the_wait_counts_from_the_first_read_not_the_start():
    """UP-1, NL-5: the check's first read was answered at 3 s (its bucket check took 2 s); a write at 16.5 s
    is 15.5 s after the start (LEASE-1 sees nothing) but 13.5 s after that read."""
    h, ix = _start(first_read_at=3_000, write_at=16_500)
    found = up1(h)
    assert len(found) == 1 and "after its start check's first read was answered" in found[0].message
    assert found[0].events == (ix["read0"], ix["write"])
    assert not [v for v in check_all(h) if v.invariant == "LEASE-1"]
    h, _ = _start(first_read_at=3_000, write_at=18_000)
    assert _messages(h) == []


def test_the_wait_s_shortcut_holds_for_a_fenced_object():
    """UP-1, NL-5's shortcut (the same test as LEASE-1's): the object the check read is a fence whose kept
    written_at (0) + ttl + grace passed at 15 s: the write at 16.5 s, 13.5 s after the first read, is in time."""
    def predecessor(h, ix):
        put(h, 100, 1, KEY, "live old 0", sent=0)
        fence(h, 500, 2, "n0", "old", 0)
    h, _ = _start(first_read_at=3_000, write_at=16_500, before=predecessor)
    assert _messages(h) == []


def test_a_late_guard_writes_only_after_a_fresh_read():
    """UP-1: the check's wait ended at 16.1 s, the guard passed at 20 s. A write sent at 20 s on the read of
    19.1 s (the periodic one while the guard waited) violates; one sent on a read answered after the
    claim passes."""
    h, ix = _start(guard_at=20_000, write_at=20_000, reads=range(1_100, 20_000, 3_000))
    found = up1(h)
    assert len(found) == 1 and "without reading nodes/n0 in between" in found[0].message
    assert found[0].events == (ix["guard"], ix["write"])
    h, _ = _start(guard_at=20_000, write_at=20_100, reads=[*range(1_100, 20_000, 3_000), 20_100])
    assert _messages(h) == []


def _fenced_at_8s(h, ix):
    """A peer fences n0's predecessor at 8 s: nodes/n0 changes under the check."""
    put(h, 100, 1, KEY, "live old 0", sent=0)
    ix["fence"] = fence(h, 8_000, 2, "n0", "old", 0)


def test_the_first_write_names_the_check_s_last_read():
    """UP-1, NL-7: the check read the predecessor's live object (serial 1) first, its fence (serial 2)
    from 10.1 s; a write If-Match on the first read's version violates, on the last one's passes."""
    h, ix = _start(cond=IF_MATCH, named=1, before=_fenced_at_8s)
    found = up1(h)
    assert len(found) == 1 and "names version #1" in found[0].message and "returned version #2" in found[0].message
    assert found[0].events[1] == ix["write"]
    h, _ = _start(before=_fenced_at_8s)  # the protocol's condition: If-Match on what is there (the fence)
    assert _messages(h) == []


def test_if_none_match_after_the_object_appeared_violates():
    """UP-1, NL-7: nothing at the first read, a fence of a predecessor read from 10.1 s: If-None-Match names
    no object, the last read returned one."""
    def fence_only(h, ix):
        fence(h, 8_000, 2, "n0", "old", 0)
    h, _ = _start(cond=IF_NONE_MATCH, named=0, before=fence_only)
    assert any("names no object (If-None-Match)" in m for m in _messages(h))


def test_a_write_after_a_failed_read_names_the_last_answered_one():
    """UP-1, NL-7: the read at the deadline failed (serial -1); the check's last answered read (13.1 s,
    after the guard passed: the check's) returned the fence; If-Match on it passes, on the first read's
    version violates."""
    def at_deadline(h, ix):
        _fenced_at_8s(h, ix)
        read(h, 16_100, 0, KEY, serial=-1)
    h, _ = _start(cond=IF_MATCH, named=2, reads=range(1_100, 14_000, 3_000), before=at_deadline)
    assert _messages(h) == []
    h, _ = _start(cond=IF_MATCH, named=1, reads=range(1_100, 14_000, 3_000), before=at_deadline)
    assert any("names version #1" in m for m in _messages(h))


def test_two_reads_answered_at_the_write_s_instant_are_both_its_read():
    """UP-1: two reads answered in the write's millisecond (a re-read racing the guard's pass): the write
    may follow either."""
    def racing(h, ix):
        _fenced_at_8s(h, ix)
        read(h, 16_100, 0, KEY, serial=1)
    h, _ = _start(cond=IF_MATCH, named=1, before=racing)
    assert _messages(h) == []


def test_an_unconditional_first_write_violates():
    """UP-1, NL-7: the first write is never unconditional."""
    h, _ = _start(cond=None)
    assert any("was unconditional" in m for m in _messages(h))


def test_a_history_without_reads_is_judged_by_the_guard_clause_only():
    """UP-1: a world that records no `read` (these hand-made histories before it): the wait and the
    condition are not judged, the guard's order is."""
    h, _ = _start(cond=IF_MATCH, named=1, before=_fenced_at_8s)
    h.events = [e for e in h.events if e.kind != "read"]
    h.cache.clear()
    assert _messages(h) == []
    h, _ = _start(guard_at=17_000)
    h.events = [e for e in h.events if e.kind != "read"]
    h.cache.clear()
    assert len(_messages(h)) == 1


def test_first_write_attempts_stop_at_the_first_that_took_effect():
    """checkers.lease.start_writes: a refused first write, then the one that took effect; the lease writes
    after it (NL-8) are not first-write attempts."""
    h, ix = _start(cond=IF_NONE_MATCH, named=0, before=_fenced_at_8s)
    w = start_writes(h).writes[0]
    assert [a.event for a in w] == [ix["write"]]
    h, ix = _start()
    live(h, 19_100, 0)
    finish(h)
    assert len(start_writes(h).writes[0]) == 1


# --- UP-2 on the world's reads -------------------------------------------------------------------------------


def _future(guard_at: int, first_read_at: int | None):
    """A retired old node whose clock ran 60 s ahead wrote nodes/retired once (sent at 1 s: dated 61 s); n0
    starts at 5 s and (if `first_read_at`) first reads that body then. UP-2: it lapses horizon + ttl +
    grace + max_skew (25 s) after that first read, on n0's clock."""
    h = history(("retired", "old", "omf", 60_000, 0), ("n0", "new", "m1", 0, 0), end_ms=60_000)
    ix = {"hb": put(h, 1_020, 0, "nodes/retired", "node retired", sent=1_000, cond=None)}
    ev(h, 5_000, 1, "start", node_id="n0", instance="new", machine="m1")
    read(h, 5_100, 1, "nodes/n1")
    if first_read_at is not None:
        ix["first_read"] = read(h, first_read_at, 1, "nodes/retired")
    ix["guard"] = ev(h, guard_at, 1, "guard_passed")
    read(h, guard_at + 50, 1, "nodes/n1")
    live(h, guard_at + 50, 1)
    finish(h, ix)
    return h, ix


def test_up2_a_future_dated_heartbeat_counts_from_the_first_read_of_that_body():
    """UP-2: first read at 8 s: the body lapses 25 s later on n0's monotonic clock, at 33 s (issue 47: that clock
    does not step; this one does not drift). A guard passing at 31 s was in time by the old approximation (the start, 5 s + 25 s) but is early by the real first read."""
    h, ix = _future(31_000, 8_000)
    found = up2(h)
    assert len(found) == 1 and found[0].events == (ix["hb"], ix["guard"]) and "33.000 s" in found[0].message
    h, _ = _future(33_100, 8_000)
    assert up2(h) == []
    h, _ = _future(31_000, None)  # no read recorded: no earlier than the start, as before the `read` events
    assert up2(h) == []


def test_up2_a_read_after_the_guard_passed_is_not_the_guard_s():
    """UP-2: n0 read the body only after its guard passed (its listing): the guard never saw it, and the
    lapse is counted as without a read."""
    h, _ = _future(31_000, 31_010)
    assert up2(h) == []


def test_up2_a_rewritten_heartbeat_is_fresh_again():
    """UP-2: o0's heartbeat written at 6 s would be stale at 30 s, but it was rewritten at 10 s (applied):
    judged by that write's written_at (its writer's clock), it is fresh until 34 s."""
    def run(guard_at):
        h = history(("o0", "old"), ("n0", "new"), end_ms=60_000)
        for sent in (0, 3_000, 6_000, 10_000):
            put(h, sent + 20, 0, "nodes/o0", "node o0", sent=sent, cond=None)
        ev(h, h_start := 5_000, 1, "start", node_id="n0", instance="new", machine="m1")
        read(h, h_start + 100, 1, "nodes/o0")
        ev(h, guard_at, 1, "guard_passed")
        read(h, guard_at + 50, 1, "nodes/n0")
        live(h, guard_at + 50, 1)
        return finish(h)
    assert len(up2(run(31_000))) == 1
    assert up2(run(34_100)) == []



def test_up2_a_heartbeat_no_listing_of_the_guard_showed_was_not_its_to_read():
    """UP-2 on the world's listings (seed 16105 of a sweep): an old binary started again after the switch
    (against the procedure) got its first heartbeat applied 0.3 s before n0's guard passed, after the guard's
    last listing of nodes/, which did not show the key: that round read nothing there (section 6: a heartbeat
    that appears after the switch is an old version running, logged, not the guard's). The same heartbeat
    shown by a listing in that span is one the round read: the guard passed on a fresh heartbeat."""
    def run(keys):
        h = history(("o0", "old"), ("n0", "new"), end_ms=60_000)
        ev(h, 5_000, 1, "start", node_id="n0", instance="new", machine="m1")
        read(h, 5_100, 1, "nodes/n0")
        ev(h, 30_000, 1, "listed", prefix="nodes/", keys=keys, sent_ms=29_990)
        hb = put(h, 30_100, 0, "nodes/o0", "node o0", sent=30_080, cond=None)
        guard = ev(h, 30_400, 1, "guard_passed")
        read(h, 30_450, 1, "nodes/n0")
        live(h, 30_450, 1)
        return finish(h), hb, guard
    h, _hb, _guard = run(["n0"])
    assert up2(h) == []
    h, hb, guard = run(["n0", "o0"])
    (v,) = up2(h)
    assert v.events == (hb, guard)

# --- the correct model, in the world ---------------------------------------------------------------------------


def test_the_correct_model_passes_up1_over_200_upgrade_seeds():
    """UP-1 on 200 seeds of the upgrade scenario: no violation, and the situations each clause judges occur:
    first writes after a recorded read, guards passing after the check's wait ended (a fresh read), first
    writes If-Match and If-None-Match, and no read recorded once a process's live write took effect."""
    from broken_models import load_model
    from scenarios.sim import run_seed

    model = load_model("correct")
    late_guards = conds = 0
    seen: set = set()
    for seed in range(200):
        h = run_seed(seed, model, "upgrade", None, "correct")
        found = up1(h)
        assert found == [], f"seed {seed}: " + "\n".join(v.explain(h) for v in found)
        events = h.events
        claims = {}
        for i in h.of_kind("guard_passed"):
            claims.setdefault(events[i].proc, events[i].t_ms)
        applied: dict[int, int] = {}
        for i in h.of_kind("apply"):
            t, q, _k, f = events[i]
            if q >= 0 and f.key == "nodes/" + h.processes[q].node_id and f.state.startswith("live "):
                applied.setdefault(q, i)
        for i in h.of_kind("read"):
            q = events[i].proc
            assert q not in applied or i < applied[q], f"seed {seed}: a read recorded after {q}'s live write"
            assert events[i].fields.sent_ms <= events[i].t_ms
        for q, ws in start_writes(h).writes.items():
            seen.add(ws[0].cond)
            conds += 1
            own = [events[i].t_ms for i in h.of_kind("read") if events[i].proc == q
                   and events[i].fields.key == "nodes/" + h.processes[q].node_id and events[i].fields.serial >= 0]
            if q in claims and own and claims[q] > own[0] + SPAN_MS:
                late_guards += 1
    assert seen == {IF_MATCH, IF_NONE_MATCH} and conds > 200
    assert late_guards > 20, late_guards
