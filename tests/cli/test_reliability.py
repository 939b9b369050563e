"""Bad input never reaches the world, no work is lost, no option is silently ignored.

- Every configuration is validated before any seed runs (campaign/validate.py): NL-4, T-2..T-4 and
  what the world's draws need; the refusal is one line naming what the user set.
- A report read back (replay, shrink, merge, --resume) is checked against its schema first.
- The report path is checked before the run; SIGINT and SIGTERM leave a partial report (exit 130,
  143), and `run --resume` finishes it to the digest an uninterrupted run gives.
- A replay whose hash differs exits 5 (Exit.REPLAY_DIFFERS); a closed stdout is quiet (141).
The real-S3 world's stalls are tests/conformance/test_s3_stall.py.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys

import pytest

from campaign import run as campaign
from nodelease.cli import main
from house.errors import Exit

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def no_seed(monkeypatch):
    """Any seed run is a test failure: what is refused must be refused before the world sees it."""

    def refuse(*a, **k):
        raise AssertionError("a seed ran")

    monkeypatch.setattr(campaign, "run_one", refuse)
    monkeypatch.setattr(campaign, "run_seeds", refuse)


def one_line_exit_2(capsys, *argv) -> str:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == Exit.USAGE, (code, err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


# --- configurations: refused before any seed, naming what the user set (T-2..T-4, the draws) ----------


def test_a_ttl_the_world_cannot_draw_around_exits_2_before_any_seed(capsys, no_seed, tmp_path):
    report = tmp_path / "r.json"
    err = one_line_exit_2(capsys, "run", "--param", "ttl_ms=1000", "--seeds", "20", "--workers", "1",
                          "--report", str(report))
    assert "--param ttl_ms=1000" in err and "blips" in err and "pin grace_ms too" in err
    assert not report.exists()


@pytest.mark.parametrize("params, named, never", [
    (["ttl_ms=1000", "safety_ms=2000"], ["NL-4", "safety_ms=2000", "ttl_ms=1000"], ["attempt_timeout_ms", "-334"]),
    (["ttl_ms=6000", "attempt_timeout_ms=1800"], ["T-4", "attempt_timeout_ms=1800", "pin safety_ms"], []),
    (["heartbeat_period_ms=5000", "ttl_ms=10000"], ["T-3", "heartbeat_period_ms=5000"], []),
    (["grace_ms=0", "safety_ms=0", "max_skew_ms=100"], ["T-2", "grace_ms=0", "max_skew_ms=100"], []),
    (["grace_ms=20000"], ["--param grace_ms=20000", "blips"], []),
    (["heartbeat_period_ms=10"], ["heartbeat_period_ms=10", "16 ms"], []),
    (["ttl_ms=-1"], ["ttl_ms=-1", "positive"], []),
    (["attempt_timeout_ms=0"], ["attempt_timeout_ms=0", "positive"], []),
    (["ttl_ms=ten"], ["ttl_ms", "'ten'"], []),
    (["ttl=10000"], ["unknown parameter 'ttl'"], []),
    (["ttl_ms"], ["KEY=VALUE"], []),
])
def test_bad_params_are_one_line_naming_what_the_user_set(capsys, no_seed, params, named, never):
    argv = ["run", "--seeds", "20", "--workers", "1"]
    for p in params:
        argv += ["--param", p]
    err = one_line_exit_2(capsys, *argv)
    for word in named:
        assert word in err, err
    for word in never:
        assert word not in err, err


def test_the_real_s3_world_fits_and_refuses_by_the_same_rules(capsys, tmp_path):
    """Before any connection: the same refusal as the simulation's (NL-4, naming what was set)."""
    err = one_line_exit_2(capsys, "s3", "http://127.0.0.1:9", "--bucket", "b", "--param", "ttl_ms=1000",
                          "--param", "safety_ms=2000", "--report", str(tmp_path / "s.json"))
    assert "NL-4" in err and "attempt_timeout_ms" not in err
    from campaign.run import parse_params
    from scenarios.s3 import S3_PARAMS

    # a ttl the short timing's heartbeat (600 ms) does not fit: the heartbeat moves (T-3), as in the simulation
    p = parse_params(["ttl_ms=1500"], S3_PARAMS.to_dict())
    assert p.ttl_ms == 1500 and 3 * p.heartbeat_period_ms <= 1500


def test_what_validation_accepts_every_seed_can_draw(tmp_path):
    """The pins accepted are drawn and run without a tool failure (the rules are the draw's needs)."""
    from campaign.run import parse_pins, run_one

    for pairs in (["ttl_ms=3000"], ["grace_ms=12000", "ttl_ms=3000"], ["heartbeat_period_ms=48"]):
        pins = parse_pins(pairs, count=3)
        for seed in range(3):
            result = run_one(seed, "correct", "swarm", pins)
            assert result.tool_failure is None, (pairs, seed, result.tool_failure)


# --- reports read back: their schema first -------------------------------------------------------------


@pytest.fixture(scope="module")
def small_report(tmp_path_factory):
    path = tmp_path_factory.mktemp("rep") / "r.json"
    assert main(["run", "--seeds", "2", "--workers", "1", "--scenario", "calm", "--report", str(path)]) == 0
    return json.loads(path.read_text())


@pytest.mark.parametrize("edit, field", [
    (lambda r: r["params"].update(ttl_ms="ten"), "params.ttl_ms"),
    (lambda r: r["params"].update(tll_ms=10), "params.tll_ms"),
    (lambda r: r.update(seeds={"start": "0", "count": 2}), "seeds.start"),
    (lambda r: r.update(seed_hashes="abc"), "seed_hashes"),
    (lambda r: r.update(failures=[{"invariant": "INV-1"}]), "failures[0]"),
    (lambda r: r.pop("model"), "'model'"),
    (lambda r: r.update(counts=[]), "counts"),
])
@pytest.mark.parametrize("command", ["replay", "shrink", "merge", "resume"])
def test_a_malformed_report_is_one_line_and_exit_2(capsys, small_report, tmp_path, edit, field, command):
    r = json.loads(json.dumps(small_report))
    edit(r)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(r))
    argv = {"replay": ["replay", str(path), "--seed", "0"], "shrink": ["shrink", str(path), "--seed", "0"],
            "merge": ["merge", str(path), "--report", str(tmp_path / "m.json")],
            "resume": ["run", "--resume", str(path)]}[command]
    if field == "counts" and command in ("replay", "shrink"):
        pytest.skip("replay and shrink do not read counts")
    err = one_line_exit_2(capsys, *argv)
    assert field in err, err


def test_a_replay_whose_hash_differs_exits_5(capsys, small_report, tmp_path):
    r = json.loads(json.dumps(small_report))
    r["seed_hashes"][0] = "0" * 64
    path = tmp_path / "changed.json"
    path.write_text(json.dumps(r))
    code = main(["replay", str(path), "--seed", "0"])
    out, err = capsys.readouterr()
    assert code == Exit.REPLAY_DIFFERS == 5
    assert "DIFFERS" in out and err.count("\n") == 1 and "replay differs" in err
    path.write_text(json.dumps(small_report))
    assert main(["replay", str(path), "--seed", "0"]) == Exit.PASSED  # the same report, untouched: it matches


# --- the report path, before the run -----------------------------------------------------------------


def test_a_report_path_that_cannot_be_written_is_refused_before_any_seed(capsys, no_seed, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    err = one_line_exit_2(capsys, "run", "--seeds", "5", "--workers", "1", "--report", str(blocker / "r.json"))
    assert "cannot write the report" in err
    os.makedirs(tmp_path / "dir.json")
    err = one_line_exit_2(capsys, "run", "--seeds", "5", "--workers", "1", "--report", str(tmp_path / "dir.json"))
    assert "is a directory" in err
    err = one_line_exit_2(capsys, "run", "--seeds", "5", "--workers", "1", "--junit", str(blocker / "j.xml"),
                          "--report", str(tmp_path / "ok.json"))
    assert "cannot write the JUnit XML" in err and not (tmp_path / "ok.json").exists()


def test_an_s3_report_path_is_checked_before_the_endpoint(capsys, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    err = one_line_exit_2(capsys, "s3", "http://127.0.0.1:9", "--bucket", "b", "--report", str(blocker / "r.json"))
    assert "cannot write the report" in err


# --- options that do not apply -------------------------------------------------------------------------


def test_combinations_that_do_not_apply_are_refused(capsys, tmp_path, small_report):
    path = tmp_path / "whole.json"
    path.write_text(json.dumps(small_report))
    assert "go one at a time" in one_line_exit_2(capsys, "--s3", "http://127.0.0.1:9", "--bucket", "b",
                                                 "--replay", str(path))
    assert "not partial" in one_line_exit_2(capsys, "run", "--resume", str(path))
    err = one_line_exit_2(capsys, "run", "--resume", str(path), "--seeds", "10")
    assert "takes no --seeds" in err
    assert "takes no --param" in one_line_exit_2(capsys, "run", "--resume", str(path), "--param", "ttl_ms=9000")
    partial = dict(small_report, partial={"signal": "SIGINT", "of": {"start": 0, "count": 4}, "resume": "x"})
    path.write_text(json.dumps(partial))
    assert "is partial" in one_line_exit_2(capsys, "merge", str(path), "--report", str(tmp_path / "m.json"))


# --- signals: a partial report, its resume, no noise ---------------------------------------------------


def _interrupted(tmp_path, sig, seeds: int, workers: int, group: bool = False):
    """A campaign run in a process of its own, sent `sig` once its first progress line shows that
    seeds finished (no sleep: the signal waits for the run's own output); with `group`, to its whole
    process group, workers too, as a terminal's Ctrl-C or a CI timeout does."""
    path = tmp_path / "c.json"
    env = dict(os.environ, PYTHONPATH=REPO)
    proc = subprocess.Popen([sys.executable, os.path.join(REPO, "runner.py"), "run", "--seeds", str(seeds),
                             "--workers", str(workers), "--scenario", "calm", "--report", str(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=env,
                            start_new_session=True)
    out = ""
    for line in proc.stdout:
        out += line
        if " seeds, " in line and "/" in line:  # "correct/calm: 3/30 seeds, ..."
            break
    if group:
        os.killpg(proc.pid, sig)
    else:
        proc.send_signal(sig)
    rest, err = proc.communicate(timeout=120)
    return proc.returncode, out + rest, err, path


@pytest.mark.parametrize("sig, status, workers, group", [(signal.SIGINT, Exit.INTERRUPTED, 1, False),
                                                         (signal.SIGINT, Exit.INTERRUPTED, 2, True),
                                                         (signal.SIGTERM, Exit.TERMINATED, 2, False),
                                                         (signal.SIGTERM, Exit.TERMINATED, 2, True)])
def test_a_signal_leaves_a_partial_report_and_one_line(tmp_path, sig, status, workers, group):
    """(A worker killed by a group SIGTERM while holding the pool's queue lock used to hang the run.)"""
    code, out, err, path = _interrupted(tmp_path, sig, 60, workers, group)
    assert code == status, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err and "BrokenPipe" not in err, err
    name = signal.Signals(sig).name
    assert f"interrupted: {name} after" in lines[0] and "seeds of 60 seeds" in lines[0] and "--resume" in lines[0]
    report = json.loads(path.read_text())
    assert report["partial"]["signal"] == name and report["partial"]["of"] == {"start": 0, "count": 60}
    n = report["seeds"]["count"]
    assert report["seeds"]["start"] == 0 and 0 <= n < 60 and len(report["seed_hashes"]) == n



def test_a_worker_killed_from_outside_is_the_tool_s_failure_not_a_hang(tmp_path):
    """A pool worker killed on its own (SIGKILL from outside: the OOM killer, a stray kill) is replaced by
    the pool, but the chunk it held would never be answered: the campaign says so in one line and exits 4
    (the tool failed, never a verdict), where it used to wait for ever."""
    env = dict(os.environ, PYTHONPATH=REPO)
    proc = subprocess.Popen([sys.executable, os.path.join(REPO, "runner.py"), "run", "--seeds", "3000",
                             "--workers", "2", "--scenario", "calm", "--report", str(tmp_path / "c.json")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=env,
                            start_new_session=True)
    for line in proc.stdout:
        if " seeds, " in line and "/" in line:  # seeds finished: the pool's workers run
            break
    with open(f"/proc/{proc.pid}/task/{proc.pid}/children") as f:
        children = [int(c) for c in f.read().split()]
    assert children, "the campaign has no worker processes"
    os.kill(children[0], signal.SIGKILL)
    try:
        _rest, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("the campaign hung after one of its workers was killed")
    assert proc.returncode == Exit.TOOL, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err and "worker process" in lines[0], err

_DYING = """
import os, signal, sys, time
sys.path.insert(0, {repo!r})
from campaign import run as campaign
from house.errors import ToolFailure

def siblings():
    me = os.getpid()
    kids = open(f"/proc/{{os.getppid()}}/task/{{os.getppid()}}/children").read().split()
    return [int(k) for k in kids if int(k) != me]

def idle(pid):  # asleep reading its pipe: it holds no seeds
    with open(f"/proc/{{pid}}/wchan") as f:
        return "read" in f.read()

def chunk(seeds):
    if {case!r} == "holding" and 5 in seeds:
        os.kill(os.getpid(), signal.SIGKILL)
    if {case!r} == "idle" and 11 in seeds:  # the last chunk: the others are done, and idle
        t0 = time.monotonic()
        while not all(idle(p) for p in siblings()):
            if time.monotonic() - t0 > 30:
                print("SKIP: /proc/PID/wchan does not show an idle worker")
                sys.exit(0)
            time.sleep(0.01)
        for p in siblings():
            os.kill(p, signal.SIGKILL)
    return list(seeds)

campaign._worker_chunk = chunk  # the forked workers inherit it
try:
    from scenarios.spec import RunSpec
    got = list(campaign.run_seeds(RunSpec("correct", "calm"), 0, 12, 2, chunk=1))
    print("finished", got)
except ToolFailure as e:
    print("ToolFailure", e)
"""


@pytest.mark.parametrize("case", ["holding", "idle"])
def test_a_worker_dying_at_any_instant_is_seen_at_once_and_never_hangs(tmp_path, case):
    """A worker killed holding seeds is the tool's failure at once, naming the seeds lost; one killed while
    idle holds nothing, and the campaign finishes with every seed. (multiprocessing.Pool hung on the second:
    an idle worker holds the shared task queue's lock while it waits, and a kill then leaves it held for the
    siblings and for the pool's own terminate; CI, stop 34.)"""
    script = tmp_path / "dying.py"
    script.write_text(_DYING.format(repo=REPO, case=case))
    try:
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=90)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the campaign hung after a worker was killed ({case})")
    out = done.stdout.strip()
    if out.startswith("SKIP"):
        pytest.skip(out)
    assert done.returncode == 0, done.stderr
    if case == "holding":
        assert out.startswith("ToolFailure a worker process of the campaign died") and "killed by signal 9" in out
        assert "seeds 5" in out and "--resume" in out, out
    else:
        assert out == f"finished {list(range(12))}", out


def test_resume_gives_the_digest_of_the_uninterrupted_run(tmp_path, capsys):
    code, _out, err, path = _interrupted(tmp_path, signal.SIGINT, 24, 1)
    assert code == Exit.INTERRUPTED, err
    done = json.loads(path.read_text())["seeds"]["count"]
    assert main(["run", "--resume", str(path), "--workers", "1"]) == Exit.PASSED
    resumed = json.loads(path.read_text())
    assert "partial" not in resumed and resumed["resumed"]["seeds_before"] == done
    whole = tmp_path / "whole.json"
    assert main(["run", "--seeds", "24", "--workers", "1", "--scenario", "calm", "--report", str(whole)]) == 0
    capsys.readouterr()
    expected = json.loads(whole.read_text())
    assert resumed["seeds"] == expected["seeds"] == {"start": 0, "count": 24}
    assert resumed["history_digest"] == expected["history_digest"]
    assert resumed["counts"] == expected["counts"] and resumed["coverage"] == expected["coverage"]


# --- a closed stdout -------------------------------------------------------------------------------------


class _Closed(io.StringIO):
    def write(self, s):
        raise BrokenPipeError(32, "Broken pipe")


def test_a_closed_stdout_is_quiet(monkeypatch, capsys):
    """`list | head`: the reader closed the pipe; no BrokenPipeError traceback, status 141."""
    monkeypatch.setattr(sys, "stdout", _Closed())
    code = main(["list"])
    monkeypatch.undo()
    assert code == Exit.PIPE_CLOSED == 141
    assert "Traceback" not in capsys.readouterr().err


def test_list_into_head_leaves_stderr_empty(tmp_path):
    r = subprocess.run(f"{sys.executable} {os.path.join(REPO, 'runner.py')} list | head -1", shell=True,
                       capture_output=True, text=True, cwd=tmp_path, env=dict(os.environ, PYTHONPATH=REPO))
    assert r.stdout.strip() and r.stderr == ""


def test_every_exit_status_is_in_the_docs_table():
    with open(os.path.join(REPO, "docs", "exit-statuses.md")) as f:
        rows = {line.split("|")[1].strip() for line in f if line.startswith("| ") and line.count("|") >= 3}
    assert {str(int(e)) for e in Exit} <= rows


def test_resume_draws_the_rest_as_the_report_s_tool_did(tmp_path, capsys):
    """A partial report written before a fault kind was added (its `fault_kinds` without it): the seeds a resume
    runs hold that kind off (RunSpec.kinds_off), as the report's first seeds were drawn, and the joined report
    still lists the kinds its seeds knew (issue 46)."""
    from campaign.run import run_one
    from scenarios.faults import KINDS
    from scenarios.spec import RunSpec

    path = tmp_path / "partial.json"
    assert main(["run", "--seeds", "2", "--workers", "1", "--report", str(path)]) in (0, 1)
    capsys.readouterr()
    report = json.loads(path.read_text())
    gone = [k for k, kind in KINDS.items() if kind.options][-1]  # the newest kind drawing options of its own
    report["fault_kinds"].remove(gone)
    report["partial"] = {"signal": "SIGINT", "of": {"start": 0, "count": 4}, "resume": None}
    path.write_text(json.dumps(report))
    assert main(["run", "--resume", str(path), "--workers", "1"]) in (0, 1)
    resumed = json.loads(path.read_text())
    held = [run_one(s, RunSpec(kinds_off=(gone,))).sha256 for s in (2, 3)]
    assert resumed["seed_hashes"][2:] == held != [run_one(s, RunSpec()).sha256 for s in (2, 3)]
    assert resumed["fault_kinds"] == report["fault_kinds"]
