"""A request answered 500 or 503 at once, not a timeout: refused by the bucket, never applied, or for a
write in half the cases applied all the same (issue 47 part 4).

S3 answers 503 SlowDown under load and 500 InternalError now and then; with one attempt per request
(the real-S3 adapter, scenarios/s3.py) the model sees `timed_out`: outcome unknown (NL-9's re-read,
OR-7's read-back, a pending release's retry), but early, within FAST_5XX_MS_MAX of the send rather
than at its attempt timeout. Unlike `fail_fast` (a refused connection, `failed_fast`: surely not
sent), the sender cannot tell it from a write that applied, and sometimes it did: a 500 or a 503 says
nothing of the write's outcome (S3's error responses name them retryable, and the SDKs retry them: the
retry of such a write that applied meets its own write, sdk_retry_412.py, which the conformance proxy
measures with "apply then answer 503"), so half the writes struck reach the bucket, are applied, and
are answered 5xx within FAST_5XX_MS_MAX (fate `applied_5xx`, its own fault event, which F-2's chain
never counts as a loss). Drawn in a quarter of the seeds whose
preset races nothing (issue 39 part 4), from its own streams ("draw/fast_5xx", "fast_5xx"); its
coverage point is "fast 5xx on a write" (checkers/s3_answers.py).
"""

from __future__ import annotations

from model.io import DELETE, PUT

from . import FaultKind

RATES = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.02, 0.1)  # a quarter of the seeds: 2 % or 10 % of the requests

FAST_5XX_MS_MAX = 30  # a 5xx comes back within a round trip


class Fast5xx(FaultKind):
    id = "fast_5xx"
    title = ("a request answered 500/503 at once, never applied, or (half the writes) applied all the same (the "
             "sender sees timed_out, early)")
    rules = ("NL-3", "NL-9", "OR-6", "OR-7", "UP-2")
    options = {"p_fast_5xx": 0.0}
    rates = ("p_fast_5xx",)

    def draw_main(self, ctx) -> None:
        self.draw_rate(ctx, RATES)

    @staticmethod
    def send_early(world, proc, req, f):
        p = f.get("p_fast_5xx", 0.0)
        if p and world.rngs["fast_5xx"].random() < p:
            rng = world.rngs["fast_5xx"]
            ms = rng.randint(1, FAST_5XX_MS_MAX)
            if req.op in (PUT, DELETE) and rng.randrange(2):
                return "applied_5xx", ms  # it reaches the bucket in `ms`, is applied, and answered 5xx
            return "fast_5xx", ms
        return None


KIND = Fast5xx()
