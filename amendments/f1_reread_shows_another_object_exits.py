"""F-1: a first write whose NL-9 re-read shows another object than its own live write (another instance,
a fence, a release) ends the instance; a re-read finding no object goes back to the check as before
(amends NL-7; the narrower form of f3_failed_first_write_exits).

F-1's twin: its first write (If-None-Match) is held back past its timeout, and its re-read shows n0's
live object; under this variant the twin exits then, before its write lands on the key a mistaken
delete emptied, so that write grants no running process the node lease (LEASE-1). Unlike
f3_failed_first_write_exits, a re-read that finds no object sends the node back to its start check,
keeping its instance, as the ADR says: after a global blip in which a start check ended, the first
write sent into the blip never landed and its re-read finds nothing, and exiting then restarts the
node (INV-9, seed 398 of f3_failed_first_write_exits' campaign). The price: F-3's main form (the late
first write's re-read finds no object, the write lands later, is fenced, and the fence is deleted
before the check reads it) is left as it is; its kept plan (a 412 whose re-read shows the twin's
object) is removed. The held-back write still frees n0's records at once (FN-5), as under
f1_failed_first_write_exits.

Measured (seeds 0..1999 of swarm, nodelease/amendments.py's measure and verdict, against the correct
model's campaign of the same seeds): no violation, no finding but F-2 (11 seeds; the correct model 14)
and F-4 (1; 1), diff not worse: "removes F-1", and as F-3's amendment with its plan, "removes F-3" by the
same rule. Neither F-1 nor F-3 appeared in the correct model's 2,000 seeds, so the campaign shows only
that nothing got worse; the scripts and the plan (tests/amendments/test_f1_f3.py) are the evidence, and
they show F-3's main form kept.
"""

from model import io
from model.records import decode_node

from amendments.f3_failed_first_write_exits import FailedFirstWriteExits

ADDRESSES = "F-1"
KIND = "amendment"
RULES = ("NL-7",)
ADR = ("Section 1: 'The first write after the start check is If-None-Match: * if the check found no object, and "
       "otherwise If-Match on the version the check read last. If that write fails, the node goes back to the start "
       "check; it does not take a new instance.'")
PROPOSED = ("'... If that write fails and the re-read below shows an object that is not this process's own live "
            "write (another instance's, a fence, a release), the instance never writes again: wasmkeep serve exits at "
            "once with a non-zero status (it held nothing), and the supervisor's restart goes through the start check "
            "under a new instance. Otherwise (no object, or the re-read failed) the node goes back to the start check; "
            "it does not take a new instance.'")
PLANS = ()


class RereadShowsAnotherObjectExits(FailedFirstWriteExits):
    name = "f1_reread_shows_another_object_exits"

    def ends_instance(self, st, reply) -> bool:
        """Decision (NL-7, amended narrowly): the re-read shows an object, and it is not this process's own
        live write (another instance's, a fence, a release). No object: back to the check, as the ADR says."""
        return reply.status == io.OK and not self.is_own_live_write(st, decode_node(reply.body))


MODEL = RereadShowsAnotherObjectExits()
