"""Breaks NL-5: the start check returns at once when no object exists (as before ADR 0020),
instead of waiting ttl + grace in every case.

A process whose object was deleted while it still ran (an operator's mistake) is not given
time to show itself: a second process under the same id starts at once, and both hold the
node lease.
Caught by: LEASE-1 (two processes valid for one node id), and INV-1 when they both own.
"""

from model.frozen import replace

from model import io
from model.node import Model

RULE = "NL-5"
CATCHES = "LEASE-1"


class InstantStartCheck(Model):
    name = "instant_start_check"

    def on_reply_check_read(self, st, purpose, reply, now, out):
        if reply.status == io.NOT_FOUND and not st.lease.check_seen:
            st = replace(st, lease=replace(st.lease, check_seen=True, check_version=None, check_body=None))
            return self.first_write(st, now, out)  # no wait when nothing exists
        return super().on_reply_check_read(st, purpose, reply, now, out)


MODEL = InstantStartCheck()
step = MODEL.step
