"""A campaign on a real Dask cluster (issue 14): a scheduler and two workers started here on
127.0.0.1 (no mock). The report's digest equals the local run's; a worker killed mid-run costs
only its chunks, run again on the other worker, and the digest is still the same."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

pytest.importorskip("distributed")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_port(port: int, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port}")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """(scheduler address, [worker processes]): `dask scheduler` and two `dask worker`s, one thread each."""
    from distributed import Client

    tmp_path = tmp_path_factory.mktemp("dask")
    port = _free_port()
    quiet = dict(cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                               "--port", str(port), "--no-dashboard"], **quiet)]
    address = f"tcp://127.0.0.1:{port}"
    try:
        _wait_for_port(port)
        workers = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--host",
                                     "127.0.0.1", "--nthreads", "1", "--no-nanny", "--no-dashboard",
                                     "--local-directory", str(tmp_path / f"w{k}")], **quiet) for k in range(2)]
        procs += workers
        with Client(address, timeout=30) as client:
            client.wait_for_workers(2, timeout=60)
        yield address, workers
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 5  # a graceful close within 5 s, all together; killed after that
        for p in procs:
            try:
                p.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(5)


def run(*args: str, **kw):
    return subprocess.Popen([sys.executable, "runner.py", *args], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ, COLUMNS="120"), **kw)


def digest_of(path) -> str:
    with open(path) as f:
        return json.load(f)["history_digest"]


SEEDS = "60"


@pytest.fixture(scope="module")
def local_digest(tmp_path_factory):
    """The digest of the same seeds run locally."""
    path = tmp_path_factory.mktemp("local") / "local.json"
    p = run("--seeds", SEEDS, "--workers", "2", "--report", str(path))
    assert p.wait(300) == 0
    return digest_of(path)


def test_a_campaign_on_a_dask_cluster_gives_the_local_digest(cluster, local_digest, tmp_path):
    address, _workers = cluster
    remote = tmp_path / "dask.json"
    p = run("--seeds", SEEDS, "--dask", address, "--report", str(remote))
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0, out[-2000:] + err[-2000:]
    assert digest_of(remote) == local_digest
    with open(remote) as f:
        assert json.load(f)["dask"] == "a cluster"


def test_a_worker_killed_mid_run_costs_only_its_chunk(cluster, local_digest, tmp_path):
    # (after the test above: it kills one of the module's two workers)
    address, workers = cluster
    remote = tmp_path / "dask.json"
    p = run("--seeds", SEEDS, "--dask", address, "--report", str(remote))
    for line in p.stdout:  # the first progress line: some chunks done, most to go
        if f"/{SEEDS} seeds" in line:
            break
    assert p.poll() is None, "the campaign ended before the worker could be killed"
    workers[0].send_signal(signal.SIGKILL)
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0, out[-2000:] + err[-2000:]
    assert workers[0].wait(5) == -signal.SIGKILL
    assert digest_of(remote) == local_digest
    assert f"{SEEDS}/{SEEDS} seeds" in out


def test_an_unreachable_scheduler_is_one_line_exit_2(tmp_path):
    p = run("--seeds", "2", "--dask", f"tcp://127.0.0.1:{_free_port()}", "--report", str(tmp_path / "x.json"))
    out, err = p.communicate(timeout=120)
    assert p.returncode == 2 and err.count("\n") == 1 and "cannot reach the scheduler" in err, err
