"""Breaks UP-3: a marker write whose outcome is unknown (no reply within its timeout, or a 409)
is assumed to have landed: owners/ is created at the seed + 1 without reading leases/ again.

UP-3's marker carries the seed, and owners/ is created above it. A write with no answer may
not have landed (the request lost), and another node's marker, or an old binary's renewal, may
be there instead: only a fresh read of leases/ tells (a crash between the writes leaves the
marker, from which the next acquisition seeds). Assumed, owners/ can land over a leases/ key
that holds no marker (an old binary may then take the actor), or above a marker it never read.
Caught by: UP-3 (c): the create rests on no marker its sender knew of (and (b) when the marker
was lost on its way). The generation is right, so INV-2 sees nothing.
"""

from model import io
from model.node import Model

RULE = "UP-3"
CATCHES = "UP-3"


class AssumedMarker(Model):
    name = "assumed_marker"

    def on_reply_upgrade_marker(self, st, purpose, reply, now, out):
        _, actor, seed = purpose
        if reply.status in (io.TIMED_OUT, io.CONFLICT):
            return self.acquire_write(st, actor, seed + 1, now, out)  # assumed landed
        return super().on_reply_upgrade_marker(st, purpose, reply, now, out)


MODEL = AssumedMarker()
step = MODEL.step
