"""runner.py end to end, as a user runs it: exit codes, the report's fields, replay, bad input.

Every run writes its report under a temporary directory (never reports/), and
runs from the repository root, where a report's `replay` command is meant to
be run. The subcommands' parsing itself (aliases, refusals) is tests/cli/test_cli.py's.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import subprocess
import sys

import pytest


REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHA_LINE = re.compile(r"^history sha256: ([0-9a-f]{64})$", re.M)


def run(*args: str, cwd: str = REPO, columns: int = 80) -> subprocess.CompletedProcess:
    # COLUMNS pins the width rich formats for when the output is not a terminal (80, as without it)
    env = dict(os.environ, COLUMNS=str(columns))
    env.pop("PYTHONHASHSEED", None)
    return subprocess.run([sys.executable, "runner.py", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture(scope="module")
def report7(tmp_path_factory):
    """`--seeds 1 --start 7`: (its report path, the report)."""
    path = str(tmp_path_factory.mktemp("r7") / "seed7.json")
    r = run("--seeds", "1", "--start", "7", "--workers", "1", "--report", path)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    with open(path) as f:
        return path, json.load(f)


def test_run_exits_0_and_writes_a_report_with_every_field(tmp_path):
    path = str(tmp_path / "r.json")
    r = run("--seeds", "3", "--start", "5", "--workers", "1", "--report", path)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "Traceback" not in r.stderr
    with open(path) as f:
        rep = json.load(f)
    assert os.path.exists(os.path.splitext(path)[0] + ".txt")  # the summary for people
    assert rep["model"] == "correct" and rep["scenario"] == "swarm"
    assert rep["params"] == {}  # nothing pinned: each seed draws its configuration (T-1..T-4)
    assert len(rep["seed_params"]) == 3 and sum(rep["configurations"]["families"].values()) == 3
    assert rep["seeds"] == {"start": 5, "count": 3}
    assert rep["passed"] is True and rep["failures"] == [] and rep["tool_failures"] == []
    counts = rep["counts"]
    assert counts["seeds_run"] == 3
    for k in ("events", "acquisitions", "bucket_requests"):
        assert isinstance(counts[k], int) and counts[k] >= 0, k
    assert counts["events"] > 0 and counts["bucket_requests"] > 0
    assert {"NL-5", "NL-7"} <= set(rep["rules_hit"])  # every process runs the start check
    assert all(isinstance(v, int) and v > 0 for v in rep["rules_hit"].values())
    assert {"LEASE-1", "INV-3"} <= set(rep["invariants_checked"])
    assert len(rep["seed_hashes"]) == 3
    assert rep["history_digest"] == sha256_hex("\n".join(rep["seed_hashes"]))
    assert isinstance(rep["elapsed_s"], (int, float)) and rep["elapsed_s"] >= 0
    assert "git_commit" in rep


def test_one_seed_digest_is_the_sha256_of_its_hash(report7):
    _path, rep = report7
    (h,) = rep["seed_hashes"]
    assert rep["history_digest"] == sha256_hex(h)


def test_replay_prints_the_history_hash_whose_sha256_is_the_digest(report7):
    """Acceptance: `--seeds 1 --start 7`, then `--replay` at seed 7 prints the hash whose sha256 is
    the report's history_digest, says it matches, and exits as the run did."""
    path, rep = report7
    r = run("replay", path, "--seed", "7")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    (h,) = SHA_LINE.findall(r.stdout)
    assert sha256_hex(h) == rep["history_digest"]
    assert "matches the report" in r.stdout
    assert "lease_valid" in r.stdout  # the timeline is printed


# --- bad input: one line, exit 2, no traceback -------------------------------------------------------------

def campaign(tmp_path, *args: str) -> list[str]:
    return ["--seeds", "1", "--workers", "1", "--report", str(tmp_path / "x.json"), *args]


BAD = {
    "unknown-model": (["--model", "nope"], "nope"),
    "unknown-scenario": (["--scenario", "nope"], "nope"),
    "param-not-int": (["--param", "ttl_ms=abc"], "ttl_ms"),
    # pins the runner cannot fit around: every value of the bound is pinned (one left free is moved)
    "t2": (["--param", "grace_ms=100", "--param", "safety_ms=100", "--param", "max_skew_ms=1000"], "T-2"),
    "t3": (["--param", "heartbeat_period_ms=5000", "--param", "ttl_ms=10000"], "T-3"),
    "seeds-0": (["--seeds", "0"], "--seeds"),
}
def bad_input_cases(tmp_path, name):
    """(the whole argv, what its one line must name)."""
    if name in BAD:
        args, needle = BAD[name]
        return campaign(tmp_path, *args), needle
    if name == "replay-missing":
        return ["replay", "/nonexistent/report.json", "--seed", "0"], "/nonexistent/report.json"
    if name == "corrupt-report":
        bad = tmp_path / "corrupt.json"
        bad.write_text('{"model": "correct", "seeds": ')
        return ["--replay", str(bad), "--seed", "0"], "not valid JSON"  # (the old mode flag, as CI has it)
    raise KeyError(name)


ALL_BAD = sorted(BAD) + ["corrupt-report", "replay-missing"]


def assert_usage_error(r: subprocess.CompletedProcess, needle: str) -> None:
    assert r.returncode == 2, (r.returncode, r.stdout[-2000:], r.stderr[-2000:])
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout
    message = " ".join(r.stderr.split())  # undo any wrapping
    assert needle in message, message


@pytest.mark.parametrize("name", ALL_BAD)
def test_bad_input_exits_2_naming_the_problem_without_traceback(tmp_path, name):
    args, needle = bad_input_cases(tmp_path, name)
    r = run(*args)
    assert_usage_error(r, needle)
    assert not (tmp_path / "x.json").exists()


@pytest.mark.parametrize("name", ALL_BAD)
def test_bad_input_is_one_line_on_a_wide_stderr(tmp_path, name):
    """One line naming the problem (on a console wide enough that rich does not wrap it)."""
    args, _needle = bad_input_cases(tmp_path, name)
    r = run(*args, columns=10_000)
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert r.stderr.startswith("runner.py: error: ")


def test_a_long_error_message_stays_one_line_at_80_columns(tmp_path):
    """The T-3 refusal (106 characters) is not wrapped at a non-terminal's 80 columns."""
    r = run("--seeds", "1", "--report", str(tmp_path / "x.json"), "--param", "heartbeat_period_ms=5000",
            "--param", "ttl_ms=10000", columns=80)
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_an_error_message_longer_than_300_characters_stays_one_line(tmp_path):
    missing = "/nonexistent/" + "a" * 200 + "/" + "b" * 200 + ".json"
    r = run("replay", missing, "--seed", "0", columns=80)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_bad_input_lists_the_choices():
    r = run("--model", "nope", "--seeds", "1")
    assert_usage_error(r, "correct")
    assert "adopt_any_instance" in r.stderr


def test_t2_refusal_with_zero_grace_names_t2(tmp_path):
    r = run("--seeds", "1", "--report", str(tmp_path / "x.json"), "--param", "grace_ms=0", "--param", "safety_ms=100",
            "--param", "max_skew_ms=1000")
    assert_usage_error(r, "T-2")


def test_replay_seed_out_of_range_exits_2(report7):
    path, _rep = report7
    r = run("replay", path, "--seed", "8")
    assert_usage_error(r, "8")
    assert "7" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_replay_of_a_json_file_that_is_not_a_report_exits_2(tmp_path):
    bad = tmp_path / "list.json"
    bad.write_text("[1, 2, 3]")
    assert_usage_error(run("replay", str(bad), "--seed", "0"), "not a report")
    bad.write_text('{"model": "correct"}')
    assert_usage_error(run("replay", str(bad), "--seed", "0"), "scenario")


# --- a broken model: exit 1, replayable failures ---------------------------------------------------------


def test_broken_model_run_exits_1_and_its_failure_replays(tmp_path, twins_catch):
    """adopt_any_instance (breaks NL-9) over the seed range where LEASE-1 first caught it: exit 1;
    each failure carries its replay command; replaying the first exits 1 with its history hash."""
    seed, _ = twins_catch
    path = str(tmp_path / "broken.json")
    r = run("--model", "adopt_any_instance", "--scenario", "twins", "--start", "0", "--seeds", str(seed + 1),
            "--workers", "2", "--report", path)
    assert r.returncode == 1, r.stdout[-3000:] + r.stderr[-3000:]
    with open(path) as f:
        rep = json.load(f)
    assert rep["passed"] is False and rep["model"] == "adopt_any_instance" and rep["scenario"] == "twins"
    assert "LEASE-1" in {f["invariant"] for f in rep["failures"]}
    for f in rep["failures"]:
        assert {"seed", "invariant", "message", "history_sha256", "replay"} <= set(f)
        assert 0 <= f["seed"] <= seed
        assert f["history_sha256"] == rep["seed_hashes"][f["seed"]]
        assert f["replay"].startswith("python runner.py replay ") and f["replay"].endswith(f"--seed {f['seed']}")
    assert rep["failing_seeds"] == sorted({f["seed"] for f in rep["failures"]})
    first = rep["failures"][0]
    argv = shlex.split(first["replay"])
    assert argv[:2] == ["python", "runner.py"]
    replay = subprocess.run([sys.executable, *argv[1:]], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert replay.returncode == 1, replay.stdout[-3000:] + replay.stderr[-3000:]
    (h,) = SHA_LINE.findall(replay.stdout)
    assert h == first["history_sha256"]
    assert first["invariant"] in replay.stdout and "matches the report" in replay.stdout
