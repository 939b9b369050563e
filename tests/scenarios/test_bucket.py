"""The simulated bucket (scenarios/bucket.py): S3 conditional semantics as measured on real servers,
in both version disciplines ('md5', 'opaque') and both answers to If-Match on an absent key (404, 412).

Ends with a Hypothesis property: random operation sequences behave like a small sequential
reference written here.
"""

from __future__ import annotations

import hashlib
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model.io import (
    CONFLICT,
    DELETE,
    GET,
    IF_MATCH,
    IF_NONE_MATCH,
    LIST,
    NOT_FOUND,
    OK,
    PRECONDITION_FAILED,
    PUT,
    Request,
)
from scenarios.bucket import SimBucket

VERSIONINGS = ["md5", "opaque"]
FLAVOURS = [404, 412]


class FixedRng:
    """An rng whose random() always returns `x`: 0.0 makes every p > 0 happen, 0.999 none."""

    def __init__(self, x: float) -> None:
        self.x = x

    def random(self) -> float:
        return self.x


def put(b, key, body, cond=None, version=None, now_ms=0, racing=False):
    return b.apply(Request(PUT, key, cond, version, body), now_ms, racing)


def get(b, key):
    return b.apply(Request(GET, key))[0]


def etag(body: str) -> str:
    return '"' + hashlib.md5(body.encode()).hexdigest() + '"'


@pytest.fixture(params=[(v, f) for v in VERSIONINGS for f in FLAVOURS], ids=lambda p: f"{p[0]}-{p[1]}")
def bucket(request):
    versioning, flavour = request.param
    return SimBucket(versioning, flavour)


# --- reads, writes, conditions ------------------------------------------------------------------------


def test_get_absent_is_404(bucket):
    assert get(bucket, "nodes/n1").status == NOT_FOUND


def test_put_then_get_returns_body_and_a_matching_version(bucket):
    reply, prev, serial = put(bucket, "nodes/n1", "A")
    assert reply.status == OK and reply.version and prev == 0 and serial > 0
    g = get(bucket, "nodes/n1")
    assert (g.status, g.body) == (OK, "A")
    assert g.version == reply.version  # without aliases, a read returns the write's token


def test_if_none_match_creates_once_then_412(bucket):
    r1, _, _ = put(bucket, "k", "A", IF_NONE_MATCH)
    assert r1.status == OK
    r2, prev, serial = put(bucket, "k", "B", IF_NONE_MATCH)
    assert r2.status == PRECONDITION_FAILED and (prev, serial) == (-1, -1)
    assert get(bucket, "k").body == "A"


def test_if_match_current_version_succeeds_and_a_wrong_one_is_412(bucket):
    v1 = put(bucket, "k", "A")[0].version
    r2, prev, serial = put(bucket, "k", "B", IF_MATCH, v1)
    assert r2.status == OK and prev > 0 and serial > prev
    r3, _, _ = put(bucket, "k", "C", IF_MATCH, '"not-a-version"')
    assert r3.status == PRECONDITION_FAILED
    assert get(bucket, "k").body == "B"


@pytest.mark.parametrize("versioning", VERSIONINGS)
@pytest.mark.parametrize("flavour,status", [(404, NOT_FOUND), (412, PRECONDITION_FAILED)])
def test_if_match_on_absent_key_answers_per_flavour(versioning, flavour, status):
    """moto/AWS answer 404, SeaweedFS 412: the seed's flavour decides; nothing is written."""
    b = SimBucket(versioning, flavour)
    reply, prev, serial = put(b, "nodes/n1", "A", IF_MATCH, '"x"')
    assert reply.status == status and (prev, serial) == (-1, -1)
    assert b.apply(Request(DELETE, "nodes/n1", IF_MATCH, '"x"'))[0].status == status
    assert get(b, "nodes/n1").status == NOT_FOUND


def test_md5_versions_are_the_etag_of_the_body_and_aba_lets_a_stale_if_match_succeed():
    """S3-like: identical bytes get the same token, so after A-B-A a stale If-Match on A succeeds."""
    b = SimBucket("md5", 404)
    t_a = put(b, "k", "A")[0].version
    assert t_a == etag("A")
    t_b = put(b, "k", "B", IF_MATCH, t_a)[0].version
    assert t_b == etag("B") != t_a
    t_a2 = put(b, "k", "A", IF_MATCH, t_b)[0].version
    assert t_a2 == t_a  # same body, same token
    reply, prev, serial = put(b, "k", "C", IF_MATCH, t_a)  # stale: named the first A
    assert reply.status == OK and serial > prev


def test_opaque_versions_are_fresh_per_write_so_aba_is_caught():
    """R2-like: a fresh token per write, even for identical bytes: the stale If-Match fails."""
    b = SimBucket("opaque", 404)
    t_a = put(b, "k", "A")[0].version
    t_b = put(b, "k", "B", IF_MATCH, t_a)[0].version
    t_a2 = put(b, "k", "A", IF_MATCH, t_b)[0].version
    assert len({t_a, t_b, t_a2}) == 3
    assert put(b, "k", "C", IF_MATCH, t_a)[0].status == PRECONDITION_FAILED


@pytest.mark.parametrize("token", ["write", "read"])
def test_opaque_read_token_may_differ_from_the_write_token_and_both_match(token):
    """R2-like aliases: a read may return another token for the same write; If-Match accepts either."""
    b = SimBucket("opaque", 404, p_alias=1.0, rng=FixedRng(0.0))
    w = put(b, "k", "A")[0].version
    r = get(b, "k").version
    assert r != w
    assert b.list("k") == (("k", r),)  # a listing shows the read token
    reply, _, _ = put(b, "k", "B", IF_MATCH, w if token == "write" else r)
    assert reply.status == OK


def test_opaque_without_aliases_reads_the_write_token():
    b = SimBucket("opaque", 412, p_alias=0.5, rng=FixedRng(0.999))
    w = put(b, "k", "A")[0].version
    assert get(b, "k").version == w


# --- 409: a conditional write racing another in flight (the world says which: World.racing_write) -----------


def test_409_for_a_conditional_write_racing_another_in_flight_is_not_applied():
    b = SimBucket("opaque", 404, p_conflict=1.0, rng=FixedRng(0.0))
    v1 = put(b, "k", "A", IF_NONE_MATCH, now_ms=1_000)[0].version
    reply, prev, serial = put(b, "k", "B", IF_MATCH, v1, now_ms=1_001, racing=True)
    assert reply.status == CONFLICT and (prev, serial) == (-1, -1)
    g = get(b, "k")
    assert (g.body, g.version) == ("A", v1)


def test_no_409_with_nothing_in_flight_however_close_the_writes():
    """Issue 47: AWS answers 409 to a conflicting concurrent operation, not to a write that merely follows
    another closely (before, any conditional write within 100 ms of the last one on its key could get it)."""
    b = SimBucket("md5", 404, p_conflict=1.0, rng=FixedRng(0.0))
    v1 = put(b, "k", "A", IF_NONE_MATCH, now_ms=1_000)[0].version
    assert put(b, "k", "B", IF_MATCH, v1, now_ms=1_000)[0].status == OK


def test_no_409_without_p_conflict():
    b = SimBucket("md5", 404)
    v1 = put(b, "k", "A", IF_NONE_MATCH, now_ms=1_000)[0].version
    assert put(b, "k", "B", IF_MATCH, v1, now_ms=1_001, racing=True)[0].status == OK


def test_no_409_for_unconditional_writes():
    b = SimBucket("md5", 404, p_conflict=1.0, rng=FixedRng(0.0))
    put(b, "k", "A", IF_NONE_MATCH, now_ms=1_000)
    assert put(b, "k", "B", now_ms=1_001, racing=True)[0].status == OK  # unconditional: no race to lose


def test_a_failed_condition_is_412_not_409():
    b = SimBucket("md5", 404, p_conflict=1.0, rng=FixedRng(0.0))
    put(b, "k", "A", IF_NONE_MATCH, now_ms=1_000)
    assert put(b, "k", "B", IF_MATCH, '"stale"', now_ms=1_001, racing=True)[0].status == PRECONDITION_FAILED


# --- DELETE and LIST ----------------------------------------------------------------------------------------


def test_delete_semantics(bucket):
    v = put(bucket, "k", "A")[0].version
    reply, prev, serial = bucket.apply(Request(DELETE, "k", IF_MATCH, '"wrong"'))
    assert reply.status == PRECONDITION_FAILED and get(bucket, "k").body == "A"
    reply, prev, serial = bucket.apply(Request(DELETE, "k", IF_MATCH, v))
    assert reply.status == OK and prev > 0 and serial == 0
    assert get(bucket, "k").status == NOT_FOUND
    reply, prev, serial = bucket.apply(Request(DELETE, "k"))  # S3: deleting nothing is a success
    assert reply.status == OK and (prev, serial) == (0, 0)
    put(bucket, "k", "B")
    assert bucket.apply(Request(DELETE, "k"))[0].status == OK
    assert get(bucket, "k").status == NOT_FOUND
    assert put(bucket, "k", "C", IF_NONE_MATCH)[0].status == OK  # absent again: creatable


def test_list_by_prefix_sorted_with_versions(bucket):
    for key in ["nodes/n2", "owners/a", "nodes/n10", "nodes/n1", "nodesX", "nodes/"]:
        put(bucket, key, key)
    reply, _, _ = bucket.apply(Request(LIST, "nodes/"))
    assert reply.status == OK
    keys = [k for k, _v in reply.entries]
    assert keys == ["nodes/", "nodes/n1", "nodes/n10", "nodes/n2"]
    assert all(v == get(bucket, k).version for k, v in reply.entries)
    assert bucket.apply(Request(LIST, "missing/"))[0].entries == ()
    assert [k for k, _ in bucket.apply(Request(LIST, ""))[0].entries] == sorted(
        ["nodes/n2", "owners/a", "nodes/n10", "nodes/n1", "nodesX", "nodes/"])


def test_bad_construction_and_operations_are_loud():
    with pytest.raises(ValueError, match="versioning"):
        SimBucket("sha1")
    with pytest.raises(ValueError, match="absent_if_match"):
        SimBucket("md5", 500)
    with pytest.raises(ValueError):
        SimBucket("opaque", 404, p_alias=0.5)  # needs the world's rng
    b = SimBucket("md5", 404)
    with pytest.raises(ValueError):
        b.apply(Request(DELETE, "k", IF_NONE_MATCH))  # not an S3 operation
    with pytest.raises(ValueError):
        b.apply(Request("POST", "k"))


# --- the property: the bucket is a linearizable S3 -------------------------------------------------------------

KEYS = ["nodes/a", "nodes/b", "owners/x"]
BODIES = ["A", "B", "C"]


class Reference:
    """A sequential S3, written from the spec (DESIGN.md), independent of SimBucket's internals."""

    def __init__(self, versioning: str, flavour: int, p_conflict: float) -> None:
        self.versioning = versioning
        self.absent = NOT_FOUND if flavour == 404 else PRECONDITION_FAILED
        self.p_conflict = p_conflict
        self.objs: dict[str, dict] = {}  # key -> {body, write, read (None until seen)}
        self.tokens_issued: set[str] = set()

    def check_read_token(self, key: str, token: str) -> None:
        o = self.objs[key]
        if self.versioning == "md5":
            assert token == etag(o["body"])
        elif o["read"] is None:
            # the write's token, or an alias no other write ever had
            assert token == o["write"] or token not in self.tokens_issued, token
            o["read"] = token
            self.tokens_issued.add(token)
        else:
            assert token == o["read"]

    def matches(self, key: str, version: str) -> bool:
        o = self.objs[key]
        return version in (o["write"], o["read"]) if self.versioning == "opaque" else version == etag(o["body"])

    def apply(self, req: Request, racing: bool, reply) -> None:
        """Assert `reply` is what this request may get, and take its effect."""
        key = req.key
        if req.op == GET:
            if key not in self.objs:
                assert reply.status == NOT_FOUND
            else:
                assert (reply.status, reply.body) == (OK, self.objs[key]["body"])
                self.check_read_token(key, reply.version)
            return
        if req.op == LIST:
            assert reply.status == OK
            assert [k for k, _ in reply.entries] == sorted(k for k in self.objs if k.startswith(key))
            for k, v in reply.entries:
                self.check_read_token(k, v)
            return
        present = key in self.objs
        if req.cond == IF_MATCH and not present:
            assert reply.status == self.absent
            return
        if req.cond == IF_MATCH and not self.matches(key, req.version):
            assert reply.status == PRECONDITION_FAILED
            return
        if req.cond == IF_NONE_MATCH and present:
            assert reply.status == PRECONDITION_FAILED
            return
        if req.cond is not None and reply.status == CONFLICT:
            assert self.p_conflict > 0 and racing  # 409: only with p_conflict, racing another write in flight
            return
        assert reply.status == OK
        if req.op == DELETE:
            self.objs.pop(key, None)
            return
        if self.versioning == "md5":
            assert reply.version == etag(req.body)
            self.objs[key] = {"body": req.body, "write": reply.version, "read": reply.version}
        else:
            assert reply.version not in self.tokens_issued  # fresh per write
            self.tokens_issued.add(reply.version)
            self.objs[key] = {"body": req.body, "write": reply.version, "read": None}


@settings(max_examples=100, deadline=None)
@given(
    versioning=st.sampled_from(VERSIONINGS),
    flavour=st.sampled_from(FLAVOURS),
    p_conflict=st.sampled_from([0.0, 0.5]),
    p_alias=st.sampled_from([0.0, 0.5]),
    seed=st.integers(0, 2**16),
    data=st.data(),
)
def test_bucket_behaves_like_a_sequential_s3(versioning, flavour, p_conflict, p_alias, seed, data):
    p_alias = p_alias if versioning == "opaque" else 0.0
    rng = random.Random(seed) if (p_conflict or p_alias) else None
    b = SimBucket(versioning, flavour, p_conflict, p_alias, rng)
    ref = Reference(versioning, flavour, p_conflict)
    seen_tokens = ['"bogus"']
    now = 0
    for _ in range(data.draw(st.integers(1, 40), label="length")):
        now += data.draw(st.sampled_from([0, 30, 80, 150]), label="dt")
        op = data.draw(st.sampled_from([GET, PUT, PUT, PUT, DELETE, LIST]), label="op")
        key = data.draw(st.sampled_from(KEYS), label="key")
        if op == LIST:
            req = Request(LIST, data.draw(st.sampled_from(["", "nodes/", "owners/", "zzz"]), label="prefix"))
        elif op == GET:
            req = Request(GET, key)
        else:
            conds = [None, IF_MATCH] + ([IF_NONE_MATCH] if op == PUT else [])
            cond = data.draw(st.sampled_from(conds), label="cond")
            version = data.draw(st.sampled_from(seen_tokens), label="version") if cond == IF_MATCH else None
            body = data.draw(st.sampled_from(BODIES), label="body") if op == PUT else None
            req = Request(op, key, cond, version, body)
        racing = data.draw(st.booleans(), label="racing")
        reply, _prev, _serial = b.apply(req, now, racing)
        ref.apply(req, racing, reply)
        if reply.version:
            seen_tokens.append(reply.version)
        for _k, v in reply.entries or ():
            seen_tokens.append(v)
    assert b.snapshot() == {k: o["body"] for k, o in sorted(ref.objs.items())}
