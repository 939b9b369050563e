"""Breaks UP-2's arithmetic: the start guard waits out an old-format heartbeat for ttl + grace after
it was written (the takeover span, T-5), without the horizon of three heartbeat periods.

An old node's last heartbeat says it was alive then; it stays ready (and keeps renewing its
per-actor leases) for up to three heartbeat periods after it, and a lease it renewed then lives ttl
+ grace more. This guard passes a horizon too early: 9 s at the defaults.
Caught by: UP-2 (checkers/start_guard.py), which computes the guard's test on its own from the rule's
text (horizon + ttl + grace, the horizon three of the configured heartbeat periods) and the world's
facts (each heartbeat's written_at, the new node's clock and its first read of the body), never from
the model's formula: the guard passed while the heartbeat its last round read was still fresh.
"""

from model.node import Model

RULE = "UP-2"
CATCHES = "UP-2"


class GuardWithoutHorizon(Model):
    name = "guard_without_horizon"

    def guard_span_ms(self, params) -> int:
        return params.takeover_ms  # ttl + grace: the horizon forgotten


MODEL = GuardWithoutHorizon()
step = MODEL.step
