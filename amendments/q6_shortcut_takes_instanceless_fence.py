"""Q-6: the start check's shortcut accepts the operator's instance-less fence after W + ttl + grace.

The other reading of NL-5: a fence naming no instance, which `cluster fence` creates over an
absent nodes/<id> (FN-7), ends the start check once its written_at W + ttl + grace has passed.

NL-5's shortcut: "A peer's fenced or released write naming the instance the check first read ...
the check goes on then [once the kept written_at + ttl + grace has passed], without the rest of
its wait." `cluster fence` of an absent nodes/<id> creates a fence naming no instance, W being the
operator's clock (FN-7). The model never takes the shortcut on it (it names no instance, so none
the check read): the check waits ttl + grace from its first read, and again from the change the
fence is. This variant accepts a fence naming no instance, whatever the check first read, and ends
the check at W + ttl + grace on this node's clock (FN-5's bound, by which that fence frees records).
"""

from model import io
from model.frozen import replace
from model.io import Mark, SetTimer
from model.node import Model
from model.node_lease import CHECK
from model.records import FENCED, NodeRecord, decode_node

ADDRESSES = "Q-6"
KIND = "question"
RULES = ("NL-5", "FN-7")
ADR = ("Section 1: 'A peer's fenced or released write naming the instance the check first read is not a twin: "
       "it proves that process lapsed once the object's kept written_at + ttl + grace has passed on this node's "
       "clock ..., and the check goes on then, without the rest of its wait.' (silent on section 2's fence "
       "created over an absent object, 'its written_at set to the operator's clock and no instance')")
PROPOSED = ("'... naming the instance the check first read, or the operator's fence naming no instance (section "
            "2), is not a twin: it proves that process lapsed once the object's kept written_at + ttl + grace has "
            "passed ...'")


def instanceless_fence(body) -> NodeRecord | None:
    rec = decode_node(body) if body is not None else None
    if isinstance(rec, NodeRecord) and rec.state == FENCED and rec.instance is None:
        return rec
    return None


class ShortcutTakesInstancelessFence(Model):
    name = "q6_shortcut_takes_instanceless_fence"

    def on_reply_check_read(self, st, purpose, reply, now, out):
        st = super().on_reply_check_read(st, purpose, reply, now, out)
        ls = st.lease
        if ls.phase != CHECK or st.exited:
            return st  # the check ended (first write sent), or the process exited
        rec = instanceless_fence(reply.body) if reply.status == io.OK else None
        if rec is None:
            return st
        until = self.free_from_ms(st, rec.written_at_ms)  # (wall)
        if now.mono_at(until) >= ls.check_deadline_ms:
            return st
        # the other reading of NL-5: the operator's instance-less fence (FN-7) ends the check at
        # W + ttl + grace
        out.append(Mark("NL-5"))
        st = replace(st, lease=replace(ls, check_free_at_ms=until))
        if now.wall_ms >= until:
            return self.first_write(st, now, out)
        # read again every period, and once more at the new deadline (as the model's shortcut does)
        out.append(SetTimer("check_read", min(now.mono_ms + st.params.period_ms, max(now.mono_ms + 1, now.mono_at(until)))))
        return st


MODEL = ShortcutTakesInstancelessFence()

# Measured (seeds 0..1999 of swarm): a start check reads an instance-less fence in 268 seeds; this
# variant moves a check's deadline in 256 of them (435 reads), after a delete and the operator's
# fence of the absent object (scenarios/faults/deletes.py).
