"""Breaks UP-4: the old binary's start check takes a heartbeat it cannot read (a new node's format-3
object) for a free id, and starts beating: its unconditional heartbeat lands over the new node's live
object, which then exits (NL-10: an old format), its records held by an old-format object that frees
nothing (FN-5).

UP-4 (ADR section 6): "An old binary started after the switch cannot read new heartbeats; its own start
check then reports its id as taken if a new node uses it."
Caught by: UP-4 (judged on nodes/: an old binary's write landed over a format-3 object, that key having held
only such objects since the binary started), naming the old binary and the new process. Before UP-4 judged
nodes/, the only sign was a late failover (INV-7) in about 1 seed of 200.
"""

from model import io
from model.node import Model
from model.old_lease import OldModel
from model.records import NODE_HEADER_3

RULE = "UP-4"
CATCHES = "UP-4"
# an old binary started after the switch under a new node's id lives in upgrade seeds (old_restart with
# same_ids, late_old): `broken` runs it there
SCENARIO = "upgrade"


class BeatsOverNew(OldModel):

    def on_reply_start_read(self, st, purpose, reply, now_ms, out):
        if reply.status == io.OK and reply.body.startswith(NODE_HEADER_3):
            reply = reply._replace(status=io.NOT_FOUND, body=None)  # read as no object: the id looks free
        return super().on_reply_start_read(st, purpose, reply, now_ms, out)


class OldIgnoresNewHeartbeat(Model):
    name = "old_ignores_new_heartbeat"
    old = BeatsOverNew()


MODEL = OldIgnoresNewHeartbeat()
step = MODEL.step
