"""Breaks T-5 / FN-3 / FN-5: peers fence and free a silent node's records at written_at + ttl on
their own clocks, without grace. The owner's validity ends at written_at + ttl - safety on its
clock; with the clocks 2 * max_skew apart, the taker can be up to 2 * max_skew - safety ahead.
Caught by: INV-1 (the owner still acts, validly by its lease, after the taker's record replaced
its own) when the clocks sit at opposite ends of max_skew and safety is below 2 * max_skew.
"""

from model.node import Model

RULE = "FN-5"
CATCHES = "INV-1"


class NoGrace(Model):
    name = "no_grace"

    def free_from_ms(self, st, written_at_ms: int) -> int:
        return written_at_ms + st.params.ttl_ms  # no grace


MODEL = NoGrace()
step = MODEL.step
