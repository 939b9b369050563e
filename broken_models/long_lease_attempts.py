"""Breaks T-4 and NL-3: each lease-write attempt waits twice A for its answer. Peers size their watch
on A (FN-2: a lease write in flight lands within A of its period); this node's last write may land
after a peer's watch of it ended, and its retries come too late to fit the period.
Caught by: LEASE-2 (judged on world facts: a lease write of this node answered, or timed out, more
than A after its send on its clock), wherever a lease write's request or reply is lost or slow.
"""

from model.node import Model

RULE = "T-4"
CATCHES = "LEASE-2"


class LongLeaseAttempts(Model):
    name = "long_lease_attempts"

    def lease_attempt_ms(self, st):
        return 2 * st.params.attempt_timeout_ms


MODEL = LongLeaseAttempts()
step = MODEL.step
