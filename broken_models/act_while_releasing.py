"""Breaks OR-5's "the node stops acting as owner before sending it": a released hold keeps
serving until its release's reply comes back.
Caught by: INV-6 (an act after the release was sent, judged on the release the bucket
applied) and INV-1 (an act after its record named nobody).
"""

from model.frozen import replace
from model.node import Model

RULE = "OR-5"
CATCHES = "INV-6"


class ActWhileReleasing(Model):
    name = "act_while_releasing"

    def release(self, st, actor, reason, now, out):
        hold = st.holds[actor]
        st = super().release(st, actor, reason, now, out)
        return replace(st, holds=st.holds.with_item(actor, hold))  # still acts until the reply

    def on_reply_release(self, st, purpose, reply, now, out):
        actor, generation = purpose[1], purpose[2]
        hold = st.holds.get(actor)
        if hold is not None and hold.generation == generation:
            st = replace(st, holds=st.holds.without(actor))
        return super().on_reply_release(st, purpose, reply, now, out)


MODEL = ActWhileReleasing()
step = MODEL.step
