"""One node of ADR 0020 ("one lease per node"), as a service author would write it from the ADR.

Tasks, as the ADR lays them out:

- the start (UP-1, NL-5): a listing of nodes/ answered first (the bucket check), then the start check
  and the listing task together;
- the lease task (section 1): a conditional PUT of nodes/<id> every period from the previous send,
  each attempt bounded, retried within the period; validity until written_at + ttl - safety on this
  node's wall clock; a failed condition re-read once (adopt our own write, else the lease is lost:
  drop everything, exit 1); a lease that only ran out moves every hold into the pending releases;
- the listing and fencing (section 2): LIST nodes/ and GET each peer every period; a peer unchanged
  for a period plus an attempt timeout (counted from our first acknowledged write after any lapse)
  whose written_at + ttl + grace has passed is read once more and fenced, If-Match on that read;
- holds on ownership records (section 3): acquire under a lock per actor (read, the freeing read of
  nodes/A, the write at generation + 1, the read-back of an unknown outcome), restore (list), serve;
  release on hibernation; pending releases and unresolved acquires retried by a background task;
- a clean stop (section 4, on SIGTERM): release, make the lease locally invalid, stop the lease task,
  write `released`.

Waits run on the monotonic clock; written_at is the wall clock. Every request, answer, wait that
ended, command and decision is written to the trace (docs/traces.md, format 1), one line as it happens.

Seeded bugs, for the checker to catch (--bug): `unconditional_fence` (the fence written without
If-Match, BM-1), `stale_after_pause` (a request served on the validity checked before a wait: after a
pause longer than the lease it acts on a dead lease), `reuse_generation` (a wake writes the record's
generation again instead of generation + 1, BM-2).

This module shares no code with the checker (it imports the standard library and boto3 only).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import sys
import time
from concurrent.futures import ThreadPoolExecutor

BUCKET_RETRY_MS = 1_000  # UP-1: the bucket check's retry
BUGS = ("unconditional_fence", "stale_after_pause", "reuse_generation")
NODE_HEADER = "wasmkeep-node 3"
OWNER_HEADER = "wasmkeep-owner 1"
MARKER_HEADER = "wasmkeep-lease 2"
ACTORS = tuple(f"t0/c/a{k}" for k in range(4))
# Tunables the ADR leaves open are set as the checker's model sets them, so that the conformance replay
# compares decisions, not tunings (the values are this file's own; nothing is imported from the model).
RETRY_MS = 250  # a failed lease attempt is tried again after this, if a whole attempt still fits
CHECK_RETRY_MS = 500
RELEASE_TRIES_MS = 1_000  # a foreground release tries this long, then the background retries (BD-4)
RELEASE_WAIT_MS = 5_000  # a clean stop waits at most this long for its releases
BACKOFF_MIN_MS, BACKOFF_MAX_MS = 500, 8_000
FENCE_CONCURRENCY = 8
PENDING_CONCURRENCY = 32
SEGMENT_TIMEOUT_MS = 2_000


# --- the records, as the ADR describes them ----------------------------------------------------------


def node_body(state: str, instance: str, written_at: int, node_id: str) -> str:
    return f"{NODE_HEADER}\n{state} {instance}\nwritten_at_ms {written_at}\nnode {node_id}\n"


def parse_node(body: str | None):
    """(state, instance, written_at) of a format-3 node lease; None for anything else."""
    if not body:
        return None
    lines = body.split("\n")
    try:
        if lines[0] != NODE_HEADER:
            return None
        state, inst = lines[1].split(" ")
        return state, inst, int(lines[2].split(" ")[1])
    except (IndexError, ValueError):
        return None


def owner_body(node_id: str | None, instance: str | None, generation: int) -> str:
    if node_id is None:
        return f"{OWNER_HEADER}\nnobody {generation}\n"
    return f"{OWNER_HEADER}\nheld {node_id} {instance} {generation}\n"


def parse_owner(body: str | None):
    """(node, instance, generation), node None for nobody; None when unreadable."""
    try:
        lines = (body or "").split("\n")
        if lines[0] != OWNER_HEADER:
            return None
        parts = lines[1].split(" ")
        if parts[0] == "nobody":
            return None, None, int(parts[1])
        if parts[0] == "held":
            return parts[1], parts[2], int(parts[3])
    except (IndexError, ValueError):
        pass
    return None


def segment_generation(key: str) -> int:
    try:
        return int(key.rsplit("/", 1)[1].split("-", 1)[0])
    except (IndexError, ValueError):
        return 0


# --- the trace (docs/traces.md) ----------------------------------------------------------------------


class Trace:
    """Writes one NDJSON line per observation, each flushed at once (a kill -9 loses nothing written)."""

    def __init__(self, path: str, skew_ms: int) -> None:
        self.skew_ms = skew_ms
        self.f = open(path, "w", encoding="utf-8", buffering=1)

    def wall(self) -> int:
        return int(time.time() * 1000) + self.skew_ms

    @staticmethod
    def mono() -> int:
        return int(time.monotonic() * 1000)

    def header(self, **fields) -> None:
        self.f.write(json.dumps({"trace": "nodelease-trace", "version": 1, **fields,
                                 "wall_ms": self.wall(), "mono_ms": self.mono()}) + "\n")

    def log(self, kind: str, wall: int | None = None, **fields) -> None:
        line = {"wall_ms": self.wall() if wall is None else wall, "mono_ms": self.mono(), "kind": kind}
        line.update(fields)
        self.f.write(json.dumps(line) + "\n")


# --- the bucket --------------------------------------------------------------------------------------


class Bucket:
    """Blocking boto3 calls; one attempt each (the node retries, not the SDK)."""

    def __init__(self, endpoint: str, bucket: str, prefix: str, read_timeout_s: float, connect_timeout_s: float):
        import boto3
        from botocore.config import Config
        from botocore.handlers import add_expect_header

        kw = dict(s3={"addressing_style": "path"}, retries={"total_max_attempts": 1, "mode": "standard"},
                  connect_timeout=connect_timeout_s, read_timeout=read_timeout_s, max_pool_connections=32)
        try:
            config = Config(request_checksum_calculation="when_required",
                            response_checksum_validation="when_required", **kw)
        except TypeError:
            config = Config(**kw)
        self.client = boto3.client("s3", endpoint_url=endpoint, config=config)
        self.client.meta.events.unregister("before-call.s3", add_expect_header)
        self.bucket = bucket
        self.prefix = prefix

    def call(self, op, key, cond, version, body):
        """(status, etag, body, entries)."""
        from botocore.exceptions import BotoCoreError, ClientError, ConnectTimeoutError, EndpointConnectionError

        c, b, k = self.client, self.bucket, self.prefix + key
        try:
            if op == "GET":
                r = c.get_object(Bucket=b, Key=k)
                return "ok", r["ETag"], r["Body"].read().decode("utf-8"), None
            if op == "PUT":
                kw = {"IfMatch": version} if cond == "if-match" else {"IfNoneMatch": "*"} if cond else {}
                r = c.put_object(Bucket=b, Key=k, Body=body.encode("utf-8"), **kw)
                return "ok", r["ETag"], None, None
            if op == "LIST":
                out = []
                for page in c.get_paginator("list_objects_v2").paginate(Bucket=b, Prefix=k):
                    out.extend([o["Key"][len(self.prefix):], o["ETag"]] for o in page.get("Contents", ()))
                return "ok", None, None, sorted(out)
        except ClientError as e:
            status = e.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            if status == 404:
                return "not_found", None, None, None
            if status == 412:
                return "precondition_failed", None, None, None
            if status == 409:
                return "conflict", None, None, None
            return "timed_out", None, None, None  # 5xx: it may have applied
        except (EndpointConnectionError, ConnectTimeoutError):
            return "failed_fast", None, None, None
        except BotoCoreError:
            return "timed_out", None, None, None
        raise ValueError(op)


class Lost(Exception):
    """The node lease is lost: the process exits at once."""


# --- the node ----------------------------------------------------------------------------------------


class Node:
    def __init__(self, args, trace: Trace, bucket: Bucket) -> None:
        self.args = args
        self.t = trace
        self.b = bucket
        self.node_id = args.node_id
        self.instance = os.urandom(4).hex()
        self.ttl, self.grace, self.safety = args.ttl_ms, args.grace_ms, args.safety_ms
        self.period = min(args.heartbeat_period_ms, args.ttl_ms // 3)
        self.attempt = args.attempt_timeout_ms
        self.bug = args.bug
        self.rng = random.Random(args.seed)
        self.pool = ThreadPoolExecutor(max_workers=24)
        self.rid = 0
        # the node lease
        self.running = False
        self.version: str | None = None
        self.written_at = -1
        self.valid_until = 0  # wall ms
        self.lapsed = False
        self.invalidated = False
        self.watch_from: int | None = None  # mono ms of the first acknowledged write after any lapse
        self.lease_busy: asyncio.Future | None = None
        # the listing
        self.view: dict[str, tuple] = {}  # node -> (state, instance, written_at, since mono)
        self.fencing: set[str] = set()
        # holds
        self.holds: dict[str, tuple[int, str]] = {}  # actor -> (generation, version of its acquire)
        self.locks: dict[str, asyncio.Lock] = {a: asyncio.Lock() for a in ACTORS}
        self.pending: dict[tuple, list] = {}  # (actor, g, v) -> [next mono, backoff]
        self.unresolved: dict[tuple, list] = {}  # (actor, g) -> [read version, next mono, backoff]
        self.kick = asyncio.Event()
        self.seq = 0
        self.serving: dict[str, int] = {}  # actor -> requests being served (OR-5: a release waits for them)
        self.releasing = 0  # foreground releases in flight (CS-1: a clean stop waits for them too)
        self.tasks: list[asyncio.Task] = []
        self.deadline_task: asyncio.Task | None = None
        self.stopping = False

    # --- plumbing ----------------------------------------------------------------------------------

    @property
    def own(self) -> str:
        return "nodes/" + self.node_id

    def log(self, kind, **fields) -> None:
        self.t.log(kind, **fields)

    async def req(self, op, key, cond=None, version=None, body=None, timeout_ms=None):
        timeout_ms = self.attempt if timeout_ms is None else timeout_ms
        self.rid += 1
        rid = self.rid
        self.log("send", id=rid, op=op, key=key, cond=cond, version=version, body=body, timeout_ms=timeout_ms)
        fut = asyncio.get_running_loop().run_in_executor(self.pool, self.b.call, op, key, cond, version, body)
        try:
            status, etag, rbody, entries = await asyncio.wait_for(fut, timeout_ms / 1000)
        except asyncio.TimeoutError:
            status, etag, rbody, entries = "timed_out", None, None, None
        self.log("answer", id=rid, status=status, version=etag, body=rbody, entries=entries)
        return status, etag, rbody, entries

    async def sleep_until(self, mono_ms: int, timer: str | None) -> None:
        wait = mono_ms - self.t.mono()
        if wait > 0:
            await asyncio.sleep(wait / 1000)
        if timer:
            self.log("timer", name=timer)

    def exit(self, status: int, reason: str) -> None:
        self.log("exit", status=status, reason=reason)
        self.t.f.flush()
        os._exit(status)

    def lease_valid(self) -> bool:
        """NL-4: valid until written_at + ttl - safety on this node's clock."""
        return self.running and not self.lapsed and not self.invalidated and self.t.wall() < self.valid_until

    def is_valid(self, actor: str, generation: int) -> bool:
        """OR-4: the hold exists and the node lease is valid."""
        h = self.holds.get(actor)
        return h is not None and h[0] == generation and self.lease_valid()

    # --- the start check and the first write (section 1) -------------------------------------------

    async def bucket_check(self) -> None:
        """UP-1: the bucket answers a listing of nodes/ before anything else starts (retried every second)."""
        while True:
            status, _v, _b, _e = await self.req("LIST", "nodes/")
            if status == "ok":
                return
            await self.sleep_until(self.t.mono() + BUCKET_RETRY_MS, "bucket_check")

    async def start(self) -> None:
        while True:
            cond, version = await self.start_check()
            written_at = self.t.wall()
            self.first_send_mono = self.t.mono()  # NL-2: the lease task's period runs from this send
            status, etag, _b, _e = await self.req("PUT", self.own, cond, version,
                                                  node_body("live", self.instance, written_at, self.node_id))
            if status == "ok":
                self.running = True
                self.acknowledged(etag, written_at, "ack")
                return written_at
            if status in ("precondition_failed", "conflict", "not_found", "timed_out"):
                status, etag, body, _e = await self.req("GET", self.own)
                rec = parse_node(body) if status == "ok" else None
                if rec is not None and rec[0] == "live" and rec[1] == self.instance:
                    self.running = True
                    self.acknowledged(etag, rec[2], "adopt")
                    return rec[2]
            # back to the start check, keeping the instance

    async def start_check(self):
        self.log("check_began")
        deadline = None
        first_instance = None
        last_body = last_version = None
        changes = 0
        while True:
            status, etag, body, _e = await self.req("GET", self.own)
            now = self.t.mono()
            if status in ("ok", "not_found"):
                body = body if status == "ok" else None
                rec = parse_node(body)
                if rec is not None and rec[0] == "fenced" and rec[1] == self.instance:
                    self.log("lease_lost", reason="fenced while starting")
                    self.exit(1, "lease lost: fenced naming this instance")
                if deadline is None:
                    first_instance = rec[1] if rec else None
                    deadline = now + self.ttl + self.grace
                elif body != last_body:
                    if rec is not None and rec[0] == "live" and rec[1] != self.instance:
                        changes += 1
                        if changes >= 2:
                            self.log("check_refused", reason="the id is taken by a live process")
                            self.exit(2, "the id is taken")
                    deadline = now + self.ttl + self.grace
                if rec is not None and rec[0] in ("fenced", "released") and rec[1] == first_instance:
                    free_at = rec[2] + self.ttl + self.grace  # on this node's wall clock
                    deadline = min(deadline, now + max(0, free_at - self.t.wall()))
                last_body, last_version = body, (etag if body is not None else None)
                if now >= deadline:
                    break
                await self.sleep_until(min(now + self.period, deadline), "check_read")
            else:
                if deadline is not None and now >= deadline:
                    break
                await self.sleep_until(now + CHECK_RETRY_MS, "check_read")
        cond = "if-match" if last_version is not None else "if-none-match"
        self.log("check_passed", cond=cond)
        return cond, last_version

    # --- the lease task ------------------------------------------------------------------------------

    def acknowledged(self, etag: str, written_at: int, how: str) -> None:
        if written_at < self.written_at:
            return  # an older write acknowledged late moves nothing back
        if self.invalidated:
            self.version, self.written_at = etag, written_at
            return
        was_valid = self.lease_valid()
        self.version, self.written_at = etag, written_at
        self.valid_until = written_at + self.ttl - self.safety
        if self.valid_until > self.t.wall():
            if self.lapsed:
                how = "recovered"
            self.lapsed = False
            self.log("lease_valid", written_at_ms=written_at, until_ms=self.valid_until, how=how)
            if self.deadline_task is not None:
                self.deadline_task.cancel()
            self.deadline_task = asyncio.get_running_loop().create_task(self.deadline(self.valid_until))
        elif not self.lapsed:
            self.ran_out()
        if not was_valid and self.lease_valid():
            self.watch_from = self.t.mono()  # FN-2
            self.kick.set()  # OR-6: pending work resumes

    async def deadline(self, until: int) -> None:
        await asyncio.sleep(max(0, until - self.t.wall()) / 1000)
        while self.t.wall() < until:
            await asyncio.sleep(0.001)
        if self.valid_until == until and not self.lapsed and not self.invalidated:
            self.log("timer", name="lease_deadline")
            self.ran_out()

    def ran_out(self) -> None:
        """NL-11: not lost; every hold moves into the pending releases."""
        self.log("lease_ran_out", until_ms=self.valid_until)
        self.lapsed = True
        for actor, (g, v) in list(self.holds.items()):
            del self.holds[actor]
            self.log("hold_ended", actor=actor, generation=g, reason="lease ran out")
            self.add_pending(actor, g, v)

    async def lease_task(self, first_send_mono: int) -> None:
        next_send = first_send_mono + self.period
        while True:
            await self.sleep_until(next_send, "lease_tick")
            if self.invalidated:
                return
            next_send = self.t.mono() + self.period
            while True:
                self.lease_busy = asyncio.get_running_loop().create_future()
                try:
                    outcome = await self.lease_attempt()
                finally:
                    self.lease_busy.set_result(None)
                    self.lease_busy = None
                if outcome or self.invalidated or self.t.mono() + RETRY_MS + self.attempt > next_send:
                    break
                await asyncio.sleep(RETRY_MS / 1000)
                self.log("timer", name="lease_retry")

    async def lease_attempt(self) -> bool:
        """One attempt; True when it settled (acknowledged or adopted), False to retry."""
        written_at = self.t.wall()
        status, etag, _b, _e = await self.req("PUT", self.own, "if-match", self.version,
                                              node_body("live", self.instance, written_at, self.node_id))
        if status == "ok":
            self.acknowledged(etag, written_at, "ack")
            return True
        if status in ("precondition_failed", "conflict", "not_found"):
            return await self.reread()
        return False

    async def reread(self) -> bool:
        """NL-9: a failed condition is not proof of a fence: read once."""
        status, etag, body, _e = await self.req("GET", self.own)
        if status == "ok":
            rec = parse_node(body)
            if rec is not None and rec[0] == "live" and rec[1] == self.instance:
                self.acknowledged(etag, rec[2], "adopt")
                return True
            self.lost(f"nodes/{self.node_id} is {rec[0] + ' naming ' + rec[1] if rec else 'unreadable'}")
        elif status == "not_found":
            self.lost(f"nodes/{self.node_id} is absent")
        return False

    def lost(self, reason: str) -> None:
        """NL-10: drop every hold without releasing anything, and exit at once, non-zero."""
        if self.stopping and "fenced" in reason:
            self.exit(0, "clean stop: fenced meanwhile")
        self.log("lease_lost", reason=reason)
        for actor, (g, _v) in list(self.holds.items()):
            self.log("hold_ended", actor=actor, generation=g, reason="lease lost")
        self.exit(1, "lease lost: " + reason)

    # --- the listing and fences (section 2) ------------------------------------------------------------

    async def listing_task(self, first_mono: int) -> None:
        nxt = first_mono
        while True:
            await self.sleep_until(nxt, "listing")
            nxt = self.t.mono() + self.period
            status, _v, _b, entries = await self.req("LIST", "nodes/")
            if status != "ok":
                continue
            keys = [k for k, _e in entries if k != self.own]
            listed = {k[len("nodes/"):] for k in keys}
            for n in list(self.view):
                if n not in listed:
                    del self.view[n]
            for key in keys:
                status, _e, body, _x = await self.req("GET", key)
                node = key[len("nodes/"):]
                if status == "ok":
                    self.saw(node, parse_node(body))
                elif status == "not_found":
                    self.view.pop(node, None)
            self.after_listing()

    def saw(self, node: str, rec) -> None:
        new = (rec[0], rec[1], rec[2]) if rec else ("other", None, 0)
        old = self.view.get(node)
        if old is None or old[:3] != new:
            self.view[node] = (*new, self.t.mono())

    def watched_enough(self, since: int) -> bool:
        return self.watch_from is not None and self.t.mono() - max(since, self.watch_from) >= self.period + self.attempt

    def after_listing(self) -> None:
        if not self.lease_valid() or self.watch_from is None:
            return  # FN-1
        for node, (state, inst, written_at, since) in list(self.view.items()):
            if len(self.fencing) >= FENCE_CONCURRENCY:
                break
            if node in self.fencing or state != "live" or not self.watched_enough(since):
                continue
            if written_at + self.ttl + self.grace >= self.t.wall():
                continue
            self.fencing.add(node)
            asyncio.get_running_loop().create_task(self.fence(node, (state, inst, written_at, since)))

    async def fence(self, node: str, watched: tuple) -> None:
        """FN-3: decide on one fresh versioned read alone; fence If-Match on it."""
        try:
            for _try in range(3):
                status, etag, body, _e = await self.req("GET", "nodes/" + node)
                if status != "ok":
                    return
                rec = parse_node(body)
                if rec is None or rec[0] != "live":
                    self.saw(node, rec)
                    return
                if (rec[1], rec[2]) != (watched[1], watched[2]):
                    self.saw(node, rec)  # it wrote: watch again
                    return
                if (not self.lease_valid() or rec[2] + self.ttl + self.grace >= self.t.wall()
                        or not self.watched_enough(watched[3])):
                    return
                body = node_body("fenced", rec[1], rec[2], node)  # keeps its written_at
                if self.bug == "unconditional_fence":
                    status, _e, _b, _x = await self.req("PUT", "nodes/" + node, None, None, body)
                else:
                    status, _e, _b, _x = await self.req("PUT", "nodes/" + node, "if-match", etag, body)
                if status == "ok":
                    self.log("fenced", node=node, instance=rec[1])
                    self.view[node] = ("fenced", rec[1], rec[2], self.t.mono())
                    return
                if not self.lease_valid():
                    return
        finally:
            self.fencing.discard(node)

    # --- holds (section 3) -------------------------------------------------------------------------------

    async def acquire(self, actor: str, req: int) -> bool:
        """OR-2, OR-3, OR-7, FN-5, UP-3, under the actor's lock (OR-9). True: a hold exists."""
        async with self.locks[actor]:
            if actor in self.holds:
                return True
            key = "owners/" + actor
            status, r, body, _e = await self.req("GET", key)
            if status == "not_found":
                gen = await self.first_generation(actor)
                if gen is None:
                    self.log("request_failed", actor=actor, request=req, reason="acquire: first generation")
                    return False
                cond, version = "if-none-match", None
            elif status == "ok":
                rec = parse_owner(body)
                if rec is None:
                    self.log("request_failed", actor=actor, request=req, reason="acquire: record unreadable")
                    return False
                node, inst, g = rec
                if node is None or (node, inst) == (self.node_id, self.instance):
                    gen = g if self.bug == "reuse_generation" else g + 1
                else:
                    seen = self.view.get(node)
                    if seen is not None and seen[0] == "live" and seen[1] == inst:
                        self.log("forwarded", actor=actor, request=req, to=node)
                        return False
                    # FN-5: the freeing read of nodes/A, issued after the record's read
                    st2, _e2, nbody, _x = await self.req("GET", "nodes/" + node)
                    why = self.frees(inst, parse_node(nbody) if st2 == "ok" else None, st2)
                    if why:
                        self.log("request_failed", actor=actor, request=req, reason="acquire: " + why)
                        return False
                    gen = g + 1
                cond, version = "if-match", r
            else:
                self.log("request_failed", actor=actor, request=req, reason="acquire: record read failed")
                return False
            if not self.lease_valid():  # OR-2: right before the record write
                self.log("request_failed", actor=actor, request=req, reason="acquire: node lease not valid")
                return False
            status, etag, _b, _e = await self.req("PUT", key, cond, version, owner_body(self.node_id, self.instance, gen))
            if status == "ok":
                return await self.hold_began(actor, gen, etag, "ack", req)
            # OR-7: read back once, under the lock
            st3, e3, b3, _x = await self.req("GET", key)
            rec = parse_owner(b3) if st3 == "ok" else None
            if rec is not None and rec == (self.node_id, self.instance, gen):
                return await self.hold_began(actor, gen, e3, "readback", req)
            if rec is not None and e3 != version and rec[0] is not None:
                self.log("forwarded", actor=actor, request=req, to=rec[0])  # the race is lost
                return False
            if st3 == "not_found" and version is not None:
                self.log("request_failed", actor=actor, request=req, reason="acquire: record vanished")
                return False
            self.unresolved[(actor, gen)] = [version, self.t.mono() + self.attempt // 8, self.attempt // 8]
            self.log("acquire_unresolved", actor=actor, generation=gen)
            self.kick.set()
            self.log("request_failed", actor=actor, request=req, reason="acquire: outcome unknown")
            return False

    def frees(self, inst: str, rec, status: str) -> str:
        """FN-5: '' when this read of nodes/A frees a record naming (A, inst), else why not."""
        if status != "ok" or rec is None:
            return "nodes/A absent or unreadable, which frees nothing"
        state, rinst, written_at = rec
        if state == "live":
            return "" if rinst != inst else "held by a live process"
        if written_at + self.ttl + self.grace < self.t.wall():
            return ""
        return f"{state}: free after written_at + ttl + grace"

    async def first_generation(self, actor: str) -> int | None:
        """UP-3: read leases/; seed from it and the actor's keys; leave the marker."""
        status, v, body, _e = await self.req("GET", "leases/" + actor)
        old_gen, marker = 0, ("if-none-match", None)
        if status == "ok":
            lines = (body or "").split("\n")
            if lines[0] != MARKER_HEADER:
                return None  # an old per-actor lease: this example never meets one
            old_gen, marker = int(lines[1].split(" ")[1]), None
        elif status != "not_found":
            return None
        status, _v, _b, entries = await self.req("LIST", f"wal/{actor}/")
        if status != "ok":
            return None
        seed = max([old_gen] + [segment_generation(k) for k, _e in entries])
        if marker is not None:
            status, _v, _b, _e = await self.req("PUT", "leases/" + actor, marker[0], marker[1],
                                                f"{MARKER_HEADER}\ngeneration {seed}\n")
            if status != "ok":
                return None
            self.log("marked", actor=actor, generation=seed)
        return seed + 1

    async def hold_began(self, actor: str, gen: int, version: str, how: str, req: int) -> bool:
        self.holds[actor] = (gen, version)
        self.log("hold_began", actor=actor, generation=gen, version=version, how=how)
        if not self.lease_valid():
            del self.holds[actor]
            self.log("hold_ended", actor=actor, generation=gen, reason="lease not valid")
            self.add_pending(actor, gen, version)
            return False
        if self.stopping:
            # CS-1: a hold that begins once the clean stop has begun (a read-back of an unknown outcome answered
            # late) is released at once, or the stop would leave it held: found by the conformance replay
            await self.release(actor, "stopping or draining")
            return False
        # the new owner restores: it lists the actor's segments
        status, _v, _b, entries = await self.req("LIST", f"wal/{actor}/")
        if status != "ok":
            await self.release(actor, "restore failed")
            return False
        self.log("restored", actor=actor, generation=gen, segments=[k[len(f"wal/{actor}/"):] for k, _e in entries])
        return True

    async def serve(self, actor: str, gen: int, req: int) -> None:
        """Act as owner: a segment keyed by the hold's generation, acknowledged only while valid."""
        if self.stopping:  # CS-1: a stopping node releases what it holds; it takes no new work
            self.log("request_failed", actor=actor, request=req, reason="not ready: stopping")
            return
        self.serving[actor] = self.serving.get(actor, 0) + 1
        try:
            await self._serve(actor, gen, req)
        finally:
            self.serving[actor] -= 1

    async def _serve(self, actor: str, gen: int, req: int) -> None:
        self.log("served", actor=actor, generation=gen, request=req)
        self.seq += 1
        segment = f"{gen:06d}-{self.instance}-{self.seq:05d}"
        status, _v, _b, _e = await self.req("PUT", f"wal/{actor}/{segment}", None, None,
                                            f"segment {actor} {segment}\n", SEGMENT_TIMEOUT_MS)
        if status == "ok" and self.is_valid(actor, gen):
            self.log("data_acked", actor=actor, generation=gen, segment=segment)
        self.log("command", name="event_end", args=[actor, req])
        if self.is_valid(actor, gen):
            self.log("answered", actor=actor, generation=gen, request=req)
        else:
            self.log("event_cut", actor=actor, generation=gen, request=req, why="not valid at its end")
        if status != "ok" and self.holds.get(actor, (None,))[0] == gen:
            await self.release(actor, "upload failed")

    async def release(self, actor: str, reason: str) -> None:
        """OR-5: stop acting, then write nobody If-Match the hold's version, generation kept."""
        g, v = self.holds.pop(actor)
        self.log("hold_ended", actor=actor, generation=g, reason=reason)
        self.releasing += 1
        try:
            status, _e, _b, _x = await self.req("PUT", "owners/" + actor, "if-match", v, owner_body(None, None, g),
                                                RELEASE_TRIES_MS)
        finally:
            self.releasing -= 1
        if status == "ok":
            self.log("released", actor=actor, generation=g)
        else:
            self.add_pending(actor, g, v)

    def add_pending(self, actor: str, g: int, v: str) -> None:
        if (actor, g, v) not in self.pending:
            self.log("release_pending", actor=actor, generation=g)
            self.pending[(actor, g, v)] = [self.t.mono() + BACKOFF_MIN_MS, BACKOFF_MIN_MS]
            self.kick.set()

    async def background_task(self) -> None:
        """OR-5, OR-6, OR-8: pending releases and unresolved acquires, paused while the lease is invalid."""
        while True:
            dues = [e[0] for e in self.pending.values()] + [e[1] for e in self.unresolved.values()]
            wait = (min(dues) - self.t.mono()) / 1000 if dues else 3600
            self.kick.clear()
            if wait > 0:
                try:
                    await asyncio.wait_for(self.kick.wait(), wait)
                    continue
                except asyncio.TimeoutError:
                    pass
            self.log("timer", name="background")
            if not self.lease_valid():
                for e in self.pending.values():
                    e[0] = self.t.mono() + self.period
                for e in self.unresolved.values():
                    e[1] = self.t.mono() + self.period
                continue
            now = self.t.mono()
            # BD-2: the due entries at once, at most PENDING_CONCURRENCY of them (one at a time, a pass after a
            # lapse with many holds takes minutes, the ADR says)
            work = [self.retry_release(k, e) for k, e in list(self.pending.items()) if e[0] <= now]
            work += [self.resolve(k, e) for k, e in list(self.unresolved.items()) if e[1] <= now]
            for k in range(0, len(work), PENDING_CONCURRENCY):
                await asyncio.gather(*work[k:k + PENDING_CONCURRENCY])

    async def retry_release(self, k: tuple, e: list) -> None:
        if k not in self.pending:
            return
        actor, g, v = k
        status, _e, _b, _x = await self.req("PUT", "owners/" + actor, "if-match", v, owner_body(None, None, g))
        if status == "ok":
            self.log("released", actor=actor, generation=g)
            self.pending.pop(k, None)
            return
        if status in ("precondition_failed", "not_found"):
            st2, _e2, body, _x2 = await self.req("GET", "owners/" + actor)
            if st2 == "not_found" or st2 == "ok" and parse_owner(body) != (self.node_id, self.instance, g):
                self.log("release_dropped", actor=actor, generation=g)
                self.pending.pop(k, None)
                return
        e[1] = min(e[1] * 2, BACKOFF_MAX_MS)
        e[0] = self.t.mono() + e[1]

    async def resolve(self, k: tuple, e: list) -> None:
        actor, g = k
        async with self.locks[actor]:  # OR-9: held from the read to the release's reply
            if k not in self.unresolved:
                return
            status, etag, body, _x = await self.req("GET", "owners/" + actor)
            if status == "ok":
                rec = parse_owner(body)
                ours = rec == (self.node_id, self.instance, g)
                if ours and actor not in self.holds:
                    del self.unresolved[k]
                    self.log("resolver_release", actor=actor, generation=g)
                    st2, _e2, _b2, _x2 = await self.req("PUT", "owners/" + actor, "if-match", etag,
                                                        owner_body(None, None, g))
                    if st2 == "ok":
                        self.log("released", actor=actor, generation=g)
                    else:
                        self.add_pending(actor, g, etag)
                    return
                if ours or etag != e[0]:
                    del self.unresolved[k]
                    self.log("unresolved_ended", actor=actor, generation=g)
                    return
            elif status == "not_found" and e[0] is not None:
                del self.unresolved[k]
                return
            e[2] = min(e[2] * 2, self.attempt)
            e[1] = self.t.mono() + e[2]

    # --- the node's clients ------------------------------------------------------------------------------

    async def clients(self) -> None:
        """Client requests and hibernations, drawn from the node's seed (inputs: logged as commands)."""
        req = 0
        while True:
            held = [a for a in ACTORS if a in self.holds]
            valid_before = self.lease_valid()  # (the stale_after_pause bug acts on this after the wait)
            planned = self.holds.get(held[0]) if held and self.bug == "stale_after_pause" else None
            await asyncio.sleep(self.rng.uniform(0.08, 0.25))
            if self.stopping:
                return
            req += 1
            rid = self.node_id_num * 100_000 + req
            if planned is not None and valid_before:
                actor = held[0]
                self.log("command", name="request", args=[actor, rid, 0])
                await self.serve(actor, planned[0], rid)  # no validity check after the wait: the bug
                continue
            if held and self.rng.random() < 0.15:
                actor = self.rng.choice(held)
                self.log("command", name="hibernate", args=[actor])
                if actor in self.holds:
                    await self.release(actor, "hibernate")
                continue
            actor = self.rng.choice(ACTORS)
            self.log("command", name="request", args=[actor, rid, 0])
            await self.handle(actor, rid)

    @property
    def node_id_num(self) -> int:
        digits = "".join(c for c in self.node_id if c.isdigit())
        return int(digits or 0)

    async def handle(self, actor: str, req: int) -> None:
        h = self.holds.get(actor)
        if h is not None and self.is_valid(actor, h[0]):
            await self.serve(actor, h[0], req)
            return
        if not self.lease_valid():
            self.log("request_failed", actor=actor, request=req, reason="not ready: node lease not valid")
            return
        if await self.acquire(actor, req):
            h = self.holds.get(actor)
            if h is not None and self.is_valid(actor, h[0]):
                await self.serve(actor, h[0], req)
            else:
                self.log("request_failed", actor=actor, request=req, reason="not ready: node lease not valid")

    # --- the clean stop (section 4) ----------------------------------------------------------------------

    async def stop(self) -> None:
        self.stopping = True
        self.log("command", name="stop", args=[])
        self.log("stop_began")
        if not self.running:
            self.exit(0, "clean stop before the lease was held")
        deadline = self.t.mono() + RELEASE_WAIT_MS

        async def release_when_idle(actor: str) -> None:
            # OR-5: the node stops acting as owner before it sends the release: a request being served (its
            # upload in flight) ends first, within the stop's wait
            while self.serving.get(actor) and self.t.mono() < deadline:
                await asyncio.sleep(0.005)
            if actor in self.holds:
                await self.release(actor, "clean stop")

        await asyncio.gather(*(release_when_idle(a) for a in list(self.holds)))
        # CS-1: wait for the releases (bounded): those pending, and those still in flight (a hibernation's)
        while (self.pending or self.releasing) and self.t.mono() < deadline and self.lease_valid():
            await asyncio.sleep(0.005)
        self.invalidated = True  # CS-1: every is_valid says no from here
        self.log("lease_invalidated")
        if self.lease_busy is not None:  # the attempt in flight finishes; it extends nothing
            await self.lease_busy
        end = self.t.mono() + self.attempt + 1_000
        while self.t.mono() < end:
            status, etag, _b, _e = await self.req("PUT", self.own, "if-match", self.version,
                                                  node_body("released", self.instance, self.written_at,
                                                            self.node_id))
            if status == "ok":
                self.log("lease_released")
                break
            if status in ("precondition_failed", "conflict", "not_found"):
                st2, e2, body, _x = await self.req("GET", self.own)
                rec = parse_node(body) if st2 == "ok" else None
                if rec is not None and rec[0] == "live" and rec[1] == self.instance:
                    self.version, self.written_at = e2, rec[2]
                    continue
                break  # a fence frees the records too
            await asyncio.sleep(RETRY_MS / 1000)
        self.exit(0, "clean stop")

    # --- the whole --------------------------------------------------------------------------------------

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        loop.add_signal_handler(signal.SIGTERM, stop.set)
        listing: list[asyncio.Task] = []

        async def starting_up() -> None:
            await self.bucket_check()
            # the listing runs on its own task from then on, beside the start check (it fences nothing before
            # the lease is valid, FN-1): a request right after the start forwards to the live owner it read
            # (the model's order; a listing begun only after the check diverged from it: conformance replay)
            listing.append(loop.create_task(self.listing_task(self.t.mono())))
            await self.start()

        starting = loop.create_task(starting_up())
        waiter = loop.create_task(stop.wait())
        done, _ = await asyncio.wait({starting, waiter}, return_when=asyncio.FIRST_COMPLETED)
        if waiter in done:
            for task in (starting, *listing):
                task.cancel()
            await self.stop()
            return
        # NL-2: every P from the previous send, so from the first write's send, not from when its answer (or
        # NL-9's re-read adopting it) came: found by LEASE-2 (e) on this example's traces (issue 45)
        self.tasks = [loop.create_task(self.lease_task(self.first_send_mono)), *listing,
                      loop.create_task(self.background_task()), loop.create_task(self.clients())]
        await waiter
        await self.stop()


def options(argv=None):
    p = argparse.ArgumentParser(prog="python -m examples.asyncio_node", description=__doc__.split("\n")[0])
    p.add_argument("--endpoint", required=True, help="the S3 endpoint URL")
    p.add_argument("--bucket", required=True)
    p.add_argument("--prefix", default="", help="the keys' prefix in the bucket")
    p.add_argument("--node-id", required=True)
    p.add_argument("--machine", default=None, help="the machine's name in the trace (default: m + the id's number)")
    p.add_argument("--trace-dir", required=True, help="where this process writes its trace")
    p.add_argument("--seed", type=int, default=0, help="the clients' random stream")
    p.add_argument("--skew-ms", type=int, default=0, help="this node's wall clock is this far from the host's")
    p.add_argument("--bug", choices=BUGS, default=None, help="a seeded bug (for the checker to catch)")
    p.add_argument("--ttl-ms", type=int, default=2_000)
    p.add_argument("--grace-ms", type=int, default=1_000)
    p.add_argument("--safety-ms", type=int, default=400)
    p.add_argument("--max-skew-ms", type=int, default=200)
    p.add_argument("--heartbeat-period-ms", type=int, default=600)
    p.add_argument("--attempt-timeout-ms", type=int, default=500)
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = options(argv)
    os.makedirs(args.trace_dir, exist_ok=True)
    trace = Trace(os.path.join(args.trace_dir, f"{args.node_id}-{os.getpid()}.ndjson"), args.skew_ms)
    bucket = Bucket(args.endpoint, args.bucket, args.prefix, (args.ttl_ms + args.grace_ms) / 1000,
                    args.attempt_timeout_ms / 1000)
    node = Node(args, trace, bucket)
    machine = args.machine or "m" + "".join(c for c in args.node_id if c.isdigit())
    trace.header(node_id=args.node_id, instance=node.instance, machine=machine, prefix=args.prefix,
                 implementation="examples/asyncio_node",
                 config={"bug": args.bug, "seed": args.seed, "skew_ms": args.skew_ms},
                 params={"ttl_ms": args.ttl_ms, "grace_ms": args.grace_ms, "safety_ms": args.safety_ms,
                         "max_skew_ms": args.max_skew_ms, "heartbeat_period_ms": args.heartbeat_period_ms,
                         "attempt_timeout_ms": args.attempt_timeout_ms})
    asyncio.run(node.run())
    return 0


if __name__ == "__main__":
    sys.exit(main())
