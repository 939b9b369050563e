"""Breaks NL-11 (and OR-4's "no lapse since the hold was acquired"): a node lease that runs out
keeps its holds instead of dropping them into the pending releases; once the lease is valid again
the node serves them at their old generations, though a peer may have freed and taken them meanwhile.
Caught by: INV-1 (judged on world facts: a hold is valid only in the window of its process's node
lease in which it was acquired; an act after a lapse is an act without a valid hold).
"""

from model.node import Model

RULE = "NL-11"
CATCHES = "INV-1"


class HoldsSurviveALapse(Model):
    name = "holds_survive_a_lapse"

    def on_lease_ran_out(self, st, now, out):
        return st


MODEL = HoldsSurviveALapse()
step = MODEL.step
