"""Breaks NL-2's cadence, "a lease write every third of the ttl": the lease task ticks every half period, so a
node writes its lease twice a period, retries apart. Safe (every write is conditional), and twice the PUTs
the ADR counts for a node's lease.
Caught by: COST-1 (in the quiet phase, a lease write leaving less than a period after an acknowledged one,
on the node's clock).
"""

from model.io import SetTimer
from model.node import Model

RULE = "NL-2"
CATCHES = "COST-1"


class LeaseWritesTwiceAPeriod(Model):
    name = "lease_writes_twice_a_period"

    def lease_tick(self, st, now_ms, out):
        st = super().lease_tick(st, now_ms, out)
        out.append(SetTimer("lease_tick", now_ms + st.params.period_ms // 2))  # (replaces the tick at P)
        return st


MODEL = LeaseWritesTwiceAPeriod()
step = MODEL.step
