"""Breaks OR-2: an acquisition writes the record without checking, right before the write, that the
node lease is valid (routing checked it when the request came; the lease may have run out during
the acquisition's read). A record taken while the node lease is not valid may be one a peer is
freeing at that moment.
Caught by: INV-1 (judged on world facts: an applied acquisition naming its writer was sent inside
a window of the writer's node lease, rebuilt from its applied live writes).
"""

from model.node import Model

RULE = "OR-2"
CATCHES = "INV-1"


class AcquiresWhileInvalid(Model):
    name = "acquires_while_invalid"

    def may_acquire(self, st, now):
        return True


MODEL = AcquiresWhileInvalid()
step = MODEL.step
