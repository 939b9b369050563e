"""Section 1 of the protocol (NL-1..NL-12) and its timing (T-1..T-4), rule by rule.

Each test drives `model.step` by hand (tests/nodekit.py plays the bucket and
the clock) and names the rule it exercises, so `grep -r NL-9 tests` finds it.
Times are the node's own clock, in ms; the defaults of T-1 apply unless a
test says otherwise.
"""

from __future__ import annotations

import pytest

from model import ContractError, Params, ParamsError, validate
from model.io import (
    CONFLICT,
    FAILED_FAST,
    GET,
    IF_MATCH,
    IF_NONE_MATCH,
    LIST,
    NOT_FOUND,
    OK,
    PRECONDITION_FAILED,
    PUT,
    TIMED_OUT,
    Exit,
    Mark,
    Now,
    ProcessStarted,
    Reply,
    Request,
    Send,
    TimerFired,
)
from model.node import Model
from model.records import (
    NODE_HEADER_3,
    NodeRecord,
    OldHeartbeat,
    decode_node,
    encode_node,
    encode_old_heartbeat,
)
from nodekit import T0, Node, fenced, live, released

D = Params()
P = D.period_ms  # 3 s (T-3)
A = D.attempt_timeout_ms  # 2 s (T-4)
TTL, GRACE, SAFETY = D.ttl_ms, D.grace_ms, D.safety_ms
TAKEOVER = TTL + GRACE  # 15 s
SPAN = TTL - SAFETY  # 8 s (NL-4)


def put_requests(n: Node, since: int = 0) -> list[tuple[int, Send]]:
    """Every lease write the node sent, with its local send time."""
    return [(t, e) for t, e in n.logged(Send, since) if e.request.key == n.key and e.request.op == PUT]


def running_node(version: str = '"v1"', **kw) -> tuple[Node, int]:
    """A node past its start check (no object found) whose first write was acknowledged."""
    n = Node(**kw)
    _first, sent, _effects = n.start_running(version)
    return n, sent


# --- NL-1: the record ---------------------------------------------------------------------


@pytest.mark.parametrize("state", ["released", "fenced"])
def test_nl1_non_live_object_keeps_written_at_and_is_never_live(state):
    """NL-1: format 3; a released/fenced object keeps the written_at of the live write it replaced."""
    body = encode_node(NodeRecord(state, "i-a", 123_456, "n1"))
    assert body.split("\n")[0] == NODE_HEADER_3 == "wasmkeep-node 3"
    rec = decode_node(body)
    assert rec == NodeRecord(state, "i-a", 123_456, "n1")
    assert not rec.live  # whatever its age: written "now" is still not live
    assert decode_node(live("i-a", 123_456)).live


def test_nl1_nl6_changing_non_live_objects_never_make_a_twin():
    """NL-1/NL-6: a changing object that is not `live` is not a twin: the check ends with a write."""
    n = Node()
    bodies = [None, released("i-x", T0), fenced("i-y", T0 + 10), released("i-z", T0 + 20), fenced(None, T0 + 30)]

    def body_at(t):
        return bodies[min((t - T0) // P, len(bodies) - 1)]

    first = n.run_check(body_at, lambda t: f'"t{(t - T0) // P}"')
    assert first is not None and n.exit is None


# --- NL-5: the start check's wait --------------------------------------------------------------


def test_nl5_start_check_reads_own_key_first():
    """NL-5: the process begins with the start check: a GET of nodes/<id>, no write."""
    n = Node()
    rid, send = n.only_own(GET)
    assert send.request == Request(GET, "nodes/n1")
    assert n.own(PUT) == []
    assert "NL-5" in n.marks(n.start_effects)
    assert n.observed(n.start_effects, "check_began") == [{}]


def test_nl5_waits_ttl_plus_grace_even_when_no_object_exists():
    """NL-5: the check waits ttl + grace in every case, also when nodes/<id> is absent."""
    n = Node()
    rid, _ = n.only_own(GET)
    first_answer = n.sent_at(rid) + 5
    first = n.run_check(lambda t: None)
    put_ms = n.sent_at(first.request_id)
    assert put_ms >= first_answer + TAKEOVER
    assert put_ms < first_answer + TAKEOVER + P  # and then it goes on
    assert first.request.cond == IF_NONE_MATCH  # NL-7


def test_nl5_a_token_change_alone_neither_restarts_nor_shortens_the_wait():
    """NL-5: bodies tell a change, never version tokens (a read's token may differ for one write)."""
    n = Node()
    rid, _ = n.only_own(GET)
    first_answer = n.sent_at(rid) + 5
    body = live("i-old", T0 - 500)
    first = n.run_check(lambda t: body, lambda t: f'"tok-{t}"')
    assert first is not None and n.exit is None
    put_ms = n.sent_at(first.request_id)
    assert first_answer + TAKEOVER <= put_ms < first_answer + TAKEOVER + P


@pytest.mark.parametrize("kind", ["fenced", "released"])
def test_nl5_shortcut_on_a_fence_naming_the_first_read_instance(kind):
    """NL-5: a fenced/released write naming the instance the check first read ends the wait at
    its kept written_at + ttl + grace (on this node's clock), before the full wait."""
    n = Node()
    w = T0 - 1_000  # the last live write of i-old, on its writer's clock
    rid, _ = n.only_own(GET)
    first_answer = n.sent_at(rid) + 5
    after = fenced("i-old", w) if kind == "fenced" else released("i-old", w)
    first = n.run_check(lambda t: live("i-old", w) if t < T0 + P else after,
                        lambda t: '"v-live"' if t < T0 + P else '"v-after"')
    put_ms = n.sent_at(first.request_id)
    assert w + TAKEOVER <= put_ms < first_answer + TAKEOVER
    assert first.request.cond == IF_MATCH and first.request.version == '"v-after"'  # NL-7
    assert n.exit is None


@pytest.mark.parametrize("kind", ["fenced", "released"])
def test_nl5_shortcut_ends_the_check_at_once_when_the_kept_written_at_is_old(kind):
    """NL-5: the first read already shows i-old fenced long ago: no wait at all."""
    n = Node()
    w = T0 - TAKEOVER - 60_000
    body = fenced("i-old", w) if kind == "fenced" else released("i-old", w)
    effects = n.answer_check(body, '"v-f"')
    (put,) = n.own_sends(effects, PUT)
    assert put.request.cond == IF_MATCH and put.request.version == '"v-f"'


def test_nl5_no_shortcut_for_a_fence_naming_another_instance():
    """NL-5: only a fence naming the instance the check *first* read shortens the wait."""
    n = Node()
    w = T0 - 60_000
    seen = {}

    def body_at(t):
        if t < T0 + P:
            return live("i-old", T0 - 1_000)
        seen.setdefault("changed", t)
        return fenced("i-somebody-else", w)

    first = n.run_check(body_at, lambda t: '"v"')
    assert n.sent_at(first.request_id) >= seen["changed"] + TAKEOVER


def test_nl5_a_changed_body_restarts_the_wait():
    """NL-5: whoever changed nodes/<id> may be valid until its written_at + ttl - safety:
    the wait starts again from the read that saw the change."""
    n = Node()
    seen = {}

    def body_at(t):
        if t < T0 + 2 * P:
            return None
        seen.setdefault("changed", t)
        return live("i-other", T0 + 5_000)  # written once, then nothing

    first = n.run_check(body_at, lambda t: '"v-other"' if t >= T0 + 2 * P else None)
    assert n.exit is None  # one change is not a twin (NL-6)
    put_ms = n.sent_at(first.request_id)
    assert put_ms >= seen["changed"] + TAKEOVER
    assert first.request.cond == IF_MATCH and first.request.version == '"v-other"'  # NL-7


# --- NL-6: a twin at start ------------------------------------------------------------------------


def test_nl6_object_changing_twice_under_a_live_foreign_instance_refuses_to_start():
    """NL-6: nodes/<id> keeps changing under a live instance not ours: exit status 2, no write."""
    n = Node()
    first = n.run_check(lambda t: live("i-twin", t - 3), lambda t: f'"v{t}"')
    assert first is None
    assert n.exit is not None and n.exit.status == 2
    assert "i-twin" in n.exit.reason
    refused = [e for _t, e in n.log if getattr(e, "kind", None) == "check_refused"]
    assert len(refused) == 1
    assert put_requests(n) == []
    with pytest.raises(ContractError):  # nothing more happens to an exited process
        n.step_fn(n.state, TimerFired("check_read"), n.now + 1)


# --- NL-7: the first write -------------------------------------------------------------------------


def test_nl7_first_write_if_none_match_when_absent():
    """NL-7: the check found no object: If-None-Match: *, a live body naming this instance,
    written_at = the send time on this node's clock (NL-4)."""
    n = Node()
    first = n.run_check(lambda t: None)
    req = first.request
    assert (req.op, req.key, req.cond, req.version) == (PUT, "nodes/n1", IF_NONE_MATCH, None)
    assert decode_node(req.body) == NodeRecord("live", "i-own", n.sent_at(first.request_id), "n1")
    assert first.timeout_ms == A  # NL-3 / T-4: every attempt is bounded by A
    assert n.observed([e for _t, e in n.log], "check_passed") == [{"cond": IF_NONE_MATCH}]
    assert "NL-7" in n.marks([e for _t, e in n.log])


def test_nl7_first_write_if_match_on_the_version_the_check_read_last():
    """NL-7: an object was found: If-Match on the token of the check's *last* read."""
    n = Node()
    answered = []

    def version_at(t):
        answered.append(f'"tok-{t}"')
        return answered[-1]

    first = n.run_check(lambda t: live("i-old", T0 - 500), version_at)
    assert first.request.cond == IF_MATCH
    assert first.request.version == answered[-1]
    assert len(set(answered)) > 1  # the check read more than once, each time another token


@pytest.mark.parametrize("status", [PRECONDITION_FAILED, CONFLICT])
@pytest.mark.parametrize("reread", ["other-instance", "absent"])
def test_nl7_failed_first_write_goes_back_to_the_check_keeping_the_instance(status, reread):
    """NL-7: the first write's condition failed and the re-read (NL-9) does not show our own
    write: back to the start check, same instance, no exit."""
    n = Node()
    first = n.run_check(lambda t: None)
    effects = n.reply(first.request_id, Reply(status), n.now + 30)
    (get,) = n.own_sends(effects)  # NL-9: one read, nothing else on our key
    assert get.request.op == GET
    body = live("i-other", n.now) if reread == "other-instance" else None
    effects = n.reply(get.request_id, Reply(OK, '"vx"', body) if body else Reply(NOT_FOUND), n.now + 10)
    assert n.exit is None
    assert n.observed(effects, "check_began") == [{}]
    assert [s.request.op for s in n.own_sends(effects)] == [GET]
    again = n.run_check(lambda t: body, lambda t: '"vx"' if body else None)
    assert again is not None
    assert decode_node(again.request.body).instance == "i-own"


def test_nl7_first_write_failing_fast_goes_back_to_the_check():
    """NL-7: a first write that never reached the bucket: straight back to the check, same instance."""
    n = Node()
    first = n.run_check(lambda t: None)
    effects = n.reply(first.request_id, Reply(FAILED_FAST), n.now + 3)
    assert n.exit is None
    assert n.observed(effects, "check_began") == [{}]
    assert [s.request.op for s in n.own_sends(effects)] == [GET]
    again = n.run_check(lambda t: None)
    assert decode_node(again.request.body).instance == "i-own"


def test_nl7_nl9_timed_out_first_write_rereads_and_adopts_its_own_landed_write():
    """NL-7 + NL-9: a first write whose reply was lost re-reads; live naming this instance:
    adopt the read's token and stored written_at, and run."""
    n = Node()
    first = n.run_check(lambda t: None)
    sent = n.sent_at(first.request_id)
    effects = n.reply(first.request_id, Reply(TIMED_OUT), sent + A)
    (get,) = n.own_sends(effects)
    assert get.request == Request(GET, "nodes/n1")
    effects = n.reply(get.request_id, Reply(OK, '"read-tok"', first.request.body), n.now + 10)
    assert n.exit is None
    assert n.observed(effects, "lease_valid") == [{"written_at_ms": sent, "until_ms": sent + SPAN, "how": "adopt"}]
    _rid, put = n.tick()
    assert (put.request.cond, put.request.version) == (IF_MATCH, '"read-tok"')  # NL-8


def test_nl7_timed_out_first_write_with_nothing_landed_goes_back_to_the_check():
    """NL-7: the re-read after a lost first reply finds nothing: back to the check, no exit."""
    n = Node()
    first = n.run_check(lambda t: None)
    effects = n.reply(first.request_id, Reply(TIMED_OUT), n.now + A)
    (get,) = n.own_sends(effects)
    effects = n.reply(get.request_id, Reply(NOT_FOUND), n.now + 10)
    assert n.exit is None
    assert n.observed(effects, "check_began") == [{}]


# --- NL-2, NL-3: the lease task's cadence and retries -----------------------------------------------------


def test_nl2_lease_write_every_period_from_the_previous_send():
    """NL-2: a lease write every P from the previous *send*, whenever its reply came; it never waits
    for the listing (whose requests stay unanswered here)."""
    n, s0 = running_node()
    rid1, put1 = n.tick()
    assert n.sent_at(rid1) == s0 + P
    n.reply(rid1, Reply(OK, '"v2"'), s0 + P + 1_500)  # a slow acknowledgement
    rid2, _ = n.tick()
    assert n.sent_at(rid2) == s0 + 2 * P
    n.reply(rid2, Reply(OK, '"v3"'), s0 + 2 * P + 10)
    rid3, _ = n.tick()
    assert n.sent_at(rid3) == s0 + 3 * P


def test_nl3_failed_attempt_is_retried_within_the_period():
    """NL-3: an attempt that failed fast is retried, If-Match on the same version, early enough
    that a whole attempt A fits before the next send."""
    n, s0 = running_node()
    rid, put = n.tick()
    t = n.sent_at(rid)
    n.reply(rid, Reply(FAILED_FAST), t + 10)
    rid2, retry = n.tick()
    r = n.sent_at(rid2)
    assert t < r and r + A <= t + P
    assert (retry.request.cond, retry.request.version) == (IF_MATCH, '"v1"')
    assert retry.timeout_ms == A


def test_nl3_no_retry_when_a_whole_attempt_no_longer_fits():
    """NL-3: an attempt timed out after A: a retry could not finish before the next send, so the
    next write is the period's, at previous send + P."""
    n, s0 = running_node()
    rid, _ = n.tick()
    t = n.sent_at(rid)
    n.reply(rid, Reply(TIMED_OUT), t + A)
    rid2, _ = n.tick()
    assert n.sent_at(rid2) == t + P


# --- NL-4: validity -----------------------------------------------------------------------------


@pytest.mark.parametrize("params", [Params(), Params(ttl_ms=12_000, safety_ms=3_000)], ids=["defaults", "ttl12-safety3"])
def test_nl4_valid_until_written_at_plus_ttl_minus_safety(params):
    """NL-4: an acknowledged write makes the lease valid until its written_at + ttl - safety."""
    n = Node(params=params)
    first = n.run_check(lambda t: None)
    sent = n.sent_at(first.request_id)
    assert n.written_at(first) == sent
    effects = n.reply(first.request_id, Reply(OK, '"v1"'), sent + 1_234)
    assert n.observed(effects, "lease_valid") == [
        {"written_at_ms": sent, "until_ms": sent + params.ttl_ms - params.safety_ms, "how": "ack"}
    ]
    assert "NL-4" in n.marks(effects)


def test_nl4_validity_counts_from_the_send_not_from_the_acknowledgement():
    """NL-4: a slow acknowledgement does not extend validity: written_at is the send time."""
    n, s0 = running_node()
    rid, put = n.tick()
    sent = n.sent_at(rid)
    effects = n.reply(rid, Reply(OK, '"v2"'), sent + A - 1)
    (v,) = n.observed(effects, "lease_valid")
    assert v["until_ms"] == sent + SPAN == n.written_at(put) + SPAN


def test_nl4_lease_becoming_valid_on_first_write_reaches_the_sections_hook():
    """NL-4 / FN-2 / OR-2: when the first write is acknowledged the lease becomes valid, and the
    model must tell the other sections (Model.on_lease_became_valid: FN-2's watch starts there)."""

    class Probe(Model):
        def on_lease_became_valid(self, st, now_ms, out):
            out.append(Mark("probe:became-valid"))
            return super().on_lease_became_valid(st, now_ms, out)

    n = Node(step=Probe().step)
    _first, _sent, effects = n.start_running()
    assert n.observed(effects, "lease_valid")  # valid it is ...
    assert "probe:became-valid" in n.marks(effects)  # ... and the sections hear of it


def test_nl4_fn2_a_node_valid_since_its_first_write_fences_a_dead_peer():
    """NL-4 -> FN-2/FN-3: n1, valid since its first write and never lapsed, lists n2's object
    unchanged (written a minute ago) for 40 periods: it must fence n2, If-Match on its read's version."""
    n, _s0 = running_node('"v1"')
    peer = live("i-peer", n.now - 60_000, "n2")
    for _ in range(40):
        rid, _ = n.tick()
        n.reply(rid, Reply(OK, f'"v{rid}"'), n.now + 5)
        # the listing: a LIST of nodes/, then a GET of each peer's object
        for rid2, _send in [(r, s) for r, (s, _t) in sorted(n.inflight.items()) if s.request.op == LIST]:
            n.reply(rid2, Reply(OK, entries=(("nodes/n1", '"x"'), ("nodes/n2", '"p"'))), n.now + 1)
        for rid2, _send in [(r, s) for r, (s, _t) in sorted(n.inflight.items()) if s.request == Request(GET, "nodes/n2")]:
            n.reply(rid2, Reply(OK, '"p"', peer), n.now + 1)
    fences = [e for _t, e in n.logged(Send) if e.request.key == "nodes/n2" and e.request.op == PUT]
    assert fences and fences[0].request.cond == IF_MATCH and fences[0].request.version == '"p"'
    assert decode_node(fences[0].request.body) == NodeRecord("fenced", "i-peer", peer_written_at(peer), "n2")  # NL-1: keeps written_at


def peer_written_at(body: str) -> int:
    return decode_node(body).written_at_ms


# --- NL-8: every later write -----------------------------------------------------------------------


def test_nl8_every_later_write_if_match_on_the_last_acknowledged_version():
    """NL-8: If-Match on the last *acknowledged* version, also after a write whose outcome is unknown."""
    n, s0 = running_node('"v1"')
    rid, put = n.tick()
    assert (put.request.cond, put.request.version) == (IF_MATCH, '"v1"')
    n.reply(rid, Reply(OK, '"v2"'), n.now + 5)
    rid, put = n.tick()
    assert (put.request.cond, put.request.version) == (IF_MATCH, '"v2"')
    n.reply(rid, Reply(TIMED_OUT), n.sent_at(rid) + A)  # may have landed as v3: unknown
    rid, put = n.tick()
    assert (put.request.cond, put.request.version) == (IF_MATCH, '"v2"')
    n.reply(rid, Reply(OK, '"v4"'), n.now + 5)
    rid, put = n.tick()
    assert (put.request.cond, put.request.version) == (IF_MATCH, '"v4"')
    body = decode_node(put.request.body)
    assert body == NodeRecord("live", "i-own", n.sent_at(rid), "n1")


# --- NL-9: a failed condition is not proof of a fence -----------------------------------------------------


@pytest.mark.parametrize("status", [PRECONDITION_FAILED, CONFLICT, NOT_FOUND], ids=["412", "409", "404"])
def test_nl9_failed_condition_rereads_once_and_adopts_own_live_write(status):
    """NL-9: 412/409/404 on a lease write: one GET of nodes/<id>; live and naming this instance
    means our own write landed: adopt the *read's* token (not the write's) and its written_at."""
    n, s0 = running_node('"v1"')
    rid, put = n.tick()
    sent = n.sent_at(rid)
    effects = n.reply(rid, Reply(status), sent + 40)
    assert [s.request for s in n.sends(effects)] == [Request(GET, "nodes/n1")]
    assert "NL-9" in n.marks(effects)
    assert n.exit is None
    (get,) = n.sends(effects)
    effects = n.reply(get.request_id, Reply(OK, '"read-token"', put.request.body), n.now + 10)
    assert n.observed(effects, "lease_valid") == [{"written_at_ms": sent, "until_ms": sent + SPAN, "how": "adopt"}]
    rid, nxt = n.tick()
    assert (nxt.request.cond, nxt.request.version) == (IF_MATCH, '"read-token"')


def test_nl9_adopts_the_stored_written_at_of_an_earlier_write_that_landed_late():
    """NL-9: the adopted written_at is the one stored in the object read, here an earlier write's
    (its reply was lost), not the send time of the write whose condition failed."""
    n, s0 = running_node('"v1"')
    rid1, put1 = n.tick()
    w1 = n.sent_at(rid1)
    n.reply(rid1, Reply(TIMED_OUT), w1 + A)  # it landed, as the bucket's next version
    rid2, put2 = n.tick()
    w2 = n.sent_at(rid2)
    assert put2.request.version == '"v1"'
    effects = n.reply(rid2, Reply(PRECONDITION_FAILED), w2 + 20)
    (get,) = n.sends(effects)
    effects = n.reply(get.request_id, Reply(OK, '"r-of-w1"', put1.request.body), n.now + 10)
    assert n.observed(effects, "lease_valid") == [{"written_at_ms": w1, "until_ms": w1 + SPAN, "how": "adopt"}]
    _rid, nxt = n.tick()
    assert nxt.request.version == '"r-of-w1"'


@pytest.mark.parametrize("failure", [TIMED_OUT, FAILED_FAST])
def test_nl9_a_failed_reread_proves_nothing(failure):
    """NL-9: the re-read itself failed: no proof either way, no exit; the next write still names
    the last acknowledged version."""
    n, s0 = running_node('"v1"')
    rid, put = n.tick()
    effects = n.reply(rid, Reply(PRECONDITION_FAILED), n.sent_at(rid) + 30)
    (get,) = n.sends(effects)
    effects = n.reply(get.request_id, Reply(failure), n.now + (A if failure == TIMED_OUT else 5))
    assert n.exit is None and not n.observed(effects, "lease_lost")
    _rid, nxt = n.tick()
    assert (nxt.request.cond, nxt.request.version) == (IF_MATCH, '"v1"')


# --- NL-10, NL-12: a lost lease ------------------------------------------------------------------------------


LOSSES = {
    "fenced-own": lambda: Reply(OK, '"f"', fenced("i-own", T0)),
    "released-own": lambda: Reply(OK, '"r"', released("i-own", T0)),
    "fenced-nobody": lambda: Reply(OK, '"f"', fenced(None, T0)),
    "live-other-instance": lambda: Reply(OK, '"o"', live("i-twin", T0 + 99_000)),
    "absent": lambda: Reply(NOT_FOUND),
    "old-format": lambda: Reply(OK, '"h"', encode_old_heartbeat(OldHeartbeat(2, "n1", T0))),
}


@pytest.mark.parametrize("seen", sorted(LOSSES))
def test_nl10_reread_not_own_live_means_lost_exit_status_1_at_once(seen):
    """NL-10: fenced, released, another instance, absent (or unreadable): lease_lost, then exit 1
    in the same step: no further request, no `released` write, nothing after."""
    n, s0 = running_node('"v1"')
    rid, put = n.tick()
    effects = n.reply(rid, Reply(PRECONDITION_FAILED), n.sent_at(rid) + 30)
    (get,) = n.sends(effects)
    effects = n.reply(get.request_id, LOSSES[seen](), n.now + 10)
    assert len(n.observed(effects, "lease_lost")) == 1
    exits = [e for e in effects if type(e) is Exit]
    assert len(exits) == 1 and exits[0].status == 1
    assert n.sends(effects) == []
    assert "NL-10" in n.marks(effects)
    with pytest.raises(ContractError):
        n.step_fn(n.state, TimerFired("lease_tick"), n.now + P)


def test_nl12_twin_is_caught_by_the_condition_and_its_reread():
    """NL-12: two processes under one id: the second writer's condition fails and its re-read
    shows the other instance: it exits (NL-10), naming the other instance."""
    n, s0 = running_node('"v1"')
    rid, put = n.tick()
    effects = n.reply(rid, Reply(PRECONDITION_FAILED), n.sent_at(rid) + 30)
    (get,) = n.sends(effects)
    effects = n.reply(get.request_id, Reply(OK, '"t"', live("i-twin", n.now - 100)), n.now + 10)
    (lost,) = n.observed(effects, "lease_lost")
    assert "i-twin" in lost["reason"]
    assert n.exit is not None and n.exit.status == 1 and "i-twin" in n.exit.reason


# --- NL-11: a lease that only ran out ------------------------------------------------------------------------


def test_nl11_lease_runs_out_keeps_writing_and_recovers():
    """NL-11: the bucket is unreachable past written_at + ttl - safety: lease_ran_out, no exit;
    writes keep going If-Match on the last acknowledged version; a success makes it valid again."""
    n, s0 = running_node('"v1"')
    mark = len(n.log)
    while n.now < s0 + SPAN + 2 * P:
        rid, put = n.tick()
        assert (put.request.cond, put.request.version) == (IF_MATCH, '"v1"')
        n.reply(rid, Reply(TIMED_OUT), n.sent_at(rid) + A)
    later = [e for _t, e in n.log[mark:]]
    assert n.observed(later, "lease_ran_out") == [{"until_ms": s0 + SPAN}]
    ran_out_at = [t for t, e in n.log[mark:] if getattr(e, "kind", None) == "lease_ran_out"]
    assert ran_out_at == [s0 + SPAN]  # at the deadline itself, on this node's clock
    assert "NL-11" in n.marks(later)
    assert n.exit is None and not n.observed(later, "lease_lost")
    rid, put = n.tick()
    assert put.request.version == '"v1"'
    sent = n.sent_at(rid)
    effects = n.reply(rid, Reply(OK, '"v2"'), sent + 50)
    assert n.observed(effects, "lease_valid") == [{"written_at_ms": sent, "until_ms": sent + SPAN, "how": "recovered"}]
    _rid, nxt = n.tick()
    assert nxt.request.version == '"v2"'


def test_nl11_conflict_after_a_lapse_is_handled_by_nl9():
    """NL-11: a conflict while lapsed goes through NL-9's re-read; another instance means lost."""
    n, s0 = running_node('"v1"')
    while n.now < s0 + SPAN + P:
        rid, put = n.tick()
        n.reply(rid, Reply(TIMED_OUT), n.sent_at(rid) + A)
    rid, put = n.tick()
    effects = n.reply(rid, Reply(PRECONDITION_FAILED), n.sent_at(rid) + 20)
    (get,) = n.sends(effects)
    assert get.request == Request(GET, "nodes/n1")
    n.reply(get.request_id, Reply(OK, '"x"', fenced("i-own", s0)), n.now + 5)
    assert n.exit is not None and n.exit.status == 1


# --- T-1..T-4, T-6: parameters ---------------------------------------------------------------------------------------


def test_t1_defaults_are_accepted():
    """T-1: ttl 10 s, grace 5 s, safety 2 s, max_skew 1 s; T-3: P = 3 s; T-4: A = 2 s <= 2.67 s."""
    p = Params()
    assert (p.ttl_ms, p.grace_ms, p.safety_ms, p.max_skew_ms) == (10_000, 5_000, 2_000, 1_000)
    assert p.period_ms == 3_000 and p.attempt_timeout_ms == 2_000
    assert validate(p) is p
    assert Params.from_dict(p.to_dict()) == p


def test_t2_grace_plus_safety_below_twice_the_skew_is_refused():
    """T-2: grace + safety >= 2 * max_skew, or refused with a message naming T-2."""
    with pytest.raises(ParamsError, match="T-2"):
        validate(Params(grace_ms=500, safety_ms=1_000, max_skew_ms=1_000))
    validate(Params(grace_ms=1_000, safety_ms=1_000, max_skew_ms=1_000))  # the bound itself is fine


def test_t2_zero_grace_is_refused_naming_t2():
    """T-2: grace 0 + safety 0.1 s < 2 * 1 s: the refusal must name T-2 (issue A: 'a configuration
    breaking T-2 or T-3 is refused with a message naming the rule')."""
    with pytest.raises(ParamsError, match="T-2"):
        validate(Params(grace_ms=0, safety_ms=100))


def test_t3_heartbeat_period_above_a_third_of_ttl_is_refused():
    """T-3: a configured heartbeat period above ttl / 3 is refused, naming T-3."""
    with pytest.raises(ParamsError, match="T-3"):
        validate(Params(heartbeat_period_ms=5_000))
    with pytest.raises(ParamsError, match="T-3"):
        validate(Params(heartbeat_period_ms=3_334))
    assert validate(Params(heartbeat_period_ms=3_333)).period_ms == 3_333
    assert Params(heartbeat_period_ms=1_000).period_ms == 1_000  # P = min(heartbeat period, ttl / 3)


def test_t4_attempt_timeout_above_a_third_of_ttl_minus_safety_is_refused():
    """T-4: A <= (ttl - safety) / 3 (2.67 s at the defaults)."""
    with pytest.raises(ParamsError, match="T-4"):
        validate(Params(attempt_timeout_ms=2_667))
    validate(Params(attempt_timeout_ms=2_666))


def test_t6_a_lease_that_runs_out_between_two_writes_is_refused():
    """T-6 (Q-8, issue 47): P + A <= ttl - safety. The large family's safety under a ttl of 10 s passes T-2..T-4
    but is valid 2.5 s after each send, less than P: refused, naming T-6. At the bound it is accepted; the
    draw moves what is not pinned to meet it (safety first, then T-2's grace)."""
    from scenarios.swarm import fit_params

    bad = dict(ttl_ms=10_000, grace_ms=3_000, safety_ms=7_500, max_skew_ms=5_250, heartbeat_period_ms=3_333,
               attempt_timeout_ms=833)
    with pytest.raises(ParamsError, match="T-6"):
        validate(Params(**bad))
    validate(Params(**dict(bad, safety_ms=5_834, grace_ms=4_666)))  # 3,333 + 833 = 10,000 - 5,834
    with pytest.raises(ParamsError, match="T-6"):
        validate(Params(**dict(bad, safety_ms=5_835, grace_ms=4_666)))
    fitted = fit_params(bad, {"ttl_ms": 10_000})
    assert (fitted.safety_ms, fitted.grace_ms) == (5_834, 4_666)
    assert fitted.period_ms + fitted.attempt_timeout_ms <= fitted.lease_span_ms
    with pytest.raises(ParamsError, match="T-6"):
        fit_params(bad, bad)  # every value pinned: nothing to move


def test_t2_the_model_refuses_to_start_on_invalid_params():
    """T-2: ProcessStarted with a configuration the protocol refuses does not start a process."""
    from model import step

    with pytest.raises(ParamsError, match="T-2"):
        step(None, ProcessStarted("n1", "i1", Params(grace_ms=100, safety_ms=100)), Now(T0, T0))


def test_params_from_dict_names_the_unknown_or_malformed_parameter():
    with pytest.raises(ParamsError, match="ttl"):
        Params.from_dict({"ttl": 10_000})
    with pytest.raises(ParamsError, match="grace_ms"):
        Params.from_dict({"grace_ms": "5000"})


def test_nl3_every_lease_request_is_bounded_by_the_attempt_timeout():
    """NL-3 / T-4: every request of the lease task carries the attempt timeout A."""
    params = Params(attempt_timeout_ms=1_500)
    n, s0 = running_node(params=params)
    for _ in range(3):
        rid, put = n.tick()
        n.reply(rid, Reply(OK, '"v"'), n.now + 5)
    lease = [e for _t, e in n.logged(Send) if e.request.key == "nodes/n1"]
    assert lease and all(e.timeout_ms == 1_500 for e in lease)
