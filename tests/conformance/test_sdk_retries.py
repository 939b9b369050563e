"""What boto3 does with a conditional write the bucket answers 500/503, 409 or 412, or answers not at
all after it applied, measured against moto and SeaweedFS through a fault-injecting proxy on
127.0.0.1 (faultproxy.py); and what the real-S3 adapter (scenarios/s3.py, `make_client`) then hands
the model (issue 39, part 4).

botocore's client setting `retries={"max_attempts": N}` counts retries, not attempts: N = 1 is one
retry (botocore.args normalises it to total_max_attempts = N + 1). In "standard" mode a retry follows
a 500, 502, 503 or 504, a closed connection or a read timeout, after a jittered pause of at most 50 ms;
never a 409 or a 412. So with one retry, a write that applied and whose answer was a 5xx or a closed
connection is sent again, and the retry's condition fails on the write's own object: the client sees
412 for a write that landed (NL-9's "a failed condition is not proof of a fence", OR-7's "the client
retries internally and a first attempt may have landed"). The real-S3 world must not let that happen
unseen: it records what the bucket answered each model request, and a hidden second attempt would
make it record a refusal of a write that applied. So the adapter sends each model request once
(`total_max_attempts = 1`); the model's own retries (NL-3, OR-6) are its retries, and the simulated
world's fault kind `sdk_retry_412` (scenarios/faults/sdk_retry_412.py, drawn in the swarm) stands for the SDK's.
"""

from __future__ import annotations

import uuid

import pytest

from model.io import CONFLICT, DELETE, IF_MATCH, IF_NONE_MATCH, OK, PRECONDITION_FAILED, PUT, TIMED_OUT, Request
from scenarios.s3 import S3Bucket, make_client

from .faultproxy import FaultProxy
from .servers import CREDENTIAL_ENV, client

BUCKET = "sdk-retries"
ONE_RETRY = {"max_attempts": 1, "mode": "standard"}  # what the adapter configured before: one retry
UNAVAILABLE = (503, "ServiceUnavailable")
INTERNAL = (500, "InternalError")
CONFLICTED = (409, "ConditionalRequestConflict")
REFUSED = (412, "PreconditionFailed")


@pytest.fixture
def proxied(server, monkeypatch):
    """(the server, a proxy in front of it, a fresh key prefix)."""
    for k, v in CREDENTIAL_ENV.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    server.create_bucket(BUCKET)
    proxy = FaultProxy(server.url)
    yield server, proxy, f"retries/{uuid.uuid4().hex}/"
    proxy.stop()


def _status(call) -> tuple[str, int]:
    """("ok", 200) or (the error code, the HTTP status) of a boto3 call."""
    from botocore.exceptions import ClientError

    try:
        r = call()
        return "ok", r["ResponseMetadata"]["HTTPStatusCode"]
    except ClientError as e:
        return e.response["Error"]["Code"], e.response["ResponseMetadata"]["HTTPStatusCode"]


def _boto(url: str, retries: dict):
    import boto3
    from botocore.config import Config

    return boto3.client("s3", endpoint_url=url, region_name="us-east-1",
                        config=Config(s3={"addressing_style": "path"}, retries=retries, connect_timeout=2,
                                      read_timeout=10))


def _put_if_match(server, proxy, prefix, action, retries=ONE_RETRY):
    """A PUT If-Match the current ETag, through the proxy with `action` on its first attempt: (what the
    client saw, the attempts, whether the body is in the bucket)."""
    direct = client(server.url)
    key = prefix + "k"
    etag = direct.put_object(Bucket=BUCKET, Key=key, Body=b"before")["ETag"]
    proxy.rule("PUT", f"/{BUCKET}/{key}", *action)
    body = uuid.uuid4().hex.encode()
    seen = _status(lambda: _boto(proxy.url, retries).put_object(Bucket=BUCKET, Key=key, Body=body, IfMatch=etag))
    applied = direct.get_object(Bucket=BUCKET, Key=key)["Body"].read() == body
    return seen, [(a.action, a.upstream_status) for a in proxy.of("PUT", key)], applied


# --- boto3 with one retry (max_attempts = 1, standard mode): the measurements ---------------------


@pytest.mark.parametrize("fault", [UNAVAILABLE, INTERNAL], ids=["503", "500"])
def test_one_retry_a_5xx_answered_at_once_is_retried_and_the_retry_lands(proxied, fault):
    """A conditional PUT refused 500/503 at once (not applied) is sent again; the retry applies: the
    caller never sees the 5xx."""
    server, proxy, prefix = proxied
    seen, attempts, applied = _put_if_match(server, proxy, prefix, ("answer", *fault))
    assert (seen, attempts, applied) == (("ok", 200), [("answer", None), ("forward", 200)], True)


@pytest.mark.parametrize("fault", [REFUSED, CONFLICTED], ids=["412", "409"])
def test_one_retry_a_412_or_a_409_is_never_retried(proxied, fault):
    """412 and 409 ConditionalRequestConflict are final in standard mode: one attempt, the caller sees it."""
    server, proxy, prefix = proxied
    seen, attempts, applied = _put_if_match(server, proxy, prefix, ("answer", *fault))
    assert (seen, attempts, applied) == ((fault[1], fault[0]), [("answer", None)], False)


@pytest.mark.parametrize("action", [("apply_then_answer", *UNAVAILABLE), ("apply_then_close",)],
                         ids=["503-after-apply", "closed-after-apply"])
def test_one_retry_a_write_that_applied_is_answered_412_by_its_own_retry(proxied, action):
    """The write applies, its answer is a 503 or a closed connection; the retry's If-Match names the
    version the write replaced: 412, while the bucket holds the write's own body."""
    server, proxy, prefix = proxied
    seen, attempts, applied = _put_if_match(server, proxy, prefix, action)
    assert (seen, attempts, applied) == ((REFUSED[1], 412), [(action[0], 200), ("forward", 412)], True)


def test_one_retry_a_create_that_applied_is_answered_412_by_its_own_retry(proxied):
    """The same for If-None-Match: * (NL-7's first write, OR-3's first record, UP-3's marker)."""
    server, proxy, prefix = proxied
    key = prefix + "new"
    proxy.rule("PUT", f"/{BUCKET}/{key}", "apply_then_answer", *UNAVAILABLE)
    seen = _status(lambda: _boto(proxy.url, ONE_RETRY).put_object(Bucket=BUCKET, Key=key, Body=b"x", IfNoneMatch="*"))
    assert seen == (REFUSED[1], 412)
    assert [(a.action, a.upstream_status) for a in proxy.of("PUT", key)] == [("apply_then_answer", 200),
                                                                            ("forward", 412)]


def test_one_retry_a_conditional_delete_that_applied_meets_no_object(proxied):
    """FN-8's conditional DELETE: applied, answered 503, retried on an absent key: moto answers 404,
    SeaweedFS 412 (the same difference as an If-Match on an absent key, differences.py)."""
    server, proxy, prefix = proxied
    direct = client(server.url)
    key = prefix + "gone"
    etag = direct.put_object(Bucket=BUCKET, Key=key, Body=b"old")["ETag"]
    proxy.rule("DELETE", f"/{BUCKET}/{key}", "apply_then_answer", *UNAVAILABLE)
    seen = _status(lambda: _boto(proxy.url, ONE_RETRY).delete_object(Bucket=BUCKET, Key=key, IfMatch=etag))
    expected = {"moto": ("NoSuchKey", 404), "seaweedfs": (REFUSED[1], 412)}[server.name]
    assert seen == expected
    assert [a.upstream_status for a in proxy.of("DELETE", key)] == [204, expected[1]]


# --- the adapter: one attempt per model request ---------------------------------------------------


def _adapter(proxy: FaultProxy) -> S3Bucket:
    return S3Bucket(make_client(proxy.url), BUCKET, "")


def _key_etag(server, prefix: str) -> tuple[str, str]:
    key = prefix + "a"
    return key, client(server.url).put_object(Bucket=BUCKET, Key=key, Body=b"before")["ETag"]


@pytest.mark.parametrize("action,status,applied", [
    (("answer", *UNAVAILABLE), TIMED_OUT, False),  # a fast 503: outcome unknown to the model, at once
    (("answer", *INTERNAL), TIMED_OUT, False),
    (("answer", *CONFLICTED), CONFLICT, False),
    (("answer", *REFUSED), PRECONDITION_FAILED, False),
    (("apply_then_answer", *UNAVAILABLE), TIMED_OUT, True),  # landed: the model must not take it for refused
    (("apply_then_close",), TIMED_OUT, True),
], ids=["503", "500", "409", "412", "503-after-apply", "closed-after-apply"])
def test_the_adapter_sends_each_model_request_once(proxied, action, status, applied):
    """`make_client` sets total_max_attempts = 1: one attempt, whatever the answer. A 5xx or a closed
    connection is `timed_out` (outcome unknown: NL-9, OR-7 read back), 409 `conflict`, 412
    `precondition_failed`; a write that applied is never answered 412 by a retry of the SDK's."""
    server, proxy, prefix = proxied
    key, etag = _key_etag(server, prefix)
    proxy.rule("PUT", f"/{BUCKET}/{key}", *action)
    reply, _note = _adapter(proxy).call(Request(PUT, key, IF_MATCH, etag, "after"))
    assert reply.status == status
    assert len(proxy.of("PUT", key)) == 1
    assert (client(server.url).get_object(Bucket=BUCKET, Key=key)["Body"].read() == b"after") == applied


def test_the_adapter_s_one_attempt_applies_to_creates_and_deletes(proxied):
    server, proxy, prefix = proxied
    b = _adapter(proxy)
    proxy.rule("PUT", f"/{BUCKET}/{prefix}n", "apply_then_answer", *UNAVAILABLE)
    assert b.call(Request(PUT, prefix + "n", IF_NONE_MATCH, None, "x"))[0].status == TIMED_OUT
    assert b.call(Request(PUT, prefix + "n", IF_NONE_MATCH, None, "x"))[0].status == PRECONDITION_FAILED
    key, etag = _key_etag(server, prefix)
    proxy.rule("DELETE", f"/{BUCKET}/{key}", "apply_then_answer", *UNAVAILABLE)
    assert b.call(Request(DELETE, key, IF_MATCH, etag))[0].status == TIMED_OUT
    assert len(proxy.of("DELETE", key)) == 1 and len(proxy.of("PUT", prefix + "n")) == 2
    assert b.call(Request(PUT, prefix + "fresh", None, None, "y"))[0].status == OK
