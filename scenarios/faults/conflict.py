"""Bucket conflicts: a conditional write answered 409 ConditionalRequestConflict, not applied, while another
conditional write to the same key is in flight (AWS does this; R2 never does).

AWS's documentation of conditional writes: a 409 ConditionalRequestConflict answers a conditional write
when "a conflicting operation" on the same object is under way (a concurrent conditional write, or a
delete that succeeds before the conditional write completes); Cloudflare R2's documentation of
conditional requests names 412 PreconditionFailed and no 409. So the simulated bucket draws a 409 only
for a conditional write that reaches it while another process's (or the same process's) conditional
write to that key is in flight, sent and not yet answered (World.racing_write: from its send until its
answer reaches its sender, or is lost), and only in a seed whose store is "aws" (swarm.STORES); the
`conflicted` event names the write it raced (`racing_proc`, `racing_sent_ms`), so a checker's chain
through a 409 names it (checkers/findings.py, F-2).
"""

from __future__ import annotations

from . import FaultKind


class Conflict(FaultKind):
    id = "conflict"
    title = ("the bucket answers a conditional write 409 ConditionalRequestConflict (not applied) while another "
             "conditional write to its key is in flight (an AWS store; never R2)")
    rules = ("OR-7", "CS-2", "NL-9")
    options = {"p_conflict": 0.0}
    # a real bucket answers racing conditional writes 409 whatever the phase: the quiet phase keeps it
    keeps_in_quiet = True

    def draw_rate(self, ctx) -> None:
        rate = ctx.choice((0.0, 0.0, 0.3))  # the simulated bucket draws each race (bucket.py)
        ctx.o["p_conflict"] = 0.0 if ctx.o.get("store") == "r2" else rate  # (drawn all the same: no draw moves)


KIND = Conflict()
