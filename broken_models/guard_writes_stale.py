"""Breaks UP-1: a start guard that passes after the start check's wait ended sends the first lease
write at once, conditioned on the check's last read from before (up to a lease period old), instead
of reading nodes/<id> once more.

While the guard waited, the object may have changed: a process under this id showing itself (NL-5's
reason to wait), a peer's fence. The stale condition then fails and the node goes back to the check,
or (an A-B-A rewrite of identical bytes) it lands over a version the check never saw. Nothing else
breaks in this world: the condition still protects the chain.
Caught by: UP-1 (checkers/start_order.py): no read of nodes/<id> answered between the `guard_passed`
claim and the first write.
"""

from model.frozen import replace
from model.io import CancelTimer
from model.node import Model

RULE = "UP-1"
CATCHES = "UP-1"


class GuardWritesStale(Model):
    name = "guard_writes_stale"

    def guard_decide(self, st, now, out):
        ready = st.check_ready
        st = super().guard_decide(replace(st, check_ready=False), now, out)
        if not ready or st.exited:
            return st
        if not st.guard_passed:
            return replace(st, check_ready=True)
        out.append(CancelTimer("check_read"))
        return self.first_write(st, now, out)  # on the check's last read: no fresh one


MODEL = GuardWritesStale()
step = MODEL.step
