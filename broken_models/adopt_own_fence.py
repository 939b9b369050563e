"""Breaks NL-9/NL-10: on a failed condition, a re-read showing `fenced` naming this process's
own instance is taken as its own write and adopted; the node writes `live` over the fence
(If-Match on the fence's version) and goes on as if nothing happened.
Caught by: INV-10 (a fenced process writes live no more: the bucket applied a live write of
that instance after a fence naming it).
"""

from model.node import Model
from model.records import FENCED, LIVE, NodeRecord

RULE = "NL-10"
CATCHES = "INV-10"


class AdoptOwnFence(Model):
    name = "adopt_own_fence"

    def is_own_live_write(self, st, rec) -> bool:
        return isinstance(rec, NodeRecord) and rec.state in (LIVE, FENCED) and rec.instance == st.instance


MODEL = AdoptOwnFence()
step = MODEL.step
