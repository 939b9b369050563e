"""The simulated bucket held to real S3 servers: same operations, same outcomes.

A Hypothesis state machine sends the same sequence of GET, PUT (If-Match,
If-None-Match: *, unconditional), DELETE (If-Match, unconditional) and LIST
to scenarios.bucket.SimBucket, in the flavour that emulates the server
(differences.FLAVOURS), and to the server itself through scenarios.s3.S3Bucket,
the very translation the real-S3 world uses; every reply must be equal
(status, ETag, body, listing). A failure prints the shrunk sequence.

Sequences are sequential: one request at a time (SeaweedFS holds back losing
writers under contention, and a race's winner is not part of the contract).
Bodies come from four values and If-Match tokens are their MD5 ETags (or a
token no body has), so absent keys, stale tokens and A-B-A rewrites all occur.
"""

from __future__ import annotations

import hashlib
import threading
import uuid
from collections import Counter

from hypothesis import HealthCheck, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule, run_state_machine_as_test

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
    Reply,
    Request,
)
from scenarios.bucket import SimBucket
from scenarios.s3 import S3Bucket

from .differences import DIFFERENCES, FLAVOURS
from .servers import client, skip_if_too_loaded

BUCKET = "conformance"
KEYS = ("a", "b", "d/c", "d/e")
PREFIXES = ("", "d/", "a", "x")
BODIES = ("A", "B", "C", "")
NO_SUCH_ETAG = '"00000000000000000000000000000000"'


def etag(body: str) -> str:
    return '"' + hashlib.md5(body.encode()).hexdigest() + '"'


TOKENS = tuple(etag(b) for b in BODIES) + (NO_SUCH_ETAG,)
EXAMPLES = 60  # sequences per server
STEPS = 25  # at most this many requests per sequence

RUNS: Counter = Counter()  # (server, "examples" | "requests") -> count, for the report


def real_bucket(server) -> S3Bucket:
    """A fresh, empty prefix of the server's test bucket."""
    server.create_bucket(BUCKET)
    return S3Bucket(server.client(), BUCKET, f"conformance/{uuid.uuid4().hex}/")


def sim_bucket(server_name: str) -> SimBucket:
    return SimBucket(**FLAVOURS[server_name])


def machine_for(server):
    class SameOutcomes(RuleBasedStateMachine):
        """Every request goes to both buckets; the replies must be equal."""

        def __init__(self) -> None:
            super().__init__()
            self.sim = sim_bucket(server.name)
            self.real = real_bucket(server)
            RUNS[(server.name, "examples")] += 1

        def both(self, req: Request) -> None:
            RUNS[(server.name, "requests")] += 1
            want = self.sim.apply(req)[0]
            got = self.real.call(req)[0]
            assert got == want, f"{server.name} answered {got} where the simulated bucket answered {want} to {req}"

        @rule(key=st.sampled_from(KEYS))
        def get(self, key):
            self.both(Request(GET, key))

        @rule(key=st.sampled_from(KEYS), body=st.sampled_from(BODIES))
        def put(self, key, body):
            self.both(Request(PUT, key, None, None, body))

        @rule(key=st.sampled_from(KEYS), body=st.sampled_from(BODIES))
        def put_if_none_match(self, key, body):
            self.both(Request(PUT, key, IF_NONE_MATCH, None, body))

        @rule(key=st.sampled_from(KEYS), token=st.sampled_from(TOKENS), body=st.sampled_from(BODIES))
        def put_if_match(self, key, token, body):
            self.both(Request(PUT, key, IF_MATCH, token, body))

        @rule(key=st.sampled_from(KEYS))
        def delete(self, key):
            self.both(Request(DELETE, key))

        @rule(key=st.sampled_from(KEYS), token=st.sampled_from(TOKENS))
        def delete_if_match(self, key, token):
            self.both(Request(DELETE, key, IF_MATCH, token))

        @rule(prefix=st.sampled_from(PREFIXES))
        def list(self, prefix):
            self.both(Request(LIST, prefix))

    return SameOutcomes


def test_same_outcomes_as_the_simulated_bucket(server):
    run_state_machine_as_test(
        machine_for(server),
        settings=settings(max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None,
                          suppress_health_check=list(HealthCheck)),
    )
    print(f"\nconformance {server.name}: {RUNS[(server.name, 'examples')]} sequences, "
          f"{RUNS[(server.name, 'requests')]} requests, the same outcomes as SimBucket{FLAVOURS[server.name]}")
    assert RUNS[(server.name, "examples")] >= EXAMPLES


def test_a_b_a_rewrite_lets_a_stale_if_match_succeed(server):
    """ETags are MD5s of the body: after A, B, A a writer holding A's first ETag succeeds.
    INV-3 must see that write as naming a version older than the one it replaced."""
    for bucket in (real_bucket(server), sim_bucket(server.name)):
        call = bucket.call if isinstance(bucket, S3Bucket) else (lambda r, b=bucket: b.apply(r))
        first = call(Request(PUT, "k", IF_NONE_MATCH, None, "A"))[0]
        assert first.status == OK and first.version == etag("A")
        assert call(Request(PUT, "k", IF_MATCH, first.version, "B"))[0].status == OK
        third = call(Request(PUT, "k", IF_MATCH, etag("B"), "A"))[0]
        assert third == first  # the same bytes, the same token
        stale = call(Request(PUT, "k", IF_MATCH, first.version, "C"))[0]
        assert stale.status == OK, f"{type(bucket).__name__} on {server.name}: {stale}"


def test_the_documented_flavour_of_each_server(server):
    """If-Match on an absent key: 404 on moto (as on AWS), 412 on SeaweedFS; a failed
    condition on a present key is 412 on both; an unconditional DELETE of nothing is ok."""
    real = real_bucket(server)
    absent = NOT_FOUND if FLAVOURS[server.name]["absent_if_match"] == 404 else PRECONDITION_FAILED
    assert real.call(Request(DELETE, "k", IF_MATCH, etag("A")))[0].status == absent
    assert real.call(Request(PUT, "k", IF_MATCH, etag("A"), "B"))[0].status == absent
    assert real.call(Request(DELETE, "k"))[0].status == OK
    assert real.call(Request(PUT, "k", IF_NONE_MATCH, None, "A"))[0].status == OK
    assert real.call(Request(PUT, "k", IF_NONE_MATCH, None, "A"))[0].status == PRECONDITION_FAILED
    assert real.call(Request(PUT, "k", IF_MATCH, NO_SUCH_ETAG, "A"))[0].status == PRECONDITION_FAILED
    assert real.call(Request(GET, "k"))[0].version == etag("A")


def test_racing_conditional_writes_have_one_winner(server):
    """Writers racing with one If-Match token: exactly one lands; the others fail their
    condition (412) or, on AWS only, conflict (409). Few rounds: losers may be held back.

    Except on moto: moto 5.2.1 checks If-Match and then writes, with no lock between
    (moto/s3/responses.py, put_object), so two racing writers can both land: seen in the
    default suite on a loaded machine (outcomes ok, ok, 412, 412). It is a row of
    differences.DIFFERENCES ("conditional writes racing on one key"); on moto this test holds
    it to that row (one or more winners, never a status outside the set), on every other server
    to exactly one."""
    real = real_bucket(server)
    winners_at_least_one = server.name == "moto"  # differences.py: moto's race has no lock
    for round_ in range(3):
        key = f"race{round_}"
        base = real.call(Request(PUT, key, None, None, "base"))[0].version
        outcomes: list[str] = []
        lock = threading.Lock()

        def write(i: int) -> None:
            status = real.call(Request(PUT, key, IF_MATCH, base, f"writer {i}"))[0].status
            with lock:
                outcomes.append(status)

        threads = [threading.Thread(target=write, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        if winners_at_least_one:
            assert outcomes.count(OK) >= 1, outcomes
        else:
            assert outcomes.count(OK) == 1, outcomes
        assert set(outcomes) <= {OK, PRECONDITION_FAILED, CONFLICT}, outcomes


def test_the_difference_table_names_every_flavour():
    servers = ("moto", "seaweedfs")
    assert all(s in FLAVOURS for s in servers)
    assert any("absent" in row[0] for row in DIFFERENCES)


def test_seaweedfs_desynchronises_after_an_early_412_to_expect_100_continue(seaweedfs_server):
    """Why scenarios.s3.S3Bucket sends PUTs without `Expect: 100-continue` (boto3's default):
    SeaweedFS 4.48 answers an empty-body If-Match PUT on an absent key with 412 before the
    100 Continue, and the next PUT on that kept-alive connection then stalls (~15 s) and is
    answered with the stale 412 although it landed. Probed here with boto3's default client,
    bounded by a 3 s read timeout (printed: the desync is timing-dependent); the world's own
    client must get the right answers every time."""
    real = real_bucket(seaweedfs_server)
    default = client(seaweedfs_server.url, read_timeout_s=3)  # Expect: 100-continue, as boto3 sends it
    key = real.prefix + "b"
    from botocore.exceptions import ClientError, ReadTimeoutError

    try:
        default.put_object(Bucket=real.bucket, Key=real.prefix + "a", Body=b"", IfMatch=etag("A"))
    except ClientError as e:
        assert e.response["ResponseMetadata"]["HTTPStatusCode"] == 412
    try:
        default.put_object(Bucket=real.bucket, Key=key, Body=b"B", IfNoneMatch="*")
        answered = "ok"
    except ReadTimeoutError:
        answered = "no answer in 3 s"
    except ClientError as e:
        answered = str(e.response["ResponseMetadata"]["HTTPStatusCode"])
    # The desync depends on how the server's reads interleave with the client's (seen in most
    # runs here, not all): what this test pins is that the world's own client is immune.
    print(f"boto3's default client, second PUT after an early 412: {answered}")
    # the same two requests through S3Bucket (no Expect header) behave, every time
    other = real_bucket(seaweedfs_server)
    assert other.call(Request(PUT, "a", IF_MATCH, etag("A"), ""))[0].status == PRECONDITION_FAILED
    assert other.call(Request(PUT, "b", IF_NONE_MATCH, None, "B"))[0] == Reply(OK, etag("B"))


def test_the_real_s3_world_runs_on_seaweedfs(seaweedfs_server):
    """The correct model for 10 s against SeaweedFS, with the default fault plan: every
    checker passes (the timed runs against moto, 12 s and, in the slow set, 30 s, are in tests/scenarios/test_s3_world.py)."""
    from checkers import check_all
    from model import MODEL
    from scenarios.s3 import S3_PARAMS, S3World

    world = S3World(real_bucket(seaweedfs_server), MODEL, S3_PARAMS, "correct", 10_000, seed=4, scenario="lossy")
    history = world.run()
    skip_if_too_loaded(world.lag_failure)
    assert world.failure is None, world.failure
    assert world.bucket_requests > 50 and any(e[2] == "lease_valid" for e in history.events)
    assert check_all(history) == []
