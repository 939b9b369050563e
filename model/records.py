"""Record codecs: the bytes the protocol stores in the bucket.

`nodes/<id>` (NL-1): format 3 is the node lease; formats 1 and 2 are the old
unconditional heartbeats, decoded only as "old format" with their written_at.
These codecs are part of the protocol (DESIGN.md) and know nothing of time
or of the bucket.
"""

from __future__ import annotations

from typing import NamedTuple

NODE_HEADER_3 = "wasmkeep-node 3"
OLD_NODE_HEADERS = ("wasmkeep-node 1", "wasmkeep-node 2")

LIVE = "live"
RELEASED = "released"
FENCED = "fenced"
NODE_STATES = (LIVE, RELEASED, FENCED)

NO_INSTANCE = "-"  # an operator's fence created over an absent object names nobody (FN-7)


def node_key(node_id: str) -> str:
    return "nodes/" + node_id


NODES_PREFIX = "nodes/"


class NodeRecord(NamedTuple):
    """A format-3 node lease (NL-1). `instance` is None for an operator's fence over nothing."""

    state: str
    instance: str | None
    written_at_ms: int
    node_id: str

    @property
    def live(self) -> bool:
        return self.state == LIVE


class OldHeartbeat(NamedTuple):
    """A heartbeat in format 1 or 2, written unconditionally by an old binary."""

    fmt: int
    node_id: str
    written_at_ms: int


class Corrupt(NamedTuple):
    """Bytes no decoder here accepts."""

    body: str


def encode_node(rec: NodeRecord) -> str:
    inst = NO_INSTANCE if rec.instance is None else rec.instance
    return f"{NODE_HEADER_3}\n{rec.state} {inst}\nwritten_at_ms {rec.written_at_ms}\nnode {rec.node_id}\n"


def encode_old_heartbeat(hb: OldHeartbeat) -> str:
    return f"wasmkeep-node {hb.fmt}\nnode {hb.node_id}\nwritten_at_ms {hb.written_at_ms}\n"


def decode_node(body: str) -> NodeRecord | OldHeartbeat | Corrupt:
    """Decode a `nodes/<id>` body; never raises."""
    lines = body.split("\n")
    try:
        header = lines[0]
        if header == NODE_HEADER_3:
            state, inst = lines[1].split(" ")
            k1, written = lines[2].split(" ")
            k2, node_id = lines[3].split(" ")
            if state not in NODE_STATES or k1 != "written_at_ms" or k2 != "node":
                return Corrupt(body)
            return NodeRecord(state, None if inst == NO_INSTANCE else inst, int(written), node_id)
        if header in OLD_NODE_HEADERS:
            fields = dict(line.split(" ", 1) for line in lines[1:] if line)
            return OldHeartbeat(int(header[-1]), fields["node"], int(fields["written_at_ms"]))
    except (ValueError, KeyError, IndexError):
        pass
    return Corrupt(body)


# --- owners/<tenant>/<class>/<name> (OR-1) ---------------------------------------

OWNER_HEADER = "wasmkeep-owner 1"
OWNERS_PREFIX = "owners/"


def owner_key(actor: str) -> str:
    """`actor` is "<tenant>/<class>/<name>"."""
    return OWNERS_PREFIX + actor


class OwnerRecord(NamedTuple):
    """OR-1: node id, instance and generation; or nobody (node None), generation kept."""

    node_id: str | None
    instance: str | None
    generation: int

    @property
    def nobody(self) -> bool:
        return self.node_id is None


def encode_owner(rec: OwnerRecord) -> str:
    if rec.node_id is None:
        return f"{OWNER_HEADER}\nnobody {rec.generation}\n"
    return f"{OWNER_HEADER}\nheld {rec.node_id} {rec.instance} {rec.generation}\n"


def decode_owner(body: str) -> OwnerRecord | Corrupt:
    """Decode an `owners/` body; never raises."""
    lines = body.split("\n")
    try:
        if lines[0] == OWNER_HEADER:
            parts = lines[1].split(" ")
            if parts[0] == "nobody" and len(parts) == 2:
                return OwnerRecord(None, None, int(parts[1]))
            if parts[0] == "held" and len(parts) == 4:
                return OwnerRecord(parts[1], parts[2], int(parts[3]))
    except (ValueError, IndexError):
        pass
    return Corrupt(body)


# --- leases/<tenant>/<class>/<name>: the old per-actor lease and the upgrade marker --------

LEASES_PREFIX = "leases/"
OLD_LEASE_HEADER = "wasmkeep-lease 1"
MARKER_HEADER = "wasmkeep-lease 2"


def lease_key(actor: str) -> str:
    return LEASES_PREFIX + actor


class OldLease(NamedTuple):
    """An old binary's per-actor lease: held by `node_id` until `expires_at_ms` (its clock),
    with a generation; expires_at 0 is a released lease, generation kept."""

    node_id: str
    generation: int
    expires_at_ms: int


class Marker(NamedTuple):
    """UP-3: the marker a new node leaves in leases/: the generation it seeded owners/ from."""

    generation: int


def encode_old_lease(lease: OldLease) -> str:
    return (f"{OLD_LEASE_HEADER}\nnode {lease.node_id}\ngeneration {lease.generation}\n"
            f"expires_at_ms {lease.expires_at_ms}\n")


def encode_marker(marker: Marker) -> str:
    return f"{MARKER_HEADER}\ngeneration {marker.generation}\n"


def decode_lease(body: str) -> OldLease | Marker | Corrupt:
    """A new node's decoder of leases/: the old lease or the marker. Never raises."""
    lines = body.split("\n")
    try:
        fields = dict(line.split(" ", 1) for line in lines[1:] if line)
        if lines[0] == OLD_LEASE_HEADER:
            return OldLease(fields["node"], int(fields["generation"]), int(fields["expires_at_ms"]))
        if lines[0] == MARKER_HEADER:
            return Marker(int(fields["generation"]))
    except (ValueError, KeyError, IndexError):
        pass
    return Corrupt(body)


def decode_lease_v1(body: str) -> OldLease | Corrupt:
    """UP-4: the old binary's decoder (LeaseRecord::decode) accepts only `wasmkeep-lease 1`:
    a marker reads as corrupt."""
    rec = decode_lease(body)
    return rec if isinstance(rec, OldLease) else Corrupt(body)


def state_line(body: str | None) -> str:
    """A record's state in one line, for histories and timelines: "live <instance> <written_at>"
    (or fenced / released) for a format-3 node lease, "held <node> <instance> <generation>" or
    "nobody <generation>" for an owner record, "old-lease <node> <generation> <expires_at>" for an
    old per-actor lease, "marker <generation>" for an upgrade marker, the second line otherwise
    ("node <id>" for an old heartbeat); "" for no body."""
    if not body or "\n" not in body:  # (a segment's 4 KiB, every data write's `apply`: not split for nothing)
        return ""
    parts = body.split("\n", 3)
    if parts[0] == NODE_HEADER_3 and len(parts) > 2:
        return parts[1] + " " + parts[2][len("written_at_ms "):]
    if parts[0] == OLD_LEASE_HEADER or parts[0] == MARKER_HEADER:
        rec = decode_lease(body)
        if isinstance(rec, OldLease):
            return f"old-lease {rec.node_id} {rec.generation} {rec.expires_at_ms}"
        if isinstance(rec, Marker):
            return f"marker {rec.generation}"
    return parts[1]


def segment_generation(key: str) -> int:
    """The generation a data key carries: .../<generation>-<instance>-<seq> (ADR 0007)."""
    try:
        return int(key.rsplit("/", 1)[1].split("-", 1)[0])
    except (ValueError, IndexError):
        return 0
