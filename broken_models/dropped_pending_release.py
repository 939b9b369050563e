"""Breaks OR-5: a release that fails or whose outcome is unknown is dropped instead of kept
as a pending release and retried.

The record then keeps naming a live process that no longer holds the actor. A drain
reports drained with that record still naming it (its releases "landed": none is pending).
Caught by: INV-5 (drained means free). Not by INV-4 here: the next request for the actor
is forwarded to the named node, which re-acquires over its own instance (OR-3, OR-10), so
the record does not stay held against clients.
"""

from model.io import Observe
from model.node import Model

RULE = "OR-5"
CATCHES = "INV-5"


class DroppedPendingRelease(Model):
    name = "dropped_pending_release"

    def add_pending(self, st, actor, generation, version, now, out):
        out.append(Observe("release_dropped", (actor, generation)))
        return st  # forgotten, never retried


MODEL = DroppedPendingRelease()
step = MODEL.step
