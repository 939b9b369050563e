"""F-6: a node that finds an old-format heartbeat over its own live object releases its records
before it exits, instead of dropping them (amends NL-10 for the one case no fence frees).

F-6: an old binary's held-back, unconditional heartbeat lands over a new node's live object after
that node's start guard passed; the node's next lease write fails, its re-read (NL-9) shows an old
format, and NL-10 drops every hold "without releasing anything ... (the fence, or the other
instance, already frees the records)". An old-format object frees nothing (FN-5) and takes no fence
(FN-7), so those records stay held until an operator's forget-then-fence, or until the node comes
back through its start guard, later than T-5's bound. This variant, on that re-read only, stops
the node as a clean stop's first stage does (CS-1): every hold released (OR-5), every pending
release sent once more (even if a lapse already made the lease invalid), and an acquisition still
under way, or an unresolved one, waited for (its hold is released if it lands), bounded by the
clean stop's wait; then the lease is made locally invalid and the node exits non-zero (no
`released` write: nothing is written over an old format). The releases are as safe as a clean
stop's: nothing freed this instance's records while nodes/<id> held the old format, so its holds
are its own until its validity (NL-4) ends, and each release is If-Match on the hold's version.
A fence, a release or another instance on the re-read is still NL-10 (they free the records).

Measured: F-6's three plans pass --strict (INV-4, INV-7, INV-4 under model/); 2,000 seeds of swarm
(`python runner.py amendments f6_old_format_releases_first --seeds 2000`): removes F-6, no
violation, findings as the correct model's, diff not worse; 2,000 seeds of the upgrade scenario
(seeds 50000..51999, `run --scenario upgrade --start 50000`): no violation, findings F-2 4 and F-3 3
as the correct model's, `runner.py diff` against it: nothing worse (coverage within 1 pp, every
margin equal).
"""

from typing import NamedTuple

from model import io
from model.frozen import replace
from model.io import Mark, Observe, SetTimer
from model.node import Model
from model.clean_stop import RELEASE_WAIT_MS
from model.node_lease import RUNNING
from model.records import OldHeartbeat, decode_node

ADDRESSES = "F-6"
KIND = "amendment"
RULES = ("NL-10", "CS-1")
ADR = ("Section 1: 'Otherwise (fenced, released, another instance, or absent) the node lease is lost: the node "
       "drops every hold at once, without releasing anything, as for a twin, and wasmkeep serve exits at once "
       "with a non-zero status: no connection drain, no releases, no released write (the fence, or the other "
       "instance, already frees the records).' Section 2: 'Two cases free nothing ... an absent nodes/A, and an "
       "object in an old format (headers 1 and 2)'")
PROPOSED = ("'... (the fence, or the other instance, already frees the records). An object in an old format frees "
            "nothing (section 2): over this node's own live object it means an old binary's heartbeat landed, so "
            "the node stops acting and releases every hold (and sends its pending releases once more, valid or not), "
            "waiting for an acquisition still under way, as a "
            "clean stop does (section 4, bounded the same way), then makes its lease locally invalid and exits "
            "with a non-zero status, writing nothing over the old format.'")
PLANS = ("tests/plans/f6-old-heartbeat-over-a-new-node.json",
         "tests/plans/f6-old-heartbeat-delays-a-failover.json",
         "tests/plans/f6-old-heartbeat-forgotten-not-fenced.json")


class OldFormatStop(NamedTuple):
    """CleanStop's Stop (the same fields, so CleanStop's stages drive it), started by an old format."""

    stage: str
    began_ms: int
    write_until_ms: int = 0
    reread_done: bool = False
    old_format: bool = True


class OldFormatReleasesFirst(Model):
    name = "f6_old_format_releases_first"

    def on_reply_lease_reread(self, st, purpose, reply, now, out):
        if (st.lease.phase == RUNNING and reply.status == io.OK
                and isinstance(decode_node(reply.body), OldHeartbeat)):
            st = replace(st, lease=replace(st.lease, reread_rid=None))
            if st.stop is None:
                return self.old_format_stop(st, now, out)
            return st  # already stopping: the stop goes on, releasing (CS-1)
        return super().on_reply_lease_reread(st, purpose, reply, now, out)

    def old_format_stop(self, st, now, out):
        """NL-10 amended: an old format frees nothing, so release first (CS-1's first stage)."""
        out.append(Mark("NL-10"))
        out.append(Observe("lease_lost", (f"nodes/{st.node_id} holds an old format: releasing first",)))
        st = replace(st, stop=OldFormatStop("releasing", now.mono_ms))
        for actor in tuple(st.holds):
            st = self.release(st, actor, "old format over the node lease", now, out)
        for k, e in tuple(st.pending.items()):
            # a hold a lapse put into the pending releases (NL-11): sent once more now, valid or
            # not (OR-5's If-Match v lands only on that hold, which this node no longer acts for)
            if e.rid is None:
                st = self.retry_release(st, k, e, out)
        out.append(SetTimer("stop", now.mono_ms + RELEASE_WAIT_MS))
        return self.stop_progress(st, now, out)

    def stop_progress(self, st, now, out):
        stop = st.stop
        if (isinstance(stop, OldFormatStop) and stop.stage == "releasing"
                and (st.acquiring or st.unresolved)):
            return st  # an acquisition under way may land: its hold is released then (hold_began)
        return super().stop_progress(st, now, out)

    def invalidate(self, st, now, out):
        if not isinstance(st.stop, OldFormatStop):
            return super().invalidate(st, now, out)
        out.append(Mark("CS-1"))
        st = self.lost_lease_cut(st, out)
        st = self.drop_holds_lost(st, out)  # what the bounded wait left (NL-10)
        reason = f"NL-10: lease lost: nodes/{st.node_id} holds an old or unreadable format (records released first)"
        return self.exit(st, 1, reason, out)


MODEL = OldFormatReleasesFirst()
