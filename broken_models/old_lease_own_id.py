"""Breaks UP-3: a live old lease naming this node's own id is taken as this node's own.

An old record has no instance to tell a predecessor from a past hold of this process, so
the correct first acquisition refuses a live old lease whatever node it names. Reusing a
node id across the switch, a new node then takes an actor an old process with that id still
holds and renews (its heartbeat stalled, so the start guard let the new node start).
Caught by: INV-1 (two owners), across the two versions.
Survives in this world: the start guard (UP-2) keeps a new node under a reused id from
starting until the straggler's stalled heartbeat is stale (horizon + ttl + grace after its
last write), and by then the straggler's actors were hibernated or handed over; in 200
upgrade seeds no request for a straggler's live lease reached the new node with its id.
"""

from model.node import Model

RULE = "UP-3"
CATCHES = "INV-1"
SURVIVOR = "the start guard keeps a new node under a reused id from starting while the old lease lives"


class OldLeaseOwnId(Model):
    name = "old_lease_own_id"

    def old_lease_refuses(self, st, lease, now) -> bool:
        return lease.node_id != st.node_id and lease.expires_at_ms + st.params.grace_ms >= now.wall_ms


MODEL = OldLeaseOwnId()
step = MODEL.step
