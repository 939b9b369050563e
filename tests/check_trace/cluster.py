"""Three example nodes (examples/asyncio_node) run as OS processes against a real S3 server on loopback,
through the delay-and-drop proxy, with a kill -9 and a restart, a SIGSTOP/SIGCONT pause longer than the
lease, and a clean stop (SIGTERM) at the end: the traces `check-trace` judges (issue 49).

    python -m tests.check_trace.cluster OUT_DIR [--bug NAME] [--seed N]   # starts SeaweedFS itself
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
    run = Run(trace_dir, access_log)
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
            at(plan["resume"])
            procs[victim].send_signal(signal.SIGCONT)
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


def main(argv: list[str]) -> int:
    import argparse
    import tempfile

    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--bug", default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--short", action="store_true", help="the short plan (no kill): the traces stored under tests/")
    a = p.parse_args(argv)
    data = tempfile.mkdtemp(prefix="weed-")
    server = start_seaweedfs(data)
    try:
        r = run_cluster(server.url, a.out, a.bug, a.seed, plan=SHORT if a.short else FULL)
    finally:
        server.stop()
    print(r)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
