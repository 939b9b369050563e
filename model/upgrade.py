"""ADR 0020 section 6: upgrading from per-actor leases (UP-1..UP-3), in the new node.

Owns: the start order (UP-1: the bucket check, then the start guard and the start check
together); the start guard (UP-2: wait while an old-format heartbeat is fresh, re-reading
every half period; a future-dated one lapses on this node's own count; one that keeps
being rewritten means an old node runs: exit); old heartbeats seen after the switch; the
first acquisition of an actor (UP-3: read leases/, refuse a live old lease whatever node it
names, seed the generation from the old lease or marker and the actor's segment keys,
leave the marker, then create owners/ above it).
Must not know: clocks or the world; what an old binary does (model/old_lease.py).
"""

from __future__ import annotations

from typing import NamedTuple

from . import io
from .actor_data import DATA_PREFIX
from .frozen import replace
from .io import GET, IF_MATCH, IF_NONE_MATCH, LIST, PUT, CancelTimer, Mark, Observe, Request, SetTimer
from .records import (
    NODES_PREFIX,
    Marker,
    OldHeartbeat,
    OldLease,
    decode_lease,
    decode_node,
    encode_marker,
    lease_key,
    segment_generation,
)

BUCKET_RETRY_MS = 1_000


class OldSeen(NamedTuple):
    """An old-format heartbeat as the start guard read it."""

    body: str
    first_read_ms: int  # when this node first read this very body (its monotonic clock: UP-2's lapse)
    written_at_ms: int
    changes: int  # how often it was rewritten while the guard watched
    ahead: bool = False  # dated ahead of this node's wall clock when first read (UP-2: it lapses on the count)
    held_until_ms: int = 0  # an older body applied late over this one holds the start until then (monotonic)
    held_body: str = ""  # the last such older body read, when this node first read it (monotonic), and
    held_first_read_ms: int = 0  # whether it was dated ahead then
    held_ahead: bool = False


def old_heartbeat_horizon_ms(params) -> int:
    """UP-2's horizon: the old readiness horizon, three heartbeat periods."""
    return 3 * params.heartbeat_period_ms


class Upgrade:
    """Section 6 handlers, mixed into model.node.Model."""

    # --- UP-1: the start order ------------------------------------------------------------

    def begin_start(self, st, now, out):
        """UP-1: the bucket check first."""
        out.append(Mark("UP-1"))
        return self.send(st, ("bucket_check",), Request(LIST, NODES_PREFIX), out)

    def on_reply_bucket_check(self, st, purpose, reply, now, out):
        if reply.status != io.OK:
            out.append(SetTimer("bucket_check", now.mono_ms + BUCKET_RETRY_MS))
            return st
        # then the start guard and the start check, together (and the listing, on its own task)
        st = self.begin_check(st, now, out)
        st = self.guard_round(st, now, out)
        return self.start_listing(st, now, out)

    def on_timer_bucket_check(self, st, key, now, out):
        return self.begin_start(st, now, out)

    # --- UP-2: the start guard ---------------------------------------------------------------

    def guard_round(self, st, now, out):
        st = replace(st, guard_queue=None)
        return self.send(st, ("guard_list",), Request(LIST, NODES_PREFIX), out)

    def on_timer_guard(self, st, key, now, out):
        return self.guard_round(st, now, out)

    def on_reply_guard_list(self, st, purpose, reply, now, out):
        if reply.status != io.OK:
            out.append(SetTimer("guard", now.mono_ms + st.params.period_ms // 2))
            return st
        st = replace(st, guard_queue=tuple(k for k, _v in reply.entries))
        return self.guard_next(st, now, out)

    def guard_next(self, st, now, out):
        if not st.guard_queue:
            return self.guard_decide(st, now, out)
        key = st.guard_queue[0]
        st = replace(st, guard_queue=st.guard_queue[1:])
        return self.send(st, ("guard_get", key), Request(GET, key), out)

    def on_reply_guard_get(self, st, purpose, reply, now, out):
        key = purpose[1]
        if self.guard_read_failed(reply):
            # UP-2: a read that failed proves nothing: the guard holds, and the round is tried again
            out.append(Mark("UP-2"))
            st = replace(st, guard_queue=None)
            out.append(SetTimer("guard", now.mono_ms + st.params.period_ms // 2))
            return st
        if reply.status == io.OK and isinstance(decode_node(reply.body), OldHeartbeat):
            hb = decode_node(reply.body)
            seen = st.guard_seen.get(key)
            if seen is None:
                seen = OldSeen(reply.body, now.mono_ms, hb.written_at_ms, 0, hb.written_at_ms > now.wall_ms)
            elif seen.body != reply.body and hb.written_at_ms < seen.written_at_ms:
                # an older heartbeat applied late over a fresher one: no rewrite by a running node (the
                # fresher one stays the one it compares later reads with), yet it holds the start until it
                # is stale by its own date, like any body read (UP-2: "any old-format heartbeat"). The
                # fresher one may lapse sooner: dated in the future when first read, it lapses span +
                # max_skew after that read (upgrade seed 824: clocks 2 max_skew apart, the fresher one
                # lapsed 7 s before the older one went stale)
                # (a future-dated one counted from this node's first read of that very body, so that
                # re-reading it every round never pushes its lapse on)
                if seen.held_body != reply.body:
                    seen = seen._replace(held_body=reply.body, held_first_read_ms=now.mono_ms,
                                         held_ahead=hb.written_at_ms > now.wall_ms)
                until = now.mono_ms + self.old_heartbeat_left(
                    st.params, hb.written_at_ms, seen.held_first_read_ms, seen.held_ahead, now)
                seen = seen._replace(held_until_ms=max(seen.held_until_ms, until))
            elif seen.body != reply.body:
                seen = OldSeen(reply.body, now.mono_ms, hb.written_at_ms, seen.changes + 1, hb.written_at_ms > now.wall_ms)
                if seen.changes >= 2:
                    # UP-2: it keeps being rewritten: an old node runs
                    out.append(Mark("UP-2"))
                    reason = f"UP-2: {key} keeps being rewritten in an old format: an old node is running"
                    out.append(Observe("check_refused", (reason,)))
                    return self.exit(st, 2, reason, out)
            st = replace(st, guard_seen=st.guard_seen.with_item(key, seen))
        return self.guard_next(st, now, out)

    def guard_read_failed(self, reply) -> bool:
        """Decision (UP-2): a guard read that neither found an object nor found none holds the guard."""
        return reply.status not in (io.OK, io.NOT_FOUND)

    def guard_span_ms(self, params) -> int:
        """Decision (UP-2): an old-format heartbeat holds the start until written this long ago: the
        horizon (three heartbeat periods) plus ttl plus grace."""
        return old_heartbeat_horizon_ms(params) + params.takeover_ms

    def old_heartbeat_left(self, p, written_at_ms: int, first_read_ms: int, ahead: bool, now) -> int:
        """UP-2: how long a body dated `written_at_ms` still holds the start: until written_at + span passes on
        this node's wall clock (a stored time: the age test); dated ahead of it when first read (at
        `first_read_ms`, monotonic), at the latest span + max_skew after that first read, on this node's
        monotonic clock ("measured on this node's monotonic clock"), whatever its wall clock says."""
        span = self.guard_span_ms(p)
        left = written_at_ms + span - now.wall_ms
        if ahead:
            left = min(left, first_read_ms + span + p.max_skew_ms - now.mono_ms)
        return max(0, left)

    def old_heartbeat_blocks(self, st, seen: OldSeen, now) -> int:
        """UP-2: how long this old heartbeat (or an older one applied late over it) still holds the start
        (0: it does not)."""
        left = self.old_heartbeat_left(st.params, seen.written_at_ms, seen.first_read_ms, seen.ahead, now)
        return max(left, seen.held_until_ms - now.mono_ms, 0)

    def guard_decide(self, st, now, out):
        left = 0
        for key, seen in st.guard_seen.items():
            wait = self.old_heartbeat_blocks(st, seen, now)
            if wait > left:
                left = wait
        if left:
            out.append(Mark("UP-2"))
            if not st.guard_waiting:
                out.append(Observe("guard_waiting", (left,)))
                st = replace(st, guard_waiting=True)
            out.append(SetTimer("guard", now.mono_ms + st.params.period_ms // 2))  # every half period
            return st
        out.append(Observe("guard_passed"))
        st = replace(st, guard_passed=True)
        if st.check_ready:
            # the check's wait ended while the guard waited: read once more now, then write (NL-7)
            st = replace(st, check_ready=False)
            out.append(CancelTimer("check_read"))
            return self.on_timer_check_read(st, "check_read", now, out)
        return st

    def first_write(self, st, now, out):
        """NL-7 waits for the start guard too (UP-1: they run together). Meanwhile the start check
        keeps reading every period: a write it would miss while waiting (a live process under this
        id, showing itself) must restart its wait (NL-5)."""
        if not st.guard_passed:
            out.append(SetTimer("check_read", now.mono_ms + st.params.period_ms))
            return replace(st, check_ready=True)
        return super().first_write(st, now, out)

    def old_heartbeat_seen(self, st, node, hb: OldHeartbeat, now, out):
        """After the switch: a fresh old-format heartbeat is an old version running; a stale one
        a retired node's. Either way it frees nothing (FN-5)."""
        out.append(Mark("UP-2"))
        fresh = now.wall_ms - hb.written_at_ms < self.guard_span_ms(st.params)
        out.append(Observe("old_version_running" if fresh else "old_retired", (node,)))
        return st

    # --- UP-3: the first acquisition of an actor ----------------------------------------------

    def acquire_new(self, st, actor, now, out):
        """UP-3: no owners/ record: read leases/ first."""
        acq = replace(st.acquiring[actor], stage="lease_read", version=None, record=None)
        st = replace(st, acquiring=st.acquiring.with_item(actor, acq))
        return self.send(st, ("upgrade_lease_read", actor), Request(GET, lease_key(actor)), out)

    def old_lease_refuses(self, st, lease: OldLease, now) -> bool:
        """UP-3: live by the old rules (expires_at + grace not passed), whatever node it names,
        this node's own id included."""
        return lease.expires_at_ms + st.params.grace_ms >= now.wall_ms  # a stored time: the wall clock

    def on_reply_upgrade_lease_read(self, st, purpose, reply, now, out):
        actor = purpose[1]
        out.append(Mark("UP-3"))
        if reply.status == io.NOT_FOUND:
            marker = (IF_NONE_MATCH, None)
            old_gen = 0
        elif reply.status != io.OK:
            return self.acquire_failed(st, actor, "leases/ read failed", out)
        else:
            rec = decode_lease(reply.body)
            if isinstance(rec, OldLease):
                if self.old_lease_refuses(st, rec, now):
                    return self.acquire_failed(st, actor, f"held by a live old lease naming {rec.node_id}", out)
                marker = (IF_MATCH, reply.version)
                old_gen = rec.generation
            elif isinstance(rec, Marker):
                marker = None  # a crash between the two writes: seed the same way from it
                old_gen = rec.generation
            else:
                return self.acquire_failed(st, actor, "leases/ record unreadable", out)
        st = replace(st, acquiring=st.acquiring.with_item(actor, replace(st.acquiring[actor], stage="seed_list")))
        return self.send(st, ("upgrade_seed_list", actor, old_gen, marker),
                         Request(LIST, f"{DATA_PREFIX}{actor}/"), out)

    def seed_generation(self, st, old_gen: int, keys_gen: int) -> int:
        """UP-3: max(the old generation, the highest generation in the actor's keys)."""
        return max(old_gen, keys_gen)

    def on_reply_upgrade_seed_list(self, st, purpose, reply, now, out):
        _, actor, old_gen, marker = purpose
        if reply.status != io.OK:
            return self.acquire_failed(st, actor, "segment listing failed", out)
        # (a snapshot/ prefix would be listed the same way; this world writes only wal/)
        keys_gen = max((segment_generation(k) for k, _v in reply.entries), default=0)
        seed = self.seed_generation(st, old_gen, keys_gen)
        if marker is None:
            return self.acquire_write(st, actor, seed + 1, now, out)
        cond, version = marker
        st = replace(st, acquiring=st.acquiring.with_item(actor, replace(st.acquiring[actor], stage="marker_write")))
        return self.send(st, ("upgrade_marker", actor, seed), self.marker_request(actor, seed, cond, version), out)

    def marker_request(self, actor: str, seed: int, cond: str, version) -> Request:
        """UP-3: the marker replaces what was read, by its condition: If-None-Match on no object,
        If-Match on a dead old lease (so an old binary's renewal in between wins, not the marker)."""
        return Request(PUT, lease_key(actor), cond, version, encode_marker(Marker(seed)))

    def on_reply_upgrade_marker(self, st, purpose, reply, now, out):
        _, actor, seed = purpose
        if reply.status != io.OK:
            # the marker may have landed: the next acquisition seeds from it
            return self.acquire_failed(st, actor, "marker write " + reply.status, out)
        out.append(Observe("marked", (actor, seed)))
        return self.acquire_write(st, actor, seed + 1, now, out)  # owners/ at seed + 1, If-None-Match
