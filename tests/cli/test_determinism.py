"""Determinism is a feature (STYLE.md 9, DESIGN.md): one seed gives one byte-identical history, in
one process or another, under any PYTHONHASHSEED, with one worker or several."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from model import MODEL
from scenarios.sim import run_seed

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEEDS = (0, 3, 7)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_seed_twice_in_one_process_gives_the_same_history(seed):
    a = run_seed(seed, MODEL, "swarm", None, "correct")
    b = run_seed(seed, MODEL, "swarm", None, "correct")
    assert a.encode() == b.encode()
    assert a.sha256() == b.sha256()


def test_different_seeds_give_different_histories():
    hashes = {run_seed(s, MODEL, "swarm", None, "correct").sha256() for s in SEEDS}
    assert len(hashes) == len(SEEDS)


def test_hash_does_not_depend_on_pythonhashseed():
    """The same seed in subprocesses under PYTHONHASHSEED=7 and 4242 hashes as in this process."""
    here = {s: run_seed(s, MODEL, "swarm", None, "correct").sha256() for s in SEEDS}
    code = (
        "import json; from model import MODEL; from scenarios.sim import run_seed; "
        f"print(json.dumps({{s: run_seed(s, MODEL, 'swarm', None, 'correct').sha256() for s in {SEEDS!r}}}))"
    )
    for hash_seed in ("7", "4242"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        there = {int(k): v for k, v in json.loads(out.stdout).items()}
        assert there == here, f"PYTHONHASHSEED={hash_seed}"


def test_runner_digest_is_the_same_with_one_worker_or_two(tmp_path, capsys):
    """The report's history_digest does not depend on --workers (processes, not threads)."""
    from nodelease.cli import main

    digests = {}
    for workers in ("1", "2"):
        path = tmp_path / f"w{workers}.json"
        rc = main(["run", "--seeds", "20", "--workers", workers, "--report", str(path)])
        assert rc == 0, capsys.readouterr().out[-2000:]
        report = json.loads(path.read_text())
        assert report["counts"]["seeds_run"] == 20
        digests[workers] = (report["history_digest"], report["seed_hashes"])
    assert digests["1"] == digests["2"]


@pytest.mark.parametrize("seed", SEEDS)
def test_the_hashed_events_are_json_s_encoding_of_the_events_themselves(seed):
    # History.encode hands json plain tuples (a named tuple is copied into a list before json writes it): the
    # bytes, and so every report's digest, must be those of the events as recorded
    h = run_seed(seed, MODEL, "swarm", None, "correct")
    body = json.dumps(h.events, separators=(",", ":"))
    assert h.encode().split(b"\n")[1] == body.encode()
