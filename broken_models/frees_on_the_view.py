"""Breaks FN-5: the read of nodes/A that frees a record naming (A, i) is the membership view's (the
heartbeat listing's last GET of nodes/A, made before the record's read), not one issued after it
("never the membership view, never an earlier read").

Between that earlier read and the record's read, A may restart under its id and its new instance
take the actor back: the record then names the new instance i', while the earlier read still shows
the old one (live, or fenced). "Live naming another instance frees at once": this node takes the
actor from i', whose lease is valid. A read issued after the record's read would show i' live.
Caught by: INV-1 (no state of nodes/A in the attempt timeout before the acquisition's write frees
the record it replaced; the robbed instance acts outside its hold). The view lags by up to a period,
so the swarm finds the race by itself now and then (14 of seeds 0..199 at 67ed112); the scripted one
is tests/checkers/test_fn5_read_order.py.
"""

from model.frozen import replace
from model.io import OK, Reply
from model.node import Model
from model.records import NodeRecord, encode_node

RULE = "FN-5"
CATCHES = "INV-1"


class FreesOnTheView(Model):
    name = "frees_on_the_view"

    def read_for_freeing(self, st, actor, rec, now, out):
        seen = st.view.get(rec.node_id)
        if seen is None or seen.fmt != 3:
            return super().read_for_freeing(st, actor, rec, now, out)
        # judge the listing's earlier read of nodes/A as if it were the fresh one
        body = encode_node(NodeRecord(seen.state, seen.instance, seen.written_at_ms, rec.node_id))
        acq = replace(st.acquiring[actor], stage="node_read")
        st = replace(st, acquiring=st.acquiring.with_item(actor, acq))
        return self.on_reply_acquire_node_read(st, ("acquire_node_read", actor), Reply(OK, '"view"', body), now,
                                               out)


MODEL = FreesOnTheView()
step = MODEL.step
