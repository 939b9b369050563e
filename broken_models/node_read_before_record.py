"""Breaks FN-5's read order: the acquisition reads nodes/A first and the record after it, and decides
on that pair (the two reads swapped: FN-5 frees a record only on a read of nodes/A issued after the
record's read).

Having read a record naming (A, i) once (OR-3), it reads nodes/A, then the record again, and writes
If-Match that second read's version if the earlier nodes/A read frees what the record now names.
Between the two reads, A may restart under its id and its new instance i' take the actor back: the
record then names i', while the nodes/A read still shows the old instance ("live naming another
instance frees at once"), and this node takes the actor from i', whose lease is valid.
Caught by: INV-1 (the robbed instance acts outside its hold; two owners). The scripted race is in
tests/checkers/test_fn5_read_order.py. The swarm gives the two reads a few milliseconds apart, and a
restart's first write comes ttl + grace after it: it was caught in no seed of 0..199 (a survivor)
until the world raced a restart there (issue 39, part 3: scenarios/faults/restart_races.py holds a
restarted node's first live write until the freer's read of nodes/A was applied, slows that read's
reply, and a client asks the new instance for the actor meanwhile): caught by INV-1 in 21 of seeds
0..199 (`python runner.py --model node_read_before_record --seeds 200 --workers 1`), and 100 of 0..999.
"""

from model import io
from model.frozen import replace
from model.io import GET, Reply, Request
from model.node import Model
from model.records import OwnerRecord, decode_owner, node_key, owner_key

RULE = "FN-5"
CATCHES = "INV-1"


class NodeReadBeforeRecord(Model):
    name = "node_read_before_record"

    def read_for_freeing(self, st, actor, rec, now, out):
        acq = replace(st.acquiring[actor], stage="node_read")
        st = replace(st, acquiring=st.acquiring.with_item(actor, acq))
        return self.send(st, ("swapped_node_read", actor), Request(GET, node_key(rec.node_id)), out)

    def on_reply_swapped_node_read(self, st, purpose, reply, now, out):
        actor = purpose[1]
        if reply.status not in (io.OK, io.NOT_FOUND):
            return self.acquire_failed(st, actor, "node read failed", out)
        # the record read after nodes/A: the write will be conditioned on this read
        return self.send(st, ("swapped_record_read", actor, reply.status, reply.body),
                         Request(GET, owner_key(actor)), out)

    def on_reply_swapped_record_read(self, st, purpose, reply, now, out):
        _, actor, node_status, node_body = purpose
        named = st.acquiring[actor].record.node_id  # the node whose object was read
        if reply.status != io.OK:
            # as the record read of OR-3 does with an answer other than a record
            return self.on_reply_acquire_read(st, ("acquire_read", actor), reply, now, out)
        rec = decode_owner(reply.body)
        if not isinstance(rec, OwnerRecord) or rec.nobody or rec.node_id != named or (
                rec.node_id == st.node_id and rec.instance == st.instance):
            return self.on_reply_acquire_read(st, ("acquire_read", actor), reply, now, out)
        acq = replace(st.acquiring[actor], version=reply.version, record=rec)
        st = replace(st, acquiring=st.acquiring.with_item(actor, acq))
        return self.on_reply_acquire_node_read(st, ("acquire_node_read", actor), Reply(node_status, None, node_body),
                                               now, out)


MODEL = NodeReadBeforeRecord()
step = MODEL.step
