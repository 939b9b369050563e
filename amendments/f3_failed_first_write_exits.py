"""F-3: a first write that may have reached the bucket and is not found as this instance's own ends the
instance: the process exits, and its restart takes a new instance (amends NL-7).

F-3: an instance whose first write was late (its reply lost or past its timeout) or met a fence goes
back to the start check keeping its instance (NL-7). If its write landed, was fenced, and the fence
was deleted by mistake or replaced by a twin before the check read it, nothing the instance can read
tells it apart from a write that never landed, and it writes `live` again under the fenced instance
(INV-10). This variant takes the instance out of the question: once its first write failed in a way
that may have reached the bucket (a failed condition, or a lost reply) and NL-9's re-read answered
without showing its own `live` write, the instance writes no more. The process exits non-zero as
for a lost lease (NL-10: it never held the lease, so it has nothing to drop), and the supervisor's
restart goes through the start check under a new instance, which a fence naming the old one does
not concern. A first write that failed before reaching the bucket (failed fast), or whose re-read
got no answer, goes back to the check as before: that last case is the variant's residue (the
write may still land), kept to leave a blip's first write (F-5, INV-9) as the correct model has it.

Its cost, measured (2,000 seeds of swarm: unsafe by the verdict's rule, INV-9 in one seed, 398): a
start check that ends inside a global blip sends its first write into the blip, where it never
lands; the re-read after the blip finds no object, and the process exits: the blip restarted a node
(nothing unsafe; amendments/plans/f3-failed-first-write-exits-s398-inv9.json). To the process that
is the very observation of F-3's main form (a late first write re-read as absent), so no rule on
what the re-read shows can keep one and not the other; f1_reread_shows_another_object_exits is the
narrower rule that keeps INV-9 and leaves F-3's main form.
"""

from model import io
from model.io import Mark, Observe
from model.node import Model
from model.node_lease import FIRST_WRITE
from model.records import decode_node

ADDRESSES = "F-3"
KIND = "amendment"
RULES = ("NL-7",)
ADR = ("Section 1: 'The first write after the start check is If-None-Match: * if the check found no object, and "
       "otherwise If-Match on the version the check read last. If that write fails, the node goes back to the start "
       "check; it does not take a new instance.'")
PROPOSED = ("'... If that write fails before reaching the bucket, the node goes back to the start check. If it "
            "fails its condition, or its reply is lost, and the re-read below does not show it as this process's own "
            "live write, the instance never writes again: wasmkeep serve exits at once with a non-zero status (it held "
            "nothing), and the supervisor's restart goes through the start check under a new instance. (If the "
            "re-read itself fails, the node goes back to the start check.)'")
PLANS = ("tests/plans/f3-fence-met-then-replaced-by-a-twin.json",)


class FailedFirstWriteExits(Model):
    name = "f3_failed_first_write_exits"

    def ends_instance(self, st, reply) -> bool:
        """Decision (NL-7, amended): NL-9's re-read of a failed first write answered, and it does not show
        this process's own live write: the write may have landed (or met a fence), and is not ours to adopt."""
        if reply.status not in (io.OK, io.NOT_FOUND):
            return False
        return not self.is_own_live_write(st, decode_node(reply.body) if reply.status == io.OK else None)

    def on_reply_lease_reread(self, st, purpose, reply, now, out):
        if st.lease.phase == FIRST_WRITE and self.ends_instance(st, reply):
            # the amended NL-7: this instance writes no more; exit as NL-10 does (it held nothing)
            out.append(Mark("NL-7"))
            out.append(Mark("NL-10"))
            reason = "NL-7 (amended): first write failed, " + self.describe_loss(st, reply)
            out.append(Observe("lease_lost", (reason,)))
            return self.exit(st, 1, reason, out)
        return super().on_reply_lease_reread(st, purpose, reply, now, out)


MODEL = FailedFirstWriteExits()
