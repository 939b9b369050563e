"""The known differences between S3 servers, and the SimBucket flavour that emulates each.

Measured by this suite (tests/conformance/test_conformance.py; the SDK's retries by
tests/conformance/test_sdk_retries.py, through a fault-injecting proxy) on moto and
SeaweedFS; the AWS and Cloudflare R2 columns are from their documentation of conditional writes
(a 409 ConditionalRequestConflict, a 500 or a 503 cannot be provoked on a local server: the
proxy injects them), the SDKs' retry pace from the SDKs' own; each row names its source.
docs/real-s3.md shows the same table, generated from this file (python runner.py docs).
"""

from __future__ import annotations

# server -> the SimBucket(...) arguments that make the simulated bucket answer as it does. The store a seed's
# world answers as (scenarios/swarm.py STORES, option `store`) adds what the bucket alone cannot say: in an
# "aws" store a 409 only while another conditional write to the key is in flight (World.racing_write), in an
# "r2" store never.
FLAVOURS: dict[str, dict] = {
    "moto": {"versioning": "md5", "absent_if_match": 404},
    "seaweedfs": {"versioning": "md5", "absent_if_match": 412},
    "aws": {"versioning": "md5", "absent_if_match": 404, "p_conflict": 0.3},  # not run here; store "aws"
    "r2": {"versioning": "opaque", "absent_if_match": 412, "p_conflict": 0.0},  # not run here; store "r2"
}

# where the AWS and R2 columns come from (documentation: no local server shows them)
AWS_CONDITIONAL = ("the S3 API reference as the AWS SDKs carry it (AWS SDK for Kotlin, CopyObjectRequest.ifNoneMatch: "
                   "\"If a concurrent operation occurs during the upload S3 returns a 409 ConditionalRequestConflict "
                   "response. On a 409 failure you should retry the upload.\"; CompleteMultipartUploadRequest."
                   "ifNoneMatch: \"If a conflicting operation occurs during the upload S3 returns a 409 "
                   "ConditionalRequestConflict response.\"); S3 User Guide, \"Conditional writes\"")
R2_CONDITIONAL = ("Cloudflare R2 docs, \"Conditional operations\" (developers.cloudflare.com/r2/api/s3/"
                  "conditional-operations/): a conditional write commits only if every condition passes; no 409 "
                  "is documented")
RUST_SDK_RETRY = ("AWS SDK for Rust, aws-smithy-types `RetryConfig` (docs.rs): `standard()` \"max attempts of three\", "
                  "`initial_backoff` 1 s (\"the first retry will occur after 0 to 1 seconds, the second retry will "
                  "occur after 0 to 2 seconds\"), `max_backoff` 20 s")
BOTO_RETRY = ("botocore 1.43.11, retries/standard.py `ExponentialBackoff`: rand(0, 1) * min(2 ** (attempt - 1), 20) "
              "s; with the opt-in AWS_NEW_RETRIES_2026 a non-throttling base of 0.05 s; boto3 guide \"Retries\"")
MEASURED = "measured: tests/conformance/test_conformance.py"
MEASURED_RETRIES = "measured: tests/conformance/test_sdk_retries.py (fault-injecting proxy)"

# (case, AWS S3, Cloudflare R2, moto, SeaweedFS, SimBucket, source); "-": neither documented nor measured here
DIFFERENCES: list[tuple[str, str, str, str, str, str, str]] = [
    ("PUT or DELETE with If-Match on an absent key", "404 NoSuchKey", "fails (documented: If-Match \"Fails\" \"if the "
     "key does not exist\")", "404 NoSuchKey", "412 PreconditionFailed", "flavour absent_if_match=404 or 412",
     f"{MEASURED}; {R2_CONDITIONAL}"),
    ("conditional writes racing on one key", "one wins; a loser may get 409 ConditionalRequestConflict (not applied)",
     "one wins, the others fail their condition; no 409",
     "one wins, the others 412 as a rule; but moto 5.2.1 checks If-Match, then writes, with no lock (its "
     "threaded server): two racing writers can both land (seen under load: ok, ok, 412, 412), a fork of "
     "the key's history that AWS and SeaweedFS never make", "one wins, the others 412",
     "store aws: flavour p_conflict, a 409 only while another conditional write to the key is in flight; "
     "store r2: none; the SimBucket is linearizable, as AWS is", f"{MEASURED}; {AWS_CONDITIONAL}; {R2_CONDITIONAL}"),
    ("ETag", "MD5 of the body (single-part)", "a read's token may differ from the write's (ADR 0020, section 1)",
     "MD5 of the body", "MD5 of the body", "versioning md5 (or opaque, R2-like)", MEASURED),
    ("A-B-A: If-Match with the ETag of A after A, B, A", "succeeds", "-", "succeeds", "succeeds",
     "succeeds under md5", MEASURED),
    ("DELETE of an absent key, unconditional", "204", "-", "204", "204", "ok", MEASURED),
    ("Expect: 100-continue on an empty-body PUT answered early (412 to If-Match on an absent key)",
     "ok", "-", "ok", "the kept-alive connection desynchronises: the next PUT stalls ~15 s and gets the "
     "stale 412 although it landed", "n/a: the real-S3 world sends no Expect header", MEASURED),
    ("boto3's retry (standard mode, `max_attempts` 1 = one retry) of a conditional PUT that applied, its "
     "answer a 5xx or a closed connection", "412 PreconditionFailed (documented semantics; not run here)",
     "fails its condition (documented semantics; not run here)", "412 PreconditionFailed", "412 PreconditionFailed",
     "fault kind sdk_retry_412 (the model sees the retry's 412); the real-S3 adapter sends one attempt",
     MEASURED_RETRIES),
    ("boto3's retry of a conditional DELETE that applied", "404 NoSuchKey (If-Match on an absent key)", "-",
     "404 NoSuchKey", "412 PreconditionFailed", "flavour absent_if_match=404 or 412", MEASURED_RETRIES),
    ("an SDK's pause before its retry of a write whose answer was a 5xx or a closed connection (standard mode, 3 "
     "attempts)", "the AWS SDK for Rust: rand(0, 1) * min(1 s * 2 ** (n - 1), 20 s) before retry n: 0-1 s, "
     "then 0-2 s", "the same SDKs", "boto3 (botocore 1.43.11): the same, base 1 s; 0-50 ms, then 0-100 ms with "
     "AWS_NEW_RETRIES_2026", "the same",
     "fault kind sdk_retry_412: `sdk_retry_base_ms` 1000 (two seeds in three) or 50, the retry that meets the "
     "write the second attempt or, in a quarter, the third; none once past the sender's attempt timeout "
     "(before issue 47: 1-50 ms)", f"{RUST_SDK_RETRY}; {BOTO_RETRY}"),
    ("500 / 503 answered at once to a conditional PUT (injected)", "documented (503 SlowDown, 500 InternalError)",
     "-", "retried once by boto3 with one retry, the retry lands", "the same",
     "fault kind fast_5xx (the model sees timed_out: one attempt)", MEASURED_RETRIES),
    ("500 / 503 to a write that was applied (injected: the proxy applies it, then answers 503)",
     "a 5xx says nothing of the outcome; the SDKs retry it (their retry then meets the write: the row above)", "-",
     "applied; boto3's retry answered 412", "the same",
     "fault kind fast_5xx, fate applied_5xx (half the writes it strikes: applied, then answered 5xx at once; "
     "before issue 47 a fast 5xx never applied)", f"{MEASURED_RETRIES}; {BOTO_RETRY}"),
    ("409 ConditionalRequestConflict to a conditional PUT (injected)",
     "documented, only for a conflicting operation on the same key in progress", "none documented",
     "never retried by boto3", "never retried by boto3",
     "store aws: flavour p_conflict and fault kind conflict_any, each only while another conditional write to the "
     "key is in flight (the `conflicted` event names it); store r2: never (before issue 47: any conditional "
     "write within 100 ms of another, and conflict_any on any)", f"{MEASURED_RETRIES}; {AWS_CONDITIONAL}; "
     f"{R2_CONDITIONAL}"),
]
