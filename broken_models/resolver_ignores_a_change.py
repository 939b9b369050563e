"""Breaks OR-8: the resolver ends its entry only when it reads its own write, never when the record
changed to anything else.

OR-8 reads the record until it can decide: the acquisition's write landed (release it), or the
record changed (the write can never land: the entry ends). Ignoring the change, the resolver reads a
record another node now owns for ever, at the back-off's cap, and a drain waiting on the entry never
ends.
Caught by: CONV-1 (the process keeps reading that record once every fault is over, with no request
for that actor to drive it, and the record changed long before: not F-2, whose record never
changes).
"""

from model.frozen import replace

from model import io
from model.node import Model
from model.records import OwnerRecord, decode_owner

RULE = "OR-8"
CATCHES = "CONV-1"


class ResolverIgnoresAChange(Model):
    name = "resolver_ignores_a_change"

    def on_reply_resolve_read(self, st, purpose, reply, now, out):
        k = purpose[1]
        e = st.unresolved.get(k)
        if e is None:
            return st
        if reply.status == io.OK:
            rec = decode_owner(reply.body)
            ours = (isinstance(rec, OwnerRecord) and rec.node_id == st.node_id and rec.instance == st.instance
                    and rec.generation == e.generation)
            if ours:
                return super().on_reply_resolve_read(st, purpose, reply, now, out)
        elif reply.status == io.NOT_FOUND and e.read_version is not None:
            return super().on_reply_resolve_read(st, purpose, reply, now, out)
        # anything else: read again later, as if unchanged
        backoff = min(e.backoff_ms * 2, st.params.attempt_timeout_ms)
        st = replace(st, unresolved=st.unresolved.with_item(k, replace(e, rid=None, next_ms=now.mono_ms + backoff,
                                                                       backoff_ms=backoff)))
        st = self.unlock_resolver(st, e.actor, now, out)
        return self.schedule_background(st, now, out)


MODEL = ResolverIgnoresAChange()
step = MODEL.step
