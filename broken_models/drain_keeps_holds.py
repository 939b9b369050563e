"""Breaks CS-3: a drain releases nothing; it waits for the holds to end by themselves (a hibernation,
a move), so a node holding a busy actor never reports drained.
Caught by: INV-11 (judged on world facts: told to drain with no fault around it, the process reports
drained within ttl + grace; the world asks the node for every actor just before a drain and keeps
random network faults off it until the drain's bound, so that judged drains have holds to release).
"""

from model.node import Model

RULE = "CS-3"
CATCHES = "INV-11"


class DrainKeepsHolds(Model):
    name = "drain_keeps_holds"

    def drain_holds(self, st, now, out):
        return st


MODEL = DrainKeepsHolds()
step = MODEL.step
