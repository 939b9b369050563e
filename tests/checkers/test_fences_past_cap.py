"""The coverage point "fences due past BD-1's cap across two passes" (issue 45 part 3), on hand-made histories of
world facts: a node's listing ended (`listing_ended`) with 8 fences' requests in flight from an earlier pass (BD-1's
cap full) and a ninth peer's fence due then (FN-1, FN-2, FN-3). Required since the crowd's bucket loses its fence
writes for a while (issue 45); these histories show it counts that situation and nothing short of it."""

from __future__ import annotations

from factkit import ev, finish, heartbeats, history, live

from checkers import registry
from checkers.coverage import awaited
from checkers.facts import facts
from history import Sent
from model.params import Params

NAME = "fences due past BD-1's cap across two passes"
P = Params()
PEERS = [f"n{k}" for k in range(1, 10)]  # nine peers, all lapsed: one more than BD-1's cap
LISTS = (14_000, 17_000, 20_000, 23_000, 26_000)  # the fencer's listings, a period apart
EARLIER = 20_000  # the pass that started eight fences
LATER = 26_000  # the pass at the cap


def _reached(h) -> bool:
    point = next(p for p in registry.points() if p.name == NAME)
    return bool(point.reached(registry.Context(h, facts(h))))


def _made(*, in_flight=PEERS[:8], started_at=EARLIER + 100, ended=True, ninth_wrote_at=None, ninth_read="2xx"):
    """n0 fences nine lapsed peers: `in_flight` fences' writes sent at `started_at` and never answered; its
    listing sent at LATER ends 100 ms later (`listing_ended`, when `ended`). The ninth peer's object landed at
    1 s (or again at `ninth_wrote_at`); n0's GETs of it are answered `ninth_read`."""
    h = history(("n0", "a"), *((n, "i") for n in PEERS))
    heartbeats(h, 0, 0, 40_000)
    for t in range(0, 40_000, P.period_ms):  # the fencer's lease writes acknowledged (FN-2's watch counts from then)
        ev(h, t + 30, 0, "record_reply", key="nodes/n0", op="PUT", status="ok", state="live a", sent_ms=t)
    for k in range(1, 10):
        live(h, 1_000, k)  # each peer's last write: lapsed (W + ttl + grace) by 16 s
    if ninth_wrote_at is not None:
        live(h, ninth_wrote_at, 9)
    requests = []
    for s in LISTS:
        requests.append(Sent(s, 0, "LIST", "nodes/", "listing", "2xx", False, 10))
        for k, n in enumerate(PEERS):
            answer = ninth_read if n == "n9" else "2xx"
            requests.append(Sent(s + 10 + 10 * k, 0, "GET", "nodes/" + n, "listing_get", answer, False))
    for n in in_flight:  # FN-3's read answered, then the write sent and still in flight (BD-1: 8 at work)
        ev(h, started_at, 0, "fence_read_sent", key="nodes/" + n, in_flight=1)
        ev(h, started_at + 5, 0, "fence_answered", op="GET", key="nodes/" + n, status="ok", sent_ms=started_at)
        ev(h, started_at + 5, 0, "fence_sent", key="nodes/" + n, in_flight=len(in_flight))
    if ended:
        ev(h, LATER + 100, 0, "listing_ended", keys=PEERS, in_flight=len(in_flight), sent_ms=LATER)
    h = finish(h)
    h.requests = requests
    return h


def test_the_point_is_required():
    """Reached in 43 of the 81 crowd seeds of swarm seeds 0..399 (0 before the crowd's lost fence writes): no longer
    declared with `awaits`, so a long swarm campaign that misses it fails."""
    assert NAME not in awaited()


def test_a_ninth_fence_due_while_eight_of_an_earlier_pass_are_in_flight_counts():
    """BD-1, FN-2, FN-3: the later listing ends with the eight fences of the earlier pass in flight, and n9 (lapsed,
    watched unchanged since a listing two periods before) is due: the point is reached."""
    assert _reached(_made())


def test_the_cap_full_without_a_later_pass_at_it_does_not_count():
    """No listing ended while the eight were in flight (no `listing_ended`): not reached."""
    assert not _reached(_made(ended=False))


def test_fences_of_the_same_pass_or_fewer_than_eight_do_not_count():
    """The eight fences sent after the later listing's LIST (that pass's own), or seven of the earlier pass: not
    reached (the cap was not full across two passes)."""
    assert not _reached(_made(started_at=LATER + 50))
    assert not _reached(_made(in_flight=PEERS[:7]))


def test_no_ninth_fence_due_does_not_count():
    """The ninth peer wrote again just before the later listing (not lapsed, FN-3), or n0's reads of it failed
    (its watch never began, FN-2): no fence was due past the cap, not reached."""
    assert not _reached(_made(ninth_wrote_at=LATER - 200))
    assert not _reached(_made(ninth_read="5xx"))
