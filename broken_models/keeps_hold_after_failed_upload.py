"""Breaks OR-5: a failed or interrupted segment upload does not abandon the hold: the node goes on
serving the actor and writing segments at that generation, its state in memory ahead of what a
restore would see (the segment may be missing, or land later).
Caught by: INV-8 (judged on world facts: after the world answered an upload with a failure, the
process serves no request and sends no segment in that hold). A one-rule mutant's blind spot
before the world recorded the failures it delivers (`upload_failed`).
"""

from model.node import Model

RULE = "OR-5"
CATCHES = "INV-8"


class KeepsHoldAfterFailedUpload(Model):
    name = "keeps_hold_after_failed_upload"

    def upload_failed(self, st, actor, now, out):
        return st


MODEL = KeepsHoldAfterFailedUpload()
step = MODEL.step
