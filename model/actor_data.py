"""Acting as owner: actor data written while holding, and the restore after acquiring.

Shared by both versions of section 6 (the node lease's holds and the old per-actor
leases): a served request writes one segment keyed by the hold's generation (ADR 0007),
acknowledged only if the hold is still valid after the bucket acknowledged it (the
acknowledgement rule of `Replica::put`, OR-4); a new owner lists the actor's segments
after acquiring (OR-3: "the new owner then restores"). A served request's event runs until
the world ends it; the node lease's version tracks it (model.ownership). The version's own `is_valid`,
`release` and `fail_requests` decide the rest.
Must not know: which lease makes a hold valid.
"""

from __future__ import annotations

from typing import Callable

from . import io
from .frozen import replace
from .io import LIST, PUT, Observe, Request

DATA_PREFIX = "wal/"  # actor data: wal/<actor>/<generation>-<instance>-<seq> (ADR 0007: keys carry the generation)
SEGMENT = "segment " + "x" * 4089  # a segment's bytes (4 KiB): uploads take their time
UPLOAD_TIMEOUT_MS = 10_000  # a segment upload is bounded, longer than a record's attempt


class ActorData:
    is_valid: Callable[..., bool]  # the version's own (OR-4): model.ownership, or the old binary's

    def serve(self, st, actor, req, now, out):
        """Act as owner (OR-4): every request writes a segment keyed by the hold's generation."""
        gen = st.holds[actor].generation
        out.append(Observe("served", (actor, gen, req)))
        st = self.event_begins(st, actor, gen, req)
        key = f"{DATA_PREFIX}{actor}/{gen:06d}-{st.instance}-{st.data_seq:05d}"
        return self.send(st, ("data_write", actor, gen, key), Request(PUT, key, None, None, SEGMENT), out,
                         UPLOAD_TIMEOUT_MS, data_seq=st.data_seq + 1)

    def event_begins(self, st, actor, gen, req):
        """The request's event runs until the world ends it (`event_end`). Old binaries' events
        end with their hold: nothing to track (section 6 is not about events)."""
        return st

    def on_command_event_end(self, st, args, now, out):
        return st

    def on_reply_data_write(self, st, purpose, reply, now, out):
        """The acknowledgement rule of Replica::put: acknowledged only if is_valid still holds
        after the bucket acknowledged the write (OR-4)."""
        _, actor, gen, key = purpose
        if reply.status == io.OK and self.data_write_valid(st, actor, gen, now):
            out.append(Observe("data_acked", (actor, gen, key[len(DATA_PREFIX) + len(actor) + 1:])))
        elif reply.status != io.OK and actor in st.holds and st.holds[actor].generation == gen:
            st = self.upload_failed(st, actor, now, out)
        return st

    def upload_failed(self, st, actor, now, out):
        """Decision (OR-5): a failed or interrupted upload abandons the hold (released, maybe pending)."""
        return self.release(st, actor, "upload failed", now, out)

    def data_write_valid(self, st, actor, gen, now) -> bool:
        hold = st.holds.get(actor)
        return hold is not None and hold.generation == gen and self.is_valid(st, actor, now)

    def restore(self, st, actor, now, out):
        """OR-3: the new owner restores: it lists the actor's segments after acquiring."""
        acq = st.acquiring[actor]
        st = replace(st, acquiring=st.acquiring.with_item(actor, replace(acq, stage="restore")))
        return self.send(st, ("restore", actor), Request(LIST, f"{DATA_PREFIX}{actor}/"), out)

    def on_reply_restore(self, st, purpose, reply, now, out):
        actor = purpose[1]
        acq = st.acquiring[actor]
        st = replace(st, acquiring=st.acquiring.without(actor))
        hold = st.holds.get(actor)
        if hold is None:  # the hold ended meanwhile (a lapse, a stop)
            return self.fail_requests(st, actor, acq.waiting, "hold ended while restoring", out)
        if reply.status != io.OK:
            # an interrupted restore abandons the hold (OR-5)
            st = self.release(st, actor, "restore failed", now, out)
            return self.fail_requests(st, actor, acq.waiting, "restore failed", out)
        cut = len(DATA_PREFIX) + len(actor) + 1
        out.append(Observe("restored", (actor, hold.generation, [k[cut:] for k, _v in reply.entries])))
        for req, _hops in acq.waiting:
            if not self.is_valid(st, actor, now):
                return self.fail_requests(st, actor, ((req, _hops),), "not ready: node lease not valid", out)
            st = self.serve(st, actor, req, now, out)
        return st

    def fail_requests(self, st, actor, waiting, reason, out):
        for req, _hops in waiting:
            out.append(Observe("request_failed", (actor, req, reason)))
        return st
