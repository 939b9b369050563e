"""F-2: past ttl - safety the resolver sends the lost write again, then releases it (amends OR-8).

An acquire whose record write was lost (or refused 409) leaves an unresolved entry that OR-8's
resolver reads until the record changes: if nobody else writes it, for ever, and a drain waits on
it for ever (INV-11, CONV-1). f2_resolver_bound ends such an entry after ttl - safety, and is
unsafe (INV-5, amendments/plans/f2-resolver-bound-s802-inv5.json): the write it gave up on was
only held back, and landed after the drain had reported drained.

This variant keeps that bound (it subclasses f2_resolver_bound for the entry's start) but does not
give up at it. Once the record has been read unchanged
for ttl - safety since the entry began, the resolver sends the very write the acquisition sent
(the same body, this instance at the generation tried, under the same condition: If-Match the
version the acquisition read, or If-None-Match when it found no record), under the lock (OR-9),
only while the node lease is valid (OR-2), and never while a hold of the actor exists here. The
bucket judges a condition when it applies a write, a held-back write too (scenarios/bucket.py,
scenarios/core.py: `late` applies it `ms` past its timeout), so a write conditioned on a version
applies only while the record still holds it. So either this write lands, and the record names this instance
at the generation tried: OR-8's own decision follows (release it, If-Match that version), and
the lost write, still conditioned on the old version, can never land; or the lost write landed
first, this one fails, and the next read finds the record naming this instance (OR-8 releases
it); or the record changed (OR-8: the entry ends). The entry ends only on one of those, so a
drain never counts it settled while its write can still land. The body is the acquisition's, not
a `nobody` one: a release is only ever written over the releaser's own hold (INV-6), and the
release that follows is one. With content-hash tokens (`md5`) the body being the lost write's is
harmless: the lost write's condition names the version before it, not its own body's token, and
no later write brings the record back to that version's bytes (its generation is below every
later one).

A create (the acquisition found no record: UP-3's first acquisition) is seeded again before it is
sent again: the resolver reads leases/ (it must find the marker the acquisition rested on, or it
reads the record again later) and lists the actor's keys, and writes at the generation tried or
above the marker and every key if that is higher, as UP-3 seeds one. Tried first without this, the
variant was unsafe at seed 696 of 2,000 (UP-3 (a), plan amendments/plans/f2-resolver-resends-s696-up3.json):
an acquisition attempt for the actor ran in between and failed at its listing, so the resent create
rested on a listing of an earlier attempt (the generation was right, but nothing in that attempt
showed it: the checker judges a create by its process's last attempt).

Unsafe at 2,000 seeds once the world raced more restarts and mistaken deletes (issue 39; seed 1002,
INV-1, plan amendments/plans/f2-resolver-resends-s1002-inv1.json, shrunk): n1 fenced n0 at 12 s; at
15 s its acquisition read the record naming n0's fenced instance, read nodes/n0 (fenced, past
written_at + ttl + grace: free, FN-5) and wrote, answered 409 and not applied (unresolved; since
issue 47 the plan answers it 500/503 at once: nothing raced it, and a store answers 409 only then). A
mistaken delete took nodes/n0 away at 15.7 s; at ttl - safety (17.1 s) the resend went out under
the acquisition's old If-Match and landed. The resend rests on a freeing decision two seconds old,
while nodes/n0 then held only absence, which frees nothing (FN-5, FN-7): an instance whose fence is
gone may write live again (F-3), so a resend needs a fresh read of nodes/<A> as the acquisition's
own write did. It now has one: at the bound, a record naming another node A is freed afresh (FN-5:
nodes/<A> read after the bound's read of the record, `on_reply_resolve_node_read`), and the write
goes again only if that read frees it; otherwise the entry reads again later. At 2,000 seeds: no
violation, F-2 in 1 seed where the correct model has it in 9 ("does not remove F-2": the residue
described in docs/findings.md, a drain waiting past INV-11's bound on the resend's release).
"""

from amendments import f2_resolver_bound
from amendments.f2_resolver_bound import ResolverBound
from model import io
from model.frozen import replace
from model.actor_data import DATA_PREFIX
from model.io import GET, IF_MATCH, IF_NONE_MATCH, LIST, PUT, Mark, Observe, Request
from model.records import (Marker, OwnerRecord, decode_lease, decode_node, decode_owner, encode_owner, lease_key,
                           node_key, owner_key, segment_generation)

ADDRESSES = "F-2"
KIND = "amendment"
RULES = ("OR-8",)
ADR = f2_resolver_bound.ADR  # the same sentence of OR-8
PROPOSED = ("'... The background task reads the record until it can decide. Once it has read the record unchanged "
            "ttl minus safety after the entry began, it sends the acquisition's write again, the same write (this "
            "instance at the generation tried, If-Match the version the acquisition read, or If-None-Match), under "
            "the actor's lock and only while the node lease is valid, a record naming another node freed afresh "
            "first (nodes/<A> read after this read of the record, FN-5): if it lands, the record names this instance at "
            "that generation and it is released as above, and the write that was lost can no longer land, its "
            "condition naming a version the record has left; if it does not, the task reads again. A create is "
            "seeded again first (section 6: leases/ read, showing the marker, and the keys listed). The entry "
            "ends only as above, never on time alone'")
PLANS = f2_resolver_bound.PLANS  # F-2's three kept plans
_UNDECIDED = io.Reply(io.TIMED_OUT)  # what a refused or unanswered write tells the resolver: nothing


class ResolverResends(ResolverBound):
    """f2_resolver_bound's stamp (when the entry began) and bound, with what happens at the bound
    changed: the write again, not the entry's end."""

    name = "f2_resolver_resends"

    def on_reply_resolve_read(self, st, purpose, reply, now, out):
        k = purpose[1]
        e = st.unresolved.get(k)
        model_or8 = super(ResolverBound, self).on_reply_resolve_read  # OR-8 as model/ has it: no give-up
        if e is None or not self.unchanged(e, reply):
            return model_or8(st, purpose, reply, now, out)
        p = st.params
        if (now.mono_ms - getattr(e, "since_ms", now.mono_ms) < p.ttl_ms - p.safety_ms or e.actor in st.holds
                or not self.may_acquire(st, now)):
            # within the bound, a hold of the actor here, or the node lease not valid (OR-2): read again
            return model_or8(st, purpose, reply, now, out)
        return self.at_bound(st, k, e, now, out, reply)

    def at_bound(self, st, k, e, now, out, reply=None):
        """The amended OR-8: the read showed the record unchanged ttl - safety after the entry began:
        the same write again, still under the resolver's lock (OR-9); the entry stays until a read
        or this write's reply decides. A create (no record) is seeded first as UP-3 seeds one; a record
        naming another node is freed afresh first (FN-5: nodes/<A> read after this read of the record)."""
        if e.read_version is None:
            return self.reseed(st, k, e, out)
        rec = decode_owner(reply.body) if reply is not None and reply.status == io.OK else None
        if isinstance(rec, OwnerRecord) and not rec.nobody and rec.node_id != st.node_id:
            rid = st.next_rid
            st = self.send(st, ("resolve_node_read", k, rec), Request(GET, node_key(rec.node_id)), out)
            return replace(st, unresolved=st.unresolved.with_item(k, replace(e, rid=rid)))
        return self.resend(st, k, e, e.generation, now, out)

    def on_reply_resolve_node_read(self, st, purpose, reply, now, out):
        """FN-5 for the resend: the acquisition's freeing decision is as old as the entry; the resend
        frees the record only on this read of nodes/<A>, issued after the bound's read of the record."""
        _, k, rec = purpose
        e = st.unresolved.get(k)
        if e is None:
            return st
        if reply.status not in (io.OK, io.NOT_FOUND):
            return self.undecided(st, k, now, out)
        node_rec = decode_node(reply.body) if reply.status == io.OK else None
        if self.frees(st, rec, node_rec, now) is not True:
            return self.undecided(st, k, now, out)  # not free now: read again later
        out.append(Mark("FN-5"))
        return self.resend(st, k, e, e.generation, now, out)

    def resend(self, st, k, e, generation, now, out):
        if not self.may_acquire(st, now):
            # OR-2: only while the node lease is valid, checked right before the record write
            return self.undecided(st, k, now, out)
        out.append(Mark("OR-8"))
        body = encode_owner(OwnerRecord(st.node_id, st.instance, generation))
        if e.read_version is None:
            req = Request(PUT, owner_key(e.actor), IF_NONE_MATCH, None, body)
        else:
            req = Request(PUT, owner_key(e.actor), IF_MATCH, e.read_version, body)
        rid = st.next_rid
        st = self.send(st, ("resolve_resend", k, generation), req, out)
        return replace(st, unresolved=st.unresolved.with_item(k, replace(e, rid=rid)))

    # --- a create sent again follows UP-3's steps again: the marker read, the keys listed ---------------

    def reseed(self, st, k, e, out):
        """UP-3: the create's generation rests on the marker and the keys read in this attempt, not on
        the lost write's (an acquisition attempt may have run in between)."""
        out.append(Mark("UP-3"))
        rid = st.next_rid
        st = self.send(st, ("resolve_seed_read", k), Request(GET, lease_key(e.actor)), out)
        return replace(st, unresolved=st.unresolved.with_item(k, replace(e, rid=rid)))

    def on_reply_resolve_seed_read(self, st, purpose, reply, now, out):
        k = purpose[1]
        e = st.unresolved.get(k)
        if e is None:
            return st
        rec = decode_lease(reply.body) if reply.status == io.OK else None
        if not isinstance(rec, Marker):
            # the acquisition's marker is what a create rests on (UP-3): without it, read again later
            return self.undecided(st, k, now, out)
        return self.send(st, ("resolve_seed_list", k, rec.generation), Request(LIST, f"{DATA_PREFIX}{e.actor}/"), out)

    def on_reply_resolve_seed_list(self, st, purpose, reply, now, out):
        _, k, marker_gen = purpose
        e = st.unresolved.get(k)
        if e is None:
            return st
        if reply.status != io.OK:
            return self.undecided(st, k, now, out)
        keys_gen = max((segment_generation(key) for key, _v in reply.entries), default=0)
        # never below the generation tried (the entry's), above the marker and every key (UP-3)
        gen = max(e.generation, self.seed_generation(st, marker_gen, keys_gen) + 1)
        return self.resend(st, k, e, gen, now, out)

    def undecided(self, st, k, now, out):
        """Refused, unknown or not yet possible: the entry stays, and the next read decides (OR-8): the
        same path as a read that failed (back off, give the lock back, read again later)."""
        return super(ResolverBound, self).on_reply_resolve_read(st, ("resolve_read", k), _UNDECIDED, now, out)

    @staticmethod
    def unchanged(e, reply) -> bool:
        """The read shows the record as the acquisition read it (OR-8's 'unchanged')."""
        if reply.status == io.NOT_FOUND:
            return e.read_version is None
        return reply.status == io.OK and e.read_version is not None and reply.version == e.read_version

    def on_reply_resolve_resend(self, st, purpose, reply, now, out):
        _, k, generation = purpose
        e = st.unresolved.get(k)
        if e is None:
            return st
        if reply.status != io.OK:
            return self.undecided(st, k, now, out)
        # it landed: the record names this instance at that generation, and no hold exists here (the
        # lock kept every acquisition out): OR-8's release, If-Match this write's version
        actor = e.actor
        out.append(Observe("resolver_release", (actor, generation)))
        st = replace(st, unresolved=st.unresolved.without(k))
        body = encode_owner(OwnerRecord(None, None, generation))
        return self.send(st, ("resolve_release", actor, generation, reply.version),
                         Request(PUT, owner_key(actor), IF_MATCH, reply.version, body), out)


MODEL = ResolverResends()


# Measured (one worker): `runner.py amendments f2_resolver_resends --seeds 2000`: removes F-2 (the three
# F-2 plans pass strict; no violation; findings F-4 1 seed against the correct model's F-2 14, F-4 1;
# diff not worse), 13 min with the base campaign. `runner.py run --model f2_resolver_resends --seeds 5000
# --strict`: 655 s, 5 violating seeds, all absorbed by F-3 (2, INV-10) and F-4 (3, INV-9), none F-2;
# drain margin min 879 ms (seed 802), coverage 52 of 52.
