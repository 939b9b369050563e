"""Breaks NL-9: on a failed condition, adopt any `live` object, whatever instance it names.

The correct re-read adopts only a `live` object naming this process's own
instance (its own write whose reply was lost). This model also adopts a twin's
or a successor's write, so two processes believe they hold one node lease.
Caught by: LEASE-1 (two processes valid for one node id at once).
"""

from model.node import Model
from model.records import LIVE, NodeRecord

RULE = "NL-9"
CATCHES = "LEASE-1"


class AdoptAnyInstance(Model):
    name = "adopt_any_instance"

    def is_own_live_write(self, st, rec) -> bool:
        return isinstance(rec, NodeRecord) and rec.state == LIVE  # NL-9 without the instance check


MODEL = AdoptAnyInstance()
step = MODEL.step
