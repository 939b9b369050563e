"""The bounds on background work (BD-1..BD-3), FN-1 and the owner record (OR-1).

The bounds are driven on hand-made states through the model's own handlers (pure
functions: state in, effects out); FN-1 through a scripted world.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from checkers import check_all
from model import MODEL, Params
from model.fencing import FENCE_CONCURRENCY, Seen
from model.frozen import FrozenDict
from model.io import FAILED_FAST, GET, PUT, Mark, Now, Reply, ReplyArrived, Send, TimerFired
from model.node import NodeState
from model.node_lease import RUNNING, LeaseState
from model.ownership import PENDING_CONCURRENCY, Pending
from model.records import Corrupt, OwnerRecord, decode_owner, encode_owner
from scenarios.script import NetRule, ScriptedWorld

NOW = 1_000_000


def running_state(**kw) -> NodeState:
    """A node past its start check with a valid lease (NL-4) and a fence watch armed (FN-2)."""
    lease = LeaseState(phase=RUNNING, version='"v1"', written_at_ms=NOW - 1_000,
                       valid_until_ms=NOW + 7_000, ever_valid=True, next_send_ms=NOW + 2_000)
    base = dict(node_id="n0", instance="i0", params=Params(), lease=lease, watch_from_ms=NOW - 60_000,
                guard_passed=True)
    base.update(kw)
    return NodeState(**base)


def sends(effects, op=None):
    return [e for e in effects if type(e) is Send and (op is None or e.request.op == op)]


def marks(effects):
    return [e.rule for e in effects if type(e) is Mark]


def test_bd1_at_most_eight_fences_at_once():
    """BD-1, FN-2: twelve stale peers, watched long enough: the listing starts eight fence reads, no more."""
    view = FrozenDict({f"p{k}": Seen(3, "live", f"i{k}", NOW - 60_000, NOW - 50_000) for k in range(12)})
    state = running_state(view=view)
    out: list = []
    after = MODEL.after_listing(state, Now(NOW, NOW), out)
    reads = sends(out, GET)
    assert len(reads) == FENCE_CONCURRENCY == 8
    assert len(after.fencing) == 8
    assert "BD-1" in marks(out) and "FN-2" in marks(out)


def test_fn1_no_fence_while_the_lease_is_not_valid():
    """FN-1: the same stale peers, but this node's own lease ran out: it judges nobody."""
    view = FrozenDict({"p0": Seen(3, "live", "i0", NOW - 60_000, NOW - 50_000)})
    lapsed = running_state(view=view).lease._replace(lapsed=True)
    out: list = []
    MODEL.after_listing(running_state(view=view, lease=lapsed), Now(NOW, NOW), out)
    assert sends(out) == []


def _pending(n: int) -> FrozenDict:
    return FrozenDict({(f"t/c/a{k}", 1, f'"w{k}"'): Pending(f"t/c/a{k}", 1, f'"w{k}"', NOW - 1, 500)
                       for k in range(n)})


def test_bd2_at_most_32_pending_entries_worked_at_once():
    """BD-2, OR-5: forty releases due: one pass sends 32 of them, each the same write If-Match v."""
    state, effects = MODEL.step(running_state(pending=_pending(40), background_at_ms=NOW), TimerFired("background"), Now(NOW, NOW))
    puts = sends(effects, PUT)
    assert len(puts) == PENDING_CONCURRENCY == 32
    assert all(p.request.cond == "if-match" and p.request.version.startswith('"w') for p in puts)
    assert "BD-2" in marks(effects)
    assert sum(1 for e in state.pending.values() if e.rid is not None) == 32


def test_bd3_a_pass_stops_after_32_refusals_in_a_row():
    """BD-3, OR-6: 32 refusals in a row stop the pass: every entry still due waits its backoff."""
    state, effects = MODEL.step(running_state(pending=_pending(40), background_at_ms=NOW), TimerFired("background"), Now(NOW, NOW))
    rids = [p.request_id for p in sends(effects, PUT)]
    seen_bd3 = False
    for k, rid in enumerate(rids):
        state, effects = MODEL.step(state, ReplyArrived(rid, Reply(FAILED_FAST)), Now(NOW + 10 + k, NOW + 10 + k))
        seen_bd3 |= "BD-3" in marks(effects)
    assert seen_bd3 and state.refusals == 0
    # the eight never tried this pass now wait their backoff instead of being tried at once
    waiting = [e for e in state.pending.values() if e.rid is None]
    assert len(waiting) == 40 and all(e.next_ms > NOW + 10 for e in waiting)


@settings(max_examples=60, deadline=None)
@given(node=st.one_of(st.none(), st.text("abcdefghij0123456789", min_size=1, max_size=8)),
       instance=st.text("0123456789abcdef", min_size=1, max_size=8), generation=st.integers(0, 10**9))
def test_or1_owner_record_round_trips(node, instance, generation):
    """OR-1: a record holds node id, instance and generation, or nobody with the generation kept."""
    rec = OwnerRecord(node, instance if node else None, generation)
    assert decode_owner(encode_owner(rec)) == rec


def test_or1_garbage_is_corrupt_not_an_error():
    assert isinstance(decode_owner("wasmkeep-owner 1\nheld x\n"), Corrupt)
    assert isinstance(decode_owner(""), Corrupt)


def test_fn1_fn2_a_node_fences_only_after_renewing_itself():
    """FN-1, FN-2, NL-11: n0 dies while n1 is cut off from the bucket; n1's lease runs out, so it fences
    nobody while cut off, and after it renews it still watches a full P + A before fencing n0."""
    p = Params()
    w = ScriptedWorld(nodes=2, restart=False)
    w.at(20_000, "crash", "n0")
    w.at(21_000, "outage", "n1", 40_000)
    h = w.run(until_ms=90_000)
    n1 = [i for i, pr in enumerate(h.processes) if pr.node_id == "n1"][0]
    recovered = [t for t, pp, kind, f in h.events if pp == n1 and kind == "lease_valid" and f.how == "recovered"]
    fenced = [t for t, pp, kind, f in h.events if pp == n1 and kind == "fenced"]
    assert recovered and fenced
    assert fenced[0] >= recovered[0] + p.period_ms + p.attempt_timeout_ms
    assert check_all(h) == []


def test_bd5_handed_alarm_recheck_is_30_s_or_twice_ttl_plus_grace():
    """BD-5: a handed alarm is looked at again after 30 s, or twice ttl + grace when that is longer."""
    from model.params import Params

    assert Params().handed_recheck_ms == 30_000  # 2 * (10 + 5) s at the defaults
    assert Params(ttl_ms=30_000, grace_ms=10_000, heartbeat_period_ms=3_000).handed_recheck_ms == 80_000
    assert Params(ttl_ms=2_000, grace_ms=1_000, safety_ms=400, max_skew_ms=200, heartbeat_period_ms=600,
                  attempt_timeout_ms=500).handed_recheck_ms == 30_000


# --- BD-2..BD-4 on world facts (checkers/bounds.py): the background task's requests and the releases ----------

LAPSED_ACTORS = 100  # held by n0 when its lease runs out: every hold becomes a pending release (NL-11)


def _lapse_then_refusals(name: str):
    """n0 holds 100 actors, is cut off the bucket for 10 s (its lease runs out: 100 pending releases,
    NL-11), then renews, and its record writes are refused (failed fast) for 9 s: the background task
    works the entries 32 at a time (BD-2) and its passes stop after 32 refusals in a row (BD-3)."""
    from broken_models import load_model

    w = ScriptedWorld(nodes=2, model=load_model(name), model_name=name, restart=False)
    for k in range(LAPSED_ACTORS):
        w.at(16_000 + 30 * k, "request", "n0", f"t0/c/a{k}")
    w.at(21_000, "outage", "n0", 10_000)
    w.rule(NetRule("fail_fast", node="n0", op="PUT", key="owners/", after_ms=31_000, until_ms=40_000, times=None))
    return w.run(until_ms=50_000)


def _invariants(h) -> list[str]:
    return sorted({v.invariant for v in check_all(h)})


def test_bd2_bd3_the_correct_model_works_32_entries_and_stops_its_passes():
    """BD-2, BD-3, OR-6, NL-11: the world saw at most 32 of the task's requests in flight, and each entry
    retried only once its back-off (or the stopped pass's) had run; both bounds bound (the model's marks)."""
    h = _lapse_then_refusals("correct")
    sent = [e.fields for e in h.events if e.kind == "background_sent"]
    assert len({f.key for f in sent}) == LAPSED_ACTORS and max(f.in_flight for f in sent) == PENDING_CONCURRENCY
    assert h.rules.get("BD-2") and h.rules.get("BD-3")
    assert check_all(h) == []


def test_bd2_unbounded_pending_is_caught():
    """BD-2 broken (unbounded_pending): every due entry at once; BD-2 counts the requests in flight."""
    h = _lapse_then_refusals("unbounded_pending")
    assert "BD-2" in _invariants(h)


def test_bd3_a_pass_that_never_stops_is_caught():
    """BD-3 broken (endless_pass): after 32 refusals in a row an entry that was waiting goes at once."""
    h = _lapse_then_refusals("endless_pass")
    found = [v for v in check_all(h) if v.invariant == "BD-3"]
    assert found and "32 refusals in a row" in found[0].message


def test_bd3_a_retry_before_its_back_off_is_caught_on_a_hand_made_history():
    """OR-6 under BD-3's check: a retry refused at 10 s (back-off now 1 s) sent again at 10.5 s."""
    from factkit import ev, finish, history

    h = history(("n0", "i0"))
    args = dict(op="PUT", key="owners/t0/c/a0", version='"v1"', state="nobody 1", timeout_ms=2_000, in_flight=1)
    ev(h, 9_900, 0, "background_sent", **args)
    ev(h, 10_000, 0, "background_answered", op="PUT", key="owners/t0/c/a0", version='"v1"', status="timed_out",
       state="", sent_ms=9_900)
    ev(h, 11_000, 0, "background_sent", **args)  # on time: 10 s + 1 s
    ev(h, 11_100, 0, "background_answered", op="PUT", key="owners/t0/c/a0", version='"v1"', status="failed_fast",
       state="", sent_ms=11_000)
    ev(h, 12_600, 0, "background_sent", **args)  # 500 ms early: the back-off is 2 s now
    finish(h)
    from checkers.refusals import check_refusals

    found = check_refusals(h)
    assert len(found) == 1 and "500 ms before it was due" in found[0].message and "OR-6" in found[0].message


def test_bd4_a_foreground_release_tries_for_one_second():
    """BD-4, OR-5: a hibernation's release is given 1 s; the broken model that keeps the full attempt
    (long_foreground_release) is caught by BD-4."""
    from broken_models import load_model

    for name in ("correct", "long_foreground_release"):
        w = ScriptedWorld(nodes=2, model=load_model(name), model_name=name, restart=False)
        w.at(20_000, "request", "n0", "t0/c/a0")
        w.at(21_000, "hibernate", "n0", "t0/c/a0")
        h = w.run(until_ms=25_000)
        (sent,) = [e.fields for e in h.events if e.kind == "release_sent"]
        assert sent.how == "told"  # sent on the hibernation the world told it
        if name == "correct":
            assert sent.timeout_ms == 1_000 and check_all(h) == []
        else:
            assert sent.timeout_ms == Params().attempt_timeout_ms and _invariants(h) == ["BD-4"]
