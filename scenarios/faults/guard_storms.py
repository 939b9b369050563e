"""Guard storms (UP-2's margin): as the new nodes of an upgrade start, or while an old straggler still
beats, most of their `nodes/` reads are lost for a while, so that a start guard's round meets a
failed read of an old heartbeat that is still fresh: a read that proves nothing must hold the
guard. Drawn with the upgrade (upgrade.py: its `guard_storm` entry)."""

from __future__ import annotations

from model.io import GET
from model.records import NODES_PREFIX

from . import Stretch

GUARD_STORM_LOST = 0.8  # in a guard storm: the share of `nodes/` reads lost (two in a round: 0.64 both)


class GuardStorms(Stretch):
    id = "guard_storms"
    title = "in an upgrade, a stretch of 6 to 20 s in which 80 % of the new nodes' nodes/ reads are lost"
    rules = ("UP-1", "UP-2")
    state = {"guard_storm": bool}
    flag, what, target, detail = "guard_storm", "guard_storm", NODES_PREFIX, "nodes/ reads lost"

    def active(self, o: dict) -> bool:
        return bool((o.get("upgrade") or {}).get("guard_storm"))

    def stretches(self, o: dict) -> list:
        return [(o.get("upgrade") or {}).get("guard_storm")]

    def atoms(self, o: dict) -> list:
        return [("upgrade", "guard_storm")] if self.active(o) else []

    def remove(self, o: dict, atom) -> None:
        """The shrinker removes the storm alone (the upgrade stays, unless removed with it)."""
        if o.get("upgrade"):
            o["upgrade"]["guard_storm"] = None

    @staticmethod
    def send_early(world, proc, req, f):
        if (world.guard_storm and f is world.fault and req.op == GET and str.startswith(req.key, NODES_PREFIX)
                and world.rngs["guard_storms"].random() < GUARD_STORM_LOST):
            return "lost", 0  # UP-2: a guard read that fails proves nothing about that heartbeat
        return None


KIND = GuardStorms()
