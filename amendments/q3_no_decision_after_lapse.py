"""Q-3: a resolver decision taken on a reply that arrives after the node lease ran out is dropped
(the other reading of OR-6): the record is read again once the lease is valid.

OR-6 pauses the background task while the node lease is invalid, but a resolve read sent while
valid may be answered after the lease ran out; the model decides on it (releases the record).
This variant drops such a decision and reads again later.
"""

from model import io
from model.node import Model

ADDRESSES = "Q-3"
KIND = "question"
RULES = ("OR-6", "OR-8")
ADR = ("Section 3: 'pending releases and unresolved acquires are retried in the background while the lease is "
       "valid, under a lock per actor' (nothing says what a reply arriving after the lease ran out decides)")
PROPOSED = ("'... a resolver's read answered after the node lease ran out decides nothing: the record is read "
            "again once the lease is valid.'")


class NoDecisionAfterLapse(Model):
    name = "q3_no_decision_after_lapse"

    def on_reply_resolve_read(self, st, purpose, reply, now, out):
        if reply.status == io.OK and not self.lease_valid(st, now):
            reply = reply._replace(status=io.TIMED_OUT, body=None, version=None)  # as a failed read: read again
        return super().on_reply_resolve_read(st, purpose, reply, now, out)


MODEL = NoDecisionAfterLapse()
