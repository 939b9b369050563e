"""Breaks UP-2: the start guard lets the node start whatever old-format heartbeats it finds.

New nodes then run beside old ones: an old binary still running keeps writing its
heartbeat unconditionally over a new node's lease under the same id.
Caught by: UP-2 (checkers/start_guard.py), which judges the guard on world facts: it passed
while the freshest old-format heartbeat its last round could read was still fresh. In 200
seeds of the default mix, 20 (the first, seed 6) since issue 38's streams; 19 (the first, seed 3) at
946554a, 23 when this was written. Before
that world check, the leases/
markers of UP-3 covered for it: an old binary running beside new ones cannot take an actor
from them, nor they from it, so no other invariant breaks.
"""

from model.node import Model

RULE = "UP-2"
CATCHES = "UP-2"


class GuardIgnoresOldHeartbeats(Model):
    name = "guard_ignores_old_heartbeats"

    def old_heartbeat_blocks(self, st, seen, now) -> int:
        return 0


MODEL = GuardIgnoresOldHeartbeats()
step = MODEL.step
