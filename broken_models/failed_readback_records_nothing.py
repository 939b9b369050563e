"""Breaks OR-7: an acquire that did not succeed, whose read-back then fails, records nothing: no
unresolved acquire is kept, and the request just fails.

OR-7: an acquire with an unknown outcome reads the record back once; if the record is unchanged, or
the read fails, the attempt becomes an unresolved acquire, which the resolver (OR-8) reads until it
can decide: the write may still be in flight and land, or may have landed already (its reply lost).
Recording nothing, a write that did land leaves a record naming this live process, which never
registered a hold and never releases it: nobody can take the actor over (FN-5 frees nothing while its
lease stands) until a request happens to reach this node and it acquires again over its own instance.
Caught by: CONV-2 (a record names a running instance that never held it, and the instance sends
nothing on it for longer than the resolver's cadence, once no fault touches it, or the record is left
so at the end).
"""

from model import io
from model.node import Model

RULE = "OR-7"
CATCHES = "CONV-2"


class FailedReadbackRecordsNothing(Model):
    name = "failed_readback_records_nothing"

    def on_reply_acquire_readback(self, st, purpose, reply, now, out):
        if reply.status in (io.OK, io.NOT_FOUND):
            return super().on_reply_acquire_readback(st, purpose, reply, now, out)
        return self.acquire_failed(st, purpose[1], "read-back failed", out)  # no unresolved acquire


MODEL = FailedReadbackRecordsNothing()
step = MODEL.step
