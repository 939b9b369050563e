"""ADR 0020 section 2: the membership view, the fence watch and fencing (FN-1..FN-4, FN-6, BD-1).

Owns: the heartbeat listing (one LIST of `nodes/`, then one GET per node,
one after another, every period, on a task of its own beside the lease
task), the membership view it keeps (bodies only: the listing's bodies carry
no version), the watch of each peer's object, and the fence: decided on one
fresh versioned GET and written `If-Match` on that GET's version.
The freeing rule (FN-5) lives with the ownership record (ownership.py); the
operator's commands (FN-7, FN-8) in operator.py.
Must not know: clocks or the world; the watch compares bodies, never tokens.
"""

from __future__ import annotations

from typing import NamedTuple

from .frozen import replace

from . import io
from .io import GET, IF_MATCH, LIST, PUT, Mark, Observe, Request, SetTimer
from .records import (
    FENCED,
    LIVE,
    NODES_PREFIX,
    NodeRecord,
    OldHeartbeat,
    decode_node,
    encode_node,
    node_key,
)

FENCE_CONCURRENCY = 8  # BD-1


class Seen(NamedTuple):
    """What the listing last read of a peer's `nodes/<id>` (a body, no version)."""

    fmt: int  # 3, or 1/2 for an old heartbeat, 0 unreadable
    state: str  # live / released / fenced ("" for old formats)
    instance: str | None
    written_at_ms: int
    since_ms: int  # when this (state, instance, written_at) was first seen, on this node's monotonic clock

    @property
    def live(self) -> bool:
        return self.fmt == 3 and self.state == LIVE


def seen_from(rec, now) -> Seen:
    t = now.mono_ms  # FN-2: the watch is a duration
    if isinstance(rec, NodeRecord):
        return Seen(3, rec.state, rec.instance, rec.written_at_ms, t)
    if isinstance(rec, OldHeartbeat):
        return Seen(rec.fmt, "", None, rec.written_at_ms, t)
    return Seen(0, "", None, -1, t)


class Fencing:
    """Section 2 handlers (FN-1..FN-4), mixed into model.node.Model."""

    fence_concurrency = FENCE_CONCURRENCY  # Decision (BD-1): at most this many fences at once

    # --- the listing (its own task, every period) -----------------------------

    def start_listing(self, st, now, out):
        out.append(SetTimer("listing", now.mono_ms + st.params.period_ms))
        return self.send(st, ("listing",), Request(LIST, NODES_PREFIX), out, listing_busy=True)

    def on_timer_listing(self, st, key, now, out):
        out.append(SetTimer("listing", now.mono_ms + st.params.period_ms))
        if st.listing_queue or st.listing_busy:
            return st  # the previous listing is still reading: this period's is skipped
        return self.send(st, ("listing",), Request(LIST, NODES_PREFIX), out, listing_busy=True)

    def on_reply_listing(self, st, purpose, reply, now, out):
        if reply.status != io.OK:
            return replace(st, listing_busy=False)
        own = node_key(st.node_id)
        keys = tuple(k for k, _v in reply.entries if k != own)
        listed = {k[len(NODES_PREFIX):] for k in keys}
        view = st.view
        for node in tuple(view):
            if node not in listed:
                view = view.without(node)  # missing from the view: not live (OR-10)
        st = replace(st, view=view, listing_queue=keys)
        return self.listing_next(st, now, out)

    def listing_next(self, st, now, out):
        if not st.listing_queue:
            return self.after_listing(replace(st, listing_busy=False), now, out)
        key = st.listing_queue[0]
        return self.send(st, ("listing_get", key), Request(GET, key), out, listing_queue=st.listing_queue[1:])

    def on_reply_listing_get(self, st, purpose, reply, now, out):
        key = purpose[1]
        node = key[len(NODES_PREFIX):]
        if reply.status == io.OK:
            rec = decode_node(reply.body)
            before = st.view.get(node)
            st = self.saw(st, node, rec, now)
            if isinstance(rec, OldHeartbeat) and st.view.get(node) is not before and st.lease.ever_valid:
                # section 6, after the switch only (before it, the start guard judges old heartbeats)
                st = self.old_heartbeat_seen(st, node, rec, now, out)
        elif reply.status == io.NOT_FOUND:
            st = replace(st, view=st.view.without(node))
        return self.listing_next(st, now, out)

    @staticmethod
    def saw(st, node, rec, now):
        """Update the view; a new (state, instance, written_at) restarts its watch."""
        new = seen_from(rec, now)
        old = st.view.get(node)
        if old is not None and (old.fmt, old.state, old.instance, old.written_at_ms) == (
            new.fmt, new.state, new.instance, new.written_at_ms
        ):
            return st
        return replace(st, view=st.view.with_item(node, new))

    # --- the fence watch (FN-1, FN-2) ---------------------------------------------

    def after_listing(self, st, now, out):
        """FN-2: a peer unchanged for a full P + A, counted from our first acknowledged
        lease write after any lapse of our own, whose written_at + ttl + grace has
        passed, is read once more, fresh, to decide on a fence."""
        if st.fencing:  # SLOT-1: the slots it holds, each a fence whose request is in flight (a claim)
            out.append(Observe("slots", ("BD-1", tuple(sorted(node_key(n) for n in st.fencing)))))
        if not self.lease_valid(st, now) or st.watch_from_ms is None:
            return st  # FN-1
        for node, seen in st.view.items():
            if self.fences_held(st) >= self.fence_concurrency:  # BD-1
                out.append(Mark("BD-1"))
                break
            if node in st.fencing or not seen.live:
                continue
            if not self.watched_long_enough(st, seen, now):
                continue
            if self.free_from_ms(st, seen.written_at_ms) >= now.wall_ms:
                continue
            out.append(Mark("FN-2"))
            st = self.fence_read(st, node, seen, out)
        return st

    @staticmethod
    def fences_held(st) -> int:
        """Decision (BD-1): the fences at work, each from its read until its write's answer (or the read's, when
        it decides no write): every one holds a slot of the cap."""
        return len(st.fencing)

    def free_fence_slot(self, st, node):
        """Decision (SLOT-1): a fence whose request ended without a write to follow frees its slot."""
        return replace(st, fencing=st.fencing.without(node))

    def watched_long_enough(self, st, seen, now) -> bool:
        """FN-2: `seen` unchanged for a full P + A, counted from our first acknowledged lease write
        after any lapse of our own (`watch_from_ms`), holds for every fence decision, a retry's too. A
        duration: on the monotonic clock."""
        return (st.watch_from_ms is not None
                and now.mono_ms - max(seen.since_ms, st.watch_from_ms) >= self.watch_ms(st))

    def watch_ms(self, st) -> int:
        """Decision (FN-2): a peer is watched unchanged for a full P + A (a lease write of its in flight
        lands within A of its period) before the fresh read that decides on a fence."""
        return st.params.period_ms + st.params.attempt_timeout_ms

    def free_from_ms(self, st, written_at_ms: int) -> int:
        """Decision (FN-3, FN-5, T-5): the instant, on this node's wall clock, after which a process whose
        last write carried `written_at_ms` has lapsed for sure: written_at + ttl + grace (its
        validity ended at written_at + ttl - safety on its own clock; grace + safety >= 2 max_skew
        covers the two clocks)."""
        return written_at_ms + st.params.takeover_ms

    def fence_read(self, st, node, seen, out):
        st = replace(st, fencing=st.fencing.with_item(node, seen))
        return self.send(st, ("fence_read", node), Request(GET, node_key(node)), out)

    def on_reply_fence_read(self, st, purpose, reply, now, out):
        """FN-3: decide on this read alone."""
        node = purpose[1]
        watched = st.fencing.get(node)
        st = self.free_fence_slot(st, node)
        if reply.status != io.OK or watched is None:
            return st
        rec = decode_node(reply.body)
        if not isinstance(rec, NodeRecord) or rec.state != LIVE:
            return self.saw(st, node, rec, now)  # fenced or released already (FN-4), or not ours to fence
        if (rec.instance, rec.written_at_ms) != (watched.instance, watched.written_at_ms):
            # A wrote: watch again from here (FN-3)
            out.append(Mark("FN-3"))
            return self.saw(st, node, rec, now)
        if not self.lease_valid(st, now) or self.free_from_ms(st, rec.written_at_ms) >= now.wall_ms:
            return st  # FN-1, FN-3
        if not self.watched_long_enough(st, watched, now):
            # FN-2: a read decided on (a fence's retry, FN-3, FN-4) after a lapse of our own that began
            # since the watch: the watch counts again from our first acknowledged write after it
            return st
        fence = NodeRecord(FENCED, rec.instance, rec.written_at_ms, node)  # keeps A's written_at (NL-1)
        out.append(Mark("FN-3"))
        st = replace(st, fencing=st.fencing.with_item(node, watched))  # (the slot, held on for the write)
        return self.send(st, ("fence_write", node), self.fence_request(node, reply.version, fence), out)

    def fence_request(self, node, version, fence):
        """FN-3: the fence is written If-Match on the deciding GET's version."""
        return Request(PUT, node_key(node), IF_MATCH, version, encode_node(fence))

    def on_reply_fence_write(self, st, purpose, reply, now, out):
        node = purpose[1]
        watched = st.fencing.get(node)
        st = replace(st, fencing=st.fencing.without(node))
        if reply.status == io.OK:
            out.append(Observe("fenced", (node, watched.instance if watched else None)))
            st = replace(st, view=st.view.with_item(
                node, Seen(3, FENCED, watched.instance, watched.written_at_ms, now.mono_ms)))
            return st
        # FN-3 / FN-4: the fence failed (A wrote, or another fencer landed): read again
        out.append(Mark("FN-4"))
        if watched is None or not self.lease_valid(st, now):
            return st
        return self.fence_read(st, node, watched, out)
