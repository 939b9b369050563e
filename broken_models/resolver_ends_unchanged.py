"""Breaks OR-8: the resolver ends its entry on a record that is still as it was before the acquire
(the ADR's "names anything else", read literally).

OR-8 reads the record until it can decide: its own write landed (release it, unless a hold exists
here), or the record changed to something else (the write can never land: the entry ends). A record
still unchanged decides nothing: the write may still be in flight, and land (docs/protocol.md, "Where
this page departs from the ADR"). Ending the entry there, a write that lands afterwards leaves a record
naming this live process, which never holds it and never releases it.
Caught by: CONV-2 (a record names a running instance that never held it, and the instance sends
nothing on it for longer than the resolver's cadence once no fault touches it, or the record is left
so at the end).
"""

from model.frozen import replace

from model import io
from model.io import Observe
from model.node import Model
from model.records import OwnerRecord, decode_owner

RULE = "OR-8"
CATCHES = "CONV-2"


class ResolverEndsUnchanged(Model):
    name = "resolver_ends_unchanged"

    def on_reply_resolve_read(self, st, purpose, reply, now, out):
        e = st.unresolved.get(purpose[1])
        if e is not None and reply.status == io.OK and reply.version == e.read_version:
            rec = decode_owner(reply.body)
            if not (isinstance(rec, OwnerRecord) and rec.node_id == st.node_id and rec.instance == st.instance
                    and rec.generation == e.generation):
                # unchanged: "names anything else", read literally: the entry ends
                st = replace(st, unresolved=st.unresolved.without(purpose[1]))
                out.append(Observe("unresolved_ended", (e.actor, e.generation)))
                return self.unlock_resolver(st, e.actor, now, out)
        return super().on_reply_resolve_read(st, purpose, reply, now, out)


MODEL = ResolverEndsUnchanged()
step = MODEL.step
