"""Breaks NL-4 at its margin: the node acts as owner until written_at + ttl on its own clock,
without the safety margin (its lease check and its lapse both come `safety` late). Its
`lease_valid` observations still report the true deadline: only its acts show it.

Peers free its records only at written_at + ttl + grace on their clocks, so nobody else owns
the actor yet; but the ADR's validity ends at written_at + ttl - safety, and a process cut off
from the bucket keeps serving requests past it.
Caught by: INV-1 (an act outside a valid hold: the world rebuilds validity from the write's
send time, never from the model's words).
"""

from model.node import Model

RULE = "NL-4"
CATCHES = "INV-1"


class ActsAfterLease(Model):
    name = "acts_after_lease"

    def validity_end(self, st) -> int:
        return st.lease.valid_until_ms + st.params.safety_ms  # no safety margin


MODEL = ActsAfterLease()
step = MODEL.step
