"""Breaks UP-3's count, "per actor, once and for good: its first hold under the new version also reads
leases/" (ADR 0020, Cost, after): every acquisition reads the actor's `leases/` object beside its record,
the answer thrown away. Safe (nothing is decided on it), and a GET more per acquisition for ever.
Caught by: COST-4 (a request on `leases/<actor>` in an acquisition whose read found the record).
"""

from model.io import GET, Request
from model.node import Model
from model.records import lease_key

RULE = "UP-3"
CATCHES = "COST-4"


class MarkerReadEveryAcquisition(Model):
    name = "marker_read_every_acquisition"

    def begin_acquire(self, st, actor, now_ms, out):
        st = super().begin_acquire(st, actor, now_ms, out)
        acq = st.acquiring.get(actor)
        if acq is not None and acq.stage == "read":  # (not while it waits for the lock)
            st = self.send(st, ("lease_peek", actor), Request(GET, lease_key(actor)), out)
        return st

    def on_reply_lease_peek(self, st, purpose, reply, now_ms, out):
        return st  # thrown away


MODEL = MarkerReadEveryAcquisition()
step = MODEL.step
