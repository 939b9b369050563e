"""Breaks CS-3: the drain reports drained as soon as no actor is resident, with releases
still pending (or acquisitions still unresolved).

The correct drain waits until the set of pending releases is empty, so no record is left
naming a live node that no longer serves it.
Caught by: INV-5 (drained means free).
"""

from model.frozen import replace

from model.io import Mark, Observe
from model.node import Model

RULE = "CS-3"
CATCHES = "INV-5"


class DrainWithPending(Model):
    name = "drain_with_pending"

    def check_drained(self, st, now, out):
        if st.holds:
            return st
        out.append(Mark("CS-3"))
        out.append(Observe("drained"))  # without waiting for the pending releases
        return replace(st, drained=True)


MODEL = DrainWithPending()
step = MODEL.step
