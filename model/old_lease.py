"""The old binary (before ADR 0020), as a second pure model: per-actor leases.

What section 6 needs of it, from the ADR's Context and section 6:
- every actor it holds has a lease `leases/<tenant>/<class>/<name>` (`wasmkeep-lease 1`:
  node, generation, expires_at), acquired with a conditional PUT at generation + 1 (with no
  lease, one above the highest generation in the actor's keys: ADR 0012 collected them) and
  renewed with a conditional PUT a third of the ttl after the previous renewal returned;
- a hold is valid until `sent + ttl - safety` on its own clock; another node takes a lease
  over only after `expires_at + grace` (expires_at = sent + ttl) on its own clock;
- its heartbeat `nodes/<id>` in format 1 or 2, written unconditionally every heartbeat period (3 s);
- its cadence is its own configuration (`OldTiming`, given at its start), not the new nodes' drawn
  timing: an old binary kept its heartbeat period when the new version's T-3 made the operator lower
  the cluster's, and its renewals follow its own ttl / 3;
- UP-4: it decodes only `wasmkeep-lease 1`, so a marker reads as corrupt and is never taken
  over; its start check reports its id as taken when it cannot read `nodes/<id>` (a new
  node uses it).
It shares the step machinery and the actor data with the new model.
Must not know: clocks or the world.
"""

from __future__ import annotations

from typing import NamedTuple

from . import io
from .actor_data import DATA_PREFIX, ActorData
from .dispatch import Dispatch
from .frozen import EMPTY, FrozenDict, replace
from .io import GET, IF_MATCH, IF_NONE_MATCH, LIST, PUT, Mark, Observe, Request, SetTimer
from .ownership import Acquiring
from .params import Params, validate
from .records import (
    LEASES_PREFIX,
    NODE_HEADER_3,
    OldHeartbeat,
    OldLease,
    decode_lease,
    decode_lease_v1,
    encode_old_heartbeat,
    encode_old_lease,
    lease_key,
    node_key,
    segment_generation,
)

OLD_HEARTBEAT_MS = 3_000  # the old heartbeat period, by default (ADR Context: "every 3 s")


class OldTiming(NamedTuple):
    """The old binary's own cadence (ADR Context, before this record): a heartbeat every
    `heartbeat_period_ms` (3 s), and each per-actor lease renewed `renew_after_ms` after its previous
    renewal returned (None: a third of the ttl, 3.3 s at the defaults). The ttl, grace and safety are
    the cluster's (section 5: "Timing, unchanged"). A world gives it at the process's start
    (`ProcessStarted.config`); none given, these defaults."""

    heartbeat_period_ms: int = OLD_HEARTBEAT_MS
    renew_after_ms: int | None = None

    def renew_ms(self, params: Params) -> int:
        """How long after a renewal (or the acquisition) returned the next renewal goes."""
        return params.ttl_ms // 3 if self.renew_after_ms is None else self.renew_after_ms


class OldHold(NamedTuple):
    generation: int
    version: str  # the lease's version after its last acknowledged write
    until_ms: int  # valid until sent + ttl - safety of the last acknowledged write


class OldState(NamedTuple):
    node_id: str
    instance: str
    params: Params
    fmt: int = 2  # the heartbeat format it writes (1 or 2)
    running: bool = False  # past its start check
    next_rid: int = 1
    inflight: FrozenDict = EMPTY
    exited: bool = False
    holds: FrozenDict = EMPTY  # actor -> OldHold
    acquiring: FrozenDict = EMPTY  # actor -> ownership.Acquiring
    data_seq: int = 0
    heartbeats: bool = True  # False: the heartbeat task stalled (renewals go on)
    timing: OldTiming = OldTiming()  # its own cadence


class OldModel(Dispatch, ActorData):
    """The per-actor-lease binary that section 6 upgrades from."""

    name = "old"

    def on_start(self, inp, now, out):
        fmt = 1 if inp.instance.endswith(("0", "2", "4", "6", "8")) else 2
        timing = inp.config if isinstance(inp.config, OldTiming) else OldTiming()
        st = OldState(inp.node_id, inp.instance, validate(inp.params), fmt=fmt, timing=timing)
        return self.send(st, ("start_read",), Request(GET, node_key(st.node_id)), out)

    def on_reply_start_read(self, st, purpose, reply, now, out):
        """Its start check: an object it cannot read means the id is taken by a new node."""
        if reply.status == io.OK and str.startswith(reply.body, NODE_HEADER_3):
            return self.exit(st, 2, "old binary: nodes/ holds a format it cannot read: the id is taken", out)
        if reply.status not in (io.OK, io.NOT_FOUND):
            out.append(SetTimer("start", now.mono_ms + 500))
            return st
        st = replace(st, running=True)
        return self.heartbeat(st, now, out)

    def on_timer_start(self, st, key, now, out):
        return self.send(st, ("start_read",), Request(GET, node_key(st.node_id)), out)

    # --- the heartbeat: unconditional, every heartbeat period of its own ------------------

    def heartbeat(self, st, now, out):
        out.append(SetTimer("heartbeat", now.mono_ms + st.timing.heartbeat_period_ms))
        if not st.heartbeats:
            return st
        body = encode_old_heartbeat(OldHeartbeat(st.fmt, st.node_id, now.wall_ms))
        return self.send(st, ("heartbeat",), Request(PUT, node_key(st.node_id), None, None, body), out)

    def on_timer_heartbeat(self, st, key, now, out):
        return self.heartbeat(st, now, out)

    def on_reply_heartbeat(self, st, purpose, reply, now, out):
        return st

    def on_command_stall_heartbeats(self, st, args, now, out):
        """A stalled listing stops the old heartbeat while renewals go on (section 6)."""
        return replace(st, heartbeats=False)

    def on_command_resume_heartbeats(self, st, args, now, out):
        """The stalled listing recovers: the heartbeat task beats again at its next tick."""
        return replace(st, heartbeats=True)

    # --- holds -------------------------------------------------------------------------

    def is_valid(self, st, actor, now) -> bool:
        hold = st.holds.get(actor)
        return hold is not None and now.wall_ms < hold.until_ms  # sent + ttl - safety on its wall clock

    def on_command_request(self, st, args, now, out):
        actor, req, _hops = args
        acq = st.acquiring.get(actor)
        if acq is not None:
            return replace(st, acquiring=st.acquiring.with_item(actor, replace(acq, waiting=acq.waiting + ((req, 0),))))
        if self.is_valid(st, actor, now):
            return self.serve(st, actor, req, now, out)
        if not st.running:
            return self.fail_requests(st, actor, ((req, 0),), "old binary not started", out)
        st = replace(st, acquiring=st.acquiring.with_item(actor, Acquiring("read", ((req, 0),))))
        return self.send(st, ("old_read", actor), Request(GET, lease_key(actor)), out)

    def on_reply_old_read(self, st, purpose, reply, now, out):
        actor = purpose[1]
        p = st.params
        if reply.status == io.NOT_FOUND:
            # no lease (never held, or collected): the generation comes from the actor's keys
            return self.send(st, ("old_seed", actor), Request(LIST, f"{DATA_PREFIX}{actor}/"), out)
        if reply.status != io.OK:
            return self.old_failed(st, actor, "lease read failed", out)
        rec = decode_lease_v1(reply.body)
        if not isinstance(rec, OldLease):
            out.append(Mark("UP-4"))  # a marker reads as corrupt: never taken over
            return self.old_failed(st, actor, "leases/ record unreadable (corrupt)", out)
        if rec.expires_at_ms + p.grace_ms >= now.wall_ms:
            return self.old_failed(st, actor, f"held by {rec.node_id} (old lease)", out)
        return self.old_write(st, actor, rec.generation + 1, IF_MATCH, reply.version, now, out)

    def on_reply_old_seed(self, st, purpose, reply, now, out):
        actor = purpose[1]
        if reply.status != io.OK:
            return self.old_failed(st, actor, "segment listing failed", out)
        gen = max((segment_generation(k) for k, _v in reply.entries), default=0) + 1
        return self.old_write(st, actor, gen, IF_NONE_MATCH, None, now, out)

    def old_write(self, st, actor, generation, cond, version, now, out):
        body = encode_old_lease(OldLease(st.node_id, generation, now.wall_ms + st.params.ttl_ms))
        return self.send(st, ("old_acquire", actor, generation, now.wall_ms),
                         Request(PUT, lease_key(actor), cond, version, body), out)

    def on_reply_old_acquire(self, st, purpose, reply, now, out):
        _, actor, generation, sent = purpose
        if reply.status != io.OK:
            return self.old_failed(st, actor, "lease write " + reply.status, out)
        until = sent + st.params.lease_span_ms
        st = replace(st, holds=st.holds.with_item(actor, OldHold(generation, reply.version, until)))
        out.append(Observe("hold_began", (actor, generation, reply.version, "old")))
        out.append(Observe("hold_valid", (actor, generation, until)))
        st = self.schedule_renewal(st, actor, now, out)
        if until <= now.wall_ms:
            return self.old_expired(st, actor, now, out)
        return self.restore(st, actor, now, out)

    def old_failed(self, st, actor, reason, out):
        acq = st.acquiring[actor]
        st = replace(st, acquiring=st.acquiring.without(actor))
        return self.fail_requests(st, actor, acq.waiting, reason, out)

    # --- renewals: a third of the ttl (its own setting) after the previous one returned ----

    def schedule_renewal(self, st, actor, now, out):
        hold = st.holds[actor]
        out.append(SetTimer("renew:" + actor, now.mono_ms + st.timing.renew_ms(st.params)))
        out.append(SetTimer("expire:" + actor, now.mono_at(hold.until_ms)))
        return st

    def on_timer_renew(self, st, key, now, out):
        actor = key.split(":", 1)[1]
        hold = st.holds.get(actor)
        if hold is None:
            return st
        body = encode_old_lease(OldLease(st.node_id, hold.generation, now.wall_ms + st.params.ttl_ms))
        return self.send(st, ("renewal", actor, hold.generation, now.wall_ms),
                         Request(PUT, lease_key(actor), IF_MATCH, hold.version, body), out)

    def on_reply_renewal(self, st, purpose, reply, now, out):
        _, actor, generation, sent = purpose
        hold = st.holds.get(actor)
        if hold is None or hold.generation != generation:
            return st
        if reply.status == io.OK:
            until = sent + st.params.lease_span_ms
            st = replace(st, holds=st.holds.with_item(actor, OldHold(generation, reply.version, until)))
            if until > now.wall_ms:
                out.append(Observe("hold_valid", (actor, generation, until)))
            return self.schedule_renewal(st, actor, now, out)
        if reply.status in (io.PRECONDITION_FAILED, io.NOT_FOUND):
            st = replace(st, holds=st.holds.without(actor))
            out.append(Observe("hold_ended", (actor, generation, "old lease lost")))
            return st
        out.append(SetTimer("renew:" + actor, now.mono_ms + 250))  # a failed try: again soon
        return st

    def on_timer_expire(self, st, key, now, out):
        actor = key.split(":", 1)[1]
        hold = st.holds.get(actor)
        if hold is None:
            return st
        if now.wall_ms < hold.until_ms:  # (its wall clock stepped back since the timer was set: later)
            out.append(SetTimer(key, now.mono_at(hold.until_ms)))
            return st
        return self.old_expired(st, actor, now, out)

    def old_expired(self, st, actor, now, out):
        hold = st.holds[actor]
        out.append(Observe("hold_ended", (actor, hold.generation, "old lease expired")))
        return replace(st, holds=st.holds.without(actor))

    # --- releases: hibernation writes the lease expired, generation kept -----------------

    def release(self, st, actor, reason, now, out):
        hold = st.holds[actor]
        st = replace(st, holds=st.holds.without(actor))
        out.append(Observe("hold_ended", (actor, hold.generation, reason)))
        body = encode_old_lease(OldLease(st.node_id, hold.generation, 0))
        return self.send(st, ("old_release",), Request(PUT, lease_key(actor), IF_MATCH, hold.version, body), out)

    def on_reply_old_release(self, st, purpose, reply, now, out):
        return st  # a release that failed expires on its own

    def on_command_hibernate(self, st, args, now, out):
        (actor,) = args
        return self.release(st, actor, "hibernate", now, out) if actor in st.holds else st

    def on_command_move(self, st, args, now, out):
        actor = args[0]
        return self.release(st, actor, "move", now, out) if actor in st.holds else st

    def on_command_stop(self, st, args, now, out):
        for actor in tuple(st.holds):
            st = self.release(st, actor, "clean stop", now, out)
        return self.exit(st, 0, "old binary: clean stop", out)


OLD_MODEL = OldModel()


# --- the old garbage collection (ADR 0012, before this record) ------------------------------


def gc_collectable(leases: dict[str, str], data_keys) -> list[str]:
    """The `leases/` keys the old garbage collection may delete, in key order: released old
    leases (expires_at 0) of idle actors whose segments still carry the lease's generation, so
    that deleting the lease forgets no generation (an old binary seeds an absent lease from the
    actor's keys, and UP-3 seeds owners/ from them too). `leases` maps each `leases/` key to
    its body; `data_keys` are the `wal/` keys. A world decides how often the GC runs and
    carries out the deletes."""
    top: dict[str, int] = {}
    for key in data_keys:
        actor = key[len(DATA_PREFIX):].rsplit("/", 1)[0]
        top[actor] = max(top.get(actor, 0), segment_generation(key))
    out = []
    for key in sorted(leases):
        rec = decode_lease(leases[key])
        if isinstance(rec, OldLease) and rec.expires_at_ms == 0 and top.get(key[len(LEASES_PREFIX):], 0) >= rec.generation:
            out.append(key)
    return out
