"""Breaks T-5 / FN-5 by a little: peers fence and free one max_skew before written_at + ttl + grace
on their clocks. Harmless while grace + safety exceeds 2 * max_skew by more than that;
at T-2's equality, with the owner on the slowest clock and the taker on the fastest, the taker
acts before the owner's validity ended.
Caught by: INV-1, in configurations on T-2's bound with clocks at opposite ends.
"""

from model.node import Model

RULE = "FN-5"
CATCHES = "INV-1"


class EarlyTakeover(Model):
    name = "early_takeover"

    def free_from_ms(self, st, written_at_ms: int) -> int:
        p = st.params
        return written_at_ms + p.takeover_ms - max(1, p.max_skew_ms)


MODEL = EarlyTakeover()
step = MODEL.step
