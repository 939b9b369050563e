"""Three example nodes (examples/asyncio_node) run as OS processes against a real S3 server on loopback,
through the delay-and-drop proxy, with a kill -9 and a restart, a SIGSTOP/SIGCONT pause longer than the
lease, and a clean stop (SIGTERM) at the end: the traces `check-trace` judges (issue 49).

    python -m tests.check_trace.cluster OUT_DIR [--bug NAME] [--seed N]   # starts SeaweedFS itself
    python -m tests.check_trace.cluster --record NAME [--seed N]   # the stored traces of NAME, again
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field

try:  # under pytest, tests/ is on the path; run as a module from the checkout, the repository is
    from conformance.servers import CREDENTIAL_ENV, client, start_seaweedfs
except ImportError:
    from tests.conformance.servers import CREDENTIAL_ENV, client, start_seaweedfs

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SKEWS = {"n1": 0, "n2": 120, "n3": -120}  # each node's wall clock, off the host's (within max_skew 200)


@dataclass
class Run:
    trace_dir: str
    access_log: str
    faults_log: str  # the pauses the harness made (docs/traces.md, "The faults log")
    exits: dict = field(default_factory=dict)  # pid -> exit status
    proxy_counts: dict = field(default_factory=dict)
    seconds: float = 0.0


# when things happen, in s from the moment every node holds its lease (a Python process takes a second or
# two to start on a loaded machine): the full run kills n2 (kill -9) and restarts it, pauses n3 for twice
# the lease (peers fence it: ttl + grace after its last write, plus a listing), and stops everyone cleanly;
# the short one (for the traces stored under tests/) only pauses
FULL = {"kill": 2.5, "restart": 3.0, "pause": 5.0, "resume": 9.0, "stop": 12.0}
SHORT = {"kill": None, "restart": None, "pause": 2.0, "resume": 6.0, "stop": 7.0}
READY_S = 30.0  # the nodes must hold their leases by then


def run_cluster(url: str, out: str, bug: str | None = None, seed: int = 0, bucket: str = "traces",
                p_delay: float = 0.05, p_drop: float = 0.02, plan: dict = FULL) -> Run:
    from .proxy import DelayDropProxy

    os.makedirs(out, exist_ok=True)
    trace_dir = os.path.join(out, "traces")
    access_log = os.path.join(out, "access.ndjson")
    faults_log = os.path.join(out, "faults.ndjson")
    if os.path.exists(trace_dir):  # a run's traces are its own: an earlier run's would be judged with them
        shutil.rmtree(trace_dir)
    prefix = f"run{seed}-{os.getpid()}-{int(time.time())}/"
    try:
        client(url).create_bucket(Bucket=bucket)
    except Exception as e:  # already there
        if "BucketAlready" not in type(e).__name__ and "BucketAlready" not in str(e):
            raise
    proxy = DelayDropProxy(url, bucket, prefix, access_log, seed=seed, p_delay=p_delay, p_drop=p_drop)
    env = dict(os.environ, **CREDENTIAL_ENV, PYTHONPATH=ROOT)
    procs: dict[str, subprocess.Popen] = {}
    run = Run(trace_dir, access_log, faults_log)
    open(faults_log, "w").close()
    t0 = began = time.monotonic()

    def start(node: str, k: int) -> None:
        cmd = [sys.executable, "-m", "examples.asyncio_node", "--endpoint", proxy.url, "--bucket", bucket,
               "--prefix", prefix, "--node-id", node, "--trace-dir", trace_dir, "--seed", str(seed * 10 + k),
               "--skew-ms", str(SKEWS[node])]
        if bug:
            cmd += ["--bug", bug]
        with open(os.path.join(out, f"{node}.stderr"), "ab") as err:  # (a node's traceback, if any, lands here)
            procs[node] = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err)

    def at(seconds: float) -> None:
        left = t0 + seconds - time.monotonic()
        if left > 0:
            time.sleep(left)

    def reap(node: str) -> None:
        p = procs[node]
        if p.poll() is not None:
            run.exits[p.pid] = p.returncode

    def ready() -> bool:
        """Every node holds its lease, or its process ended (a first write held back in the network can get a
        starting node fenced before it ever held its lease: it exits, as the ADR says, NL-10)."""
        for node, p in procs.items():
            if p.poll() is not None:
                continue
            try:
                with open(os.path.join(trace_dir, f"{node}-{p.pid}.ndjson"), encoding="utf-8") as f:
                    if '"lease_valid"' not in f.read():
                        return False
            except OSError:
                return False
        return True

    def holder(procs: dict) -> str:
        """The node to pause: n3, or the first that holds an actor now (a pause matters to a holder)."""
        for node in ("n3", "n1", "n2"):
            if procs[node].poll() is not None:
                continue
            path = os.path.join(trace_dir, f"{node}-{procs[node].pid}.ndjson")
            held: set[str] = set()
            try:
                with open(path, encoding="utf-8") as f:
                    for text in f:
                        if '"hold_' in text:
                            d = json.loads(text)
                            (held.add if d["kind"] == "hold_began" else held.discard)(d["actor"])
            except (OSError, ValueError):
                continue
            if held:
                return node
        return "n3"

    try:
        for k, node in enumerate(("n1", "n2", "n3")):
            start(node, k)
        while not ready():
            if time.monotonic() - t0 > READY_S:
                raise RuntimeError(f"the example nodes did not hold their leases within {READY_S:g} s")
            time.sleep(0.1)
        t0 = time.monotonic()
        if plan["kill"] is not None:
            at(plan["kill"])
            reap("n2")
            procs["n2"].send_signal(signal.SIGKILL)  # kill -9
            procs["n2"].wait(5)
            reap("n2")
            at(plan["restart"])
            start("n2", 3)  # restarted under the same id: a new instance
        at(plan["pause"])
        victim = holder(procs)
        if procs[victim].poll() is None:
            procs[victim].send_signal(signal.SIGSTOP)  # a pause longer than the lease (ttl 2 s)
            stopped = mono_ms()  # (read once the signal is sent: the process writes nothing after it)
            at(plan["resume"])
            let_go = mono_ms()
            procs[victim].send_signal(signal.SIGCONT)
            note_pause(faults_log, os.path.join(trace_dir, f"{victim}-{procs[victim].pid}.ndjson"), stopped, let_go)
        at(plan["stop"])
        proxy.enabled = False  # the stop is judged without faults
        for node, p in procs.items():
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for node, p in procs.items():
            try:
                p.wait(6)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(5)
            reap(node)
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
                p.wait(5)
        proxy.stop()
    run.proxy_counts = dict(proxy.counts)
    run.seconds = time.monotonic() - began
    return run


def mono_ms() -> int:
    """The host's monotonic clock, as the example stamps its lines (time.monotonic: CLOCK_MONOTONIC, one clock
    for every process of the machine): the faults log's pauses are on the paused process's own clock."""
    return int(time.monotonic() * 1000)


def note_pause(faults_log: str, trace: str, from_mono_ms: int, to_mono_ms: int) -> None:
    """One line of the faults log: the process of `trace` (its header names it) was stopped in that span."""
    with open(trace, encoding="utf-8") as f:
        head = json.loads(f.readline())
    with open(faults_log, "a", encoding="utf-8") as f:
        f.write(json.dumps({"fault": "pause", "node_id": head["node_id"], "instance": head["instance"],
                            "from_mono_ms": from_mono_ms, "to_mono_ms": to_mono_ms}) + "\n")


def why_not_acted(bug: str, trace_dir: str) -> str | None:
    """None if the seeded bug acted in this run, as the traces themselves show (read here without the checker);
    else why not. A run's timing is the machine's: `stale_after_pause` acts only if the SIGSTOP lands while
    the node's client sleeps between two requests, not while it serves one (about 1 run in 20)."""
    import glob

    from examples.asyncio_node.node import parse_owner

    procs = {}
    for path in sorted(glob.glob(os.path.join(trace_dir, "*.ndjson"))):
        with open(path, encoding="utf-8") as f:
            lines = [json.loads(t) for t in f if t.strip()]
        procs[(lines[0]["node_id"], lines[0]["instance"])] = lines
    if bug == "unconditional_fence":  # a fence: a PUT on another node's lease without If-Match
        if any(x.get("kind") == "send" and x["op"] == "PUT" and x["key"].startswith("nodes/")
               and x["key"] != "nodes/" + head["node_id"] and x.get("cond") is None
               for head, *rest in procs.values() for x in rest):
            return None
        return "no node fenced a peer"
    if bug == "stale_after_pause":  # a process served a request right after a silence longer than its lease
        for head, *rest in procs.values():
            ttl = head["params"]["ttl_ms"]
            for a, b in zip(rest, rest[1:]):
                if b["mono_ms"] - a["mono_ms"] > ttl and any(
                        x.get("kind") == "served" for x in rest if b["mono_ms"] <= x["mono_ms"] <= b["mono_ms"] + 50):
                    return None
        return "no process served right after its pause (the pause landed while it served)"
    if bug == "reuse_generation":  # an acquisition that wrote the generation it read
        for head, *rest in procs.values():
            read: dict[int, str] = {}  # request id -> key, of the GETs on owners/
            seen: dict[str, int] = {}  # key -> the generation its last read answer showed
            for x in rest:
                kind = x.get("kind")
                if kind == "send" and x["op"] == "GET" and x["key"].startswith("owners/"):
                    read[x["id"]] = x["key"]
                elif kind == "answer" and x["id"] in read and x.get("status") == "ok":
                    rec = parse_owner(x.get("body"))
                    if rec is not None:
                        seen[read[x["id"]]] = rec[2]
                elif kind == "send" and x["op"] == "PUT" and x["key"].startswith("owners/") \
                        and x.get("cond") == "if-match":
                    rec = parse_owner(x.get("body"))
                    if rec is not None and rec[0] == head["node_id"] and seen.get(x["key"]) == rec[2]:
                        return None
        return "no acquisition wrote the generation it read"
    raise ValueError(f"unknown bug {bug!r}")


DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
INVARIANT_OF = {"unconditional_fence": "INV-3", "stale_after_pause": "INV-1", "reuse_generation": "INV-2"}
RECORD_SEED = 12  # the first seed --record tries
RECORD_TRIES = 5


def judged_as_stored(name: str, trace_dir: str, faults_log: str) -> str | None:
    """None if the traces show what the stored ones of `name` must (tests/check_trace/test_traces.py): the
    correct example passes under --strict and conforms; a seeded bug is violated in every placement by its
    invariant. Otherwise why not."""
    from traces import conform
    from traces.judge import judge
    from traces.load import load

    ts = load(trace_dir, None, faults_log)
    idle = [pt.node_id for pt in ts.procs if not any(x["kind"] == "lease_valid" for x in pt.lines)]
    if idle:  # (a first write lost and its re-read too: fenced while starting, NL-7; valid, but it shows little)
        return f"{', '.join(idle)} never held its lease"
    v = judge(ts)
    if name == "correct":
        bad = {inv: st for inv, st in v.status.items() if st in ("violated", "possibly violated")}
        diverged = [d.summary() for d in conform.replay_all(ts, v.bucket, v.placements[0]) if d.divergence]
        if bad or diverged:
            return f"the correct example did not pass: {bad or ''} {diverged or ''}".strip()
        return None
    inv = INVARIANT_OF[name]
    return None if v.status[inv] == "violated" else f"{inv} is {v.status[inv]!r}, not violated"


def record(name: str, seed: int, tries: int = RECORD_TRIES) -> int:
    """Record the stored traces `name` (correct, or a seeded bug) again: the short plan against SeaweedFS on
    loopback (a temporary data dir, free ports), judged as the stored ones must be (every node held its lease),
    then written gzipped into tests/check_trace/data/NAME/ (the old files removed) with their faults log,
    data/NAME.faults.ndjson. The seeds from `seed` on are tried in turn (a run's timing is the machine's);
    if none is judged so, the stored traces stay as they were (exit 1)."""
    import glob
    import gzip
    import tempfile

    if name != "correct" and name not in INVARIANT_OF:
        print(f"--record {name}: one of correct, {', '.join(INVARIANT_OF)}", file=sys.stderr)
        return 2
    work = tempfile.mkdtemp(prefix="record-traces-")
    server = start_seaweedfs(os.path.join(work, "weed"))
    try:
        for s in range(seed, seed + tries):
            r = run_cluster(server.url, os.path.join(work, f"run{s}"), None if name == "correct" else name, s,
                            plan=SHORT)
            why = judged_as_stored(name, r.trace_dir, r.faults_log)
            if why is None:
                seed = s
                break
            print(f"seed {s}: not recorded, {why}", file=sys.stderr)
    finally:
        server.stop()
    if why is not None:
        print(f"{name}: nothing recorded in {tries} seeds from {seed} (the runs are in {work})", file=sys.stderr)
        return 1
    target = os.path.join(DATA, name)
    os.makedirs(target, exist_ok=True)
    for old in glob.glob(os.path.join(target, "*.ndjson.gz")):
        os.remove(old)
    for path in sorted(glob.glob(os.path.join(r.trace_dir, "*.ndjson"))):
        with open(path, "rb") as f, open(os.path.join(target, os.path.basename(path) + ".gz"), "wb") as out:
            out.write(gzip.compress(f.read(), mtime=0))
    shutil.copyfile(r.faults_log, os.path.join(DATA, f"{name}.faults.ndjson"))
    shutil.rmtree(os.path.join(work, "weed"), ignore_errors=True)
    shutil.rmtree(os.path.join(work, f"run{seed}"), ignore_errors=True)
    if not os.listdir(work):
        os.rmdir(work)
    else:
        print(f"(the runs not recorded are in {work})")
    print(f"recorded {target} (seed {seed}, {r.seconds:.1f} s; proxy {r.proxy_counts})")
    return 0


def main(argv: list[str]) -> int:
    import argparse
    import tempfile

    p = argparse.ArgumentParser()
    p.add_argument("out", nargs="?", default=None)
    p.add_argument("--bug", default=None)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--short", action="store_true", help="the short plan (no kill): the traces stored under tests/")
    p.add_argument("--record", metavar="NAME", default=None,
                   help="record tests/check_trace/data/NAME again (correct, or a seeded bug's name)")
    a = p.parse_args(argv)
    if a.record is not None:
        return record(a.record, RECORD_SEED if a.seed is None else a.seed)
    if a.out is None:
        p.error("OUT_DIR is needed (or --record NAME)")
    data = tempfile.mkdtemp(prefix="weed-")
    server = start_seaweedfs(data)
    try:
        r = run_cluster(server.url, a.out, a.bug, a.seed or 0, plan=SHORT if a.short else FULL)
    finally:
        server.stop()
        shutil.rmtree(data, ignore_errors=True)
    print(r)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
