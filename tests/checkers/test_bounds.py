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
from model.io import FAILED_FAST, GET, PUT, Mark, Reply, ReplyArrived, Send, TimerFired
from model.node import NodeState
from model.node_lease import RUNNING, LeaseState
from model.ownership import PENDING_CONCURRENCY, Pending
from model.records import Corrupt, OwnerRecord, decode_owner, encode_owner
from scenarios.script import ScriptedWorld

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
    after = MODEL.after_listing(state, NOW, out)
    reads = sends(out, GET)
    assert len(reads) == FENCE_CONCURRENCY == 8
    assert len(after.fencing) == 8
    assert "BD-1" in marks(out) and "FN-2" in marks(out)


def test_fn1_no_fence_while_the_lease_is_not_valid():
    """FN-1: the same stale peers, but this node's own lease ran out: it judges nobody."""
    view = FrozenDict({"p0": Seen(3, "live", "i0", NOW - 60_000, NOW - 50_000)})
    lapsed = running_state(view=view).lease._replace(lapsed=True)
    out: list = []
    MODEL.after_listing(running_state(view=view, lease=lapsed), NOW, out)
    assert sends(out) == []


def _pending(n: int) -> FrozenDict:
    return FrozenDict({(f"t/c/a{k}", 1, f'"w{k}"'): Pending(f"t/c/a{k}", 1, f'"w{k}"', NOW - 1, 500)
                       for k in range(n)})


def test_bd2_at_most_32_pending_entries_worked_at_once():
    """BD-2, OR-5: forty releases due: one pass sends 32 of them, each the same write If-Match v."""
    state, effects = MODEL.step(running_state(pending=_pending(40), background_at_ms=NOW), TimerFired("background"), NOW)
    puts = sends(effects, PUT)
    assert len(puts) == PENDING_CONCURRENCY == 32
    assert all(p.request.cond == "if-match" and p.request.version.startswith('"w') for p in puts)
    assert "BD-2" in marks(effects)
    assert sum(1 for e in state.pending.values() if e.rid is not None) == 32


def test_bd3_a_pass_stops_after_32_refusals_in_a_row():
    """BD-3, OR-6: 32 refusals in a row stop the pass: every entry still due waits its backoff."""
    state, effects = MODEL.step(running_state(pending=_pending(40), background_at_ms=NOW), TimerFired("background"), NOW)
    rids = [p.request_id for p in sends(effects, PUT)]
    seen_bd3 = False
    for k, rid in enumerate(rids):
        state, effects = MODEL.step(state, ReplyArrived(rid, Reply(FAILED_FAST)), NOW + 10 + k)
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
