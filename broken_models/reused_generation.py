"""BM-2: a wake that reuses a generation (breaks OR-3).

Re-acquiring a record that names this process's own instance (a hold that
ended, its release still pending or lost) keeps the record's generation
instead of writing generation + 1, so two holds share one generation.
Caught by: INV-2 (one generation per hold).
"""

from model.node import Model
from model.records import OwnerRecord

RULE = "OR-3"
CATCHES = "INV-2"


class ReusedGeneration(Model):
    name = "reused_generation"

    def next_generation(self, st, rec: OwnerRecord) -> int:
        if not rec.nobody and rec.node_id == st.node_id and rec.instance == st.instance:
            return rec.generation  # OR-3 without the + 1
        return rec.generation + 1


MODEL = ReusedGeneration()
step = MODEL.step
