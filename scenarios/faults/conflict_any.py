"""A conditional write answered 409 ConditionalRequestConflict, never applied, drawn as it is sent while
another conditional write to its key is in flight.

AWS answers 409 to a conditional write that races another on the same key ("a conflicting operation",
its documentation of conditional writes); Cloudflare R2 documents none. Before issue 47 this kind
answered it to any conditional write at a rate; a store gives it only to a write that races another,
so now it draws one only for a write sent while another conditional write to its key is in flight
(World.racing_write), in a seed whose store is "aws", and the world answers 409 only if one is still
in flight when it reaches the bucket (World._conflict_at_bucket; else it is applied as drawn: no fault).
Unlike the `conflict` kind (the bucket's draw, at 0.3, kept in the quiet phase) it draws on the sending
side, at its own rates, in seeds whose preset races nothing. boto3 never retries a 409 (measured,
tests/conformance/test_sdk_retries.py); the model sees `conflict`: NL-9's re-read, OR-7's read-back,
CS-2's re-read, a pending release's read. Drawn in a quarter of the seeds whose preset races nothing
(issue 39 part 4), from its own streams ("draw/conflict_any", "conflict_any"); its coverage point is
"409 on a racing conditional write" (checkers/s3_answers.py).
"""

from __future__ import annotations

from model.io import DELETE, PUT

from . import FaultKind

# a quarter of the seeds: 30 % or 60 % of the conditional writes sent while another to their key is in flight
# (before issue 47: 2 % or 10 % of every conditional write; racing writes are rare, so the rates rose)
RATES = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.3, 0.6)


class ConflictAny(FaultKind):
    id = "conflict_any"
    title = ("a conditional write sent while another to its key is in flight answered 409 "
             "ConditionalRequestConflict, never applied (an AWS store; never R2)")
    rules = ("NL-7", "NL-9", "OR-5", "OR-7", "FN-3", "CS-2", "UP-3")
    options = {"p_conflict_any": 0.0}
    rates = ("p_conflict_any",)

    def draw_main(self, ctx) -> None:
        self.draw_rate(ctx, RATES)
        if ctx.o.get("store") == "r2":
            ctx.o["p_conflict_any"] = 0.0  # R2 documents no 409 (drawn all the same: no draw moves)

    @staticmethod
    def send_early(world, proc, req, f):
        p = f.get("p_conflict_any", 0.0)
        if p and req.cond is not None and req.op in (PUT, DELETE) and world.racing_write(-1, 0, req.key) \
                and world.rngs["conflict_any"].random() < p:
            return "conflict", world.delay()
        return None


KIND = ConflictAny()
