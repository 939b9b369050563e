"""A write that applied, its answer lost to a 5xx or a closed connection, sent again by the client's
SDK: the retry's answer is the one the process gets, and its condition meets the write's own object.

Measured (tests/conformance/test_sdk_retries.py, moto and SeaweedFS): boto3 in standard mode retries
a 500/502/503/504, a closed connection or a read timeout; an If-Match or If-None-Match PUT that applied
is then answered 412, a conditional DELETE 404 (moto) or 412 (SeaweedFS). The retry's pace is the SDKs'
documented back-off (scenarios/core.py, `sdk_backoff_ms`, issue 47 part 4): standard retry mode, at most
3 attempts, the n-th retry after rand(0, 1) * min(base * 2 ** (n - 1), 20 s), base 1 s for the AWS SDK
for Rust (the ADR's implementation: docs.rs aws-smithy-types `RetryConfig`, "the first retry will occur
after 0 to 1 seconds, the second retry will occur after 0 to 2 seconds") and for boto3 (botocore
retries/standard.py `ExponentialBackoff`; boto3's guide, "Retries": a base factor of 2, a maximum
backoff of 20 s), or 50 ms (botocore's opt-in AWS_NEW_RETRIES_2026 for a non-throttling error, the
pace drawn before issue 47): the seed's `sdk_retry_base_ms`, drawn with the rate. A back-off that
outlasts the sender's attempt timeout sends nothing (the process dropped the call). The real-S3 adapter sends one attempt, so this is the production client's behaviour
("the client retries internally and a first attempt may have landed", OR-7), simulated: the world
applies the write, records it, and applies the retry as a request of its own (scenarios/core.py,
`sdk_retried`), so the history says what the bucket did twice. The model must read it per NL-9
(its own live object: adopt), OR-7 (its own record at the generation tried: hold), OR-5 (a release
whose record names nobody: the pending entry ends). Drawn in a quarter of the seeds whose preset
races nothing (issue 39 part 4), from its own streams ("draw/sdk_retry_412", "sdk_retry_412"); its
coverage point is "SDK retry met its own write" (checkers/s3_answers.py).
"""

from __future__ import annotations

from model.io import DELETE, PUT

from . import FaultKind

RATES = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.05, 0.2)  # a quarter of the seeds: 5 % or 20 % of the conditional writes
BASES_MS = (1_000, 1_000, 50)  # the SDKs' standard back-off base: Rust's and boto3's, and botocore's new retries


class SdkRetry412(FaultKind):
    id = "sdk_retry_412"
    title = "a conditional write applied, its answer lost, retried by the SDK: the retry answers 412 (or 404)"
    rules = ("NL-7", "NL-9", "OR-5", "OR-7", "FN-3", "FN-8", "CS-2", "UP-3")
    options = {"p_sdk_retry": 0.0}
    settings = {"sdk_retry_base_ms": 1_000}  # the SDK's back-off base (scenarios/core.py, `sdk_backoff_ms`)
    rates = ("p_sdk_retry",)

    def draw_main(self, ctx) -> None:
        self.draw_rate(ctx, RATES)
        # whose pace: the AWS SDK for Rust's or boto3's standard mode (1 s), or botocore's new retries (50 ms)
        ctx.o["sdk_retry_base_ms"] = ctx.choice(BASES_MS)

    @staticmethod
    def send_late(world, proc, req, f, delay):
        """A conditional write only (an unconditional one's retry lands again, the same bytes: no answer
        changes); after its delay is drawn: it reaches the bucket then."""
        p = f.get("p_sdk_retry", 0.0)
        if p and req.cond is not None and req.op in (PUT, DELETE) and world.rngs["sdk_retry_412"].random() < p:
            return "sdk_retry", delay
        return None


KIND = SdkRetry412()
