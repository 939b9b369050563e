"""Breaks FN-4: a fence refused by its condition is sent again as it was, If-Match the version it was
decided on, a lease period later, instead of reading the peer's object again.

FN-3: "if the fence fails, read again"; FN-4: of two fencers, one lands and the other re-reads a fence
and goes on. A refused fence means the object changed since the read it was decided on (the peer
wrote: it is alive; or another fencer landed): that write can never land. Sent again and again, the
fence keeps failing against an object that will not change back: the fencer never settles, hammering
the bucket with refused writes, while the peer lives on (nothing unsafe: the write never lands).
Caught by: CONV-1 (a process sends a fence of one peer more than twice in the quiet phase's last span).
Nothing else sees it: each fence is sent on a valid lease, decided after a full watch, and none lands
(FENCE-1, INV-3).
"""

from model import io
from model.frozen import replace
from model.io import Mark, SetTimer
from model.node import Model
from model.records import FENCED, NodeRecord

RULE = "FN-4"
CATCHES = "CONV-1"


class RefusedFenceResent(Model):
    name = "refused_fence_resent"

    def on_reply_fence_read(self, st, purpose, reply, now, out):
        n = len(out)
        st = super().on_reply_fence_read(st, purpose, reply, now, out)
        sent = [e for e in out[n:] if type(e) is io.Send and e.request.op == io.PUT]
        if sent:  # the fence's purpose keeps the version it was decided on (to send it again as it was)
            rid, req = sent[-1].request_id, sent[-1].request
            st = replace(st, inflight=st.inflight.with_item(rid, st.inflight[rid] + (req.version,)))
        return st

    def on_reply_fence_write(self, st, purpose, reply, now, out):
        node = purpose[1]
        watched = st.fencing.get(node)
        if reply.status not in (io.PRECONDITION_FAILED, io.NOT_FOUND) or watched is None or len(purpose) < 3:
            return super().on_reply_fence_write(st, purpose, reply, now, out)
        out.append(Mark("FN-4"))
        out.append(SetTimer(f"refence:{node}:{purpose[2]}", now.mono_ms + st.params.period_ms))  # (still "fencing")
        return st

    def on_timer_refence(self, st, key, now, out):
        _, node, version = key.split(":", 2)
        watched = st.fencing.get(node)
        if watched is None or not self.lease_valid(st, now):
            return replace(st, fencing=st.fencing.without(node))
        fence = NodeRecord(FENCED, watched.instance, watched.written_at_ms, node)
        return self.send(st, ("fence_write", node, version), self.fence_request(node, version, fence), out)


MODEL = RefusedFenceResent()
step = MODEL.step
