"""Breaks FN-2: the fence watch lasts P, not P + A: after its own lapse, a node fences a peer before
that peer's lease write of the period, in flight for up to A, could land (a blip then restarts the
cluster, INV-9's F-4 shape, without cadences apart).
Caught by: FENCE-1 (judged on world facts: the fresh read a fence is decided on was answered in the
last attempt timeout before the fence was sent; some instant of it lies P + A after a window of the
fencer's node lease began).
"""

from model.node import Model

RULE = "FN-2"
CATCHES = "FENCE-1"


class ShortWatch(Model):
    name = "short_watch"

    def watch_ms(self, st):
        return st.params.period_ms


MODEL = ShortWatch()
step = MODEL.step
