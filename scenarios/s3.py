"""The real-S3 world: the model's effects executed with boto3 against an S3 endpoint.

The same `step` the SimPy world runs (model.MODEL, or a broken model), driven
by real clocks: true time is `time.monotonic()` in ms since the run began,
and each machine's clock is true time plus an offset, the offsets at most
`max_skew` apart (one pair exactly at the bound). Every Send becomes a boto3
call on a thread pool; every outcome comes back to one loop thread, which
alone calls `step` (so a node's steps are serialized), fires timers and
timeouts, and records the history with the same event shapes as
scenarios/sim.py, judged by the same checkers.

Faults are injected at the edge, from the run's one seeded RNG: a reply
dropped after its request landed, a write held back until after its sender
timed out (late-applied), a request failed fast, a node cut off from the
bucket for a window, a twin (a second process under a live node id), a kill
followed by the supervisor's restart. After the fault phase comes a quiet
phase in which liveness is judged (INV-4, INV-7), as in the simulation.

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

Must not know: any protocol rule. No `if` about leases belongs here.
"""

from __future__ import annotations

import heapq
import itertools
import os
import queue
import random
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from urllib.parse import urlsplit, urlunsplit

from checkers.history import Clock, History, Process
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
    CancelTimer,
    Command,
    Exit,
    Forward,
    Mark,
    Observe,
    ProcessStarted,
    Reply,
    ReplyArrived,
    Request,
    Send,
    SetTimer,
    TimerFired,
)
from model.params import Params, validate

from .processes import Proc as _Proc, Slot as _Slot, state_line

WORLD = -1  # the proc index of events the world itself records

# Timing scaled down so a run takes seconds (still validated by T-2..T-4).
S3_PARAMS = Params(ttl_ms=2_000, grace_ms=1_000, safety_ms=400, max_skew_ms=200,
                   heartbeat_period_ms=600, attempt_timeout_ms=500)

DEFAULT_PREFIX_ROOT = "nodelease-check/"
# A request's socket read timeout: far beyond every attempt timeout the model uses
# (records 0.5 s, segment uploads 10 s), so the world learns whether a write landed
# even after its sender gave up on it.
READ_TIMEOUT_S = 15.0
CONNECT_TIMEOUT_S = 2.0
POOL_SIZE = 32


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


# --- the fault plan -----------------------------------------------------------------------


def draw_options(rng: random.Random, params: Params, duration_ms: int, nodes: int, actors: int,
                 faults: bool = True) -> dict:
    """One run's world: workload rates, fault rates and fault times. Plain data for the history."""
    p = params
    o: dict = {"nodes": nodes, "actors": actors}
    # the quiet phase: long enough for every bound of the protocol to pass (INV-4, INV-7);
    # runs too short for one have none, and liveness is not judged
    quiet = 4 * (p.ttl_ms + p.grace_ms)
    o["quiet_ms"] = quiet if duration_ms >= 2 * quiet else 0
    o["fault_ms"] = duration_ms - o["quiet_ms"]
    fault = o["fault_ms"]
    o["request_gap_ms"] = 300
    o["hibernate_gap_ms"] = 1_500
    o["move_gap_ms"] = 4_000
    o["restart_ms_min"] = 100
    o["restart_ms_max"] = 1_000
    o["late_ms_max"] = 2 * p.attempt_timeout_ms
    o["faults"] = faults
    o["p_fail_fast"] = 0.02 if faults else 0.0
    o["p_reply_lost"] = 0.03 if faults else 0.0
    o["p_late"] = 0.03 if faults else 0.0
    names = [f"n{i}" for i in range(nodes)]
    # [node, at, length, mode]: a node cut off from the bucket, some past ttl + grace
    o["outages"] = [[names[rng.randrange(nodes)], rng.randint(0, max(0, fault - 1_000)),
                     rng.choice((rng.randint(300, p.ttl_ms), rng.randint(p.ttl_ms, 2 * (p.ttl_ms + p.grace_ms)))),
                     rng.choice(("blackhole", "refuse"))] for _ in range(1 if faults else 0)]
    o["crashes"] = [[names[rng.randrange(nodes)], rng.randint(0, max(0, fault - 1_000))]
                    for _ in range(1 if faults else 0)]  # [node, at]: killed, restarted by the supervisor
    o["twins"] = [[names[rng.randrange(nodes)], rng.randint(0, max(0, fault - 1_000)),
                   rng.randint(p.ttl_ms, 3 * p.ttl_ms)] for _ in range(1 if faults and fault > 3_000 else 0)]
    o["quiet_crash"] = bool(faults and o["quiet_ms"])  # an owner dies early in the quiet phase (INV-7)
    machines = [f"m{i}" for i in range(nodes)] + [f"t{k}" for k in range(len(o["twins"]))]
    base = rng.randint(0, 1_000_000)  # local time is never true time
    o["clocks"] = {m: [base + rng.randint(0, p.max_skew_ms), 0] for m in machines}
    if len(machines) >= 2:  # two clocks exactly max_skew apart
        lo, hi = rng.sample(range(len(machines)), 2)
        o["clocks"][machines[lo]] = [base, 0]
        o["clocks"][machines[hi]] = [base + p.max_skew_ms, 0]
    return o


# --- the world ------------------------------------------------------------------------------


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


class S3World:
    """One run against a real bucket: a loop thread that owns every process and the
    history, a thread pool for the bucket calls, a heap of timers in true time."""

    def __init__(self, bucket: S3Bucket, model, params: Params = S3_PARAMS, model_name: str = "correct",
                 duration_ms: int = 30_000, nodes: int = 3, actors: int = 6, seed: int = 0,
                 options: dict | None = None, progress=None, progress_every_ms: int = 1_000) -> None:
        self.bucket = bucket
        self.model = model
        self.params = validate(params)
        self.seed = seed
        self.rng = random.Random(seed)
        self.options = options if options is not None else draw_options(self.rng, self.params, duration_ms,
                                                                          nodes, actors)
        o = self.options
        self.duration_ms = o["fault_ms"] + o["quiet_ms"]
        self.fault = {k: o[k] for k in ("p_fail_fast", "p_reply_lost", "p_late")}
        self.in_quiet = False
        self.history = History(seed, model_name, "s3", self.params.to_dict(), o)
        self.rules: Counter = Counter()
        self.bucket_requests = 0
        self.notes: Counter = Counter()  # unexpected outcomes by kind (HTTP 500, ReadTimeoutError, ...)
        self.procs: list[_Proc] = []
        self.clocks = {m: Clock(off, drift) for m, (off, drift) in o["clocks"].items()}
        self.cut: dict[str, str] = {}
        self.slots = [_Slot(f"n{i}", f"m{i}") for i in range(o["nodes"])]
        self.node_ids = [s.node_id for s in self.slots]
        self.actors = [f"t{k % 2}/c/a{k}" for k in range(o["actors"])]
        self.versions = _Versions()
        self.keys_written: set[str] = set()  # every key a PUT or DELETE was sent for (for --cleanup)
        self.failure: tuple[str, str] | None = None  # an exception in the model or the world
        self.acquisitions = 0
        self._requests = 0
        self._heap: list = []
        self._seq = itertools.count()
        self._inbox: queue.SimpleQueue = queue.SimpleQueue()
        self._pool = ThreadPoolExecutor(POOL_SIZE, thread_name_prefix="s3-world")
        self._t0 = 0.0
        self._progress = progress
        self._progress_every_ms = progress_every_ms
        self._stopped = False

    # --- time and scheduling ------------------------------------------------------------

    def now(self) -> int:
        """True time: ms since the run began, on the monotonic clock."""
        return int((time.monotonic() - self._t0) * 1000)

    def later(self, delay_ms: int, fn, *args) -> None:
        heapq.heappush(self._heap, (self.now() + max(0, delay_ms), next(self._seq), fn, args))

    def at(self, t_ms: int, fn, *args) -> None:
        heapq.heappush(self._heap, (t_ms, next(self._seq), fn, args))

    # --- running --------------------------------------------------------------------------

    def run(self) -> History:
        o = self.options
        self._t0 = time.monotonic()
        for slot in self.slots:
            self.start_process(slot)
        self.at(self.rng.randint(0, o["request_gap_ms"]), self._client_request)
        self.at(self.rng.randint(0, 2 * o["hibernate_gap_ms"]), self._hibernate)
        self.at(self.rng.randint(0, 2 * o["move_gap_ms"]), self._move)
        for who, t, length, mode in o["outages"]:
            self.at(t, self._outage_begins, who, length, mode)
        for node_id, t in o["crashes"]:
            self.at(t, self._crash_node, node_id)
        for k, (node_id, t, life) in enumerate(o["twins"]):
            self.at(t, self._twin_begins, node_id, f"t{k}", life)
        end = o["fault_ms"]
        if o["quiet_ms"]:
            tg = self.params.ttl_ms + self.params.grace_ms
            self.at(end, self._quiet_begins)
            if o["quiet_crash"]:
                self.at(end + tg // 3, self._quiet_crash)
            end += o["quiet_ms"]
            # every actor is requested once more before the end (INV-4), as the SimPy world does
            self.at(end - 4 * tg // 5, self._final_round)
            self.at(end - 2 * tg // 5, self._final_round)
        if self._progress is not None:
            self.at(self._progress_every_ms, self._tick)
        try:
            self._loop(end)
        finally:
            self._stopped = True
            self._pool.shutdown(wait=True, cancel_futures=True)
        stop = self.now() if self.failure is not None else end
        events = self.history.events
        return self.finish(max(stop, events[-1][0]) if events else stop)

    def _loop(self, end: int) -> None:
        heap, inbox = self._heap, self._inbox
        while self.failure is None:
            now = self.now()
            if now >= end:
                return
            while heap and heap[0][0] <= now and self.failure is None:
                _t, _s, fn, args = heapq.heappop(heap)
                self._guard(fn, args)
            wait_ms = min(heap[0][0] if heap else end, end) - self.now()
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

    def _guard(self, fn, args) -> None:
        try:
            fn(*args)
        except Exception as e:  # a bug in the model or the world: the run stops and fails
            import traceback

            self.failure = (f"{type(e).__name__}: {e}", traceback.format_exc())

    def finish(self, end: int) -> History:
        h = self.history
        h.end_ms = end
        h.rules = dict(sorted(self.rules.items()))
        h.counts = {"bucket_requests": self.bucket_requests, "processes": len(self.procs),
                    "client_requests": self._requests}
        for note, n in sorted(self.notes.items()):
            h.counts["outcome " + note] = n
        return h

    def _tick(self) -> None:
        self._progress(self.now(), self.duration_ms, self.bucket_requests, self.acquisitions)
        self.later(self._progress_every_ms, self._tick)

    def record(self, proc: int, kind: str, fields: tuple = ()) -> None:
        if kind == "hold_began":
            self.acquisitions += 1
        self.history.events.append((self.now(), proc, kind, fields))

    # --- processes ----------------------------------------------------------------------------

    def start_process(self, slot: _Slot) -> _Proc:
        instance = f"{self.rng.getrandbits(32):08x}"
        clock = self.clocks[slot.machine]
        proc = _Proc(len(self.procs), slot.node_id, instance, slot.machine, clock, slot, self.model.step)
        self.procs.append(proc)
        slot.proc = proc
        self.history.processes.append(Process(slot.node_id, instance, slot.machine, clock.offset_ms, 0))
        self.record(proc.index, "start", (slot.node_id, instance, slot.machine))
        self.deliver(proc, ProcessStarted(slot.node_id, instance, self.params))
        return proc

    def deliver(self, proc: _Proc, inp) -> None:
        if not proc.alive:
            return
        state, effects = proc.step(proc.state, inp, proc.clock.local(self.now()))
        proc.state = state
        for eff in effects:
            t = type(eff)
            if t is Send:
                self.send(proc, eff)
            elif t is SetTimer:
                proc.timers[eff.key] = token = next(self._seq)
                self.at(proc.clock.true_at(eff.at_ms), self._timer_fires, proc, eff.key, token)
            elif t is CancelTimer:
                proc.timers.pop(eff.key, None)
            elif t is Mark:
                self.rules[eff.rule] += 1
            elif t is Observe:
                self.record(proc.index, eff.kind, eff.fields)
            elif t is Forward:
                self.later(self.rng.randint(1, 20), self._forwarded, eff.node_id, eff.command)
            elif t is Exit:
                self.record(proc.index, "exit", (eff.status, eff.reason))
                self.end_process(proc, eff.status)
            else:
                raise TypeError(f"not an effect: {eff!r}")

    def _timer_fires(self, proc, key, token) -> None:
        if proc.timers.get(key) == token:
            del proc.timers[key]
            self.deliver(proc, TimerFired(key))

    def end_process(self, proc: _Proc, status: int | None = None) -> None:
        """The process is gone (exit `status`, or a kill when None); the supervisor restarts
        a supervised one that failed, same id, new instance."""
        proc.alive = False
        proc.timers.clear()
        proc.pending.clear()
        slot = proc.slot
        if slot.wanted and slot.proc is proc and status != 0:
            o = self.options
            self.later(self.rng.randint(o["restart_ms_min"], o["restart_ms_max"]), self._restart, slot)

    def _restart(self, slot) -> None:
        if slot.wanted and (slot.proc is None or not slot.proc.alive):
            self.start_process(slot)

    def live_proc(self, node_id: str) -> _Proc | None:
        for slot in self.slots:
            if slot.node_id == node_id and slot.proc is not None and slot.proc.alive:
                return slot.proc
        return None

    # --- the bucket, at the edge ----------------------------------------------------------------

    def _is_cut(self, machine: str) -> str | None:
        return self.cut.get(machine) or self.cut.get("*") if self.cut else None

    def send(self, proc: _Proc, eff: Send) -> None:
        self.bucket_requests += 1
        rng, f = self.rng, self.fault
        req, rid = eff.request, eff.request_id
        proc.pending[rid] = True
        self.later(eff.timeout_ms, self._timed_out, proc, rid)
        if req.op in (PUT, DELETE):
            self.keys_written.add(req.key)
        cut = self._is_cut(proc.machine)
        if cut == "blackhole":
            return  # never sent: the timeout answers
        if cut == "refuse" or (f["p_fail_fast"] and rng.random() < f["p_fail_fast"]):
            self.later(rng.randint(1, 20), self._reply, proc, rid, Reply(FAILED_FAST))
            return
        if f["p_late"] and req.op in (PUT, DELETE) and rng.random() < f["p_late"]:
            # held back until after its sender gave up: applied late
            self.later(eff.timeout_ms + rng.randint(1, self.options["late_ms_max"]), self._dispatch,
                       proc, rid, req, False)
            return
        drop = bool(f["p_reply_lost"] and req.op != GET and rng.random() < f["p_reply_lost"])
        self._dispatch(proc, rid, req, drop)

    def _dispatch(self, proc, rid, req, drop_reply: bool) -> None:
        if self._stopped:
            return
        self._pool.submit(self._call, proc, rid, req, drop_reply)

    def _call(self, proc, rid, req, drop_reply) -> None:
        """On a worker thread: the one blocking call; its outcome goes back to the loop."""
        reply, note = self.bucket.call(req)
        self._inbox.put((self._answered, (proc, rid, req, reply, note, drop_reply)))

    def _answered(self, proc, rid, req, reply, note, drop_reply) -> None:
        if note is not None:
            self.notes[note] += 1
        if reply.status == OK:
            if req.op == GET:
                key = req.key
                s = self.versions.serial_of(key, reply.version)
                self.versions.body.setdefault((key, s), reply.body or "")
                proc.learned[(key, reply.version)] = s
            elif req.op in (PUT, DELETE):
                self._record_apply(proc, req, reply)
        if drop_reply or reply.status == TIMED_OUT:
            return  # the reply is lost, or there was none: the timeout answers
        self._reply(proc, rid, reply)

    def _record_apply(self, proc, req, reply) -> None:
        """An `apply` event for a write or delete that took effect (see the module docstring)."""
        v = self.versions
        key = req.key
        if req.cond == IF_MATCH:
            prev = v.serial_of(key, req.version)
            named = proc.learned.get((key, req.version), -1)
        elif req.cond == IF_NONE_MATCH:
            prev, named = 0, 0
        else:
            prev, named = v.current.get(key, 0), None
        prev_state = state_line(v.body.get((key, prev))) if prev else ""
        if req.op == PUT:
            serial = v.written(key, reply.version, req.body or "")
            proc.learned[(key, reply.version)] = serial
        else:
            serial = 0
            v.current[key] = 0
        self.record(proc.index, "apply", (key, req.op, req.cond, prev, named, serial,
                                          state_line(req.body), prev_state))

    def _reply(self, proc, rid, reply) -> None:
        if proc.pending.pop(rid, None) is None:
            return  # timed out already, or the process is gone
        if reply.status != FAILED_FAST and self._is_cut(proc.machine):
            proc.pending[rid] = True  # lost on the way back: the timeout answers
            return
        self.deliver(proc, ReplyArrived(rid, reply))

    def _timed_out(self, proc, rid) -> None:
        if proc.pending.pop(rid, None) is not None:
            self.deliver(proc, ReplyArrived(rid, Reply(TIMED_OUT)))

    # --- the workload ------------------------------------------------------------------------

    def _forwarded(self, node_id, command) -> None:
        proc = self.live_proc(node_id)
        if proc is not None:
            self.deliver(proc, command)

    def _client_request(self) -> None:
        rng = self.rng
        self._requests += 1
        actor = self.actors[rng.randrange(len(self.actors))]
        self._ask(self.node_ids[rng.randrange(len(self.node_ids))], actor, self._requests)
        self.later(rng.randint(1, 2 * self.options["request_gap_ms"]), self._client_request)

    def _ask(self, node_id: str, actor: str, req: int) -> None:
        proc = self.live_proc(node_id)
        if proc is not None:
            self.record(proc.index, "client", (actor, node_id, req))
            self.deliver(proc, Command("request", (actor, req, 0)))

    def _broadcast(self, command) -> None:
        for slot in list(self.slots):
            if slot.proc is not None and slot.proc.alive:
                self.deliver(slot.proc, command)

    def _hibernate(self) -> None:
        if self.in_quiet:
            return
        self._broadcast(Command("hibernate", (self.actors[self.rng.randrange(len(self.actors))],)))
        self.later(self.rng.randint(1, 2 * self.options["hibernate_gap_ms"]), self._hibernate)

    def _move(self) -> None:
        if self.in_quiet:
            return
        rng = self.rng
        self._requests += 1
        actor = self.actors[rng.randrange(len(self.actors))]
        target = self.node_ids[rng.randrange(len(self.node_ids))]
        self._broadcast(Command("move", (actor, target, self._requests)))
        self.later(rng.randint(1, 2 * self.options["move_gap_ms"]), self._move)

    # --- the quiet phase ----------------------------------------------------------------------

    def _quiet_begins(self) -> None:
        """Faults stop; twins go; every node is up again; requests go on."""
        self.in_quiet = True
        self.record(WORLD, "quiet")
        for k in self.fault:
            self.fault[k] = 0.0
        self.cut.clear()
        for slot in self.slots:
            if not slot.machine.startswith("m"):
                slot.wanted = False
                if slot.proc is not None and slot.proc.alive:
                    self.crash(slot.proc)
        for slot in self.slots[: len(self.node_ids)]:
            if slot.proc is None or not slot.proc.alive:
                self.start_process(slot)

    def _quiet_crash(self) -> None:
        proc = self.live_proc(self.node_ids[self.rng.randrange(len(self.node_ids))])
        if proc is not None:
            self.crash(proc)

    def _final_round(self) -> None:
        self.record(WORLD, "final_round")
        live = [n for n in self.node_ids if self.live_proc(n) is not None]
        for actor in self.actors:
            if live:
                self._requests += 1
                self._ask(live[self.rng.randrange(len(live))], actor, self._requests)

    # --- faults ----------------------------------------------------------------------------------

    def _outage_begins(self, who, length, mode) -> None:
        if who != "*" and who.startswith("n"):
            who = "m" + who[1:]
        self.cut[who] = mode
        self.record(WORLD, "outage", (who, self.now() + length))
        self.later(length, self._outage_ends, who)

    def _outage_ends(self, who) -> None:
        self.cut.pop(who, None)

    def _crash_node(self, node_id) -> None:
        for slot in self.slots:
            if slot.node_id == node_id and slot.machine.startswith("m") and slot.proc and slot.proc.alive:
                self.crash(slot.proc)

    def crash(self, proc: _Proc) -> None:
        """Kill without any write: requests in flight may still land."""
        self.record(proc.index, "crash")
        self.end_process(proc)

    def _twin_begins(self, node_id, machine, life) -> None:
        slot = _Slot(node_id, machine)
        self.slots.append(slot)
        self.record(WORLD, "twin", (node_id, machine))
        self.start_process(slot)
        self.later(life, self._twin_ends, slot)

    def _twin_ends(self, slot) -> None:
        slot.wanted = False
        if slot.proc and slot.proc.alive:
            self.crash(slot.proc)


# --- the command line: python runner.py --s3 URL --bucket NAME ... ------------------------------


def _runner():
    """The running runner module: `__main__` under `python runner.py`, else `runner`
    (so that its UsageError is the one its main() catches)."""
    main = sys.modules.get("__main__")
    if main is not None and hasattr(main, "UsageError") and hasattr(main, "load_model"):
        return main
    import runner

    return runner


def redact_url(url: str) -> str:
    """The endpoint without any user:password part, for reports and messages."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


def new_prefix() -> str:
    """A fresh run prefix: nodelease-check/<utc timestamp>-<random>/ (not from the seeded RNG)."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return f"{DEFAULT_PREFIX_ROOT}{stamp}-{os.urandom(4).hex()}/"


def normalize_prefix(prefix: str) -> str:
    p = prefix.lstrip("/")
    return p if p.endswith("/") else p + "/"


class SetupError(Exception):
    """The endpoint, bucket, credentials or prefix cannot be used: one line, exit 2."""


def make_client(url: str, region: str | None = None, addressing_style: str | None = None):
    """A boto3 S3 client for `url` from the standard credential chain, with no retries
    (the model retries, NL-3) and timeouts fit for the world."""
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
    kw = dict(s3={"addressing_style": addressing_style}, retries={"max_attempts": 1, "mode": "standard"},
              connect_timeout=CONNECT_TIMEOUT_S, read_timeout=READ_TIMEOUT_S, max_pool_connections=POOL_SIZE)
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


class _S3Progress:
    """A rich bar on a terminal; a line every 5 s elsewhere."""

    def __init__(self, console, total_ms: int, label: str) -> None:
        self.console = console
        self.label = label
        self.total_s = total_ms / 1000
        self._last = -5_000
        self._bar = None
        if console.is_terminal:
            from rich.progress import BarColumn, Progress as RP, TextColumn, TimeElapsedColumn

            self._bar = RP(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[figures]}"),
                           TimeElapsedColumn(), console=console)
            self._task = self._bar.add_task(label, total=self.total_s, figures="")
            self._bar.start()

    def __call__(self, now_ms: int, total_ms: int, requests: int, acquisitions: int) -> None:
        figures = f"{requests} bucket requests, {acquisitions} acquisitions"
        if self._bar is not None:
            self._bar.update(self._task, completed=min(now_ms / 1000, self.total_s), figures=figures)
        elif now_ms - self._last >= 5_000:
            self._last = now_ms
            print(f"{self.label}: {now_ms / 1000:.0f}/{self.total_s:.0f} s, {figures}", flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()


APPROXIMATIONS = (
    "apply events are recorded when a write's answer reaches the world (the instant it took effect is "
    "unknown); serials are the order in which acknowledged writes became known, the replaced version of an "
    "If-Match write is the latest known write of its ETag on that key, a write whose answer never came "
    "is missing"
)


def run_s3(console, args) -> int:
    """`python runner.py --s3 URL --bucket NAME ...`: one run against a real bucket, a report, an exit status."""
    R = _runner()
    try:
        return _run_s3(console, args, R)
    except SetupError as e:
        raise R.UsageError(str(e)) from None


def _run_s3(console, args, R) -> int:
    if not args.bucket:
        raise SetupError("--s3 needs --bucket NAME")
    duration_s = args.duration if args.duration is not None else 30.0
    if duration_s <= 0:
        raise SetupError(f"--duration must be positive, got {duration_s:g}")
    nodes = args.nodes if args.nodes is not None else 3
    actors = args.actors if args.actors is not None else 6
    params = R.parse_params(args.param, S3_PARAMS.to_dict())
    model = R.load_model(args.model)
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "big")
    prefix = normalize_prefix(args.prefix) if args.prefix is not None else new_prefix()
    if prefix == "/":
        raise SetupError("--prefix must not be empty: every key of a run lives under a prefix of its own")
    url = args.s3
    client = make_client(url, args.region, args.addressing_style)
    bucket = open_bucket(client, url, args.bucket, prefix, args.reuse_prefix)
    where = redact_url(url)
    print(f"s3 world: {where} bucket {args.bucket} prefix {prefix}, model {args.model}, {duration_s:g} s, "
          f"{nodes} nodes, {actors} actors, seed {seed}", flush=True)
    progress = _S3Progress(console, int(duration_s * 1000), f"{args.model}/s3")
    world = S3World(bucket, model, params, args.model, int(duration_s * 1000), nodes, actors, seed,
                    progress=progress)
    t0 = time.monotonic()
    try:
        history = world.run()
    finally:
        progress.close()
    elapsed = time.monotonic() - t0
    report = build_report(world, history, args, where, prefix, seed, elapsed)
    deleted = None
    if args.cleanup:
        deleted = cleanup(bucket, world.keys_written)
        report["s3"]["cleanup_deleted"] = deleted
    stamp = prefix.rstrip("/").rsplit("/", 1)[-1]
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = args.report or os.path.join(here, "reports", f"{args.model}-s3-{stamp}.json")
    R.write_report(path, report, summary_text(report))
    timeline = os.path.splitext(path)[0] + ".timeline.txt"
    try:
        with open(timeline, "w") as f:
            for i, p in enumerate(history.processes):
                f.write(f"process {i}: {p.label} on {p.machine} (clock offset {p.offset_ms} ms)\n")
            f.write(history.timeline() + "\n")
    except OSError:
        pass
    print_summary(console, report, path, deleted)
    return 0 if report["passed"] else 1


def build_report(world: S3World, history: History, args, where: str, prefix: str, seed: int,
                 elapsed: float) -> dict:
    """The same report shape as a simulated run, for the one history of this run."""
    from checkers import check_all, measure_all

    R = _runner()
    failures = []
    if world.failure is not None:
        failures.append(("EXCEPTION", world.failure[0], world.failure[1]))
    measured = {"failover_ms": [], "blip_judged": 0}
    try:
        failures += [(v.invariant, v.message, v.explain(history)) for v in check_all(history)]
        measured = measure_all(history)
    except Exception as e:  # a checker that cannot read this history is a bug: report it
        import traceback

        failures.append(("EXCEPTION", f"{type(e).__name__}: {e}", traceback.format_exc()))
    sha = history.sha256()
    counts = dict(history.counts)
    counts["events"] = len(history.events)
    counts["acquisitions"] = sum(1 for e in history.events if e[2] == "hold_began")
    counts["seeds_run"] = 1
    counts["failing_seeds"] = 1 if failures else 0
    counts["blip_runs_judged"] = measured["blip_judged"]
    argv = [redact_url(a) if a == args.s3 else a for a in sys.argv[1:]]
    return {
        "world": "s3",
        "model": args.model,
        "scenario": "s3",
        "params": world.params.to_dict(),
        "seeds": {"start": seed, "count": 1},
        "passed": not failures,
        "counts": dict(sorted(counts.items())),
        "rules_hit": dict(sorted(history.rules.items(), key=lambda kv: R._rule_order(kv[0]))),
        "invariants_checked": R.invariants_checked(),
        "failover_ms": R.distribution(measured["failover_ms"]),
        "failures": [{"seed": seed, "invariant": inv, "message": msg, "history_sha256": sha, "replay": None,
                      "explanation": ex} for inv, msg, ex in failures],
        "failing_seeds": [seed] if failures else [],
        "history_digest": R.digest([sha]),
        "seed_hashes": [sha],
        "elapsed_s": round(elapsed, 3),
        "s3": {"endpoint": where, "bucket": args.bucket, "prefix": prefix, "region": args.region,
               "addressing_style": args.addressing_style, "reuse_prefix": bool(args.reuse_prefix),
               "duration_s": round(world.duration_ms / 1000, 3), "nodes": world.options["nodes"],
               "actors": world.options["actors"], "keys_written": len(world.keys_written),
               "approximations": APPROXIMATIONS},
        "options": world.options,
        "git_commit": R.git_commit(),
        "command": "python runner.py " + " ".join(argv),
    }


def summary_text(report: dict) -> str:
    c, s = report["counts"], report["s3"]
    lines = [
        f"model {report['model']}, world s3 ({s['endpoint']}, bucket {s['bucket']}, prefix {s['prefix']}): "
        + ("PASSED" if report["passed"] else "FAILED"),
        f"  {report['elapsed_s']} s, {s['nodes']} nodes, {s['actors']} actors, seed {report['seeds']['start']}, "
        f"{c.get('processes', 0)} processes",
        f"  {c.get('bucket_requests', 0)} bucket requests, {c.get('acquisitions', 0)} acquisitions, "
        f"{c.get('client_requests', 0)} client requests, {c.get('events', 0)} history events",
    ]
    odd = {k[len("outcome "):]: v for k, v in c.items() if k.startswith("outcome ")}
    if odd:
        lines.append("  unexpected outcomes: " + ", ".join(f"{k} {v}" for k, v in odd.items()))
    lines += [
        f"  invariants checked: {', '.join(report['invariants_checked'])} (INV-3 approximated: {s['approximations']})",
        f"  failover (INV-7): {_failover(report['failover_ms'])}",
        "  rules hit: " + ", ".join(f"{k} {v}" for k, v in report["rules_hit"].items()),
        f"  history sha256: {report['seed_hashes'][0]}",
    ]
    for f in report["failures"]:
        lines += ["", f["explanation"]]
    return "\n".join(lines) + "\n"


def _failover(d: dict) -> str:
    if not d.get("count"):
        return "no failover measured"
    return f"{d['count']} measured, p50 {d['p50'] / 1000:.1f} s, max {d['max'] / 1000:.1f} s"


def print_summary(console, report: dict, path: str, deleted: int | None) -> None:
    from rich.table import Table

    c, s = report["counts"], report["s3"]
    t = Table(title=f"{report['model']} / s3", show_header=True)
    t.add_column("measure")
    t.add_column("value", justify="right")
    t.add_row("endpoint", f"{s['endpoint']} bucket {s['bucket']}")
    t.add_row("prefix", s["prefix"])
    t.add_row("elapsed", f"{report['elapsed_s']} s")
    t.add_row("bucket requests", str(c.get("bucket_requests", 0)))
    t.add_row("acquisitions", str(c.get("acquisitions", 0)))
    t.add_row("processes", str(c.get("processes", 0)))
    t.add_row("history events", str(c.get("events", 0)))
    t.add_row("invariants", ", ".join(report["invariants_checked"]))
    t.add_row("failover (INV-7)", _failover(report["failover_ms"]))
    if deleted is not None:
        t.add_row("cleanup", f"{deleted} keys deleted")
    t.add_row("result", "[green]PASSED" if report["passed"] else "[red]FAILED")
    console.print(t)
    seen = set()
    for f in report["failures"]:
        if f["invariant"] not in seen:
            seen.add(f["invariant"])
            console.print(f"[red]{f['invariant']}[/red]: {f['message']}", highlight=False)
    print(f"report: {os.path.relpath(path)} (summary: {os.path.relpath(os.path.splitext(path)[0] + '.txt')}, "
          f"timeline: {os.path.relpath(os.path.splitext(path)[0] + '.timeline.txt')})")
