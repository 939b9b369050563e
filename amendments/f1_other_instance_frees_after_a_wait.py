"""F-1's residue: a record naming (A, i) is freed by a live object naming another instance only once
the reader has seen that instance live on nodes/A for ttl + grace (amends FN-5; re-based on
f3_failed_first_write_exits, whose NL-7 exit it keeps).

The NL-7 exit (f1_failed_first_write_exits) takes F-1's twin out before its held-back write lands,
but the write lands anyway: nodes/A then names an instance that no process runs, and FN-5 frees
every record naming A's running instance i at once ("live naming another instance"), while i is
valid until its next renewal meets that object (INV-1, INV-8). FN-5's reason for "at once" ("a new
instance writes only after its start check waited ttl plus grace, so once i's object was replaced i
can no longer write") fails when the write that replaced i's object was sent before i's object
existed and held back past a mistaken delete. What a reader can bound: every write of i the bucket
acknowledged landed before the object naming j did, so before the reader first saw it; i's validity
ends ttl - safety after that at the latest. This variant frees at that instant plus the two clocks'
gap (ttl + grace after the first sight, as for a fence), and A's own new instance j waits the same
from its own first write (its send plus two attempt timeouts: when it landed at the latest).
"""

from typing import NamedTuple

from model import io
from model.frozen import replace
from model.records import LIVE, NodeRecord, decode_node

from amendments.f3_failed_first_write_exits import FailedFirstWriteExits

ADDRESSES = "F-1"
KIND = "amendment"
RULES = ("FN-5", "NL-7")
ADR = ("Section 2: 'A record naming node A and instance i is free only on the evidence of a read of nodes/A ... that "
       "finds a wasmkeep-node 3 object in any state other than live naming i: live naming another instance (free at "
       "once), or fenced or released naming any instance, free once that object's kept written_at + ttl + grace has "
       "passed on the reader's clock.'")
PROPOSED = ("'... live naming another instance, free once ttl + grace has passed on the reader's clock since it first "
            "read nodes/A naming that instance live (for A's own new instance: since its first write was sent, plus "
            "two attempt timeouts) ...' (with section 1's amended NL-7 of f3_failed_first_write_exits)")
PLANS = ()


class SeenSince(NamedTuple):
    """fencing.Seen, with when nodes/<id> was first seen live naming this instance (this node's clock)."""

    fmt: int
    state: str
    instance: str | None
    written_at_ms: int
    since_ms: int
    instance_since_ms: int

    @property
    def live(self) -> bool:
        return self.fmt == 3 and self.state == LIVE


class OtherInstanceFreesAfterAWait(FailedFirstWriteExits):
    name = "f1_other_instance_frees_after_a_wait"

    def saw(self, st, node, rec, now):
        """The view (FN-2's watch), keeping when this live instance was first seen (the amended FN-5)."""
        old = st.view.get(node)
        st = super().saw(st, node, rec, now)
        new = st.view.get(node)
        if new is old:
            return st
        since = now.mono_ms
        if isinstance(old, SeenSince) and old.live and new.live and old.instance == new.instance:
            since = old.instance_since_ms
        return replace(st, view=st.view.with_item(node, SeenSince(*new[:5], instance_since_ms=since)))

    def on_reply_acquire_node_read(self, st, purpose, reply, now, out):
        # the acquisition's fresh read of nodes/A is a sighting too (FN-5 decides on it)
        acq = st.acquiring.get(purpose[1])
        if reply.status == io.OK and acq is not None and acq.record is not None and acq.record.node_id != st.node_id:
            st = self.saw(st, acq.record.node_id, decode_node(reply.body), now)
        return super().on_reply_acquire_node_read(st, purpose, reply, now, out)

    def frees(self, st, rec, node_rec, now):
        if isinstance(node_rec, NodeRecord) and node_rec.state == LIVE and node_rec.instance != rec.instance:
            p = st.params
            if rec.node_id == st.node_id:
                # this node's predecessor: its writes all landed before this instance's first write did
                since = st.lease.check_deadline_ms + 2 * p.attempt_timeout_ms
            else:
                seen = st.view.get(rec.node_id)
                ok = isinstance(seen, SeenSince) and seen.live and seen.instance == node_rec.instance
                since = seen.instance_since_ms if ok else now.mono_ms
            if now.mono_ms - since >= p.takeover_ms:
                return True  # the amended FN-5
            return (f"held by {rec.node_id}/{rec.instance}: nodes/{rec.node_id} live naming {node_rec.instance}, "
                    f"seen for less than ttl + grace")
        return super().frees(st, rec, node_rec, now)


MODEL = OtherInstanceFreesAfterAWait()
