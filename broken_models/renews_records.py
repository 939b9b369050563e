"""Breaks the decision's "Only renewals disappear" (ADR 0020; OR-5: "holds are not renewed"): a node
rewrites the ownership record of every hold it has each lease period, If-Match on the hold's version, as
per-actor leases were renewed, and keeps the new version for its release. The bill grows with how long an
actor stays in memory again.
Caught by: COST-5 (a process writing a hold's record again once it knew the record had landed).
"""

from model.frozen import replace
from model.io import IF_MATCH, OK, PUT, Request
from model.node import Model
from model.records import OwnerRecord, encode_owner, owner_key

RULE = "OR-5"
CATCHES = "COST-5"


class RenewsRecords(Model):
    name = "renews_records"

    def lease_tick(self, st, now_ms, out):
        st = super().lease_tick(st, now_ms, out)
        for actor, hold in sorted(st.holds.items()):
            body = encode_owner(OwnerRecord(st.node_id, st.instance, hold.generation))
            st = self.send(st, ("record_renewal", actor, hold.generation),
                           Request(PUT, owner_key(actor), IF_MATCH, hold.version, body), out)
        return st

    def on_reply_record_renewal(self, st, purpose, reply, now_ms, out):
        _, actor, generation = purpose
        hold = st.holds.get(actor)
        if reply.status == OK and hold is not None and hold.generation == generation:
            st = replace(st, holds=st.holds.with_item(actor, hold._replace(version=reply.version)))
        return st


MODEL = RenewsRecords()
step = MODEL.step
