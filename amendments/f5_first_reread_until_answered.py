"""F-5: a first write whose reply was lost re-reads nodes/<id> until a read answers, instead of going
back to the start check on a failed re-read (amends NL-7's "follows the re-read rule").

F-5: a global blip swallows the reply to a node's first lease write; NL-9's one re-read fails in the
blip too, and the node goes back to the start check, whose ttl + grace counts again from its first
read after the blip, while peers watch the object the first write left live and fence it. This
variant keeps the node in its first write, re-reading at the start check's own retry pace while no
read answers (it claims no validity meanwhile: NL-4 grants validity only from an acknowledged or
adopted write). Once a read answers, NL-9 and NL-7 apply as before: its own live object is adopted
(validity from that object's stored written_at, so a blip longer than ttl - safety leaves the lease
lapsed, NL-11, and the lease task renews it); anything else sends it back to the check.

Measured (2,000 seeds of swarm, `python runner.py amendments f5_first_reread_until_answered --seeds
2000`): removes F-5; no violation; findings as the correct model's (F-2 14 seeds, F-4 1, F-5 0 in
both: F-5 is too rare for 2,000 uniform seeds); diff not worse. F-5's two scripted forms: INV-9
under model/, nothing under the variant (tests/amendments/test_f5_f6.py).
"""

from model import io
from model.frozen import replace
from model.io import GET, Mark, Request, SetTimer
from model.node import Model
from model.node_lease import CHECK_RETRY_MS, FIRST_WRITE
from model.records import node_key

ADDRESSES = "F-5"
KIND = "amendment"
RULES = ("NL-7", "NL-9")
ADR = ("Section 1: 'The first write after the start check is If-None-Match: * if the check found no object, "
       "and otherwise If-Match on the version the check read last. If that write fails, the node goes back to "
       "the start check; it does not take a new instance. ... A first write whose reply was lost follows the "
       "re-read rule below before going back to the check.'")
PROPOSED = ("'... A first write whose reply was lost follows the re-read rule below before going back to the "
            "check, and a re-read that gets no answer is repeated (at the start check's retry pace, claiming no "
            "validity meanwhile) until one answers: the node goes back to the check only on an answer that "
            "shows the write did not land, never for want of one, so a bucket blip does not restart its wait.'")
PLANS = ()  # F-5 has no kept plan: its reproductions are scripted (tests/amendments/test_f5_f6.py)


class FirstRereadUntilAnswered(Model):
    name = "f5_first_reread_until_answered"

    def on_reply_lease_reread(self, st, purpose, reply, now, out):
        if st.lease.phase == FIRST_WRITE and reply.status not in (io.OK, io.NOT_FOUND):
            # NL-7 / NL-9 amended: a read that failed proves nothing either way; read again
            # rather than go back to the check (whose wait would start again)
            st = replace(st, lease=replace(st.lease, reread_rid=None))
            out.append(SetTimer("first_reread", now.mono_ms + CHECK_RETRY_MS))
            return st
        return super().on_reply_lease_reread(st, purpose, reply, now, out)

    def on_timer_first_reread(self, st, key, now, out):
        if st.lease.phase != FIRST_WRITE or st.lease.reread_rid is not None:
            return st
        out.append(Mark("NL-9"))
        rid = st.next_rid
        st = self.send(st, ("lease_reread",), Request(GET, node_key(st.node_id)), out)
        return replace(st, lease=replace(st.lease, reread_rid=rid))


MODEL = FirstRereadUntilAnswered()
