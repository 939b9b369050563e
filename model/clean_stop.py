"""ADR 0020 section 4: a clean stop and a drain (CS-1..CS-3).

Owns: the clean stop's order (release every hold and wait, bounded; make the
lease locally invalid so every is_valid says no; stop the lease task for good
without aborting an attempt in flight; then write `released`, If-Match on the
last acknowledged version, keeping written_at), its conflict re-read and its
retries; the drain, which reports drained only once no release is pending.
Must not know: clocks or the world.
"""

from __future__ import annotations

from typing import NamedTuple

from .frozen import replace

from . import io
from .io import GET, IF_MATCH, PUT, CancelTimer, Mark, Observe, Request, SetTimer
from .node_lease import FAILED_CONDITION, RUNNING
from .records import FENCED, RELEASED, NodeRecord, decode_node, encode_node, node_key

RELEASE_WAIT_MS = 5_000  # CS-1: how long a clean stop waits for its releases
STOP_LIMIT_MS = 20_000  # CS-2: the stop's limit
RELEASED_RETRY_MS = 200  # pause between tries of the `released` write


class Stop(NamedTuple):
    stage: str  # releasing | finishing_attempt | writing
    began_ms: int
    write_until_ms: int = 0  # CS-2: the released write is tried until here
    reread_done: bool = False  # CS-2: the conflict re-read happens once


class CleanStop:
    """Section 4 handlers, mixed into model.node.Model."""

    # --- the drain (CS-3, OR-11) ----------------------------------------------------

    def on_command_drain(self, st, args, now, out):
        if st.draining:
            return st
        out.append(Observe("drain_began"))
        st = replace(st, draining=True, drained=False)
        return self.drain_holds(st, now, out)

    def drain_holds(self, st, now, out):
        """Decision (CS-3): a drain releases every resident actor (OR-5)."""
        for actor in tuple(st.holds):
            st = self.release(st, actor, "drain", now, out)
        return st

    def on_command_resume(self, st, args, now, out):
        return replace(st, draining=False, drained=False)

    def releases_outstanding(self, st) -> bool:
        """A release not yet landed: pending, or a foreground one still in flight."""
        if st.pending:
            return True
        for purpose in st.inflight.values():
            if purpose[0] in ("release", "resolve_release"):
                return True
        return False

    def check_drained(self, st, now, out):
        """CS-3: drained only when every resident actor was released and none is pending.
        Unresolved acquires live in the same set as pending releases (OR-7), and an
        acquisition still in flight may land: the drain waits for both too."""
        if st.holds or st.acquiring or st.unresolved or self.releases_outstanding(st):
            return st
        out.append(Mark("CS-3"))
        out.append(Observe("drained"))
        return replace(st, drained=True)

    # --- the clean stop (CS-1, CS-2) ----------------------------------------------------

    def on_command_stop(self, st, args, now, out):
        if st.stop is not None:
            return st
        out.append(Observe("stop_began"))
        if st.lease.phase != RUNNING:
            # never held a lease: nothing to release, nothing to write
            return self.exit(st, 0, "clean stop before the lease was held", out)
        st = replace(st, stop=Stop("releasing", now.mono_ms))
        for actor in tuple(st.holds):
            st = self.release(st, actor, "clean stop", now, out)
        out.append(SetTimer("stop", now.mono_ms + RELEASE_WAIT_MS))
        return self.stop_progress(st, now, out)

    def on_timer_stop(self, st, key, now, out):
        stop = st.stop
        if stop is None:
            return st
        if stop.stage == "releasing":
            return self.invalidate(st, now, out)  # the wait is bounded
        if stop.stage == "writing":
            if now.mono_ms >= stop.write_until_ms:
                # CS-2: a retry due inside the window but taken past it (the process paused meanwhile) is
                # not sent: past the window the lease stays live and peers free the actors by fencing
                out.append(Mark("CS-2"))
                return self.exit(st, 0, "clean stop: released write not acknowledged; the node lease stays live", out)
            return self.write_released(st, now, out)  # a retry
        return st

    def stop_progress(self, st, now, out):
        """Called after every step while stopping: move on when this stage is done."""
        stop = st.stop
        if stop.stage == "releasing" and not st.holds and not self.releases_outstanding(st):
            return self.invalidate(st, now, out)
        if stop.stage == "finishing_attempt" and st.lease.attempt_rid is None and st.lease.reread_rid is None:
            return self.begin_released(st, now, out)
        return st

    def invalidate(self, st, now, out):
        """CS-1: the lease is made locally invalid on the whole node; the lease task stops for good."""
        out.append(Mark("CS-1"))
        out.append(Observe("lease_invalidated"))
        out.append(CancelTimer("lease_tick"))
        out.append(CancelTimer("lease_retry"))
        # the releases' bounded wait is over: its timer, left set, would come due while the `released` write
        # is in flight and be taken for a retry (a second write at once; after a pause, past CS-2's window)
        out.append(CancelTimer("stop"))
        st = replace(st, lease=replace(st.lease, tick_due=False), stop=replace(st.stop, stage="finishing_attempt"))
        st = self.lost_lease_cut(st, out)
        for actor in tuple(st.holds):  # a hold that began meanwhile is cut too
            st = self.release(st, actor, "clean stop", now, out)
        return self.stop_progress(st, now, out)

    def lost_lease_cut(self, st, out):
        """Decision (CS-1): every is_valid says no from now, and the lost-lease cut ends every event
        still running: a straggler past the bounded wait is cut, not left acting."""
        st = replace(st, lease=replace(st.lease, invalidated=True))
        return self.cut_events(st, "clean stop: lease made invalid", out)

    def begin_released(self, st, now, out):
        p = st.params
        # CS-2: a window, on the monotonic clock
        limit = min(now.mono_ms + p.attempt_timeout_ms + 1_000, st.stop.began_ms + STOP_LIMIT_MS)
        st = replace(st, stop=replace(st.stop, stage="writing", write_until_ms=limit))
        return self.write_released(st, now, out)

    def write_released(self, st, now, out):
        """CS-1: `released`, If-Match on the last acknowledged version, naming this instance,
        keeping the last written_at."""
        ls = st.lease
        body = encode_node(NodeRecord(RELEASED, st.instance, ls.written_at_ms, st.node_id))
        return self.send(st, ("released_write",), Request(PUT, node_key(st.node_id), IF_MATCH, ls.version, body), out)

    def on_reply_released_write(self, st, purpose, reply, now, out):
        if reply.status == io.OK:
            out.append(Observe("lease_released"))
            return self.exit(st, 0, "clean stop: node lease released", out)
        if reply.status in FAILED_CONDITION:
            if st.stop.reread_done:
                return self.exit(st, 0, "clean stop: released write refused twice", out)
            out.append(Mark("CS-2"))
            st = replace(st, stop=replace(st.stop, reread_done=True))
            return self.send(st, ("released_reread",), Request(GET, node_key(st.node_id)), out)
        return self.retry_released(st, now, out)

    def retry_released(self, st, now, out):
        """CS-2: a failing write is retried for A + 1 s within the stop limit; past it the lease stays live."""
        if now.mono_ms + RELEASED_RETRY_MS >= st.stop.write_until_ms:
            out.append(Mark("CS-2"))
            return self.exit(st, 0, "clean stop: released write not acknowledged; the node lease stays live", out)
        out.append(SetTimer("stop", now.mono_ms + RELEASED_RETRY_MS))
        return st

    def on_reply_released_reread(self, st, purpose, reply, now, out):
        """CS-2: NL-9's re-read, once: our own live object: adopt and retry; a fence: done."""
        if reply.status == io.OK:
            rec = decode_node(reply.body)
            if self.is_own_live_write(st, rec):
                # adopt the read's version; validity is not extended (the lease is invalid)
                st = replace(st, lease=replace(st.lease, version=reply.version, written_at_ms=rec.written_at_ms))
                return self.write_released(st, now, out)
            if isinstance(rec, NodeRecord) and rec.state == RELEASED and rec.instance == st.instance:
                out.append(Observe("lease_released"))
                return self.exit(st, 0, "clean stop: node lease released (an earlier try landed)", out)
            if isinstance(rec, NodeRecord) and rec.state == FENCED:
                return self.exit(st, 0, "clean stop: fenced meanwhile (the fence frees the records)", out)
            return self.exit(st, 0, "clean stop: nodes/ no longer ours", out)
        if reply.status == io.NOT_FOUND:
            return self.exit(st, 0, "clean stop: nodes/ absent", out)
        return self.retry_released(st, now, out)
