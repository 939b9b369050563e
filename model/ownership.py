"""ADR 0020 section 3: the ownership record (OR-1..OR-11), freeing (FN-5), lazy takeover (FN-9),
and the bounds on background work that shape it (BD-2..BD-4).

Owns: routing a client request (OR-10), acquisition under the lock per actor
(OR-2, OR-3, OR-9) with the freeing rule (FN-5), holds and `is_valid`
(OR-4), releases (OR-5) with their pending retries (OR-6), the read-back of
an acquire that did not succeed (OR-7), and the resolver (OR-8).
Must not know: clocks, the world, how a request reached this node.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

from .frozen import replace

from . import io
from .actor_data import ActorData
from .io import GET, IF_MATCH, IF_NONE_MATCH, PUT, Command, Forward, Mark, Observe, Request, SetTimer
from .records import (
    LIVE,
    NodeRecord,
    OwnerRecord,
    decode_node,
    decode_owner,
    encode_owner,
    node_key,
    owner_key,
)

ADMISSION_WAIT_MS = 250  # OR-10: the routing read's budget
RELEASE_TRIES_MS = 1_000  # BD-4: a foreground release tries this long, then is parked
PENDING_CONCURRENCY = 32  # BD-2
REFUSALS_PER_PASS = 32  # BD-3
BACKOFF_MIN_MS = 500  # OR-6: pending releases back off from here ...
BACKOFF_MAX_MS = 8_000  # ... to here
# OR-8: the resolver reads until it can decide, every A / 8 at first, backing off to every A
# (250 ms to 2 s at the defaults): the ADR gives it no cadence, and one tied to the attempt
# timeout keeps its shape when the timing is scaled down (the real-S3 world's)
RESOLVE_FIRST_DIVISOR = 8
MAX_HOPS = 2  # a forwarded request is forwarded at most this many times


class Hold(NamedTuple):
    generation: int
    version: str  # the acquire's version: the record's version while the hold lasts (OR-5)


class Acquiring(NamedTuple):
    """An actor being routed or acquired on this node, and the requests waiting on it."""

    stage: str  # route | lock_wait | read | node_read | write | readback
    waiting: tuple = ()  # (request id, hops) of client requests
    version: str | None = None  # r: the record version the acquisition read
    record: OwnerRecord | None = None
    generation: int = 0  # the generation tried


class Pending(NamedTuple):
    """OR-5: a release to retry, keyed by (actor, generation, version); this instance is implied."""

    actor: str
    generation: int
    version: str
    next_ms: int
    backoff_ms: int
    rid: int | None = None


class Unresolved(NamedTuple):
    """OR-7: an acquire whose outcome is unknown: (actor, generation tried)."""

    actor: str
    generation: int
    read_version: str | None  # the version the write was conditioned on (None: If-None-Match)
    next_ms: int
    backoff_ms: int
    rid: int | None = None


class Ownership(ActorData):
    """Section 3 handlers, mixed into model.node.Model."""

    lease_valid: Callable[..., bool]  # model.node_lease (NL-8)
    free_from_ms: Callable[..., int]  # model.fencing (FN-5)

    pending_concurrency = PENDING_CONCURRENCY  # Decision (BD-2): at most this many entries worked at once
    refusals_per_pass = REFUSALS_PER_PASS  # Decision (BD-3): a pass stops after this many refusals in a row
    release_tries_ms = RELEASE_TRIES_MS  # Decision (BD-4): a foreground release tries this long, then is parked

    # --- is_valid (OR-4) -----------------------------------------------------------

    def is_valid(self, st, actor, now) -> bool:
        """OR-4: this hold exists and the node lease is valid (a lapse ended every hold)."""
        return actor in st.holds and self.lease_valid(st, now)

    # --- client requests and routing (OR-10, FN-9) -------------------------------------

    def on_command_request(self, st, args, now, out):
        actor, req, hops = args
        if actor in st.after_events:
            # being released once its events end: it takes no new one (OR-5)
            return self.fail_requests(st, actor, ((req, hops),), "not ready: releasing", out)
        acq = st.acquiring.get(actor)
        if acq is not None:
            return replace(st, acquiring=st.acquiring.with_item(actor, replace(acq, waiting=acq.waiting + ((req, hops),))))
        if self.is_valid(st, actor, now):
            return self.serve(st, actor, req, now, out)
        if self.refuses_new_holds(st):
            return self.fail_requests(st, actor, ((req, hops),), "not ready: stopping or draining", out)
        if not self.lease_valid(st, now):
            return self.fail_requests(st, actor, ((req, hops),), "not ready: node lease not valid", out)
        out.append(Mark("OR-10"))
        return self.send(st, ("route_read", actor), Request(GET, owner_key(actor)), out, ADMISSION_WAIT_MS,
                         acquiring=st.acquiring.with_item(actor, Acquiring("route", ((req, hops),))))

    def on_reply_route_read(self, st, purpose, reply, now, out):
        actor = purpose[1]
        acq = st.acquiring[actor]
        if reply.status == io.NOT_FOUND:
            return self.begin_acquire(st, actor, now, out)
        if reply.status != io.OK:
            st = replace(st, acquiring=st.acquiring.without(actor))
            return self.fail_requests(st, actor, acq.waiting, "routing read failed", out)
        rec = decode_owner(reply.body)
        if isinstance(rec, OwnerRecord) and not rec.nobody and rec.node_id != st.node_id:
            seen = st.view.get(rec.node_id)
            if seen is not None and seen.live and seen.instance == rec.instance:
                # the named node is live in the membership view: the request goes there
                st = replace(st, acquiring=st.acquiring.without(actor))
                return self.forward(st, actor, rec.node_id, acq.waiting, out)
        # nobody, free, ours, or a holder the view does not show live: acquire here (FN-9)
        return self.begin_acquire(st, actor, now, out)

    def refuses_new_holds(self, st) -> bool:
        """Decision (CS-3, CS-1): a stopping or draining node acquires nothing new."""
        return st.stop is not None or st.draining

    def forward(self, st, actor, node_id, waiting, out):
        for req, hops in waiting:
            if hops >= MAX_HOPS:
                out.append(Observe("request_failed", (actor, req, "too many hops")))
            else:
                out.append(Observe("forwarded", (actor, req, node_id)))
                out.append(Forward(node_id, Command("request", (actor, req, hops + 1))))
        return st

    # --- acquisition (OR-2, OR-3, OR-9, FN-5) ---------------------------------------------

    def begin_acquire(self, st, actor, now, out):
        acq = st.acquiring[actor]
        if actor in st.locks:
            # OR-9: the resolver holds the lock; wait for it
            return replace(st, acquiring=st.acquiring.with_item(actor, replace(acq, stage="lock_wait")))
        st = replace(st, locks=st.locks.with_item(actor, "acquire"),
                     acquiring=st.acquiring.with_item(actor, replace(acq, stage="read")))
        out.append(Mark("OR-9"))
        return self.send(st, ("acquire_read", actor), Request(GET, owner_key(actor)), out)

    def on_reply_acquire_read(self, st, purpose, reply, now, out):
        actor = purpose[1]
        acq = st.acquiring[actor]
        if reply.status == io.NOT_FOUND:
            return self.acquire_new(st, actor, now, out)
        if reply.status != io.OK:
            return self.acquire_failed(st, actor, "record read failed", out)
        rec = decode_owner(reply.body)
        if not isinstance(rec, OwnerRecord):
            return self.acquire_failed(st, actor, "record unreadable", out)
        acq = replace(acq, version=reply.version, record=rec)
        st = replace(st, acquiring=st.acquiring.with_item(actor, acq))
        if rec.nobody or rec.instance == st.instance and rec.node_id == st.node_id:
            # OR-3: names nobody, or this process's own instance (a hold that ended)
            return self.acquire_write(st, actor, self.next_generation(st, rec), now, out)
        return self.read_for_freeing(st, actor, rec, now, out)

    def read_for_freeing(self, st, actor, rec, now, out):
        """Decision (FN-5): the read of nodes/A that may free a record naming (A, i) is one issued after
        this read of the record (never the membership view, never an earlier read)."""
        acq = st.acquiring[actor]
        st = replace(st, acquiring=st.acquiring.with_item(actor, replace(acq, stage="node_read")))
        return self.send(st, ("acquire_node_read", actor), Request(GET, node_key(rec.node_id)), out)

    def next_generation(self, st, rec: OwnerRecord) -> int:
        """OR-3: every acquisition writes generation + 1, also over this process's own record."""
        return rec.generation + 1

    def on_reply_acquire_node_read(self, st, purpose, reply, now, out):
        actor = purpose[1]
        acq = st.acquiring[actor]
        if reply.status not in (io.OK, io.NOT_FOUND):
            return self.acquire_failed(st, actor, "node read failed", out)
        node_rec = decode_node(reply.body) if reply.status == io.OK else None
        verdict = self.frees(st, acq.record, node_rec, now)
        if verdict is not True:
            return self.acquire_failed(st, actor, verdict, out)
        out.append(Mark("FN-5"))
        return self.acquire_write(st, actor, self.next_generation(st, acq.record), now, out)

    def frees(self, st, rec: OwnerRecord, node_rec, now):
        """FN-5: does this read of nodes/A (issued after the record's read) free a record naming (A, i)?
        Returns True, or why not."""
        if node_rec is None:
            return f"held by {rec.node_id}: nodes/{rec.node_id} is absent, which frees nothing"
        if not isinstance(node_rec, NodeRecord):
            return f"held by {rec.node_id}: nodes/{rec.node_id} is in an old format, which frees nothing"
        if node_rec.state == LIVE:
            if node_rec.instance != rec.instance:
                return True  # live naming another instance: free at once
            return f"held by live {rec.node_id}/{rec.instance}"
        # fenced or released, naming any instance
        if self.free_from_ms(st, node_rec.written_at_ms) < now.wall_ms:  # (a stored time: the wall clock)
            return True
        return f"held by {rec.node_id}: {node_rec.state}, free after written_at + ttl + grace"

    def acquire_new(self, st, actor, now, out):
        """OR-3: no record: If-None-Match: * at the first generation, which section 6 seeds
        (upgrade.Upgrade.acquire_new overrides this with UP-3)."""
        acq = replace(st.acquiring[actor], version=None, record=None)
        st = replace(st, acquiring=st.acquiring.with_item(actor, acq))
        return self.acquire_write(st, actor, 1, now, out)

    def may_acquire(self, st, now) -> bool:
        """Decision (OR-2): acquire only while the node lease is valid, checked right before the write."""
        return self.lease_valid(st, now)

    def acquire_write(self, st, actor, generation, now, out):
        # OR-2: only while the node lease is valid, checked right before the record write
        if not self.may_acquire(st, now):
            return self.acquire_failed(st, actor, "node lease not valid", out)
        out.append(Mark("OR-2"))
        acq = replace(st.acquiring[actor], stage="write", generation=generation)
        st = replace(st, acquiring=st.acquiring.with_item(actor, acq))
        body = encode_owner(OwnerRecord(st.node_id, st.instance, generation))
        if acq.version is None:
            req = Request(PUT, owner_key(actor), IF_NONE_MATCH, None, body)
        else:
            req = Request(PUT, owner_key(actor), IF_MATCH, acq.version, body)
        out.append(Mark("OR-3"))
        return self.send(st, ("acquire_write", actor), req, out)

    def on_reply_acquire_write(self, st, purpose, reply, now, out):
        actor = purpose[1]
        acq = st.acquiring[actor]
        if reply.status == io.OK:
            return self.hold_began(st, actor, acq.generation, reply.version, "ack", now, out)
        # OR-7: it did not succeed (no reply, timeout, conflict): read back once, under the lock
        out.append(Mark("OR-7"))
        st = replace(st, acquiring=st.acquiring.with_item(actor, replace(acq, stage="readback")))
        return self.send(st, ("acquire_readback", actor), Request(GET, owner_key(actor)), out)

    def on_reply_acquire_readback(self, st, purpose, reply, now, out):
        actor = purpose[1]
        acq = st.acquiring[actor]
        if reply.status == io.OK:
            rec = decode_owner(reply.body)
            if isinstance(rec, OwnerRecord):
                if rec.node_id == st.node_id and rec.instance == st.instance and rec.generation == acq.generation:
                    # our write: only this process writes this instance, one acquisition at a time
                    return self.hold_began(st, actor, acq.generation, reply.version, "readback", now, out)
                if reply.version != acq.version and not rec.nobody:
                    # OR-7: the race is lost: that node owns the actor, and the requests go there
                    out.append(Mark("OR-7"))
                    st = replace(st, acquiring=st.acquiring.without(actor),
                                 locks=st.locks.without(actor) if st.locks.get(actor) == "acquire" else st.locks)
                    st = self.forward(st, actor, rec.node_id, acq.waiting, out)
                    return self.after_unlock(st, actor, now, out)
        elif reply.status == io.NOT_FOUND and acq.version is not None:
            return self.acquire_failed(st, actor, "record vanished", out)
        # unchanged (the write may still land) or the read failed: unresolved (OR-7)
        key = (actor, acq.generation)
        first = st.params.attempt_timeout_ms // RESOLVE_FIRST_DIVISOR
        st = replace(st, unresolved=st.unresolved.with_item(
            key, Unresolved(actor, acq.generation, acq.version, now.mono_ms + first, first)))
        out.append(Observe("acquire_unresolved", (actor, acq.generation)))
        st = self.kick_background(st, now.mono_ms + first, out)
        return self.acquire_failed(st, actor, "outcome unknown", out)

    def hold_began(self, st, actor, generation, version, how, now, out):
        acq = st.acquiring[actor]
        st = replace(st, holds=st.holds.with_item(actor, Hold(generation, version)),
                     locks=st.locks.without(actor))
        out.append(Observe("hold_began", (actor, generation, version, how)))
        if not self.lease_valid(st, now):
            # the lease ran out (or was made invalid) while the write was in flight:
            # the lapse ends this hold too (NL-11)
            st = replace(st, acquiring=st.acquiring.without(actor))
            st = self.hold_to_pending(st, now, "lease not valid", out)
            st = self.fail_requests(st, actor, acq.waiting, "not ready: node lease not valid", out)
            return self.after_unlock(st, actor, now, out)
        out.append(Mark("OR-4"))
        if st.stop is not None or st.draining:
            st = replace(st, acquiring=st.acquiring.without(actor))
            st = self.release(st, actor, "stopping or draining", now, out)
            return self.fail_requests(st, actor, acq.waiting, "not ready: stopping or draining", out)
        st = self.restore(st, actor, now, out)
        return self.after_unlock(st, actor, now, out)

    def acquire_failed(self, st, actor, reason, out):
        acq = st.acquiring[actor]
        locked = st.locks.get(actor) == "acquire"
        st = replace(st, acquiring=st.acquiring.without(actor),
                     locks=st.locks.without(actor) if locked else st.locks)
        return self.fail_requests(st, actor, acq.waiting, "acquire: " + reason, out)

    def after_unlock(self, st, actor, now, out):
        """The lock is free: an acquisition waiting on it may read now."""
        acq = st.acquiring.get(actor)
        if acq is not None and acq.stage == "lock_wait":
            if not self.lease_valid(st, now):
                return self.acquire_failed(st, actor, "node lease not valid", out)
            return self.begin_acquire(st, actor, now, out)
        return st

    # --- release (OR-5, OR-11, BD-4) ----------------------------------------------------------

    def on_command_hibernate(self, st, args, now, out):
        (actor,) = args
        if actor not in st.holds:
            return st
        return self.release(st, actor, "hibernate", now, out)

    def on_command_move(self, st, args, now, out):
        """A move hands the actor over: release, then the request goes to the target (OR-11)."""
        actor, target, req = args
        if actor not in st.holds:
            return st
        st = self.release(st, actor, "move", now, out)
        out.append(Forward(target, Command("request", (actor, req, 0))))
        return st

    # --- events take time (CS-1, OR-4) ---------------------------------------------------------

    def event_begins(self, st, actor, gen, req):
        return replace(st, events=st.events.with_item((actor, req), gen))

    def on_command_event_end(self, st, args, now, out):
        """A request's event ends: it answers as owner only if is_valid holds now (OR-4); then a
        release that waited on the actor's events goes out (OR-5)."""
        actor, req = args
        gen = st.events.get((actor, req))
        if gen is None:
            return st  # cut already (the world ends every event it saw begin)
        st = replace(st, events=st.events.without((actor, req)))
        hold = st.holds.get(actor)
        if hold is not None and hold.generation == gen and self.is_valid(st, actor, now):
            out.append(Observe("answered", (actor, gen, req)))
        else:
            out.append(Observe("event_cut", (actor, gen, req, "not valid at its end")))
        reason = st.after_events.get(actor)
        if reason is not None and not self.running(st, actor):
            st = replace(st, after_events=st.after_events.without(actor))
            if actor in st.holds:
                st = self.release(st, actor, reason, now, out)
        return st

    @staticmethod
    def running(st, actor) -> bool:
        return any(a == actor for a, _req in st.events)

    def cut_events(self, st, why, out, actors=None):
        """The lost-lease cut (NL-11, CS-1): events still running end now, acting no more; a
        release that waited on them no longer waits."""
        for (actor, req), gen in tuple(st.events.items()):
            if actors is None or actor in actors:
                out.append(Observe("event_cut", (actor, gen, req, why)))
                st = replace(st, events=st.events.without((actor, req)))
        if actors is None:
            return replace(st, after_events=type(st.after_events)())
        for actor in actors:
            if actor in st.after_events:
                st = replace(st, after_events=st.after_events.without(actor))
        return st

    def release(self, st, actor, reason, now, out):
        """OR-5: stop acting as owner, then write nobody If-Match the hold's version, generation kept.
        The actor stops first: a release waits for the actor's events still running (a clean
        stop's wait is bounded: CS-1 cuts what is left)."""
        if self.running(st, actor):
            if actor not in st.after_events:
                st = replace(st, after_events=st.after_events.with_item(actor, reason))
            return st
        hold = st.holds[actor]
        st = replace(st, holds=st.holds.without(actor))
        out.append(Observe("hold_ended", (actor, hold.generation, reason)))
        out.append(Mark("OR-5"))
        req = self.release_request(actor, hold.generation, hold.version)
        # BD-4: a foreground release tries 1 s, then is parked to the background retries
        out.append(Mark("BD-4"))
        return self.send(st, ("release", actor, hold.generation, hold.version), req, out, self.release_tries_ms)

    def release_request(self, actor, generation, version):
        """Decision (OR-5): a release writes nobody, generation kept, If-Match the hold's acquire
        version (every retry the same write)."""
        return Request(PUT, owner_key(actor), IF_MATCH, version, encode_owner(OwnerRecord(None, None, generation)))

    def on_reply_release(self, st, purpose, reply, now, out):
        _, actor, generation, version = purpose
        if reply.status == io.OK:
            out.append(Observe("released", (actor, generation)))
            return st
        # OR-11: the release is pending
        return self.add_pending(st, actor, generation, version, now, out)

    def add_pending(self, st, actor, generation, version, now, out):
        key = (actor, generation, version)
        if key in st.pending:
            return st
        out.append(Mark("OR-11"))
        out.append(Observe("release_pending", (actor, generation)))
        entry = Pending(actor, generation, version, now.mono_ms + BACKOFF_MIN_MS, BACKOFF_MIN_MS)  # OR-6: monotonic
        st = replace(st, pending=st.pending.with_item(key, entry))
        return self.kick_background(st, entry.next_ms, out)

    def hold_to_pending(self, st, now, reason, out):
        """NL-11: a lapse drops every hold locally into the pending releases; the lost-lease cut
        ends their events."""
        st = self.cut_events(st, reason, out)
        for actor, hold in tuple(st.holds.items()):
            out.append(Observe("hold_ended", (actor, hold.generation, reason)))
            st = replace(st, holds=st.holds.without(actor))
            st = self.add_pending(st, actor, hold.generation, hold.version, now, out)
        return st

    # --- the background task: pending releases and the resolver (OR-6, OR-8, BD-2, BD-3) -------

    def kick_background(self, st, at_ms, out):
        if st.background_at_ms is None or at_ms < st.background_at_ms:
            out.append(SetTimer("background", at_ms))
            return replace(st, background_at_ms=at_ms)
        return st

    def on_timer_background(self, st, key, now, out):
        st = replace(st, background_at_ms=None)
        held = self.entries_at_work(st)
        if held:  # SLOT-1: the slots it holds, each an entry whose request is in flight (a claim)
            out.append(Observe("slots", ("BD-2", held)))
        if not self.lease_valid(st, now):
            out.append(Mark("OR-6"))  # paused while the node lease is invalid; resumed on recovery
            return st
        in_flight = self.background_in_flight(st)
        for k, e in tuple(st.pending.items()):
            if in_flight >= self.pending_concurrency:
                out.append(Mark("BD-2"))
                break
            if e.rid is None and e.next_ms <= now.mono_ms:
                st = self.retry_release(st, k, e, out)
                in_flight += 1
        for k, e in tuple(st.unresolved.items()):
            if in_flight >= self.pending_concurrency:
                out.append(Mark("BD-2"))
                break
            if e.rid is None and e.next_ms <= now.mono_ms:
                st2 = self.resolve(st, k, e, now, out)
                if st2 is not st:
                    in_flight += 1
                st = st2
        return self.schedule_background(st, now, out)

    def schedule_background(self, st, now, out):
        nxt = None
        for e in st.pending.values():
            if e.rid is None and (nxt is None or e.next_ms < nxt):
                nxt = e.next_ms
        for e in st.unresolved.values():
            if e.rid is None and (nxt is None or e.next_ms < nxt):
                nxt = e.next_ms
        if nxt is None:
            return st
        if self.background_in_flight(st) >= self.pending_concurrency:
            # BD-2: every slot is taken: the task waits for the answer that frees one (`wake_background`), as
            # a real task waits on a semaphore, instead of waking every millisecond to find the cap still full
            return st if st.background_parked else replace(st, background_parked=True)
        # (an entry due now waits only behind the cap: a slot was just freed, and it goes at once)
        return self.kick_background(st, max(nxt, now.mono_ms), out)

    @staticmethod
    def background_in_flight(st) -> int:
        """BD-2: the entries whose request is in flight: a pending release's retry or its read, and an unresolved
        acquire the resolver works, from its read until its release's reply (OR-9: the resolver holds the actor's
        lock that long, and a release that fails becomes a pending release: the entry is worked until then)."""
        return sum(1 for e in st.pending.values() if e.rid is not None) + sum(
            1 for v in st.locks.values() if v == "resolve")

    @staticmethod
    def entries_at_work(st) -> tuple:
        """SLOT-1: the owners/ keys of the entries holding a slot of BD-2's cap (as `background_in_flight`)."""
        keys = [owner_key(e.actor) for e in st.pending.values() if e.rid is not None]
        keys += [owner_key(a) for a, v in st.locks.items() if v == "resolve"]
        return tuple(sorted(keys))

    def wake_background(self, st, now, out):
        """BD-2, OR-6: the task parked on a full cap; once an input freed a slot (an answer, its timeout, an entry
        dropped), the entries due are worked again at once (an input that frees none leaves it parked)."""
        if self.background_in_flight(st) >= self.pending_concurrency:
            return st
        return self.schedule_background(replace(st, background_parked=False), now, out)

    def retry_release(self, st, k, e, out):
        """OR-5: every retry is the same write, If-Match v; never a version read later."""
        rid = st.next_rid
        st = self.send(st, ("pending_release", k), self.release_request(e.actor, e.generation, e.version), out)
        return replace(st, pending=st.pending.with_item(k, replace(e, rid=rid)))

    def on_reply_pending_release(self, st, purpose, reply, now, out):
        k = purpose[1]
        e = st.pending.get(k)
        if e is None:
            return st
        if reply.status == io.OK:
            out.append(Observe("released", (e.actor, e.generation)))
            st = replace(st, pending=st.pending.without(k))
            return self.refusal_streak(st, False, now, out)
        if reply.status in (io.PRECONDITION_FAILED, io.NOT_FOUND):
            # read: does the record still name this instance at g?
            rid = st.next_rid
            st = self.send(st, ("pending_read", k), Request(GET, owner_key(e.actor)), out)
            return replace(st, pending=st.pending.with_item(k, replace(e, rid=rid)))
        return self.pending_backoff(st, k, e, now, out, refused=True)

    def on_reply_pending_read(self, st, purpose, reply, now, out):
        k = purpose[1]
        e = st.pending.get(k)
        if e is None:
            return st
        if reply.status == io.NOT_FOUND or reply.status == io.OK and not self.names_us_at(st, reply.body, e.generation):
            # OR-5: the record no longer names this instance at g: the entry ends
            out.append(Observe("release_dropped", (e.actor, e.generation)))
            return replace(st, pending=st.pending.without(k))
        return self.pending_backoff(st, k, e, now, out, refused=reply.status != io.OK)

    def names_us_at(self, st, body, generation) -> bool:
        rec = decode_owner(body)
        return (isinstance(rec, OwnerRecord) and rec.node_id == st.node_id and rec.instance == st.instance
                and rec.generation == generation)

    def pending_backoff(self, st, k, e, now, out, refused):
        backoff = min(e.backoff_ms * 2, BACKOFF_MAX_MS)  # OR-6
        st = replace(st, pending=st.pending.with_item(k, replace(e, rid=None, next_ms=now.mono_ms + backoff, backoff_ms=backoff)))
        st = self.refusal_streak(st, refused, now, out)
        return self.schedule_background(st, now, out)

    def refusal_streak(self, st, refused, now, out):
        """BD-3: after 32 refusals in a row the pass stops: every waiting entry waits its backoff."""
        n = st.refusals + 1 if refused else 0
        if n >= self.refusals_per_pass:
            out.append(Mark("BD-3"))
            pend = st.pending
            for k, e in tuple(pend.items()):
                if e.rid is None and e.next_ms <= now.mono_ms:
                    pend = pend.with_item(k, replace(e, next_ms=now.mono_ms + e.backoff_ms))
            return replace(st, refusals=0, pending=pend)
        return replace(st, refusals=n)

    # --- the resolver (OR-8, OR-9) ------------------------------------------------------------

    def resolve(self, st, k, e, now, out):
        """OR-8 under OR-9: take the lock, then read the record until it can decide."""
        actor = e.actor
        if not self.resolver_takes_lock(st, actor):
            # an acquisition holds the lock: try later
            return replace(st, unresolved=st.unresolved.with_item(k, replace(e, next_ms=now.mono_ms + e.backoff_ms)))
        st = self.lock_for_resolver(st, actor)
        rid = st.next_rid
        st = self.send(st, ("resolve_read", k), Request(GET, owner_key(actor)), out)
        return replace(st, unresolved=st.unresolved.with_item(k, replace(e, rid=rid)))

    def resolver_takes_lock(self, st, actor) -> bool:
        return actor not in st.locks

    def lock_for_resolver(self, st, actor):
        return replace(st, locks=st.locks.with_item(actor, "resolve"))

    def unlock_resolver(self, st, actor, now, out):
        if st.locks.get(actor) == "resolve":
            st = replace(st, locks=st.locks.without(actor))
            return self.after_unlock(st, actor, now, out)
        return st

    def on_reply_resolve_read(self, st, purpose, reply, now, out):
        k = purpose[1]
        e = st.unresolved.get(k)
        if e is None:
            return st
        actor = e.actor
        if reply.status == io.OK:
            rec = decode_owner(reply.body)
            ours = (isinstance(rec, OwnerRecord) and rec.node_id == st.node_id and rec.instance == st.instance
                    and rec.generation == e.generation)
            if ours and actor not in st.holds:
                # OR-8: our write landed and no hold exists here: release it, If-Match that read's version
                out.append(Mark("OR-8"))
                body = encode_owner(OwnerRecord(None, None, e.generation))
                st = replace(st, unresolved=st.unresolved.without(k))
                out.append(Observe("resolver_release", (actor, e.generation)))
                return self.send(st, ("resolve_release", actor, e.generation, reply.version),
                                 Request(PUT, owner_key(actor), IF_MATCH, reply.version, body), out)
            if ours or reply.version != e.read_version:
                # names anything else, or a hold exists here: the entry ends
                st = replace(st, unresolved=st.unresolved.without(k))
                out.append(Observe("unresolved_ended", (actor, e.generation)))
                return self.unlock_resolver(st, actor, now, out)
        elif reply.status == io.NOT_FOUND and e.read_version is not None:
            st = replace(st, unresolved=st.unresolved.without(k))
            return self.unlock_resolver(st, actor, now, out)
        # unchanged (the write may still land), or the read failed: read again later
        backoff = min(e.backoff_ms * 2, st.params.attempt_timeout_ms)
        st = replace(st, unresolved=st.unresolved.with_item(k, replace(e, rid=None, next_ms=now.mono_ms + backoff, backoff_ms=backoff)))
        st = self.unlock_resolver(st, actor, now, out)
        return self.schedule_background(st, now, out)

    def on_reply_resolve_release(self, st, purpose, reply, now, out):
        _, actor, generation, version = purpose
        st = self.unlock_resolver(st, actor, now, out)  # OR-9: held until the release's reply
        if reply.status == io.OK:
            out.append(Observe("released", (actor, generation)))
            return st
        # failure or unknown: an ordinary pending release keyed on that read's version
        return self.add_pending(st, actor, generation, version, now, out)

    # --- hooks from the node lease ---------------------------------------------------------------

    def drop_holds_lost(self, st, out):
        """NL-10: drop every hold at once, releasing nothing; their events are cut."""
        st = self.cut_events(st, "lease lost", out)
        for actor, hold in st.holds.items():
            out.append(Observe("hold_ended", (actor, hold.generation, "lease lost")))
        return replace(st, holds=type(st.holds)(), pending=type(st.pending)(), unresolved=type(st.unresolved)())
