"""Breaks OR-9: an acquisition that fails (its read or write failed, the record unreadable) keeps
the lock per actor instead of giving it back.

The lock serialises one actor's acquisitions and its resolver on a node (OR-9); every way an
acquisition ends must give it back. Kept, every later request for that actor on this node waits
for the lock (`lock_wait`) for ever: the actor is unreachable through that node, though nothing
unsafe happens (no write is sent).
Caught by: CONV-1 (a request that reached the process once every fault was over is never
answered). INV-4 only when the actor is among the final rounds' and nobody else takes it.
"""

from model.frozen import replace

from model.node import Model

RULE = "OR-9"
CATCHES = "CONV-1"


class LockKeptOnFailedAcquire(Model):
    name = "lock_kept_on_failed_acquire"

    def acquire_failed(self, st, actor, reason, out):
        acq = st.acquiring[actor]
        st = replace(st, acquiring=st.acquiring.without(actor))  # the lock stays taken
        return self.fail_requests(st, actor, acq.waiting, "acquire: " + reason, out)


MODEL = LockKeptOnFailedAcquire()
step = MODEL.step
