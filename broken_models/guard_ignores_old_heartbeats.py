"""Breaks UP-2: the start guard lets the node start whatever old-format heartbeats it finds.

New nodes then run beside old ones: an old binary still running keeps writing its
heartbeat unconditionally over a new node's lease under the same id.
Caught by: whichever invariant the overlap breaks first (LEASE-1, INV-1, INV-4); the leases/
markers of UP-3 stand behind the guard, and may cover for it (see the closing notes).
Survives here (rarely caught: LEASE-1 once in 200 upgrade seeds): the leases/ markers of
UP-3 refuse every live old lease and old binaries refuse every marker, so an old binary
running beside new ones cannot take an actor from them, nor they from it.
"""

from model.node import Model

RULE = "UP-2"
CATCHES = "INV-1"


class GuardIgnoresOldHeartbeats(Model):
    name = "guard_ignores_old_heartbeats"

    def old_heartbeat_blocks(self, st, seen, now_ms) -> int:
        return 0


MODEL = GuardIgnoresOldHeartbeats()
step = MODEL.step
