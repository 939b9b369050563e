"""Any conditional write answered 409 ConditionalRequestConflict, never applied.

AWS answers 409 to a conditional write that races another on the same key; the `conflict` kind draws
it only where the simulated bucket sees two writes race, the upgrade only on marker writes. A server
may answer it to any conditional write (a write racing one the world cannot see: another client, a
replication), so this kind answers it to any, at a rate. boto3 never retries a 409 (measured,
tests/conformance/test_sdk_retries.py); the model sees `conflict`: NL-9's re-read, OR-7's read-back,
CS-2's re-read, a pending release's read. Drawn in a quarter of the seeds whose preset races nothing
(issue 39 part 4), from its own streams ("draw/conflict_any", "conflict_any"); its coverage point is
"409 on any conditional write" (checkers/s3_answers.py).
"""

from __future__ import annotations

from model.io import DELETE, PUT

from . import FaultKind

RATES = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.02, 0.1)  # a quarter of the seeds: 2 % or 10 % of the conditional writes


class ConflictAny(FaultKind):
    id = "conflict_any"
    title = "any conditional write answered 409 ConditionalRequestConflict, never applied"
    rules = ("NL-7", "NL-9", "OR-5", "OR-7", "FN-3", "CS-2", "UP-3")
    options = {"p_conflict_any": 0.0}
    rates = ("p_conflict_any",)

    def draw_main(self, ctx) -> None:
        self.draw_rate(ctx, RATES)

    @staticmethod
    def send_early(world, proc, req, f):
        p = f.get("p_conflict_any", 0.0)
        if p and req.cond is not None and req.op in (PUT, DELETE) and world.rngs["conflict_any"].random() < p:
            return "conflict", world.delay()
        return None


KIND = ConflictAny()
