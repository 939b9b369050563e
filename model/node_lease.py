"""ADR 0020 section 1: the node lease (NL-1..NL-12), timing of section 5 (T-3, T-4).

Owns: the start check, the first write, the lease task's cadence and
retries, validity, the re-read-and-adopt on a failed condition, the lapse and
recovery of a lease that only ran out, and the exit on a lost lease.
Must not know: clocks, randomness, the bucket's implementation, or how a
world delivers inputs. Everything arrives as an input with the node's two
clocks (io.Now: durations on the monotonic one, written_at and validity on the
wall one); everything leaves as an effect.
"""

from __future__ import annotations

from typing import NamedTuple

from .frozen import replace

from . import io
from .io import IF_MATCH, IF_NONE_MATCH, PUT, GET, Exit, Mark, Observe, Request, SetTimer
from .records import LIVE, FENCED, RELEASED, NodeRecord, decode_node, encode_node, node_key

# phases of the lease
CHECK = "check"  # NL-5: the start check
FIRST_WRITE = "first_write"  # NL-7
RUNNING = "running"  # NL-2..NL-4, NL-8, NL-11
GONE = "gone"  # exited (NL-10, NL-6)

RETRY_MS = 250  # NL-3: pause before retrying a failed attempt within the period
CHECK_RETRY_MS = 500  # a failed start-check read is retried after this

FAILED_CONDITION = (io.PRECONDITION_FAILED, io.CONFLICT, io.NOT_FOUND)


class LeaseState(NamedTuple):
    phase: str = CHECK
    # --- the start check (NL-5, NL-6, NL-7) ---
    check_seen: bool = False  # at least one read answered
    check_first_instance: str | None = None  # instance named by the check's first read
    check_body: str | None = None  # last body read; None: absent
    check_version: str | None = None  # last version read; None: absent
    check_deadline_ms: int = 0  # NL-5: its wait ends here, on the monotonic clock
    check_free_at_ms: int | None = None  # NL-5's shortcut: ends once the wall clock reads this (FN-5's bound)
    check_changes: int = 0  # changes seen under a live instance not ours (NL-6)
    # --- the lease (NL-2..NL-4, NL-8, NL-11) ---
    version: str | None = None  # version of the last acknowledged (or adopted) write
    written_at_ms: int = -1  # written_at stored by that write
    valid_until_ms: int = 0  # written_at + ttl - safety, on this node's wall clock
    lapsed: bool = False  # NL-11: ran out, not lost
    ever_valid: bool = False
    next_send_ms: int = 0  # NL-2: P after the previous send (monotonic clock)
    attempt_rid: int | None = None  # lease write in flight
    reread_rid: int | None = None  # NL-9 re-read in flight
    reread_of: tuple[int, int] | None = None  # (written_at, monotonic send) of the write that NL-9 re-reads
    acked_mono_ms: int = -1  # the monotonic send of the last acknowledged (or adopted) write: which is newer
    tick_due: bool = False  # the period came while something was in flight
    invalidated: bool = False  # CS-1: made locally invalid by a clean stop; the lease task has stopped


class NodeLease:
    """Section 1 handlers, mixed into model.node.Model. Stateless: state in, state out."""

    # --- queries ------------------------------------------------------------

    def lease_valid(self, st, now) -> bool:
        """NL-4: valid until written_at + ttl - safety on this node's (wall) clock."""
        ls = st.lease
        return ls.phase == RUNNING and not ls.lapsed and not ls.invalidated and now.wall_ms < self.validity_end(st)

    def validity_end(self, st) -> int:
        """Decision (NL-4): the instant, on this node's wall clock, at which its lease stops being valid:
        the last acknowledged write's written_at + ttl - safety."""
        return st.lease.valid_until_ms

    def valid_from(self, sent_ms: int, now) -> int:
        """Decision (NL-4): the written_at an acknowledged write grants validity from: its send time on the
        wall clock (stored in the write), never the reply's arrival."""
        return sent_ms

    # --- the start check (NL-5, NL-6, NL-7) ----------------------------------

    def begin_check(self, st, now, out):
        """NL-5: read nodes/<id>, waiting ttl + grace in every case."""
        out.append(Observe("check_began"))
        out.append(Mark("NL-5"))
        st = replace(st, lease=LeaseState())
        return self.send(st, ("check_read",), Request(GET, node_key(st.node_id)), out)

    def check_wait_ms(self, st) -> int:
        """Decision (NL-5): the start check waits ttl + grace from its first read, and again from each
        change it sees: whoever wrote may be valid until its written_at + ttl - safety."""
        return st.params.takeover_ms

    def check_clock(self, now) -> int:
        """Decision (NL-5): the clock the start check's wait runs on: the monotonic one. A wait is a duration
        (T-1: NTP steps the wall clock by up to 2 * max_skew, which must not shorten it)."""
        return now.mono_ms

    def check_deadline(self, st, now) -> int:
        """NL-5: the instant, on `check_clock`, the start check's wait ends: ttl + grace from now."""
        return self.check_clock(now) + self.check_wait_ms(st)

    def check_done(self, ls, now) -> bool:
        """NL-5: the wait is over, or the shortcut's written_at + ttl + grace passed (the wall clock)."""
        return self.check_clock(now) >= ls.check_deadline_ms or (
            ls.check_free_at_ms is not None and now.wall_ms >= ls.check_free_at_ms)

    def on_timer_check_read(self, st, key, now, out):
        return self.send(st, ("check_read",), Request(GET, node_key(st.node_id)), out)

    def on_reply_check_read(self, st, purpose, reply, now, out):
        ls = st.lease
        p = st.params
        if ls.phase != CHECK:
            # NL-7: one first write per check. A read still in flight when the check ended (UP-1: a
            # late start guard reads once more itself) answers a question already settled
            return st
        if reply.status not in (io.OK, io.NOT_FOUND):
            if ls.check_seen and self.check_done(ls, now):
                return self.first_write(st, now, out)
            out.append(SetTimer("check_read", now.mono_ms + CHECK_RETRY_MS))
            return st
        body = reply.body if reply.status == io.OK else None
        rec = decode_node(body) if body is not None else None
        if isinstance(rec, NodeRecord) and rec.state == FENCED and rec.instance == st.instance:
            # this process's own first write landed late, after it went back to the check (NL-7),
            # and a peer or the operator fenced it: this instance is fenced and writes no more
            # (NL-10; FN-5's "once i's object was replaced i can no longer write")
            reason = f"NL-10: nodes/{st.node_id} is fenced naming this instance {st.instance}"
            out.append(Observe("lease_lost", (reason,)))
            return self.exit(st, 1, reason, out)
        if not ls.check_seen:
            first = rec.instance if isinstance(rec, NodeRecord) else None
            ls = replace(
                ls,
                check_seen=True,
                check_first_instance=first,
                check_deadline_ms=self.check_deadline(st, now),
            )
        elif body != ls.check_body:
            # Bodies, never version tokens, tell a change (a read's token may
            # differ for one write). Whoever wrote may be valid until its
            # written_at + ttl - safety, so the wait starts again from here.
            changes = ls.check_changes
            if isinstance(rec, NodeRecord) and rec.state == LIVE and rec.instance != st.instance:
                changes += 1
                out.append(Mark("NL-6"))
                if changes >= 2:
                    # NL-6 / NL-12: it keeps changing under a live instance not ours
                    reason = f"NL-6: nodes/{st.node_id} keeps changing under live instance {rec.instance}: the id is taken"
                    out.append(Observe("check_refused", (reason,)))
                    return self.exit(st, 2, reason, out)
            ls = replace(ls, check_changes=changes, check_deadline_ms=self.check_deadline(st, now), check_free_at_ms=None)
        if (
            isinstance(rec, NodeRecord)
            and rec.state in (FENCED, RELEASED)
            and rec.instance is not None
            and rec.instance == ls.check_first_instance
            and now.mono_at(self.free_from_ms(st, rec.written_at_ms)) < now.mono_ms + ls.check_deadline_ms - self.check_clock(now)
        ):
            # NL-5 shortcut: the process first read lapsed by written_at + ttl + grace, on this node's (wall)
            # clock: the check ends once it reads that, or at its wait's end, whichever comes first
            out.append(Mark("NL-5"))
            ls = replace(ls, check_free_at_ms=self.free_from_ms(st, rec.written_at_ms))
        ls = replace(ls, check_body=body, check_version=reply.version if body is not None else None)
        st = replace(st, lease=ls)
        if self.check_done(ls, now):
            return self.first_write(st, now, out)
        # read again every period, and once more at the deadline, so the first
        # write is conditioned on a read taken after the whole wait
        end = now.mono_ms + ls.check_deadline_ms - self.check_clock(now)  # (its timer runs on the monotonic clock)
        if ls.check_free_at_ms is not None:
            end = min(end, max(now.mono_ms + 1, now.mono_at(ls.check_free_at_ms)))
        out.append(SetTimer("check_read", min(now.mono_ms + p.period_ms, end)))
        return st

    def first_write(self, st, now, out):
        """NL-7: If-None-Match: * if the check found nothing, else If-Match on its last read."""
        ls = st.lease
        if ls.check_version is None:
            cond, version = IF_NONE_MATCH, None
        else:
            cond, version = IF_MATCH, ls.check_version
        out.append(Mark("NL-7"))
        out.append(Observe("check_passed", (cond,)))
        st = replace(st, lease=replace(ls, phase=FIRST_WRITE))
        return self.send_lease_write(st, now, cond, version, out)

    # --- the lease task (NL-2, NL-3, NL-8) ----------------------------------

    def send_lease_write(self, st, now, cond, version, out):
        body = encode_node(NodeRecord(LIVE, st.instance, now.wall_ms, st.node_id))  # NL-4: written_at, wall clock
        req = Request(PUT, node_key(st.node_id), cond, version, body)
        return self.send(st, ("lease_write", now.wall_ms, now.mono_ms), req, out, self.lease_attempt_ms(st),
                         lease=replace(st.lease, attempt_rid=st.next_rid, tick_due=False))

    def lease_attempt_ms(self, st) -> int:
        """Decision (T-4, NL-3): each lease-write attempt is bounded by A, at most (ttl - safety) / 3."""
        return st.params.attempt_timeout_ms

    def on_timer_lease_tick(self, st, key, now, out):
        """NL-2: a lease write every P from the previous send, never waiting for anything else."""
        ls = st.lease
        if ls.phase != RUNNING or ls.invalidated:
            return st
        if ls.attempt_rid is not None or ls.reread_rid is not None:
            return replace(st, lease=replace(ls, tick_due=True))
        return self.lease_tick(st, now, out)

    def lease_tick(self, st, now, out):
        out.append(Mark("NL-2"))
        out.append(Mark("NL-8"))
        p = st.params
        next_send = now.mono_ms + p.period_ms  # NL-2: a duration, on the monotonic clock
        st = replace(st, lease=replace(st.lease, next_send_ms=next_send))
        out.append(SetTimer("lease_tick", next_send))
        # NL-8 / NL-11: always If-Match on the last acknowledged version, lapsed or not
        return self.send_lease_write(st, now, IF_MATCH, st.lease.version, out)

    def on_timer_lease_retry(self, st, key, now, out):
        ls = st.lease
        if ls.phase != RUNNING or ls.invalidated or ls.attempt_rid is not None or ls.reread_rid is not None:
            return st
        out.append(Mark("NL-3"))
        return self.send_lease_write(st, now, IF_MATCH, ls.version, out)

    def on_reply_lease_write(self, st, purpose, reply, now, out):
        sent_ms = purpose[1]
        ls = replace(st.lease, attempt_rid=None)
        st = replace(st, lease=ls)
        status = reply.status
        if status == io.OK:
            st = self.lease_acknowledged(st, reply.version, self.valid_from(sent_ms, now), "ack", now, out,
                                         sent_mono_ms=purpose[2])
            return self.after_lease_op(st, now, out)
        if status in FAILED_CONDITION or (status == io.TIMED_OUT and ls.phase == FIRST_WRITE):
            # NL-9: a failed condition is not proof of a fence: read once.
            # NL-7: a first write whose reply was lost follows the re-read too.
            out.append(Mark("NL-9"))
            rid = st.next_rid
            st = self.send(st, ("lease_reread",), Request(GET, node_key(st.node_id)), out)
            # (if the re-read finds this write, NL-2's period counts from its send, as this node timed it)
            return replace(st, lease=replace(st.lease, reread_rid=rid, reread_of=(sent_ms, purpose[2])))
        if ls.phase == FIRST_WRITE:
            # failed fast: it never reached the bucket; NL-7 back to the check
            return self.back_to_check(st, now, out)
        # NL-3: timed out or failed fast: retry within the period if a whole
        # attempt still fits before the next send
        p = st.params
        if now.mono_ms + RETRY_MS + p.attempt_timeout_ms <= ls.next_send_ms:
            out.append(SetTimer("lease_retry", now.mono_ms + RETRY_MS))
        return self.after_lease_op(st, now, out)

    def on_reply_lease_reread(self, st, purpose, reply, now, out):
        of = st.lease.reread_of
        ls = replace(st.lease, reread_rid=None, reread_of=None)
        st = replace(st, lease=ls)
        if reply.status == io.OK:
            rec = decode_node(reply.body)
            if self.is_own_live_write(st, rec):
                # NL-9: our own write landed; adopt the read's token and its written_at. The period runs from
                # that write's send on the monotonic clock, which this node noted as it sent it (a wall
                # reading mapped back would move it by the clocks' drift since)
                sent_mono = of[1] if of is not None and of[0] == rec.written_at_ms else None
                if sent_mono is None:
                    # another write of ours than the one re-read for (an earlier one whose reply was lost): its
                    # written_at mapped back through a wall clock stepped since may read older than the last
                    # acknowledgement, but a read sent after that acknowledgement shows the object as new as
                    # it or newer (every write of ours is conditioned on the version held): never older
                    # (swarm seed 17602: judged older, it was never adopted and every write met 412 for good)
                    sent_mono = max(now.mono_at(rec.written_at_ms), st.lease.acked_mono_ms)
                st = self.lease_acknowledged(st, reply.version, rec.written_at_ms, "adopt", now, out,
                                             sent_mono_ms=sent_mono)
                return self.after_lease_op(st, now, out)
        elif reply.status != io.NOT_FOUND:
            # the read failed: no proof either way
            if ls.phase == FIRST_WRITE:
                return self.back_to_check(st, now, out)
            return self.after_lease_op(st, now, out)
        if ls.phase == FIRST_WRITE:
            return self.back_to_check(st, now, out)
        # NL-10 / NL-12: fenced, released, another instance, absent: lost
        reason = self.describe_loss(st, reply)
        out.append(Mark("NL-10"))
        if "instance" in reason:
            out.append(Mark("NL-12"))
        return self.lease_lost(st, reason, now, out)

    def is_own_live_write(self, st, rec) -> bool:
        """NL-9: `live` and naming this process's instance."""
        return isinstance(rec, NodeRecord) and rec.state == LIVE and rec.instance == st.instance

    @staticmethod
    def describe_loss(st, reply) -> str:
        if reply.status == io.NOT_FOUND:
            return f"nodes/{st.node_id} is absent"
        rec = decode_node(reply.body)
        if isinstance(rec, NodeRecord):
            if rec.state == LIVE:
                return f"nodes/{st.node_id} is live under another instance {rec.instance}"
            return f"nodes/{st.node_id} is {rec.state} naming {rec.instance}"
        return f"nodes/{st.node_id} holds an old or unreadable format"

    def after_lease_op(self, st, now, out):
        """Nothing of the lease task is in flight: send a write the period asked for meanwhile."""
        if st.lease.tick_due and st.lease.phase == RUNNING and not st.lease.invalidated:
            return self.lease_tick(st, now, out)
        return st

    def back_to_check(self, st, now, out):
        """NL-7: a failed first write goes back to the start check, keeping the instance."""
        out.append(Mark("NL-7"))
        return self.begin_check(st, now, out)

    def lease_acknowledged(self, st, version, written_at_ms, how, now, out, sent_mono_ms=None):
        """NL-4: valid until written_at + ttl - safety; NL-11: a success after a lapse recovers.
        The first one starts the lease task (NL-2: every P from that send, on the monotonic clock; an
        adopted write's send is its written_at, read back on the wall clock)."""
        ls = st.lease
        if ls.phase == RUNNING and not (ls.lapsed or ls.invalidated) and now.wall_ms >= self.validity_end(st):
            # NL-11, OR-4: the wall clock passed the deadline before its timer came (stepped forward: the timer
            # runs on the monotonic clock): the lease ran out first, and what it held ends with it, whatever
            # this write grants
            st = self.lease_ran_out(st, now, out)
            ls = st.lease
        if ls.phase == FIRST_WRITE:
            sent = now.mono_at(written_at_ms) if sent_mono_ms is None else sent_mono_ms
            ls = replace(ls, phase=RUNNING, next_send_ms=sent + st.params.period_ms)
            out.append(SetTimer("lease_tick", ls.next_send_ms))
            st = replace(st, lease=ls)
        until = written_at_ms + st.params.lease_span_ms
        sent = now.mono_at(written_at_ms) if sent_mono_ms is None else sent_mono_ms
        if sent < ls.acked_mono_ms:
            # an older write of ours acknowledged late cannot move validity back (its version is not current
            # either: a later write already landed). Older by the monotonic clock, on which this node sent them:
            # a wall clock stepped back writes an earlier written_at into a newer write, whose version is the
            # current one (swarm seed 382: judged by written_at, the node kept a stale version for good)
            return st
        ls = replace(ls, acked_mono_ms=sent)
        if ls.invalidated:
            # CS-1: an attempt that finishes after the lease was made invalid gives the
            # version to condition `released` on, and extends nothing
            return replace(st, lease=replace(ls, version=version, written_at_ms=written_at_ms))
        was_valid = self.lease_valid(st, now)
        ls = replace(ls, version=version, written_at_ms=written_at_ms, valid_until_ms=until)
        if until > now.wall_ms:
            if ls.lapsed:
                out.append(Mark("NL-11"))
                how = "recovered"
            ls = replace(ls, lapsed=False, ever_valid=True)
            out.append(Mark("NL-4"))
            out.append(Observe("lease_valid", (written_at_ms, until, how)))
            out.append(SetTimer("lease_deadline", now.mono_at(self.validity_end(replace(st, lease=ls)))))
        elif not ls.lapsed:
            # acknowledged too late to be valid at all: it ran out already (NL-11)
            out.append(Mark("NL-11"))
            out.append(Observe("lease_ran_out", (until,)))
            ls = replace(ls, lapsed=True)
        st = replace(st, lease=ls)
        if not was_valid and self.lease_valid(st, now):
            st = self.on_lease_became_valid(st, now, out)
        return st

    def on_timer_lease_deadline(self, st, key, now, out):
        """NL-11: a lease that only ran out is not lost. The timer was set for the wall instant as the
        wall clock read then; a step back since makes it early: wait again for the rest."""
        ls = st.lease
        if ls.phase != RUNNING or ls.lapsed or ls.invalidated:
            return st
        if now.wall_ms < self.validity_end(st):
            out.append(SetTimer("lease_deadline", now.mono_at(self.validity_end(st))))
            return st
        return self.lease_ran_out(st, now, out)

    def lease_ran_out(self, st, now, out):
        """NL-11: the lease ran out (its wall clock reached written_at + ttl - safety): not lost."""
        ls = st.lease
        out.append(Mark("NL-11"))
        out.append(Observe("lease_ran_out", (ls.valid_until_ms,)))
        st = replace(st, lease=replace(ls, lapsed=True))
        return self.on_lease_ran_out(st, now, out)

    def lease_lost(self, st, reason, now, out):
        """NL-10: drop every hold without releasing anything and exit at once, non-zero."""
        out.append(Observe("lease_lost", (reason,)))
        st = self.drop_all_holds(st, now, out)
        return self.exit(st, 1, "NL-10: lease lost: " + reason, out)

    def exit(self, st, status, reason, out):
        out.append(Exit(status, reason))
        return replace(st, lease=replace(st.lease, phase=GONE), exited=True)

    # --- hooks for the later sections ----------------------------------------

    def on_lease_became_valid(self, st, now, out):
        return st

    def on_lease_ran_out(self, st, now, out):
        return st

    def drop_all_holds(self, st, now, out):
        return st
