"""Breaks the listing's count, "one LIST and then one GET per node" (ADR 0020, Cost, after): the listing
reads every object it listed twice, one after another. Safe (the listing decides nothing alone: FN-3 fences
on a fresh read), and twice the GETs the ADR's N x (1 + N) a period allows.
Caught by: COST-2 (a listing's GETs reading one object twice).
"""

from model import io
from model.node import Model

RULE = "COST-2"
CATCHES = "COST-2"


class ListingReadsTwice(Model):
    name = "listing_reads_twice"

    def on_reply_listing(self, st, purpose, reply, now_ms, out):
        if reply.status == io.OK:  # every listed key queued twice
            reply = reply._replace(entries=tuple(e for e in reply.entries for _twice in (0, 1)))
        return super().on_reply_listing(st, purpose, reply, now_ms, out)


MODEL = ListingReadsTwice()
step = MODEL.step
