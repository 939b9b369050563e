"""Q-5: a failed NL-9 re-read of a later lease write counts as a lost lease (the other reading of
NL-9's silence on it).

NL-9 re-reads nodes/<id> once after a failed condition; the ADR does not say what a node does when
that read fails. The model keeps going (the next write retries, If-Match the last acknowledged
version). This variant reads the failure as a loss: the node drops its holds and exits (NL-10).
"""

from model import io
from model.node import Model
from model.node_lease import FIRST_WRITE

ADDRESSES = "Q-5"
KIND = "question"
RULES = ("NL-9", "NL-10")
ADR = ("Section 1: 'On a conflict the node reads nodes/<id> once: if the object is live and names this "
       "process's instance, it is this node's own write ... Otherwise (fenced, released, another instance, or "
       "absent) the node lease is lost' (silent on a read that fails)")
PROPOSED = "'... Otherwise, or if that read fails, the node lease is lost'"


class FailedRereadIsLoss(Model):
    name = "q5_failed_reread_is_loss"

    def on_reply_lease_reread(self, st, purpose, reply, now, out):
        if reply.status not in (io.OK, io.NOT_FOUND) and st.lease.phase != FIRST_WRITE:
            reply = io.Reply(io.NOT_FOUND)  # read as no proof of our own write: lost (NL-10)
        return super().on_reply_lease_reread(st, purpose, reply, now, out)


MODEL = FailedRereadIsLoss()
