"""P-1 (amendments/p1_etag_gated_listing.py): the watch reads a peer's body only when its listed
ETag changed. Counted from histories (tests/kits/measure_etag.py): fewer body reads where a
peer's object stops changing, none fewer where every peer renews, and a dead peer still fenced."""

from __future__ import annotations

import pytest

from amendments import variant
from measure_etag import listing_requests
from amendments.p1_etag_gated_listing import MODEL as P1, ListedSeen
from model import MODEL as CORRECT
from model.records import FENCED, LIVE
from scenarios.script import ScriptedWorld

UNTIL_MS = 90_000


def scripted(model, versioning, crash_n2_at=None):
    """Three nodes, nothing drawn; every request the processes send recorded (the world records from
    `settle_from_ms` on: here from the start). n2 crashes for good at `crash_n2_at`."""
    w = ScriptedWorld(nodes=3, model=model, restart=False, versioning=versioning,
                      model_name=getattr(model, "name", "correct"))
    w.settle_from_ms = 0
    if crash_n2_at is not None:
        w.at(crash_n2_at, "crash", "n2")
    return w, w.run(until_ms=UNTIL_MS)


def test_declared_as_a_question_on_fn2():
    v = variant("p1_etag_gated_listing")
    assert v.kind == "question" and v.addresses == "P-1" and "FN-2" in v.rules
    assert "listed ETag" in v.adr and v.plans == ()


@pytest.mark.parametrize("versioning", ["md5", "opaque"])
def test_fewer_body_reads_once_a_peer_stops_writing(versioning):
    """n2 crashes for good and is fenced: the correct watch reads its fenced object every period, the
    variant only when its listed ETag changed. In the last ttl + grace (n2 fenced well before), the
    correct model reads 2 peers a node-period, the variant 1 (its live peer, renewed every period)."""
    _w, h_c = scripted(CORRECT, versioning, crash_n2_at=25_000)
    _w, h_v = scripted(P1, versioning, crash_n2_at=25_000)
    c, v = listing_requests(h_c), listing_requests(h_v)
    assert c["lists"] and v["lists"]
    assert c["gets_per_node_period"] >= 1.9, c
    assert v["gets_per_node_period"] <= 1.1, v
    assert v["peer_gets"] < c["peer_gets"]


@pytest.mark.parametrize("versioning", ["md5", "opaque"])
def test_no_fewer_body_reads_while_every_peer_renews(versioning):
    """In a calm cluster every live peer writes its lease once a period (NL-2), the period the listing
    runs at: every listed ETag changed, so the variant reads every body the correct model reads.
    (A gate that skipped a renewed peer would fail here: it would miss a change.)"""
    _w, h_c = scripted(CORRECT, versioning)
    _w, h_v = scripted(P1, versioning)
    c, v = listing_requests(h_c), listing_requests(h_v)
    assert c["gets_per_node_period"] == pytest.approx(2.0, abs=0.1)
    assert v["gets_per_node_period"] == pytest.approx(c["gets_per_node_period"], abs=0.1)


@pytest.mark.parametrize("versioning", ["md5", "opaque"])
def test_a_dead_peer_is_still_fenced_and_its_changed_body_read(versioning):
    """Under the variant n2's unchanged live object is still watched and fenced (FN-2, FN-3), and the
    node that did not fence it reads the changed body (the fence) under its new ETag: both views show
    n2 fenced, tagged with the ETag the listing gave."""
    w, h = scripted(P1, versioning, crash_n2_at=25_000)
    fenced = [h.events[i] for i in h.of_kind("fenced")]
    assert fenced and all(e.fields.node == "n2" for e in fenced)
    fencer = h.processes[fenced[0].proc].node_id
    for slot in w.slots[:2]:
        seen = slot.proc.state.view["n2"]
        assert seen.state == FENCED, (slot.node_id, seen)
        if slot.node_id != fencer:
            assert isinstance(seen, ListedSeen) and seen.etag == w.bucket.objects["nodes/n2"].read_token
        assert slot.proc.state.view[next(s.node_id for s in w.slots[:2] if s is not slot)].state == LIVE


def test_the_pinned_discipline_changes_the_tokens_only(monkeypatch):
    """tests/kits/measure_etag.py.s pin: every seed draws the world it draws unpinned, but for its
    bucket's token discipline (the alias stage draws only under opaque, so the pin comes after it)."""

    from measure_etag import pin_discipline
    from scenarios import swarm

    def options(seed):
        params, _family = swarm.draw_params(seed, {}, "swarm")
        return swarm.draw(seed, "swarm", params)

    before = [options(s) for s in range(8)]
    assert {o["versioning"] for o in before} == {"md5", "opaque"}
    monkeypatch.setattr(swarm, "STAGES", list(swarm.STAGES))  # the pin changes this copy only
    pin_discipline("opaque", 0.5)
    for b, a in zip(before, (options(s) for s in range(8))):
        assert (a["versioning"], a["p_alias"]) == ("opaque", 0.5)
        assert {k: v for k, v in a.items() if k not in ("versioning", "p_alias")} == \
            {k: v for k, v in b.items() if k not in ("versioning", "p_alias")}
