"""Breaks OR-3's "the new owner then restores": a new hold serves at once, without listing the
actor's segments, so everything earlier owners acknowledged is lost to it.
Caught by: INV-8 (a hold that acts with no listing of its data delivered first; the world
knows which listings it delivered).
"""

from model.io import OK, Reply
from model.node import Model

RULE = "OR-3"
CATCHES = "INV-8"


class NoRestore(Model):
    name = "no_restore"

    def restore(self, st, actor, now, out):
        # no LIST: carry on as if the listing had come back empty
        return self.on_reply_restore(st, ("restore", actor), Reply(OK, entries=()), now, out)


MODEL = NoRestore()
step = MODEL.step
