"""F-1: the twin whose first write failed, and whose re-read shows the other process's object, exits
at once, before its held-back write can land on the deleted key (amends NL-7, as f3_failed_first_write_exits).

F-1: a twin starts beside n0's process; both start checks find no object, n0's first write creates
it, the twin's (If-None-Match) is held back past its timeout; NL-9's re-read shows n0's live object,
and the twin goes back to its start check keeping its instance (NL-7). An operator deletes nodes/n0
by mistake, the twin's held-back write lands on the empty key, and the bucket grants the twin's
instance the node lease beside n0's (LEASE-1), which the twin then keeps (its check reads its own
object and writes over it). The decision is the one F-3's variant proposes: a first write that
failed in a way that may have reached the bucket, and whose re-read does not show it as this
process's own live write, ends the instance (the process exits, NL-10's exit; its restart takes a
new instance). The twin is gone before its write lands, so that write grants no process a lease.

What it does not remove: the held-back write still lands, naming an instance that no longer runs,
and FN-5 frees n0's records at once on it ("live naming another instance") while n0 is still valid,
until n0's next renewal meets it (INV-1, INV-8; tests/amendments/test_f1_f3.py shows it, under the
correct model too, where no finding explains it either).
"""

from amendments import f3_failed_first_write_exits as f3

ADDRESSES = "F-1"
KIND = "amendment"
RULES = ("NL-7",)
ADR = f3.ADR  # the same decision as F-3's variant: its ADR text and proposed text
PROPOSED = f3.PROPOSED
PLANS = ()  # F-1 has no kept plan: its scripted reproductions are in tests/amendments/test_f1_f3.py


class TwinExitsOnItsFailedFirstWrite(f3.FailedFirstWriteExits):
    name = "f1_failed_first_write_exits"


MODEL = TwinExitsOnItsFailedFirstWrite()
