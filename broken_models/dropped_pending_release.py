"""Breaks OR-5: a release that fails or whose outcome is unknown is dropped instead of kept
as a pending release and retried.

The record then keeps naming a live process that no longer holds the actor: nobody can
take it over (FN-5 frees nothing while that process's lease is live).
Caught by: INV-4 (nothing stays held).
"""

from model.io import Observe
from model.node import Model

RULE = "OR-5"
CATCHES = "INV-4"


class DroppedPendingRelease(Model):
    name = "dropped_pending_release"

    def add_pending(self, st, actor, generation, version, now_ms, out):
        out.append(Observe("release_dropped", (actor, generation)))
        return st  # forgotten, never retried


MODEL = DroppedPendingRelease()
step = MODEL.step
