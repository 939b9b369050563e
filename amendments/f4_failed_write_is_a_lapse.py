"""F-4: FN-2's "any lapse of its own" read as any failed lease write, not only a lease that ran out (the
other reading of the ADR's wording, which its parenthesis supports).

FN-2 counts B's watch "from B's first acknowledged lease write after any lapse of its own (so after a
bucket outage every node first renews, and only then may judge the others)". model/ reads "lapse" as
the lease running out (NL-11): a blip shorter than B's remaining validity is no lapse of B's, B's watch
of A goes on through it, and B may fence A the moment A's validity ends (F-4). The parenthesis says
every node renews after an outage before it judges the others: under that reading any lease write of
B's that failed (timed out, failed fast, answered but refused) is a lapse for the watch, which counts
again from B's next acknowledged write; A, whose validity ran out in the blip, then has a period and an
attempt timeout after the blip to write before B may judge it.
"""

from model import io
from model.frozen import replace
from model.node import Model
from model.node_lease import RUNNING

ADDRESSES = "F-4"
KIND = "amendment"
RULES = ("FN-2",)
ADR = ("Section 2: B fences A only after watching it 'counted from B's first acknowledged lease write after any "
       "lapse of its own (so after a bucket outage every node first renews, and only then may judge the others)'")
PROPOSED = ("'... counted from B's first acknowledged lease write after any lease write of its own that failed "
            "(timed out, failed, or was refused), whether or not its lease ran out: so after a bucket outage every "
            "node first renews, and only then may judge the others'")
PLANS = ("tests/plans/f4-fence-sent-before-the-fencer-lapsed.json",)


class FailedWriteIsALapse(Model):
    name = "f4_failed_write_is_a_lapse"

    def on_reply_lease_write(self, st, purpose, reply, now, out):
        if reply.status != io.OK and st.lease.phase == RUNNING:
            st = replace(st, watch_from_ms=None)  # FN-2, this reading: no judging until the next acknowledgment
        return super().on_reply_lease_write(st, purpose, reply, now, out)

    def lease_acknowledged(self, st, version, written_at_ms, how, now, out, sent_mono_ms=None):
        st = super().lease_acknowledged(st, version, written_at_ms, how, now, out, sent_mono_ms)
        if st.watch_from_ms is None and self.lease_valid(st, now):
            st = replace(st, watch_from_ms=self.watch_from(st, now))  # the watch counts from here
        return st


MODEL = FailedWriteIsALapse()
