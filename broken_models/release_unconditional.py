"""Breaks OR-5: a release writes nobody without If-Match (its retries too). A release that lands
after the actor changed hands frees the new owner's record, and the actor gets a third owner.
Caught by: INV-3 (an unconditional write on owners/) and INV-6 (a release landing on a hold
that is not its own).
"""

from model.io import PUT, Request
from model.node import Model
from model.records import OwnerRecord, encode_owner, owner_key

RULE = "OR-5"
CATCHES = "INV-3"


class ReleaseUnconditional(Model):
    name = "release_unconditional"

    def release_request(self, actor, generation, version):
        return Request(PUT, owner_key(actor), None, None, encode_owner(OwnerRecord(None, None, generation)))


MODEL = ReleaseUnconditional()
step = MODEL.step
