"""Breaks SLOT-1: a fence whose read decides no write (the read failed or timed out, the peer wrote, or its
object is no longer live) keeps its slot (the ADR's bound BD-1 frees a slot whatever the fence's outcome):
the node never fences that peer again, and each such fence makes the cap one smaller for good.
Caught by: SLOT-1 (checkers/slots.py: a slot the process says it holds, as its listing ends, with no request
of that fence in flight and the last answered more than a period before).
"""

from model.node import Model

RULE = "SLOT-1"
CATCHES = "SLOT-1"


class FenceSlotKept(Model):
    name = "fence_slot_kept"

    def free_fence_slot(self, st, node):
        return st


MODEL = FenceSlotKept()
step = MODEL.step
