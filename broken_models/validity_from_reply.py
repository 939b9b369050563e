"""Breaks NL-4: validity is counted from the reply's arrival instead of the send time stored in
the write, so the node believes its lease valid longer than the bucket granted (by the write's
round trip, and by a whole attempt timeout when the reply came late).
Caught by: LEASE-1 (a `lease_valid` reaching past what its last applied write allows; the
world knows when each write was sent).
"""

from model.node import Model

RULE = "NL-4"
CATCHES = "LEASE-1"


class ValidityFromReply(Model):
    name = "validity_from_reply"

    def valid_from(self, sent_ms: int, now) -> int:
        return now.wall_ms  # the reply's arrival, not the send


MODEL = ValidityFromReply()
step = MODEL.step
