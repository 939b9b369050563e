"""Breaks OR-5: a pending release, once parked, is never written again: each retry only re-reads the
record, and goes on waiting while the record still names this instance at its generation.

OR-5's retry is the same write, `If-Match` on the hold's acquire version; the read that ends an
entry follows a refused write only. Read without writing, a record whose release was lost keeps
naming a live process that holds nothing for it, for ever. That looks like F-2's resolver from the
outside (a process reading one record again and again once the faults are over), which is why F-2's
classifier must see an *acquisition's* lost write before it explains such reads (issue 36: the old
classifier took any lost write to the record and absorbed this model's violations in 11 of 2,000
seeds where the correct model has no F-2 at all).
Caught by: CONV-1 (the process keeps reading the record once every fault is over, with no request
for that actor to drive it). INV-11 too when a drain waits on such an entry.
"""

from model.io import GET, Request
from model.frozen import replace
from model.node import Model
from model.records import owner_key

RULE = "OR-5"
CATCHES = "CONV-1"


class PendingReleaseRereads(Model):
    name = "pending_release_rereads"

    def retry_release(self, st, k, e, out):
        rid = st.next_rid  # the retry reads (as after a refusal) instead of writing again
        st = self.send(st, ("pending_read", k), Request(GET, owner_key(e.actor)), out)
        return replace(st, pending=st.pending.with_item(k, replace(e, rid=rid)))


MODEL = PendingReleaseRereads()
step = MODEL.step
