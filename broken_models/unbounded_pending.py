"""Breaks BD-2: the background task works every pending entry at once (the ADR: at most 32, so that
after a lapse with thousands of holds a drain and a shutdown do not wait on a burst, and a slow bucket
gets no burst of writes beside the node lease's renewals).
Caught by: BD-2 (checkers/pending_entries.py), on the requests the world saw the task send when its timer fired
and on their answers: more than 32 of them in flight at once.
"""

from model.node import Model

RULE = "BD-2"
CATCHES = "BD-2"


class UnboundedPending(Model):
    name = "unbounded_pending"
    pending_concurrency = 1_000


MODEL = UnboundedPending()
step = MODEL.step
