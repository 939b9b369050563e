"""F-2: the resolver gives an unchanged record up after ttl - safety (amends OR-8).

An acquire whose record write was lost (or refused 409) leaves an unresolved entry that OR-8's
resolver reads until the record changes: if nobody else writes it, for ever, and a drain waits
on it for ever (INV-11, CONV-1). This variant ends the entry once the record has been read
unchanged for ttl - safety (a lease's validity) since the entry began: the write the entry waits on was sent that long
ago and never landed.
"""

from typing import NamedTuple

from model.frozen import replace
from model.node import Model
from model.ownership import Unresolved

ADDRESSES = "F-2"
KIND = "amendment"
RULES = ("OR-8",)
ADR = ("Section 3: 'Otherwise (the record unchanged above all: the write may still be in flight, and land), "
       "or when a read fails, it is kept in the same set as an unresolved acquire (actor, this instance, the "
       "generation tried). The background task reads the record until it can decide'")
PROPOSED = ("'... The background task reads the record until it can decide, or until it has read it unchanged "
            "ttl minus safety after the entry began (the write it waits on is then taken as never landing, and the "
            "entry ends)'")
PLANS = ("tests/plans/f2-acquire-write-conflicted.json", "tests/plans/f2-acquire-write-failed-fast.json",
         "tests/plans/f2-drain-ends-only-when-another-node-takes-the-actor.json")


class BoundedUnresolved(NamedTuple):
    """An Unresolved entry that knows when it began (OR-8's bound)."""

    actor: str
    generation: int
    read_version: str | None
    next_ms: int
    backoff_ms: int
    rid: int | None = None
    since_ms: int = 0


class ResolverBound(Model):
    name = "f2_resolver_bound"

    def on_reply_acquire_readback(self, st, purpose, reply, now, out):
        st = super().on_reply_acquire_readback(st, purpose, reply, now, out)
        stamped = st.unresolved
        for k, e in tuple(st.unresolved.items()):
            if type(e) is Unresolved:
                stamped = stamped.with_item(k, BoundedUnresolved(*e, since_ms=now.mono_ms))
        return st if stamped is st.unresolved else replace(st, unresolved=stamped)

    def on_reply_resolve_read(self, st, purpose, reply, now, out):
        st2 = super().on_reply_resolve_read(st, purpose, reply, now, out)
        k = purpose[1]
        e = st2.unresolved.get(k)
        if e is not None and e.rid is None and now.mono_ms - getattr(e, "since_ms", now.mono_ms) >= st.params.ttl_ms - st.params.safety_ms:
            # read unchanged (or unread) for ttl - safety: the entry ends (the amended OR-8)
            from model.io import Observe

            out.append(Observe("unresolved_ended", (e.actor, e.generation)))
            return replace(st2, unresolved=st2.unresolved.without(k))
        return st2


MODEL = ResolverBound()

# Tried first: a bound of ttl + grace, then ttl. The drain plan (f2-drain-ends-only-when-another-node-takes-
# the-actor) still failed INV-11: the entry ends at the first read after its bound, up to two
# attempt timeouts later, past the drain's own bound (ttl + grace + one attempt timeout).
