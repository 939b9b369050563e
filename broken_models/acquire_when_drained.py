"""Breaks CS-3: a drained node takes requests again and acquires (its drain only refuses new
holds until it has reported drained), writing records that name it after it said none does.
Caught by: INV-5 (over time: a record naming it written after it reported drained, before it
resumed or ended).
"""

from model.node import Model

RULE = "CS-3"
CATCHES = "INV-5"


class AcquireWhenDrained(Model):
    name = "acquire_when_drained"

    def refuses_new_holds(self, st) -> bool:
        return st.stop is not None or (st.draining and not st.drained)


MODEL = AcquireWhenDrained()
step = MODEL.step
