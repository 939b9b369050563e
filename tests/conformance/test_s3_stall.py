"""A real server stopped (SIGSTOP) and resumed (SIGCONT) during a real-S3 run: the environment is
judged, never turned into a verdict.

The server is moto's own `moto_server` in a process of its own (a ThreadedMotoServer in this
process could not be stopped alone), on 127.0.0.1 and a free port. The runs use the real-S3
world's short timing (scenarios.s3.S3_PARAMS: ttl 2 s, grace 1 s), so its stall bound, ttl + grace
(T-5's takeover span), is 3 s: a stall of 1.2 s is recorded in the report, shown on the console,
and the correct model passes; one of 8 s ends the run as an environment failure, exit 3, one
line, never exit 1. The margins (1.8 s below the bound, 5 s above) keep these tests off timing.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import threading
import time

import pytest

import runner
from house.errors import Exit

from .servers import CREDENTIAL_ENV, client, free_ports, skip_if_too_loaded

BUCKET = "nodelease-stall"


@pytest.fixture(scope="module")
def moto_process():
    """moto_server in its own process (so that SIGSTOP stops the server, not the test)."""
    exe = shutil.which("moto_server")
    if exe is None:
        pytest.skip("moto_server is not installed (pip install 'moto[server]')")
    (port,) = free_ports(1)
    proc = subprocess.Popen([exe, "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    c = client(url)
    deadline = time.monotonic() + 30
    while True:
        try:
            c.create_bucket(Bucket=BUCKET)
            break
        except Exception:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail("moto_server did not start")
            time.sleep(0.2)
    yield proc, url
    proc.send_signal(signal.SIGCONT)
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture
def aws_env(monkeypatch):
    for k, v in CREDENTIAL_ENV.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("AWS_PROFILE", raising=False)


def _stalled_run(capsys, proc, url, tmp_path, duration_s: float, stop_at_s: float, stop_for_s: float,
                 seed: int = 4):
    """One s3 run with the server stopped from `stop_at_s` for `stop_for_s` (from the command's
    start); the exit status, stdout, stderr and the report."""
    report = tmp_path / "s3.json"
    resumed = threading.Event()

    def stall() -> None:
        time.sleep(stop_at_s)
        proc.send_signal(signal.SIGSTOP)
        time.sleep(stop_for_s)
        proc.send_signal(signal.SIGCONT)
        resumed.set()

    t = threading.Thread(target=stall, daemon=True)
    t.start()
    try:
        code = runner.main(["s3", url, "--bucket", BUCKET, "--duration", str(duration_s), "--seed", str(seed),
                            "--report", str(report)])
    finally:
        resumed.wait(stop_at_s + stop_for_s + 5)
        proc.send_signal(signal.SIGCONT)
    out, err = capsys.readouterr()
    if code == 3:
        skip_if_too_loaded(err)
    return code, out, err, json.loads(report.read_text())


def _acquiring_seed(duration_ms: int, at_least: int = 5, limit: int = 50) -> int:
    """The first seed whose swarm draw for a real-S3 run of `duration_ms` acquires `at_least` times in the
    simulated world (a run that judges no acquisition does not pass: issue 50; found, not named)."""
    import copy

    from model import MODEL
    from scenarios.s3 import S3_PARAMS
    from scenarios.sim import SimWorld
    from scenarios.swarm import draw

    for seed in range(limit):
        options = draw(seed, "swarm", S3_PARAMS, duration_ms=duration_ms, liveness_floor_ms=0)
        h = SimWorld(seed, MODEL, "swarm", S3_PARAMS, options=copy.deepcopy(options)).run()
        if sum(1 for e in h.events if e.kind == "hold_began") >= at_least:
            return seed
    pytest.fail(f"no seed of 0..{limit - 1} acquires {at_least} times in {duration_ms} ms")


def test_a_stall_shorter_than_ttl_plus_grace_is_recorded_and_the_run_passes(moto_process, aws_env, capsys, tmp_path):
    proc, url = moto_process
    # (12 s: a run that judges no acquisition does not pass, and a stalled, loaded real-S3 world acquires late)
    code, out, err, report = _stalled_run(capsys, proc, url, tmp_path, 12, 2.5, 1.2, seed=_acquiring_seed(12_000))
    assert code == Exit.PASSED, err
    s3 = report["s3"]
    assert s3["stall_bound_s"] == 3.0 and s3["client_timeouts_s"] == {"connect": 0.5, "read": 3.0}
    assert s3["stalls"], "the 1.2 s SIGSTOP left no stall in the report"
    longest = max(s3["stalls"], key=lambda x: x["span_s"])
    assert longest["span_s"] < s3["stall_bound_s"] and longest["requests_held"] >= 1
    assert "endpoint stalls: " in out and report["environment_failure"] is None
    assert err == ""


def test_a_stall_longer_than_ttl_plus_grace_is_an_environment_failure_not_a_verdict(moto_process, aws_env, capsys,
                                                                                     tmp_path):
    proc, url = moto_process
    code, out, err, report = _stalled_run(capsys, proc, url, tmp_path, 12, 2.5, 8)
    assert code == Exit.ENVIRONMENT, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "environment failure: the endpoint stalled" in lines[0] and "past their deadlines" in lines[0]
    assert "longer than ttl + grace (3 s)" in lines[0]
    assert report["environment_failure"].startswith("the endpoint stalled")
    assert {"INV-4", "INV-7"} <= set(report["not_judged"])  # liveness is not judged on a cut-short run
    assert not report["failures"]


@pytest.mark.slow
def test_a_stall_in_the_quiet_phase_leaves_liveness_unjudged(moto_process, aws_env, capsys, tmp_path):
    """24 s: a 12 s fault phase, then a 12 s quiet phase (4 (ttl + grace)), stalled 1.2 s at 16 s."""
    proc, url = moto_process
    code, out, err, report = _stalled_run(capsys, proc, url, tmp_path, 24, 16, 1.2, seed=_acquiring_seed(24_000))
    assert code == Exit.PASSED, err
    assert any(x["in_quiet_phase"] for x in report["s3"]["stalls"])
    assert "not calm" in report["not_judged"]["INV-4"] and "not calm" in report["s3"]["quiet_not_calm"]
