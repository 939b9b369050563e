"""Breaks NL-2's "every min(heartbeat period, ttl / 3) measured from the previous send": the lease task
counts its period from each write's answer instead. A write that hangs for its whole attempt pushes the
next one a period past its timeout, so after an acknowledged write at t the next go at t + P and
t + 2 P + A, past the run-out at t + ttl - safety: one retry, not the two of section 5.
Caught by: COST-6 (a lease run out with fewer than two lease writes sent after the last acknowledged one).
"""

from model.frozen import replace
from model.io import SetTimer
from model.node import Model
from model.node_lease import RUNNING

RULE = "NL-2"
CATCHES = "COST-6"


class LeaseTickFromReply(Model):
    name = "lease_tick_from_reply"

    def on_reply_lease_write(self, st, purpose, reply, now_ms, out):
        st = super().on_reply_lease_write(st, purpose, reply, now_ms, out)
        ls = st.lease
        if not st.exited and ls.phase == RUNNING and not ls.invalidated and ls.attempt_rid is None:
            out.append(SetTimer("lease_tick", now_ms + st.params.period_ms))  # (replaces the tick due)
            st = replace(st, lease=replace(ls, next_send_ms=now_ms + st.params.period_ms))
        return st


MODEL = LeaseTickFromReply()
step = MODEL.step
