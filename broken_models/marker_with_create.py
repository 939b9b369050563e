"""Breaks UP-3: the first acquisition sends owners/ together with the leases/ marker instead of
after the marker's acknowledgement.

UP-3 orders the two writes: the marker first (so that an old binary never takes the actor the
new version owns, and so that a crash between the writes leaves the seed), then owners/ at its
generation + 1. Sent together, owners/ lands while leases/ still holds the old lease, or holds it
for good when the marker fails (an old binary renewed or took the lease in between): the new
version then owns an actor an old binary may take.
Caught by: UP-3 (b): no marker in the bucket when the create was sent; (c): none known to its
sender (its generation is right, so INV-2 sees nothing).
"""

from model.node import Model
from model.records import segment_generation

RULE = "UP-3"
CATCHES = "UP-3"


class MarkerWithCreate(Model):
    name = "marker_with_create"

    def on_reply_upgrade_seed_list(self, st, purpose, reply, now, out):
        _, actor, old_gen, marker = purpose
        if marker is None or reply.status != "ok":
            return super().on_reply_upgrade_seed_list(st, purpose, reply, now, out)
        keys_gen = max((segment_generation(k) for k, _v in reply.entries), default=0)
        seed = self.seed_generation(st, old_gen, keys_gen)
        cond, version = marker
        st = self.send(st, ("marker_unawaited",), self.marker_request(actor, seed, cond, version), out)
        return self.acquire_write(st, actor, seed + 1, now, out)  # with it, not after its reply

    def on_reply_marker_unawaited(self, st, purpose, reply, now, out):
        return st


MODEL = MarkerWithCreate()
step = MODEL.step
