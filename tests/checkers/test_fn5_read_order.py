"""FN-5's read order, raced (issue 39, part 3): a record naming (A, i) is free only on a read of
nodes/A issued after the read of the record. Two scripts restart the named node under its id (a new
instance i1, whose first live write lands after its start check and which then takes the actor back)
between an acquiring node's two reads; the correct model stays safe, and each broken model that
reads nodes/A first is caught by the invariant it declares, INV-1.

- `node_read_before_record` swaps the two reads: nodes/A, then the record, decided as a pair. n1's
  read of nodes/n0 is answered late (a slow reply) after it applied while i0's object was there; i1
  writes and takes the actor back meanwhile; n1's record read then names i1, and "live naming another
  instance" frees it: n1 takes the actor from i1, and i1 serves it again.
- `frees_on_the_view` decides on the membership view (the listing's earlier GET of nodes/n0, which
  n1's lost reads keep from before i1's write).

The correct model, in both, reads nodes/n0 after the record: the first script's read shows i0, the
record i0 (held); the second's shows i1, the record i1 (held). It refuses, and nothing fails.
"""

from __future__ import annotations

from broken_models import entry, load_model
from checkers import check_all
from historykit import A0, applies, evs, procs
from scenarios.script import NetRule, ScriptedWorld

SWAP_REQUEST_MS = 35_000  # n1's request in the swapped-reads script, as i1's first write is about to land
VIEW_REQUEST_MS = 38_000  # n1's request in the view script: more than an attempt timeout after that write
LOST_FROM_MS = 34_000  # from here n1's reads of nodes/n0 are lost until its request (the view script)


def _world(name: str) -> ScriptedWorld:
    """n0 (instance i0) takes the actor at 16 s and crashes at 20 s; its supervisor restarts it under the
    same id (i1), whose check waits ttl + grace."""
    w = ScriptedWorld(nodes=2, model=load_model(name), model_name=name)
    w.at(16_000, "request", "n0", A0)
    w.at(20_000, "crash", "n0")
    return w


def _swapped_reads(name: str):
    w = _world(name)
    # n1 never reads nodes/n0 before its request (its listing's reads are lost): it neither fences n0
    # nor sees it in its view, so it acquires where the request lands (OR-10)
    w.rule(NetRule("lose_request", node="n1", op="GET", key="nodes/n0", until_ms=SWAP_REQUEST_MS - 100, times=None))
    # its acquisition's read of nodes/n0 applies at once (i0's object) and is answered 1.5 s later
    w.rule(NetRule("delay_reply", node="n1", op="GET", key="nodes/n0", after_ms=SWAP_REQUEST_MS - 50, ms=1_500))
    w.at(SWAP_REQUEST_MS, "request", "n1", A0)
    w.at(SWAP_REQUEST_MS + 300, "request", "n0", A0)  # i1, just written, takes the actor back
    w.at(SWAP_REQUEST_MS + 2_000, "request", "n0", A0)  # i1 still holds it, by its own lights
    return w.run(until_ms=60_000)


def _stale_view(name: str):
    w = _world(name)
    w.rule(NetRule("lose_request", node="n1", op="PUT", key="nodes/n0", times=None))  # n1 never fences n0
    # n1's view keeps what its listing read before i1's first write (its later reads are lost)
    w.rule(NetRule("lose_request", node="n1", op="GET", key="nodes/n0", after_ms=LOST_FROM_MS,
                   until_ms=VIEW_REQUEST_MS - 100, times=None))
    w.at(36_000, "request", "n0", A0)  # i1 takes the actor back (nodes/n0 live i1, the record names i0)
    w.at(VIEW_REQUEST_MS, "request", "n1", A0)
    w.at(VIEW_REQUEST_MS + 500, "request", "n0", A0)
    return w.run(until_ms=60_000)


def _restarted_between(h, first_read_ms: int, second_read_ms: int) -> int:
    """i1's process, after checking the race: its first live write and its taking the actor back (from
    i0) both fall between n1's two reads."""
    first, second = procs(h, "n0")
    live = [a for a in applies(h, "nodes/n0", proc=second) if a.fields.state.startswith("live ")]
    took = applies(h, "owners/" + A0, proc=second)
    assert live and took and first_read_ms < live[0].t_ms < took[0].t_ms < second_read_ms
    assert took[0].fields.prev_state.split(" ")[2] == h.processes[first].instance
    return second


def _refused_held_by(h, since: int, instance: str) -> None:
    assert check_all(h) == []
    failed = evs(h, "request_failed", node="n1", since=since)
    assert failed and failed[0].fields.reason == f"acquire: held by live n0/{instance}"
    assert not applies(h, "owners/" + A0, node="n1")


def _caught_by_inv1(h, robbed: int) -> None:
    """n1 replaced i1's record, and INV-1 (the model's declared invariant) names i1's later act."""
    taken = applies(h, "owners/" + A0, node="n1")
    assert taken and taken[0].fields.prev_state.startswith(f"held n0 {h.processes[robbed].instance} ")
    acts = evs(h, "served", proc=robbed, since=taken[0].t_ms)
    inv1 = [v for v in check_all(h) if v.invariant == "INV-1"]
    assert acts and any(acts[0].i in v.events for v in inv1), [v.message for v in inv1]


def test_fn5_swapped_reads_the_correct_model_reads_the_record_first_and_refuses():
    """FN-5: the record read names i0, nodes/n0 read after it shows i0 live: held."""
    h = _swapped_reads("correct")
    first = procs(h, "n0")[0]
    _refused_held_by(h, SWAP_REQUEST_MS, h.processes[first].instance)


def test_fn5_swapped_reads_caught_by_inv1():
    """FN-5 swapped (node_read_before_record, a survivor in the swarm): nodes/n0 read first (i0), the
    record after it (i1, taken back meanwhile): freed at once, taken from a valid owner."""
    assert entry("node_read_before_record").catches == "INV-1"
    h = _swapped_reads("node_read_before_record")
    slow = evs(h, "fault", node="n1", where=lambda f: f.what == "slow_reply" and f.target == "GET nodes/n0")
    record_reads_ms = SWAP_REQUEST_MS + 1_500  # n1's record read goes once the slow reply arrives
    robbed = _restarted_between(h, slow[0].t_ms, record_reads_ms)
    _caught_by_inv1(h, robbed)


def test_fn5_stale_view_the_correct_model_reads_nodes_after_the_record_and_refuses():
    """FN-5: n1's fresh read of nodes/n0, issued after its read of the record (i1), shows i1 live: held."""
    h = _stale_view("correct")
    second = procs(h, "n0")[1]
    _refused_held_by(h, VIEW_REQUEST_MS, h.processes[second].instance)


def test_fn5_stale_view_caught_by_inv1():
    """FN-5 on the membership view (frees_on_the_view): the view's read of nodes/n0 (i0) predates i1's
    write and re-acquisition; INV-1 catches the taking on the bucket's states too (no state of nodes/n0
    in the attempt timeout before n1's write frees n0/i1)."""
    assert entry("frees_on_the_view").catches == "INV-1"
    h = _stale_view("frees_on_the_view")
    assert evs(h, "fault", node="n1", where=lambda f: f.what == "request_lost" and f.target == "GET nodes/n0")
    robbed = _restarted_between(h, LOST_FROM_MS, VIEW_REQUEST_MS)  # the view's last read came before
    _caught_by_inv1(h, robbed)
    assert any("(FN-5)" in v.message for v in check_all(h) if v.invariant == "INV-1")
