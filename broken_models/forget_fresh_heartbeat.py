"""Breaks FN-8: `cluster forget` deletes any old-format heartbeat, without UP-2's staleness test.
An old binary still running (a straggler whose listing stalled, one started again after the
switch) loses the heartbeat every new node's start guard waits on, and the guard may pass beside
it (section 6).
Caught by: UP-2 (FN-8's delete judged on world facts: the heartbeat it removed was written less
than horizon + ttl + grace before the operator's clock at the delete).
"""

from model.node import Model
from model.operator import Operator
from model.records import OldHeartbeat

RULE = "FN-8"
CATCHES = "UP-2"


class ForgetAnyOldOperator(Operator):
    def forgettable(self, st, rec, now: int) -> bool:
        return isinstance(rec, OldHeartbeat)


class ForgetFreshHeartbeat(Model):
    name = "forget_fresh_heartbeat"
    operator = ForgetAnyOldOperator()


MODEL = ForgetFreshHeartbeat()
step = MODEL.step
