"""Breaks NL-7 (as UP-1 meets it): the first lease write is conditioned on the start check's FIRST read
of nodes/<id>, not its last: a version read later (a peer's fence of the process before, its own late
write, an old binary's heartbeat under the same id) is ignored.

The bucket refuses such a write (If-Match on a version no longer there, unless an A-B-A rewrite of
identical bytes lets it through) and the node goes back to the start check, so nothing else breaks:
no two holders, no fork of the chain, only a start that takes longer than it should.
Caught by: UP-1 (checkers/start_order.py), which judges each first-write attempt's condition against
the serial the check's last answered read of its object returned (the world's `read` events).
"""

from model import io
from model.node import Model

RULE = "NL-7"
CATCHES = "UP-1"


class FirstReadCondition(Model):
    name = "first_read_condition"

    def on_reply_check_read(self, st, purpose, reply, now, out):
        ls = st.lease
        if ls.check_seen and ls.check_version is not None and reply.status == io.OK:
            reply = reply._replace(version=ls.check_version)  # keep the first read's version
        return super().on_reply_check_read(st, purpose, reply, now, out)


MODEL = FirstReadCondition()
step = MODEL.step
