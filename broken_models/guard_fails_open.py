"""Breaks UP-2: a start-guard read of an old-format heartbeat that fails (no answer, refused) is
taken as "not old": the guard passes on a round it never completed, and a new node may start
while an old binary's heartbeat is still fresh.
Caught by: UP-2 (the world check: a new node's first lease write before an old heartbeat it could
have read was stale by the guard's test).
"""

from model.node import Model

RULE = "UP-2"
CATCHES = "UP-2"


class GuardFailsOpen(Model):
    name = "guard_fails_open"

    def guard_read_failed(self, reply) -> bool:
        return False  # a failed read counts as no old heartbeat


MODEL = GuardFailsOpen()
step = MODEL.step
