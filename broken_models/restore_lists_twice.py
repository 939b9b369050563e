"""Breaks OR-3's count, "the restore's listing" (one per hold, ADR 0020, Cost, after): a new owner lists its
actor's data twice, the first listing's answer thrown away. Safe (the second listing is the one restored
from), and one LIST more per hold than the ADR counts.
Caught by: COST-3 (two listings of the actor's data after one acquisition's write).
"""

from model.actor_data import DATA_PREFIX
from model.io import LIST, Request
from model.node import Model

RULE = "OR-3"
CATCHES = "COST-3"


class RestoreListsTwice(Model):
    name = "restore_lists_twice"

    def restore(self, st, actor, now_ms, out):
        st = self.send(st, ("restore_again", actor), Request(LIST, f"{DATA_PREFIX}{actor}/"), out)
        return super().restore(st, actor, now_ms, out)

    def on_reply_restore_again(self, st, purpose, reply, now_ms, out):
        return st  # thrown away


MODEL = RestoreListsTwice()
step = MODEL.step
