"""Q-1: a `released` object frees its records at once, without the written_at + ttl + grace wait
(the other reading of FN-5 and CS-1).

A clean stop invalidates and cuts its events before it writes `released` (CS-1), so the wait
on a released object may be uniformity rather than safety. This variant frees records naming a
released node at once (fenced ones still wait).
"""

from model.node import Model
from model.records import RELEASED, NodeRecord

ADDRESSES = "Q-1"
KIND = "question"
RULES = ("FN-5", "CS-1")
ADR = ("Section 2: 'fenced or released naming any instance, free once that object's kept written_at + ttl + "
       "grace has passed on the reader's clock.'")
PROPOSED = "'fenced naming any instance, free once ... ttl + grace has passed; released naming any instance, free at once.'"


class ReleasedFreesAtOnce(Model):
    name = "q1_released_frees_at_once"

    def frees(self, st, rec, node_rec, now):
        if isinstance(node_rec, NodeRecord) and node_rec.state == RELEASED:
            return True
        return super().frees(st, rec, node_rec, now)


MODEL = ReleasedFreesAtOnce()
