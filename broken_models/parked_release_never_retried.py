"""Breaks OR-6: a pending release is parked once and never rescheduled: it stays in the set of
pending releases, but its retry is never due.

OR-5 keeps a release that failed (or whose outcome is unknown) as a pending release and retries the
same write, backing off, until it lands or a read shows the record no longer names this instance at
its generation; OR-6 only pauses the retries while the node lease is invalid. Parked for good, the
record keeps naming a live process that released the actor long ago: nobody can take it over (FN-5
frees nothing while that node's lease stands) until a request for the actor happens to reach the
named node, which acquires it again over its own instance (OR-3). A drain waits on the entry for
ever (CS-3).
Caught by: CONV-2 (the world saw the process send a release that did not land, and never saw it try
that release again, nor read the record after a refusal of it, though the faults were over and it
ran to the end). INV-4 sees it only when the actor is asked for in no final round, INV-11 only when
a drain happens to wait on the entry.
"""

from model.frozen import replace

from model.node import Model

RULE = "OR-6"
CATCHES = "CONV-2"
NEVER_MS = 1 << 62  # a retry never due


class ParkedReleaseNeverRetried(Model):
    name = "parked_release_never_retried"

    def add_pending(self, st, actor, generation, version, now, out):
        st = super().add_pending(st, actor, generation, version, now, out)
        key = (actor, generation, version)
        e = st.pending.get(key)
        if e is None or e.rid is not None:
            return st
        return replace(st, pending=st.pending.with_item(key, replace(e, next_ms=NEVER_MS)))  # parked, never due


MODEL = ParkedReleaseNeverRetried()
step = MODEL.step
