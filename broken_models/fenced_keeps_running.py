"""Breaks NL-10: a node whose re-read shows its lease lost (fenced, another instance, absent)
drops its holds but does not exit: it treats the loss as a lapse and keeps sending lease
writes, which the bucket refuses for ever.
Caught by: INV-10 (a process whose write met a fence naming it is still running two attempt
timeouts later, with no fault around it).
"""

from model.frozen import replace
from model.io import Observe
from model.node import Model

RULE = "NL-10"
CATCHES = "INV-10"


class FencedKeepsRunning(Model):
    name = "fenced_keeps_running"

    def lease_lost(self, st, reason, now, out):
        out.append(Observe("lease_lost", (reason,)))
        st = self.drop_all_holds(st, now, out)
        return replace(st, lease=replace(st.lease, lapsed=True))  # no exit


MODEL = FencedKeepsRunning()
step = MODEL.step
