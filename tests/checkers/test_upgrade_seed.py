"""UP-3 and UP-4 on world facts (checkers/upgrade_seed.py): each clause fails on a hand-made history
that breaks it and passes on the one that keeps it; the correct model passes both over upgrade seeds;
the broken models of the two rules are caught by them.

The hand-made first acquisition (`_first`): an old binary o0 (machine om0) held a0 at generation 3
and released it (leases/ `old-lease o0 3 0`), writing a segment of generation 3; the new node n0/a
reads leases/ (answered at 10 s), lists a0's keys (sent 10.1 s), writes the marker (`marker 3`,
If-Match, acknowledged at 10.3 s) and creates owners/ at generation 4 (sent 10.4 s).
"""

from __future__ import annotations

import pytest

from checkers import CHECKERS
from factkit import ev, finish, history, listed, put, segment
from history import History

UP_3 = CHECKERS["UP-3"]
UP_4 = CHECKERS["UP-4"]
A0 = "t0/c/a0"
SEG3 = "000003-o-00000"
OLD, NEW = 0, 1


def _reply(h: History, t: int, proc: int, op: str, status: str, state: str, sent: int) -> int:
    return ev(h, t, proc, "leases_reply", key=f"leases/{A0}", op=op, status=status, state=state, sent_ms=sent)


def _first(*, gen: int = 4, listing: bool = True, marker_at: int | None = 10_250, acked: bool = True,
           read: bool = True, late_key: int | None = None, early_key: int | None = None) -> tuple[History, dict]:
    """The first acquisition above, changed by the arguments: the create's generation; no listing
    delivered; the marker applied at `marker_at` (None: never); its acknowledgement delivered or not;
    no read of leases/; a key of generation `late_key` applied just after the listing was sent, or
    `early_key` before the read."""
    h = history(("o0", "x", "om0", 0, 0), ("n0", "a"))
    ix: dict = {}
    put(h, 1_000, OLD, f"leases/{A0}", "old-lease o0 3 9000", sent=990)
    segment(h, 2_000, OLD, A0, SEG3, sent=1_990)
    put(h, 5_000, OLD, f"leases/{A0}", "old-lease o0 3 0", sent=4_990)
    if early_key is not None:
        segment(h, 9_000, OLD, A0, f"{early_key:06d}-o-00001", sent=8_990)
    if read:
        ix["read"] = _reply(h, 10_000, NEW, "GET", "ok", "old-lease o0 3 0", 9_950)
    if listing:
        ix["listed"] = listed(h, 10_150, NEW, A0, [SEG3], sent=10_100)
    if late_key is not None:
        segment(h, 10_120, OLD, A0, f"{late_key:06d}-o-00002", sent=9_000)
    if marker_at is not None:
        ix["marker"] = put(h, marker_at, NEW, f"leases/{A0}", "marker 3", sent=10_200)
    if acked:
        ix["acked"] = _reply(h, 10_300, NEW, "PUT", "ok", "marker 3", 10_200)
    ix["create"] = put(h, 10_450, NEW, f"owners/{A0}", f"held n0 a {gen}", sent=10_400)
    finish(h, ix)
    return h, ix


def _clauses(h: History) -> list[str]:
    return [v.message[:3] for v in UP_3(h)]


def test_up3_the_first_acquisition_as_the_adr_orders_it_passes():
    h, _ = _first()
    assert UP_3(h) == [] and UP_4(h) == []


def test_up3_a_create_not_above_the_old_lease_violates():
    """UP-3 (a): the old lease (and the marker seeded from it) carried generation 3, and so did the
    segment in the bucket at the listing; owners/ at 3 reuses it: both are named."""
    h, ix = _first(gen=3)
    lease, key = UP_3(h)
    assert _clauses(h) == ["(a)", "(a)"] and ix["create"] in lease.events
    assert "leases/" in lease.message and "generation 3" in lease.message and SEG3 in key.message


def test_up3_a_create_not_above_a_key_in_the_bucket_at_its_listing_violates():
    """UP-3 (a): a segment of generation 5 was in the bucket before the seeding listing was sent (whatever
    the listing answered: here it left it out); owners/ at 4 is below it."""
    h, _ = _first(early_key=5)
    (v,) = UP_3(h)
    assert v.message.startswith("(a)") and "000005-o-00001" in v.message and "seeding listing" in v.message


def test_up3_a_key_applied_after_the_listing_was_sent_is_not_the_seed_s():
    """UP-3 (a) judges what the listing could see: a key that took effect after it was sent (a late write
    of the old binary's) is INV-2's to judge, not the seed's."""
    h, _ = _first(late_key=5)
    assert UP_3(h) == []


def test_up3_a_create_after_a_failed_listing_violates_while_keys_exist():
    """UP-3 (a): a listing that failed decides nothing; the generation (4) would be right, and still the
    seed rested on no listing while a key was in the bucket."""
    h, ix = _first(listing=False)
    (v,) = UP_3(h)
    assert v.message.startswith("(a)") and "no listing" in v.message and ix["read"] in v.events


def test_up3_b_a_create_sent_before_its_marker_took_effect_violates():
    """UP-3 (b): the marker took effect at 10.5 s, after the create was sent (10.4 s): sent together."""
    h, ix = _first(marker_at=10_500, acked=False)
    assert sorted(_clauses(h)) == ["(b)", "(c)"]
    (b,) = [v for v in UP_3(h) if v.message.startswith("(b)")]
    assert "old-lease o0 3 0" in b.message and ix["create"] in b.events


def test_up3_c_a_marker_write_whose_reply_was_lost_is_not_assumed():
    """UP-3 (c): the marker took effect, but its reply never reached n0/a: the create rests on a marker its
    sender did not know of. A fresh read of leases/ that finds the marker resolves it."""
    h, ix = _first(acked=False)
    (v,) = UP_3(h)
    assert v.message.startswith("(c)") and ix["read"] in v.events
    # the same, with a fresh read answered after the marker write (and a listing after it): no violation
    h2, _ = _first(acked=False)
    _reply(h2, 10_350, NEW, "GET", "ok", "marker 3", 10_320)
    listed(h2, 10_380, NEW, A0, [SEG3], sent=10_360)
    finish(h2)
    assert UP_3(h2) == []


def test_up3_c_a_create_with_no_read_of_leases_violates():
    """UP-3 (c): n0/a never read leases/ (the world recorded the old binary's read, so it records them)."""
    h, _ = _first(read=False, acked=False)
    _reply(h, 900, OLD, "GET", "not_found", "", 880)
    finish(h)
    assert "(c)" in _clauses(h)
    assert any("no read of leases/" in v.message for v in UP_3(h))


def test_up3_is_not_judged_on_a_history_without_answers_on_leases():
    """Hand-made histories of other checkers' tests write owners/ with none of the upgrade's steps: a world
    that records no `leases_reply` judges nothing under UP-3 (every world in scenarios/ records them)."""
    h = history(("n0", "a"))
    put(h, 1_000, 0, f"owners/{A0}", "held n0 a 1")
    finish(h)
    assert UP_3(h) == []


def test_up4_an_old_binary_writing_over_a_marker_violates():
    """UP-4: o0 (machine om0) takes leases/ over after n0/a's marker took effect."""
    h, ix = _first()
    w = put(h, 20_000, OLD, f"leases/{A0}", "old-lease o0 4 40000", sent=19_990)
    ix["over"] = w
    finish(h, ix)
    (v,) = UP_4(h)
    assert v.invariant == "UP-4" and "o0/x" in v.message and v.events == (ix["marker"], ix["over"])


def test_up4_an_old_binary_writing_after_owners_exists_violates_and_before_it_does_not():
    """UP-4 without a marker: a write of the old binary after owners/ was created (the new version owns the
    actor) violates; its writes before the marker and owners/ (its own hold, its release) do not."""
    h = history(("o0", "x", "om0", 0, 0), ("n0", "a"))
    put(h, 1_000, OLD, f"leases/{A0}", "old-lease o0 1 9000")
    put(h, 2_000, NEW, f"owners/{A0}", "held n0 a 2")
    put(h, 3_000, OLD, f"leases/{A0}", "old-lease o0 1 0")
    finish(h)
    (v,) = UP_4(h)
    assert f"owners/{A0}" in v.message
    assert UP_4(_first()[0]) == []


# --- on the world: the correct model passes, the broken models are caught ------------------------------------


def _judged(model_name: str, seeds) -> dict[int, set[str]]:
    from broken_models import load_model
    from checkers import check_all
    from scenarios.sim import run_seed

    model = load_model(model_name)
    out = {}
    for s in seeds:
        h = run_seed(s, model, "upgrade", None, model_name)
        out[s] = {v.invariant for v in check_all(h)} & {"UP-3", "UP-4"}
    return out


def test_correct_model_passes_up3_and_up4_over_upgrade_seeds():
    assert {s: v for s, v in _judged("correct", range(30)).items() if v} == {}


@pytest.mark.slow
def test_correct_model_passes_up3_and_up4_over_200_upgrade_seeds():
    assert {s: v for s, v in _judged("correct", range(200)).items() if v} == {}


@pytest.mark.slow
@pytest.mark.parametrize("name, invariant", [("failed_listing_as_empty", "UP-3"), ("marker_with_create", "UP-3"),
                                             ("assumed_marker", "UP-3"), ("old_takes_marker", "UP-4"),
                                             ("old_marker_as_absent", "UP-4")])
def test_broken_models_of_up3_and_up4_are_caught_over_upgrade_seeds(name, invariant):
    caught = [s for s, v in _judged(name, range(200)).items() if invariant in v]
    assert caught, f"{name}: not caught by {invariant} in 200 upgrade seeds"
