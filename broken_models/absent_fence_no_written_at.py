"""Breaks FN-7: the operator's `cluster fence` of an absent nodes/<id> writes the fence with
written_at 0 instead of the operator's clock, so every record naming that id is free at once,
while a process still running under it may be valid until its last write's written_at + ttl -
safety (its object was deleted by mistake, or the machine is not gone after all).
Caught by: INV-1 (the still-running owner acts after a peer took its record).
"""

from model.node import Model
from model.operator import Operator

RULE = "FN-7"
CATCHES = "INV-1"


class NoWrittenAtOperator(Operator):
    def absent_fence_written_at(self, now: int) -> int:
        return 0


class AbsentFenceNoWrittenAt(Model):
    name = "absent_fence_no_written_at"
    operator = NoWrittenAtOperator()


MODEL = AbsentFenceNoWrittenAt()
step = MODEL.step
