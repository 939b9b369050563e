"""NL-1: the `nodes/<id>` codecs. Format 3 round-trips; formats 1 and 2 decode as OldHeartbeat;
anything else decodes as Corrupt, and decoding never raises."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model.records import (
    FENCED,
    LIVE,
    NO_INSTANCE,
    NODE_HEADER_3,
    NODE_STATES,
    RELEASED,
    Corrupt,
    NodeRecord,
    OldHeartbeat,
    decode_node,
    encode_node,
    encode_old_heartbeat,
    node_key,
)

# ids and tokens as deployments spell them: no spaces or newlines (the format is line-based)
ID_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789._-"
node_ids = st.text(ID_CHARS, min_size=1, max_size=20)
instances = st.text(ID_CHARS + "ABCDEF", min_size=1, max_size=32).filter(lambda s: s != NO_INSTANCE)
written_ats = st.integers(-(2**40), 2**53)
records = st.builds(NodeRecord, st.sampled_from(NODE_STATES), st.none() | instances, written_ats, node_ids)
old_heartbeats = st.builds(OldHeartbeat, st.sampled_from([1, 2]), node_ids, written_ats)


@settings(max_examples=200, deadline=None)
@given(records)
def test_nl1_format_3_round_trips(rec):
    """NL-1: encode then decode gives the record back: state, instance (or none), written_at, node."""
    body = encode_node(rec)
    assert body.startswith(NODE_HEADER_3 + "\n")
    assert decode_node(body) == rec
    assert decode_node(body).live == (rec.state == LIVE)


@settings(max_examples=100, deadline=None)
@given(old_heartbeats)
def test_nl1_old_formats_1_and_2_decode_as_old_heartbeat(hb):
    """NL-1 / section 6: headers 1 and 2 are old binaries' heartbeats, never a format-3 lease."""
    decoded = decode_node(encode_old_heartbeat(hb))
    assert decoded == hb
    assert isinstance(decoded, OldHeartbeat) and not isinstance(decoded, NodeRecord)


@pytest.mark.parametrize("fmt", [1, 2])
def test_nl1_old_format_fields_in_any_order(fmt):
    body = f"wasmkeep-node {fmt}\nwritten_at_ms 1234\nnode n9\nextra field\n"
    assert decode_node(body) == OldHeartbeat(fmt, "n9", 1234)


def test_nl1_operator_fence_over_nothing_names_no_instance():
    """FN-7 / NL-1: a fence created over an absent object names nobody; it is not live."""
    rec = NodeRecord(FENCED, None, 5, "n1")
    assert decode_node(encode_node(rec)) == rec and not rec.live


@pytest.mark.parametrize(
    "body",
    [
        "",
        "\n",
        "wasmkeep-node 3",
        "wasmkeep-node 3\n",
        "wasmkeep-node 3\nalive i1\nwritten_at_ms 1\nnode n1\n",  # unknown state
        "wasmkeep-node 3\nlive i1 extra\nwritten_at_ms 1\nnode n1\n",
        "wasmkeep-node 3\nlive i1\nwritten_at 1\nnode n1\n",  # wrong field name
        "wasmkeep-node 3\nlive i1\nwritten_at_ms soon\nnode n1\n",
        "wasmkeep-node 3\nlive i1\nwritten_at_ms 1\nname n1\n",
        "wasmkeep-node 3\nlive i1\nwritten_at_ms 1\n",  # truncated
        "wasmkeep-node 4\nlive i1\nwritten_at_ms 1\nnode n1\n",  # a future format
        "wasmkeep-node 1\nnode n1\n",  # old format without written_at
        "wasmkeep-node 2\nwritten_at_ms x\nnode n1\n",
        "wasmkeep-node 2\nnode-without-value\n",
        "wasmkeep-lease 1\nwhatever\n",  # another record's header
        "WASMKEEP-NODE 3\nlive i1\nwritten_at_ms 1\nnode n1\n",
        "\x00\xff binary-ish",
    ],
)
def test_nl1_garbage_decodes_as_corrupt(body):
    assert decode_node(body) == Corrupt(body)


@settings(max_examples=500, deadline=None)
@given(st.text())
def test_nl1_decode_never_raises_on_any_text(body):
    out = decode_node(body)
    assert isinstance(out, (NodeRecord, OldHeartbeat, Corrupt))
    if not body.startswith("wasmkeep-node "):
        assert out == Corrupt(body)


@settings(max_examples=200, deadline=None)
@given(st.one_of(records.map(encode_node), old_heartbeats.map(encode_old_heartbeat)), st.data())
def test_nl1_decode_never_raises_on_damaged_records(body, data):
    """A truncated or spliced record decodes to something (often Corrupt) and never raises."""
    cut = data.draw(st.integers(0, len(body)))
    insert = data.draw(st.text(max_size=8))
    damaged = body[:cut] + insert + body[cut + data.draw(st.integers(0, 4)):]
    assert isinstance(decode_node(damaged), (NodeRecord, OldHeartbeat, Corrupt))


def test_node_key():
    assert node_key("n7") == "nodes/n7"


def test_nl1_states():
    assert set(NODE_STATES) == {LIVE, RELEASED, FENCED}
