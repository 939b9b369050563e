"""Any conditional write answered 409 ConditionalRequestConflict, never applied.

AWS answers 409 to a conditional write that races another on the same key; the `conflict` kind draws
it only where the simulated bucket sees two writes race, the upgrade only on marker writes. A server
may answer it to any conditional write (a write racing one the world cannot see: another client, a
replication), so this kind answers it to any, at a rate. boto3 never retries a 409 (measured,
tests/conformance/test_sdk_retries.py); the model sees `conflict`: NL-9's re-read, OR-7's read-back,
CS-2's re-read, a pending release's read. Unregistered (see __init__.py).
"""

from __future__ import annotations

from model.io import DELETE, PUT

from .. import FaultKind


class ConflictAny(FaultKind):
    id = "conflict_any"
    title = "any conditional write answered 409 ConditionalRequestConflict, never applied"
    rules = ("NL-7", "NL-9", "OR-5", "OR-7", "FN-3", "CS-2", "UP-3")
    options = {"p_conflict_any": 0.0}
    rates = ("p_conflict_any",)

    def draw_main(self, ctx) -> None:
        """(After issue 38: its own stream.)"""
        ctx.o["p_conflict_any"] = ctx.at_least(self.id, ctx.choice((0.0, 0.0, 0.0, 0.02, 0.1)))

    @staticmethod
    def send_early(world, proc, req, f):
        p = f.get("p_conflict_any", 0.0)
        if p and req.cond is not None and req.op in (PUT, DELETE) and world.rngs["conflict_any"].random() < p:
            return "conflict", world.delay()
        return None


def reached(history) -> bool:
    """Its coverage point, once registered: a conditional write other than a marker answered 409."""
    return any(e.fields.what == "conflict" and not e.fields.target.startswith("PUT leases/")
               for e in history.events if e.kind == "fault")


KIND = ConflictAny()
