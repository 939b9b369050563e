"""Breaks OR-5: a pending release whose record no longer names this instance at its generation is
kept, not ended, and retried for ever.

OR-5 ends the entry once a read shows the record names something else (another owner, or a later
generation): that release can never land, and nothing is left to free. Kept, the entry's write is
refused (412) at every retry, backed off to the cap (OR-6) but never ended: a node that never
settles, hammering the bucket with refused writes, and a drain that never reports drained (its
set of pending releases never empties, CS-3).
Caught by: CONV-1 (the process keeps sending the refused write once every fault is over, with no
request for that actor to drive it). INV-11 only when a drain happens to wait on such an entry.
"""

from model.node import Model

RULE = "OR-5"
CATCHES = "CONV-1"


class PendingOutlivesItsRecord(Model):
    name = "pending_outlives_its_record"

    def on_reply_pending_read(self, st, purpose, reply, now, out):
        k = purpose[1]
        e = st.pending.get(k)
        if e is None:
            return st
        return self.pending_backoff(st, k, e, now, out, refused=True)  # never ended


MODEL = PendingOutlivesItsRecord()
step = MODEL.step
