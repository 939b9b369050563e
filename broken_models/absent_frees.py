"""Breaks FN-5: an absent `nodes/A` frees the records naming A (the ADR: an absent object frees
nothing; only a fence, the operator's included, does, ttl + grace after its written_at). After a
mistaken delete of `nodes/A`, peers take A's actors at once while A still runs and acts.
Caught by: INV-1 (judged on the bucket's states: no state of nodes/A in the attempt timeout before
the acquisition's write frees the record it replaced; and A's acts overlap the new holds).
"""

from model.node import Model

RULE = "FN-5"
CATCHES = "INV-1"


class AbsentFrees(Model):
    name = "absent_frees"

    def frees(self, st, rec, node_rec, now):
        return True if node_rec is None else super().frees(st, rec, node_rec, now)


MODEL = AbsentFrees()
step = MODEL.step
