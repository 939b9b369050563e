"""BD-1 over a fence's read and write, BD-2 over the resolver's release, and SLOT-1 (a slot whose request ended
is free again within a period), on hand-made histories of world facts and on the model's own handlers."""

from __future__ import annotations

from factkit import ev, fields, history

from checkers import CHECKERS
from model import MODEL, Params
from model.fencing import Seen
from model.frozen import FrozenDict
from model.io import TIMED_OUT, Now, Observe, Reply, ReplyArrived
from model.node import NodeState
from model.node_lease import RUNNING, LeaseState

P_MS = Params().period_ms
NOW = 1_000_000


def test_bd1_a_ninth_fence_read_in_flight_violates():
    """BD-1: eight fences' reads in flight (no write yet) and a ninth read sent is a violation; the same with one
    of the eight answered first is not (a count rises only at a send: every send judged is every instant)."""
    h = history(("n0", "a"),)
    for k in range(1, 9):
        ev(h, 1_000 + k, 0, "fence_read_sent", key=f"nodes/n{k}", in_flight=k)
    ev(h, 1_100, 0, "fence_read_sent", key="nodes/n9", in_flight=9)
    (v,) = CHECKERS["BD-1"](h)
    assert "fence's read of nodes/n9" in v.message and "9 fences' requests in flight" in v.message
    h = history(("n0", "a"),)
    for k in range(1, 9):
        ev(h, 1_000 + k, 0, "fence_read_sent", key=f"nodes/n{k}", in_flight=k)
    ev(h, 1_050, 0, "fence_answered", op="GET", key="nodes/n1", status="ok", sent_ms=1_001)
    ev(h, 1_100, 0, "fence_read_sent", key="nodes/n9", in_flight=8)
    assert CHECKERS["BD-1"](h) == []


def test_bd1_a_write_counts_the_reads_in_flight():
    """BD-1: a fence write sent with seven reads of other fences in flight and one more write: nine at work."""
    h = history(("n0", "a"),)
    ev(h, 1_000, 0, "fence_sent", key="nodes/n9", in_flight=9)
    (v,) = CHECKERS["BD-1"](h)
    assert "fence's write of nodes/n9" in v.message


def _slot_history(answered_at: int | None, claimed_at: int, bound="BD-1", key="nodes/n1"):
    h = history(("n0", "a"),)
    sent, answered = ("fence_read_sent", "fence_answered") if bound == "BD-1" else ("background_sent",
                                                                                    "background_answered")
    if bound == "BD-1":
        ev(h, 1_000, 0, sent, key=key, in_flight=1)
    else:
        ev(h, 1_000, 0, sent, op="GET", key=key, version=None, state="", timeout_ms=2_000, in_flight=1)
    if answered_at is not None:
        ev(h, answered_at, 0, answered, op="GET", key=key, status="timed_out", sent_ms=1_000)
    ev(h, claimed_at, 0, "slots", bound=bound, keys=(key,))
    return h


def test_slot1_a_slot_held_past_a_period_after_its_request_ended_violates():
    """SLOT-1: the process claims a fence's slot (as its listing ends) while the fence's read is in flight: fine;
    claimed within a period of the read's timeout: fine (free again within a period); claimed a period and more
    after it: a violation naming the answer and the claim."""
    assert CHECKERS["SLOT-1"](_slot_history(None, 2_000)) == []
    assert CHECKERS["SLOT-1"](_slot_history(3_000, 3_000 + P_MS)) == []
    h = _slot_history(3_000, 3_001 + P_MS)
    (v,) = CHECKERS["SLOT-1"](h)
    assert v.invariant == "SLOT-1" and "BD-1's cap" in v.message and "nodes/n1" in v.message
    assert [h.events[i].kind for i in v.events] == ["fence_answered", "slots"]


def test_slot1_an_entry_held_with_no_request_ever_seen_violates():
    """SLOT-1 on BD-2's entries: a claimed entry on a key the background task never sent anything for."""
    h = history(("n0", "a"),)
    ev(h, 5_000, 0, "slots", bound="BD-2", keys=("owners/t/c/a1",))
    (v,) = CHECKERS["SLOT-1"](h)
    assert "BD-2's cap" in v.message and "no request of it ever seen" in v.message
    assert CHECKERS["SLOT-1"](_slot_history(6_000, 6_000 + P_MS + 1, "BD-2", "owners/t/c/a1"))


def _fencing_state() -> NodeState:
    lease = LeaseState(phase=RUNNING, version='"v1"', written_at_ms=NOW - 1_000, valid_until_ms=NOW + 7_000,
                       ever_valid=True, next_send_ms=NOW + 2_000)
    seen = Seen(3, "live", "i1", NOW - 60_000, NOW - 60_000)
    return NodeState(node_id="n0", instance="i0", params=Params(), lease=lease, watch_from_ms=NOW - 60_000,
                     guard_passed=True, view=FrozenDict({"n1": seen}), fencing=FrozenDict({"n1": seen}),
                     inflight=FrozenDict({7: ("fence_read", "n1")}))


def _claims(effects):
    return [e.fields for e in effects if type(e) is Observe and e.kind == "slots"]


def test_slot1_the_model_frees_a_fence_slot_on_a_timed_out_read_and_the_broken_one_keeps_it():
    """SLOT-1 in the model: a fence's read answered by its timeout frees its slot (the next listing's end claims
    none); broken_models/fence_slot_kept keeps it, and says so in its claim."""
    from broken_models import load_model

    now = Now(NOW, NOW)
    for model, kept in ((MODEL, False), (load_model("fence_slot_kept"), True)):
        st, _ = model.step(_fencing_state(), ReplyArrived(7, Reply(TIMED_OUT)), now)
        assert ("n1" in st.fencing) is kept
        out: list = []
        model.after_listing(st, Now(NOW + P_MS, NOW + P_MS), out)
        claims = _claims(out)
        assert claims == ([("BD-1", ("nodes/n1",))] if kept else [])


def test_fields_of_the_claim():
    assert fields("slots", bound="BD-1", keys=("nodes/n1",)) == ("BD-1", ("nodes/n1",))
