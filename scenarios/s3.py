"""The real-S3 world: the world core (core.py) against a real S3 endpoint, with boto3.

The same `step` the SimPy world runs (model.MODEL, or a broken model), driven
by real clocks: true time is `time.monotonic()` in ms since the run began,
and each machine's clock is true time plus its drawn offset (within
`max_skew` of true time). The core draws every fault from the run's seeded
RNG, as in the simulation; this module only carries a request to the
endpoint: each one becomes a boto3 call on a thread pool, and every outcome
comes back to one loop thread, which alone calls `step` (so a node's steps
are serialized), fires timers and timeouts, and records the history, judged
by the same checkers. The history also records every fault the core gave a
request or a machine (`fault` events), so that an unknown outcome shows its
cause on the timeline.

What it cannot know, and how the history approximates it (INV-3, `apply`):
a real bucket shows no serial numbers and not the instant a write took
effect. A write is recorded as applied when its answer reaches the world
(also when the fault plan then drops that answer), and serials are the order
in which the world learned of acknowledged writes: the serial an `If-Match`
write replaced is the latest known write of that ETag on that key (a GET of
a version whose write was not yet acknowledged gets a placeholder that the
write claims when its answer arrives); what the writer named is the serial
under which that process learned the ETag. Writes whose answers never came
(a read timeout) are missing from the history.

The endpoint's health is judged, never inferred from the protocol's verdict.
Every call has a deadline (its attempt timeout, T-4) and client timeouts the
world sets (`client_timeouts`: connect within an attempt timeout, a read cut
at ttl + grace); a call still outstanding past its deadline counts as
failing, as one answered with an error does. While some call is failing and
none completes, the endpoint is stalled: a stall longer than ttl + grace
(T-5's takeover span: past it no lease the protocol grants can outlive the
silence) ends the run as an environment failure (`env_failure`, exit 3),
as `NoSuchBucket` does; a shorter one is recorded (`stalls`: its span, the
calls it held) and the run goes on. A quiet phase the bucket did not keep
calm (a stall or an error in it) cannot judge liveness (`not_calm`).

So is the machine's: the loop measures how late it runs each timer (its lag, the history's
`timing_slack_ms`). A lag past `loop_lag_bound_ms` (A / 2) ends the run as an environment failure
(`lag_failure`, exit 3) whose history is judged not at all: a loaded machine's late timers and late
answers would otherwise read as the protocol's verdict, either way.

Must not know: any protocol rule. No `if` about leases belongs here.
"""

from __future__ import annotations

import heapq
import itertools
import os
import queue
import threading
import time
from collections import Counter
from datetime import datetime, timezone
from urllib.parse import urlsplit, urlunsplit

from history import History
from model.actor_data import DATA_PREFIX
from model.io import (
    CONFLICT,
    DELETE,
    FAILED_FAST,
    GET,
    IF_MATCH,
    IF_NONE_MATCH,
    LIST,
    NOT_FOUND,
    OK,
    PRECONDITION_FAILED,
    PUT,
    TIMED_OUT,
    Reply,
    Request,
)
from model.params import Params, validate
from model.records import LEASES_PREFIX

from .core import World

# Timing scaled down so a run takes seconds (still validated by T-2..T-4 and T-6).
S3_PARAMS = Params(ttl_ms=2_000, grace_ms=1_000, safety_ms=400, max_skew_ms=200,
                   heartbeat_period_ms=600, attempt_timeout_ms=500)

DEFAULT_PREFIX_ROOT = "nodelease-check/"
LAG_FRACTION_OF_ATTEMPT = 2  # the loop-lag bound is A / 2 (`loop_lag_bound_ms`)
POOL_SIZE = 32
HEALTH_EVERY_MS = 50  # how often the loop looks at the calls in flight


def client_timeouts(params: Params) -> tuple[float, float]:
    """(connect, read) seconds for the boto3 client, set by the world, never botocore's defaults
    (60 s, then retries): a connection is made within one attempt timeout (T-4); a read may run past
    its attempt (the world wants to learn whether a write its sender gave up on landed) but not past
    ttl + grace, where the world judges a silent endpoint stalled anyway."""
    return params.attempt_timeout_ms / 1000, (params.ttl_ms + params.grace_ms) / 1000


def loop_lag_bound_ms(params: Params) -> int:
    """How late the loop may run a timer before the run's timing no longer stands: half the attempt timeout
    A (250 ms with S3_PARAMS). The checkers judge this world's durations against A with the loop's lag as
    their tolerance (History.timing_slack_ms): LEASE-2 (a) bounds each attempt by A + lag, which must stay
    below 2 A, the attempts of the broken model `long_lease_attempts` it exists to catch; at A / 2 it is
    1.5 A, halfway. And the world records an answer, so a write's apply instant, when the loop gets to it:
    a lag of half an attempt is as far as the history may drift from what ran against margins the
    protocol sizes in A (FN-2's watch of P + A, NL-3's retry that must fit before the next send). Measured
    on the project's shared 2-core machine: 16 to 18 ms over two 12 s runs on moto at a load average of
    5.6; once 241 ms at 4.5, for a test run under `nice`."""
    return params.attempt_timeout_ms // LAG_FRACTION_OF_ATTEMPT


# --- the edge: one Request as one boto3 call ------------------------------------------


class S3Bucket:
    """Turns a model Request into one S3 call and its outcome into a model Reply.

    Keys are the model's keys under `prefix`; LIST strips the prefix again, so
    the model never sees it. Version tokens are the server's ETags, quotes kept.
    Blocking: called from worker threads (boto3 clients are thread-safe).
    """

    def __init__(self, client, bucket: str, prefix: str) -> None:
        from botocore.handlers import add_expect_header

        # No `Expect: 100-continue` on PUT (bodies are at most a few KiB): after SeaweedFS 4.48
        # answers an empty-body If-Match PUT on an absent key with an early 412, the next PUT on
        # that kept-alive connection stalls ~15 s and is answered with the stale 412 although it
        # landed (tests/conformance/differences.py).
        client.meta.events.unregister("before-call.s3", add_expect_header)
        self.client = client
        self.bucket = bucket
        self.prefix = prefix

    def call(self, req: Request) -> tuple[Reply, str | None]:
        """(reply, note). TIMED_OUT means no answer (outcome unknown); `note` names
        an unexpected outcome (an HTTP error other than 404/409/412, a socket error)."""
        from botocore.exceptions import BotoCoreError, ClientError, ConnectTimeoutError, EndpointConnectionError

        try:
            return self._call(req), None
        except ClientError as e:
            status = e.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            code = e.response.get("Error", {}).get("Code", "")
            if code == "NoSuchBucket":
                return Reply(TIMED_OUT), f"HTTP {status} NoSuchBucket"
            if status == 404:
                return Reply(NOT_FOUND), None
            if status == 412:
                return Reply(PRECONDITION_FAILED), None
            if status == 409:  # ConditionalRequestConflict: not applied
                return Reply(CONFLICT), None
            # 5xx, throttling, a refusal: the request may or may not have been applied
            return Reply(TIMED_OUT), f"HTTP {status} {code}".strip()
        except (EndpointConnectionError, ConnectTimeoutError) as e:
            # no connection was made: nothing was sent, so nothing can land
            return Reply(FAILED_FAST), type(e).__name__
        except BotoCoreError as e:  # a read timeout, a connection closed mid-request
            return Reply(TIMED_OUT), type(e).__name__

    def _call(self, req: Request) -> Reply:
        c, b = self.client, self.bucket
        key = self.prefix + req.key
        if req.op == GET:
            r = c.get_object(Bucket=b, Key=key)
            return Reply(OK, r["ETag"], r["Body"].read().decode("utf-8"))
        if req.op == PUT:
            kw = _condition(req)
            r = c.put_object(Bucket=b, Key=key, Body=(req.body or "").encode("utf-8"), **kw)
            return Reply(OK, r["ETag"])
        if req.op == DELETE:
            if req.cond == IF_NONE_MATCH:
                raise ValueError("If-None-Match on DELETE is not an S3 operation")
            c.delete_object(Bucket=b, Key=key, **_condition(req))
            return Reply(OK)
        if req.op == LIST:
            cut = len(self.prefix)
            entries = []
            for page in c.get_paginator("list_objects_v2").paginate(Bucket=b, Prefix=key):
                entries.extend((o["Key"][cut:], o["ETag"]) for o in page.get("Contents", ()))
            return Reply(OK, entries=tuple(sorted(entries)))
        raise ValueError(f"unknown bucket operation {req.op!r}")


def _condition(req: Request) -> dict:
    if req.cond == IF_MATCH:
        return {"IfMatch": req.version}
    if req.cond == IF_NONE_MATCH:
        return {"IfNoneMatch": "*"}
    if req.cond is not None:
        raise ValueError(f"unknown condition {req.cond!r}")
    return {}



# --- the world ------------------------------------------------------------------------------


class _Calls:
    """The threads that make the blocking bucket calls: daemon threads, so that the calls a
    stalled endpoint holds (each cut at its read timeout) never keep a finished run's process
    alive (a ThreadPoolExecutor's threads are joined at exit: 5 s more after a stall was judged)."""

    def __init__(self, size: int, on_error) -> None:
        self._on_error = on_error  # (exception) -> None: a call that raised (a bug of the world)
        self._q: queue.SimpleQueue = queue.SimpleQueue()
        self._closed = False
        self._threads = [threading.Thread(target=self._work, name=f"s3-world_{i}", daemon=True) for i in range(size)]
        for t in self._threads:
            t.start()

    def submit(self, fn, *args) -> None:
        if not self._closed:
            self._q.put((fn, args))

    def _work(self) -> None:
        while True:
            job = self._q.get()
            if job is None or self._closed:
                return
            fn, args = job
            try:
                fn(*args)
            except Exception as e:
                self._on_error(e)

    def shutdown(self, wait: bool = True) -> None:
        """No more calls are made (those queued are dropped); with `wait`, the calls under way end first."""
        self._closed = True
        for _ in self._threads:
            self._q.put(None)
        if wait:
            for t in self._threads:
                t.join()



class _Versions:
    """What the world knows of each key's versions, for the `apply` events (INV-3, INV-4..6)."""

    def __init__(self) -> None:
        self._serials = itertools.count(1)
        self.current: dict[str, int] = {}  # key -> serial of its last known write (0: deleted)
        self.by_etag: dict[tuple[str, str], int] = {}  # (key, etag) -> latest serial with that etag
        self.unclaimed: dict[tuple[str, str], int] = {}  # placeholders: read before their write's answer
        self.body: dict[tuple[str, int], str] = {}  # (key, serial) -> body

    def serial_of(self, key: str, etag: str) -> int:
        """The latest known version of `key` with `etag` (a placeholder if none is known yet)."""
        s = self.by_etag.get((key, etag))
        if s is None:
            s = self.by_etag[(key, etag)] = self.unclaimed[(key, etag)] = next(self._serials)
        return s

    def written(self, key: str, etag: str, body: str) -> int:
        s = self.unclaimed.pop((key, etag), None)
        if s is None:
            s = next(self._serials)
        self.by_etag[(key, etag)] = s
        self.current[key] = s
        self.body[(key, s)] = body
        return s


class S3World(World):
    """The core, interpreted in real time against a real bucket: a loop thread that owns every
    process and the history, a thread pool for the bucket calls, a heap of timers in true time."""

    def __init__(self, bucket: S3Bucket, model, params: Params = S3_PARAMS, model_name: str = "correct",
                 duration_ms: int = 30_000, nodes: int | None = None, actors: int | None = None, seed: int = 0,
                 scenario: str = "swarm", options: dict | None = None, progress=None,
                 progress_every_ms: int = 1_000, lag_bound_ms: int | None = None) -> None:
        self._t0 = time.monotonic()
        self._frozen: int | None = None
        super().__init__(seed, model, scenario, validate(params), model_name, options,
                         duration_ms=duration_ms, nodes=nodes, actors=actors, liveness_floor_ms=0)
        self.bucket = bucket
        self.duration_ms = self.options["fault_ms"] + self.options.get("quiet_ms", 0)
        self.notes: Counter = Counter()  # unexpected outcomes by kind (HTTP 500, ReadTimeoutError, ...)
        self.answers: Counter = Counter()  # (reads or writes, what the bucket answered): did it do any work

        self.versions = _Versions()
        self.keys_written: set[str] = set()  # every key a PUT or DELETE was sent for (for --cleanup)
        self.failure: tuple[str, str] | None = None  # an exception in the model or the world
        # the environment: a bucket that stops answering ends the run as an environment failure
        self.env_failure: str | None = None
        self.failure_limit_ms = self.tg  # a stall longer than ttl + grace ends the run (T-5's span)
        # a loop that ran a timer later than this ends the run too, with no verdict (its timing does not stand)
        self.lag_bound_ms = loop_lag_bound_ms(self.params) if lag_bound_ms is None else lag_bound_ms
        self.lag_failure: str | None = None
        self.stalls: list[dict] = []  # the stalls shorter than that: their spans and the calls they held
        self.not_calm: str | None = None  # why the quiet phase was not calm at the bucket (liveness not judged)
        self._lock = threading.Lock()  # guards what the worker threads and the loop share, below
        self._calls: dict[int, tuple[int, int]] = {}  # call id -> (started, deadline), true ms: calls in flight
        self._call_ids = itertools.count()
        self._last_done_ms = 0  # the last call the endpoint answered without an error
        self._failed: dict[int, int] = {}  # call id -> started: calls answered with an error since then
        self._unanswered: Counter = Counter()  # those errors by kind
        self._stall: dict | None = None  # the stall under way: since when, the calls it holds
        self._next_health_ms = 0
        self._attempts: dict[tuple[int, int], int] = {}  # (process, rid) -> its attempt timeout, ms
        self._quiet_errors = 0
        self._heap: list = []
        self._seq = itertools.count()
        self._inbox: queue.SimpleQueue = queue.SimpleQueue()
        self._pool = _Calls(POOL_SIZE, lambda e: self._inbox.put((self._raise, (e,))))
        self._progress = progress
        self._progress_every_ms = progress_every_ms
        self._stopped = False
        self._acquisitions = 0
        self._scanned = 0

    # --- time and scheduling ------------------------------------------------------------

    @property
    def now(self) -> int:
        """True time: ms since the run began, on the monotonic clock; one instant for everything a
        callback does (as a simulated step), so a send and the clock its process read agree."""
        if self._frozen is not None:
            return self._frozen
        return int((time.monotonic() - self._t0) * 1000)

    def later(self, delay_ms: int, fn, *args) -> None:
        heapq.heappush(self._heap, (self.now + max(0, delay_ms), next(self._seq), fn, args))

    # --- running --------------------------------------------------------------------------

    timer_lag_ms = 0  # the most the loop ran a timer late (History.timing_slack_ms)

    def run(self) -> History:
        self._t0 = time.monotonic()
        end = self.schedule()
        if self._progress is not None:
            self.later(self._progress_every_ms, self._tick)
        try:
            self._loop(end)
        finally:
            self._stopped = True
            # calls a stalled endpoint holds end by their read timeout (ttl + grace): not waited for
            self._pool.shutdown(wait=self.env_failure is None and self.failure is None)
        stop = self.now if self.failure is not None or self.env_failure is not None else end
        if self._stall is not None and self.env_failure is None:
            self._close_stall(stop, open_at_end=True)
        self._judge_quiet()
        events = self.history.events
        self.history.timing_slack_ms = self.timer_lag_ms + 1
        return self.finish(max(stop, events[-1][0]) if events else stop)

    def _loop(self, end: int) -> None:
        heap, inbox = self._heap, self._inbox
        while self.failure is None and self.env_failure is None:
            now = self.now
            if now >= end:
                return
            if now >= self._next_health_ms:
                self._next_health_ms = now + HEALTH_EVERY_MS
                if self._health(now):
                    return
            while heap and heap[0][0] <= now and self.failure is None:
                due, _s, fn, args = heapq.heappop(heap)
                lag = self.now - due  # how late this loop ran the timer (the machine's scheduling)
                if lag > self.timer_lag_ms:
                    self.timer_lag_ms = lag
                    if lag > self.lag_bound_ms:
                        self._too_late(due, lag)
                        return
                self._guard(fn, args)
            wait_ms = min(heap[0][0] if heap else end, end) - self.now
            try:
                fn, args = inbox.get(timeout=max(wait_ms, 0) / 1000) if wait_ms > 0 else inbox.get_nowait()
            except queue.Empty:
                continue
            self._guard(fn, args)
            while self.failure is None:
                try:
                    fn, args = inbox.get_nowait()
                except queue.Empty:
                    break
                self._guard(fn, args)

    def _too_late(self, due: int, lag: int) -> None:
        """The loop ran a timer `lag` ms late, past its bound: the run ends as an environment failure whose
        history is not judged at all (nodelease/s3.py): the recorded timing is not the timing that ran."""
        self.lag_failure = (f"the event loop ran a timer due at {due / 1000:.3f} s {lag} ms late, past the bound of "
                            f"{self.lag_bound_ms} ms (A / {LAG_FRACTION_OF_ATTEMPT}): the machine was too loaded for "
                            f"the run's timing to stand")
        self.env_failure = self.lag_failure

    @staticmethod
    def _raise(error: Exception) -> None:
        """A bucket call's thread raised: the run stops and fails, as for a callback (_guard)."""
        raise error

    def _guard(self, fn, args) -> None:
        self._frozen = int((time.monotonic() - self._t0) * 1000)
        try:
            fn(*args)
        except Exception as e:  # a bug in the model or the world: the run stops and fails
            import traceback

            self.failure = (f"{type(e).__name__}: {e}", traceback.format_exc())
        finally:
            self._frozen = None

    # --- the endpoint's health (judged here, never inferred from a verdict) -----------------------

    def _health(self, now: int) -> bool:
        """Look at the calls in flight: a stall begins when a call is past its deadline (or answered
        with an error) and none completed since it was sent; it ends when one completes. True if the
        endpoint has been stalled longer than ttl + grace: the run ends, an environment failure."""
        with self._lock:
            overdue = {cid: t0 for cid, (t0, deadline) in self._calls.items() if deadline <= now}
            failed = dict(self._failed)
            held = {**failed, **overdue}
            last = self._last_done_ms
        st = self._stall
        if st is not None and last > st["from_ms"]:
            self._close_stall(last)  # a call completed: the stall is over
            st = None
        if not held:
            return False
        since = max(last, min(held.values()))  # silent since the first call it holds was sent
        if st is None:
            st = self._stall = {"from_ms": since, "held": set(), "failed": set()}
        st["held"].update(held)
        st["failed"].update(failed)
        if now - st["from_ms"] > self.failure_limit_ms:
            self._environment_failed(now)
            return True
        return False

    def _close_stall(self, to_ms: int, open_at_end: bool = False) -> None:
        st, self._stall = self._stall, None
        span = to_ms - st["from_ms"]
        if span < self.params.attempt_timeout_ms:
            return  # one slow call among answered ones: not a stall of the endpoint
        quiet = self.quiet_at_ms
        self.stalls.append({"from_s": round(st["from_ms"] / 1000, 3), "to_s": round(to_ms / 1000, 3),
                            "span_s": round(span / 1000, 3), "requests_held": len(st["held"]),
                            "in_quiet_phase": quiet is not None and to_ms > quiet,
                            **({"open_at_end": True} if open_at_end else {})})

    def _environment_failed(self, now: int) -> None:
        st = self._stall
        with self._lock:
            kinds = ", ".join(f"{k} {v}" for k, v in self._unanswered.most_common(3))
        silent = (now - st["from_ms"]) / 1000
        n, failed = len(st["held"]), len(st["failed"])
        if 2 * failed >= n:  # most calls came back with an error (a refused connection, HTTP 5xx): not a hang
            self.env_failure = (f"the endpoint stopped answering: {failed} requests failed over {silent:.1f} s with "
                                f"no answer, longer than ttl + grace ({self.failure_limit_ms / 1000:g} s) ({kinds})"
                                + (f"; {n - failed} more past their deadlines" if n > failed else ""))
            return
        self.env_failure = (f"the endpoint stalled: no request completed for {silent:.1f} s from "
                            f"{st['from_ms'] / 1000:.1f} s into the run, longer than ttl + grace "
                            f"({self.failure_limit_ms / 1000:g} s); {n} requests held ({n - failed} past their "
                            f"deadlines, {failed} failed" + (f": {kinds}" if kinds else "") + ")")

    def _judge_quiet(self) -> None:
        """Liveness is judged in a quiet phase the bucket kept calm: none of its stalls, no errors."""
        if self.quiet_at_ms is None or self.env_failure is not None:
            return
        stalled = [x for x in self.stalls if x["in_quiet_phase"]]
        if stalled:
            x = stalled[0]
            self.not_calm = (f"the bucket was not calm in the quiet phase: it stalled {x['span_s']:g} s from "
                             f"{x['from_s']:g} s ({x['requests_held']} requests held)")
        elif self._quiet_errors:
            self.not_calm = (f"the bucket was not calm in the quiet phase: {self._quiet_errors} requests "
                             f"answered with errors")

    def _watch(self, timeout_ms: int) -> int:
        """A call in flight from now (also while it waits for a free thread), due in `timeout_ms`."""
        cid = next(self._call_ids)
        t0 = int((time.monotonic() - self._t0) * 1000)
        with self._lock:
            self._calls[cid] = (t0, t0 + timeout_ms)
        return cid

    def _bucket_call(self, req, timeout_ms: int, cid: int | None = None) -> tuple[Reply, str | None]:
        """On a worker thread: one call, watched (from `cid`'s submission, or from now): in flight
        until it returns, due at its attempt timeout; answered without an error, it ends any stall."""
        if cid is None:
            cid = self._watch(timeout_ms)
        try:
            reply, note = self.bucket.call(req)
        finally:
            t1 = int((time.monotonic() - self._t0) * 1000)
            with self._lock:
                t0 = self._calls.pop(cid, (t1, t1))[0]
        with self._lock:
            if note is None:
                self._last_done_ms = max(self._last_done_ms, t1)
                self._failed.clear()
                self._unanswered.clear()
            else:
                self._failed[cid] = t0
                self._unanswered[note] += 1
        return reply, note

    def counts(self) -> dict:
        counts = super().counts()
        for note, n in sorted(self.notes.items()):
            counts["outcome " + note] = n
        return counts

    def answers_text(self) -> str:
        """What the bucket answered, for a person: writes and reads apart, most frequent first."""
        parts = []
        for kind in ("writes", "reads"):
            got = sorted(((n, a) for (k, a), n in self.answers.items() if k == kind), reverse=True)
            parts.append(f"{kind}: " + (", ".join(f"{a} {n}" for n, a in got) or "none"))
        return "; ".join(parts)

    def answered_nothing(self) -> str | None:
        """Why the bucket gave the run no work to judge, or None: it refused every request (each answered
        with an error), or every write (no lease could be written); naming the answers it got."""
        fine = (OK, NOT_FOUND, PRECONDITION_FAILED, CONFLICT)
        answered = {k for (k, a) in self.answers if a in fine}
        if not self.answers or answered == {"writes", "reads"}:
            return None
        if not answered:
            return f"the bucket refused every request ({self.answers_text()})"
        if "writes" not in answered and any(k == "writes" for k, _a in self.answers):
            return f"the bucket refused every write ({self.answers_text()})"
        return None

    def acquisitions(self) -> int:
        """Holds begun so far (for progress), counted from the history as it grows."""
        events = self.history.events
        for i in range(self._scanned, len(events)):
            if events[i][2] == "hold_began":
                self._acquisitions += 1
        self._scanned = len(events)
        return self._acquisitions

    def _tick(self) -> None:
        self._progress(self)
        self.later(self._progress_every_ms, self._tick)

    # --- the bucket, at the edge ----------------------------------------------------------------

    def send(self, proc, eff) -> None:
        self._attempts[(proc.index, eff[0])] = eff[2]  # its attempt timeout: the call's deadline
        super().send(proc, eff)

    def to_bucket(self, proc, rid, req, fate, sent_ms) -> None:
        if self._stopped:
            return
        if req.op in (PUT, DELETE):
            self.keys_written.add(req.key)
        timeout = self._attempts.pop((proc.index, rid), self.params.attempt_timeout_ms)
        self._pool.submit(self._call, proc, rid, req, fate, sent_ms, timeout, self._watch(timeout))

    def _call(self, proc, rid, req, fate, sent_ms, timeout_ms, cid) -> None:
        """On a worker thread: the one blocking call; its outcome goes back to the loop."""
        reply, note = self._bucket_call(req, timeout_ms, cid)
        self._inbox.put((self._answered, (proc, rid, req, reply, note, fate, sent_ms)))

    def _answered(self, proc, rid, req, reply, note, fate, sent_ms) -> None:
        self.answers[("writes" if req.op in (PUT, DELETE) else "reads", note or reply.status)] += 1
        if note is not None:
            self.notes[note] += 1
            if self.in_quiet:
                self._quiet_errors += 1
            if "NoSuchBucket" in note:
                self.env_failure = (f"the bucket {self.bucket.bucket!r} is gone (NoSuchBucket); "
                                    f"{sum(self._unanswered.values())} requests failed")
        if reply.status == OK:
            if req.op == GET:
                key = req.key
                s = self.versions.serial_of(key, reply.version)
                self.versions.body.setdefault((key, s), reply.body or "")
                self.learned(proc, key, reply.version, s)
            elif req.op in (PUT, DELETE):
                self._record_apply(proc, req, reply, sent_ms)
        elif reply.status == PRECONDITION_FAILED and req.op in (PUT, DELETE):
            # what it met, as far as the world knows: the latest write of that key it learned of
            v = self.versions
            cur = v.current.get(req.key, 0)
            self.refused(proc, req, v.body.get((req.key, cur)) if cur else None, sent_ms, reply.status)
        elif reply.status == NOT_FOUND and req.cond is not None and req.op in (PUT, DELETE):
            self.refused(proc, req, None, sent_ms, reply.status)  # an If-Match on an absent object
        elif reply.status == CONFLICT and req.op in (PUT, DELETE):
            # a real server's 409: the write the world saw in flight to that key meanwhile, if any
            self.conflicted(proc, req, sent_ms, self.racing_write(proc.index, rid, req.key))
        if reply.status == TIMED_OUT:
            if req.cond is not None:
                self.flight_ends(proc, rid, req.key, self.now)
            return  # no answer: the timeout answers
        self.bucket_answered(proc, rid, req, reply, fate)

    def _record_apply(self, proc, req, reply, sent_ms) -> None:
        """Serials for a write or delete that took effect (see the module docstring)."""
        v = self.versions
        key = req.key
        if req.cond == IF_MATCH:
            prev = v.serial_of(key, req.version)
        elif req.cond == IF_NONE_MATCH:
            prev = 0
        else:
            prev = v.current.get(key, 0)
        prev_body = v.body.get((key, prev)) if prev else None
        if req.op == PUT:
            serial = v.written(key, reply.version, req.body or "")
        else:
            serial = 0
            v.current[key] = 0
        self.applied(proc, req, reply.version, prev, serial, prev_body, sent_ms)

    def remove_object(self, key: str) -> None:
        if not self._stopped:
            a = self.params.attempt_timeout_ms
            self._pool.submit(self._bucket_call, Request(DELETE, key), a, self._watch(a))

    def read_bucket(self, then) -> None:
        if not self._stopped:
            self._pool.submit(self._read_all, then)

    def _read_all(self, then) -> None:
        """On a worker thread: the bodies under leases/ and the keys under wal/."""
        leases = {}
        a = self.params.attempt_timeout_ms
        listed = self._bucket_call(Request(LIST, LEASES_PREFIX), a)[0]
        for key, _etag in listed.entries or ():
            got = self._bucket_call(Request(GET, key), a)[0]
            if got.status == OK:
                leases[key] = got.body or ""
        data = self._bucket_call(Request(LIST, DATA_PREFIX), a)[0]
        self._inbox.put((then, (leases, [k for k, _e in data.entries or ()])))


# --- setup: the endpoint, the bucket, the prefix ------------------------------------------------


def redact_url(url: str) -> str:
    """The endpoint without any user:password part, for reports and messages."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


def new_run_id() -> str:
    """A run's id, unique per run: <utc timestamp>-<random> (not from the seeded RNG). Reports
    are named by it, so two runs never overwrite each other's, whatever their prefix."""
    return f"{datetime.now(timezone.utc).strftime('%Y%m%dT%H%M%SZ')}-{os.urandom(4).hex()}"


def new_prefix(run_id: str) -> str:
    """The run's own prefix: nodelease-check/<run id>/."""
    return f"{DEFAULT_PREFIX_ROOT}{run_id}/"


def normalize_prefix(prefix: str) -> str:
    p = prefix.lstrip("/")
    return p if p.endswith("/") else p + "/"


class SetupError(Exception):
    """The endpoint, bucket, credentials or prefix cannot be used: one line, exit 2."""


def make_client(url: str, region: str | None = None, addressing_style: str | None = None,
                params: Params = S3_PARAMS):
    """A boto3 S3 client for `url` from the standard credential chain, sending each request once (the
    model retries, NL-3, OR-6) with the world's own timeouts (`client_timeouts`).

    One attempt: botocore's `retries={"max_attempts": 1}` would be one retry (it counts retries), and in
    standard mode a write that applied and was answered 5xx, or whose connection closed, is sent again
    and answered 412 by its own object (measured against moto and SeaweedFS,
    tests/conformance/test_sdk_retries.py): the world would record a refusal of a write that landed.
    With `total_max_attempts = 1` a 5xx or a closed connection reaches the model as `timed_out`
    (outcome unknown), 409 as `conflict`, 412 as `precondition_failed`."""
    import boto3
    from botocore.config import Config

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SetupError(f"--s3 wants an http:// or https:// endpoint URL, got {redact_url(url)!r}")
    session = boto3.Session(region_name=region) if region else boto3.Session()
    if session.get_credentials() is None:
        raise SetupError("no AWS credentials found (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
                         "or AWS_PROFILE, or a shared credentials file)")
    if addressing_style is None:
        addressing_style = "virtual" if parts.hostname.endswith(".amazonaws.com") else "path"
    connect_s, read_s = client_timeouts(params)
    kw = dict(s3={"addressing_style": addressing_style}, retries={"total_max_attempts": 1, "mode": "standard"},
              connect_timeout=connect_s, read_timeout=read_s, max_pool_connections=POOL_SIZE)
    try:  # botocore >= 1.36 adds checksums to every PUT unless told not to; S3-compatibles may refuse them
        config = Config(request_checksum_calculation="when_required", response_checksum_validation="when_required",
                        **kw)
    except TypeError:
        config = Config(**kw)
    client = session.client("s3", endpoint_url=url, region_name=region or session.region_name or "us-east-1",
                            config=config)
    ops = client.meta.service_model
    if ("IfMatch" not in ops.operation_model("PutObject").input_shape.members
            or "IfMatch" not in ops.operation_model("DeleteObject").input_shape.members):
        import botocore

        raise SetupError(f"this boto3/botocore ({botocore.__version__}) cannot send conditional PUT and DELETE "
                         f"(If-Match): upgrade boto3")
    return client


def _explain(e: Exception, url: str, bucket: str, doing: str) -> str:
    """One line for an error met while checking the endpoint, bucket or prefix."""
    from botocore.exceptions import (
        ClientError,
        ConnectTimeoutError,
        EndpointConnectionError,
        NoCredentialsError,
        PartialCredentialsError,
    )

    where = redact_url(url)
    if isinstance(e, (NoCredentialsError, PartialCredentialsError)):
        return f"no usable AWS credentials: {e}"
    if isinstance(e, (EndpointConnectionError, ConnectTimeoutError)):
        return f"cannot reach the endpoint {where} ({type(e).__name__})"
    if isinstance(e, ClientError):
        status = e.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        code = e.response.get("Error", {}).get("Code") or ""
        if status == 404 or code == "NoSuchBucket":
            return f"bucket {bucket!r} does not exist at {where}"
        if status == 403 or code in ("AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch"):
            return (f"access denied {doing} bucket {bucket!r} at {where} (HTTP 403{' ' + code if code != '403' else ''}): "
                    f"check the credentials and the bucket's policy")
        if status == 301:
            region = e.response.get("ResponseMetadata", {}).get("HTTPHeaders", {}).get("x-amz-bucket-region")
            return f"bucket {bucket!r} is in another region{' (' + region + ')' if region else ''}: pass --region"
        return f"{doing} bucket {bucket!r} at {where} failed: HTTP {status} {code}".strip()
    return f"{doing} bucket {bucket!r} at {where} failed: {type(e).__name__}: {e}"


def open_bucket(client, url: str, bucket: str, prefix: str, reuse_prefix: bool = False) -> S3Bucket:
    """Check the bucket is there and reachable, and that the prefix holds nothing (unless reused)."""
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        client.head_bucket(Bucket=bucket)
    except (BotoCoreError, ClientError) as e:
        raise SetupError(_explain(e, url, bucket, "checking")) from None
    try:
        r = client.list_objects_v2(Bucket=bucket, Prefix=prefix, MaxKeys=1)
    except (BotoCoreError, ClientError) as e:
        raise SetupError(_explain(e, url, bucket, "listing")) from None
    if r.get("Contents") and not reuse_prefix:
        raise SetupError(f"the prefix {prefix!r} of bucket {bucket!r} already holds objects "
                         f"(e.g. {r['Contents'][0]['Key']!r}); choose another --prefix, or pass --reuse-prefix")
    return S3Bucket(client, bucket, prefix)


def cleanup(bucket: S3Bucket, keys_written: set[str]) -> int:
    """Delete the keys this run wrote (and nothing else under the prefix). Returns how many."""
    deleted = 0
    listed = bucket.call(Request(LIST, ""))[0]
    if listed.status != OK:
        raise SetupError(f"--cleanup: cannot list the prefix {bucket.prefix!r}")
    for key, _etag in listed.entries:
        if key in keys_written:
            if bucket.call(Request(DELETE, key))[0].status == OK:
                deleted += 1
    return deleted


APPROXIMATIONS = (
    "apply events are recorded when a write's answer reaches the world (the instant it took effect is "
    "unknown); serials are the order in which acknowledged writes became known, the replaced version of an "
    "If-Match write is the latest known write of its ETag on that key, a write whose answer never came "
    "is missing"
)


