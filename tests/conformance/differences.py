"""The known differences between S3 servers, and the SimBucket flavour that emulates each.

Measured by this suite (tests/conformance/test_conformance.py; the SDK's retries by
tests/conformance/test_sdk_retries.py, through a fault-injecting proxy) on moto and
SeaweedFS; the AWS column is from AWS's documentation of conditional writes
(a 409 ConditionalRequestConflict, a 500 or a 503 cannot be provoked on a local server: the
proxy injects them).
docs/real-s3.md shows the same table, generated from this file (python runner.py docs).
"""

from __future__ import annotations

# server -> the SimBucket(...) arguments that make the simulated bucket answer as it does
FLAVOURS: dict[str, dict] = {
    "moto": {"versioning": "md5", "absent_if_match": 404},
    "seaweedfs": {"versioning": "md5", "absent_if_match": 412},
    "aws": {"versioning": "md5", "absent_if_match": 404, "p_conflict": 0.3},  # not run here
}

# (case, AWS S3, moto, SeaweedFS, SimBucket)
DIFFERENCES: list[tuple[str, str, str, str, str]] = [
    ("PUT or DELETE with If-Match on an absent key", "404 NoSuchKey", "404 NoSuchKey",
     "412 PreconditionFailed", "flavour absent_if_match=404 or 412"),
    ("conditional writes racing on one key", "one wins; a loser may get 409 ConditionalRequestConflict (not applied)",
     "one wins, the others 412 as a rule; but moto 5.2.1 checks If-Match, then writes, with no lock (its "
     "threaded server): two racing writers can both land (seen under load: ok, ok, 412, 412), a fork of "
     "the key's history that AWS and SeaweedFS never make", "one wins, the others 412",
     "flavour p_conflict (409 within 100 ms); the SimBucket is linearizable, as AWS is"),
    ("ETag", "MD5 of the body (single-part)", "MD5 of the body", "MD5 of the body",
     "versioning md5 (or opaque, R2-like)"),
    ("A-B-A: If-Match with the ETag of A after A, B, A", "succeeds", "succeeds", "succeeds",
     "succeeds under md5"),
    ("DELETE of an absent key, unconditional", "204", "204", "204", "ok"),
    ("Expect: 100-continue on an empty-body PUT answered early (412 to If-Match on an absent key)",
     "ok", "ok", "the kept-alive connection desynchronises: the next PUT stalls ~15 s and gets the "
     "stale 412 although it landed", "n/a: the real-S3 world sends no Expect header"),
    ("boto3's retry (standard mode, `max_attempts` 1 = one retry) of a conditional PUT that applied, its "
     "answer a 5xx or a closed connection", "412 PreconditionFailed (documented semantics; not run here)",
     "412 PreconditionFailed", "412 PreconditionFailed",
     "fault kind sdk_retry_412 (the model sees the retry's 412); the real-S3 adapter sends one attempt"),
    ("boto3's retry of a conditional DELETE that applied", "404 NoSuchKey (If-Match on an absent key)",
     "404 NoSuchKey", "412 PreconditionFailed", "flavour absent_if_match=404 or 412"),
    ("500 / 503 answered at once to a conditional PUT (injected)", "documented (503 SlowDown, 500 InternalError)",
     "retried once by boto3 with one retry, the retry lands", "the same", "fault kind fast_5xx (the model sees timed_out: one attempt)"),
    ("409 ConditionalRequestConflict to a conditional PUT (injected)", "documented, on racing conditional writes",
     "never retried by boto3", "never retried by boto3",
     "flavour p_conflict (racing writes); fault kind conflict_any (any conditional write)"),
]
