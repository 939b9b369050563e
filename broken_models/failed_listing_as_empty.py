"""Breaks UP-3: a first acquisition whose listing of the actor's keys failed seeds as if the
listing had found none: the marker and owners/ then rest on the old lease's generation alone.

A failed or lost listing decides nothing (UP-3: the seed is max(the old generation, the highest
generation in the actor's wal/ and snapshot/ keys), and only a listing that answered tells the
second). Where the old lease is older than the data, or gone (the old GC collected it), owners/
is created at a generation a segment already carries.
Caught by: UP-3 (a), judged on the bucket's keys when the attempt began, whatever the listing
answered: every create after a failed seeding listing while keys existed, even one whose
generation happens to be high enough (INV-2 sees only the generations that collide).
"""

from model import io
from model.io import OK, Reply
from model.node import Model

RULE = "UP-3"
CATCHES = "UP-3"


class FailedListingAsEmpty(Model):
    name = "failed_listing_as_empty"

    def on_reply_upgrade_seed_list(self, st, purpose, reply, now, out):
        if reply.status != io.OK:
            reply = Reply(OK, entries=())  # the failure read as "no keys"
        return super().on_reply_upgrade_seed_list(st, purpose, reply, now, out)


MODEL = FailedListingAsEmpty()
step = MODEL.step
