"""The tool's own reliability (issue 50), beyond bad input (tests/cli/test_bad_inputs.py):

- every resource bounded by the input before it is spent: a huge exploration is refused at once
  under a memory cap, and --budget-s bounds even the making of one state's successors;
- a verdict is never lost: the JSON report first; a picture, summary or JUnit file that cannot be
  written is a warning, the exit status the verdict's; a report that cannot be written at all is said;
- no pass without work: a run that judged no acquisition is exit 3, `passed` false, saying why;
- counterexamples compared by value: one reformatted by `jq .` replays as the same run;
- signals at any instant: one or two SIGINTs, anywhere in a run, leave one line and the partial
  report (or a line saying none was written), never a traceback.
The real-S3 cases (a bucket that refuses every write; a signal as an s3 run ends) are in
tests/scenarios/test_s3_world.py.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time

import pytest

from campaign import run as campaign
from campaign.report import assess
from house.errors import Exit, UsageError
from nodelease.cli import main

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUNNER = os.path.join(REPO, "runner.py")
ENV = dict(os.environ, PYTHONPATH=REPO, COLUMNS="160")


def _capped(gb: float):
    def cap():
        limit = int(gb * 1024 ** 3)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return cap


# --- bounded by the input --------------------------------------------------------------------------------


def test_a_huge_exploration_is_refused_at_once_under_a_2gb_cap(tmp_path):
    """`explore --nodes 1000 --budget-s 5` listed 3^1000 clock combinations before its budget could act (24 GB,
    killed by the kernel; under a 2 GB cap, a MemoryError, exit 4). Counted, not listed, it is refused: exit 2,
    one line, in well under 10 s of CPU (the process's own time, which a loaded machine does not stretch) and
    with little memory."""
    # The peak is the child's own VmHWM, written as it exits: `ru_maxrss` from wait4 also carries the forking
    # pytest worker's high-water mark (Linux keeps the pre-exec peak), 539 MB on CI for a 55 MB run.
    peak_file = tmp_path / "vmhwm"
    wrapper = ("import atexit, runpy, sys\n"
               "def _peak():\n"
               "    for line in open('/proc/self/status'):\n"
               "        if line.startswith('VmHWM:'):\n"
               f"            open({str(peak_file)!r}, 'w').write(line.split()[1])\n"
               "atexit.register(_peak)\n"
               f"sys.argv = [{RUNNER!r}] + sys.argv[1:]\n"
               f"runpy.run_path({RUNNER!r}, run_name='__main__')\n")
    proc = subprocess.Popen([sys.executable, "-c", wrapper, "explore", "--nodes", "1000", "--budget-s", "5"],
                            cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_capped(2))
    err = proc.stderr.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    assert proc.returncode == Exit.USAGE, err
    assert usage.ru_utime + usage.ru_stime < 10, usage
    peak_kb = int(peak_file.read_text())
    assert peak_kb < 500 * 1024, peak_kb  # nothing of the exploration was made
    assert err.count("\n") == 1 and "more than the 10,000,000 the explorer takes" in err
    assert not (tmp_path / "reports").exists()


def test_the_budget_bounds_the_making_of_one_state_s_successors(tmp_path):
    """Eight nodes in one clock combination: the first states have tens of thousands of successors, once 30 s
    of making before the budget was looked at. The budget is looked at on every branch: a 1 s budget stops
    within a few seconds, under a 2 GB cap, exit 0 and `stopped: the budget`."""
    report = tmp_path / "e.json"
    r = subprocess.run([sys.executable, RUNNER, "explore", "--nodes", "8", "--offsets=" + ",".join(["0"] * 8),
                        "--budget-s", "1", "--report", str(report)], cwd=tmp_path, env=ENV, capture_output=True,
                       text=True, timeout=300, preexec_fn=_capped(2))
    assert r.returncode == Exit.PASSED, r.stderr
    rep = json.loads(report.read_text())
    assert rep["status"] == "stopped: the budget of 1 s" and rep["wall_s"] < 20, rep["wall_s"]  # (unchecked: 30 s+)


def test_states_are_counted_not_made():
    """The refusal is arithmetic: 3^N explorations (by their logarithm: 3^1000000000 is never written out), each
    with at least a choice per node and actor at its first instant; the explorations are made one at a time."""
    from explore.search import MAX_STATES, Bounds

    assert Bounds(nodes=2).count_runs() == 9 and Bounds(nodes=1, upgrade=True).count_runs() == 9 * 2
    assert Bounds(nodes=1, upgrade=True, gaps_ms=[0, 6000]).count_runs() == 9 * 4
    assert Bounds(nodes=2, actors=3).first_choices() == 1 + 2 * 3
    assert Bounds(nodes=2, actors=3, hibernations=1, crashes=1).first_choices() == 1 + 2 * 3 + 3 + 2
    assert "about 10^477121263 states (3^1000000000 clock" in Bounds(nodes=10 ** 9).too_many()
    assert next(Bounds(nodes=10 ** 6).runs(1000))[0][:3] == (-1000, -1000, -1000)  # the first at once, no list
    assert Bounds(nodes=12).too_many() is None and Bounds(nodes=13).too_many()  # 6.9 M and 22 M states at least
    assert 3 ** 12 * 13 <= MAX_STATES < 3 ** 13 * 14
    assert Bounds(nodes=50, offsets=[[0] * 50]).too_many() is None  # combinations named: as many as given
    assert "200,000,001 choices" in Bounds(nodes=2, actors=10 ** 8, offsets=[[0, 0]]).too_many()


def test_worker_counts_are_capped_where_they_are_read():
    from house.inputs import max_workers, worker_count

    assert worker_count("1") == 1 and worker_count(str(max_workers())) == max_workers()
    with pytest.raises(UsageError, match="more than the"):
        worker_count(str(max_workers() + 1))


# --- a verdict is never lost ----------------------------------------------------------------------------


@pytest.fixture
def failing_run(tmp_path, monkeypatch):
    """A violating campaign's command line (unconditional_fence, seed 0 of swarm: it fails INV-3), run here."""
    monkeypatch.chdir(tmp_path)
    return ["run", "--model", "unconditional_fence", "--seeds", "1", "--workers", "1",
            "--report", str(tmp_path / "r.json")]


def test_a_picture_path_that_is_a_directory_is_refused_before_any_seed(failing_run, tmp_path, capsys):
    os.makedirs(tmp_path / "r-INV-3.html")
    assert main(failing_run) == Exit.USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "r-INV-3.html is a directory" in err
    assert not (tmp_path / "r.json").exists()


def test_a_picture_that_cannot_be_written_is_a_warning_and_the_verdict_stands(failing_run, tmp_path, capsys,
                                                                             monkeypatch):
    """(Used to be: every seed run, then exit 2 and no JSON report at all.)"""
    import counterexamples.picture as picture

    def full(path, *_a, **_k):
        raise UsageError(f"cannot write {path}: No space left on device")

    monkeypatch.setattr(picture, "write_html", full)
    assert main(failing_run + ["--junit", str(tmp_path / "out" / "j.xml")]) == Exit.VIOLATION
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("runner.py: warning: cannot write") and "No space" in err
    rep = json.loads((tmp_path / "r.json").read_text())
    assert rep["failures"] and rep["passed"] is False and rep["exit_status"] == 1
    assert rep["why_not_passed"].startswith("1 violating seeds (") and "INV-3" in rep["why_not_passed"]
    assert rep["pictures"] == {} and (tmp_path / "r.txt").exists() and (tmp_path / "out" / "j.xml").exists()


def test_a_summary_or_junit_that_cannot_be_written_is_a_warning(failing_run, tmp_path, capsys, monkeypatch):
    from campaign import outputs

    real = outputs.write_text

    def text_fails(path, text, what="the report"):
        if not path.endswith(".json"):
            raise UsageError(f"cannot write {what} {path}: Read-only file system")
        return real(path, text, what)

    monkeypatch.setattr(outputs, "write_text", text_fails)
    assert main(failing_run + ["--junit", str(tmp_path / "j.xml")]) == Exit.VIOLATION
    warnings = capsys.readouterr().err.splitlines()
    assert len(warnings) == 2 and all(w.startswith("runner.py: warning: ") for w in warnings), warnings
    assert "the summary" in warnings[0] and "the JUnit XML" in warnings[1]
    assert json.loads((tmp_path / "r.json").read_text())["exit_status"] == 1


def test_a_pass_whose_report_cannot_be_written_is_said_and_not_a_pass(tmp_path, capsys, monkeypatch):
    from campaign import outputs

    def disk_full(path, doc, what="the report"):
        raise UsageError(f"cannot write {what} {path}: No space left on device")

    monkeypatch.setattr(outputs, "write_json", disk_full)
    code = main(["run", "--seeds", "1", "--workers", "1", "--scenario", "calm", "--report", str(tmp_path / "p.json")])
    out, err = capsys.readouterr()
    assert code == Exit.ENVIRONMENT and err.count("\n") == 1 and "no report records it" in err
    assert ": PASSED" in out  # the verdict, printed whole, is not lost


# --- no pass without work --------------------------------------------------------------------------------


def test_a_run_that_judged_no_acquisition_is_exit_3_not_a_pass(tmp_path, capsys, monkeypatch):
    real = campaign.run_one

    def idle(*a, **k):  # every seed judged, none acquiring (as a world whose bucket took no write)
        r = real(*a, **k)
        r.counts["acquisitions"] = 0
        return r

    monkeypatch.setattr(campaign, "run_one", idle)
    path = tmp_path / "idle.json"
    code = main(["run", "--seeds", "2", "--workers", "1", "--scenario", "calm", "--report", str(path)])
    out, err = capsys.readouterr()
    assert code == Exit.ENVIRONMENT, err
    rep = json.loads(path.read_text())
    assert rep["passed"] is False and rep["exit_status"] == 3 and rep["failures"] == []
    assert rep["why_not_passed"] == "no work: no acquisition was judged in 2 seeds (a pass needs something judged)"
    assert "NO WORK JUDGED" in out


def test_passed_is_false_whenever_the_exit_status_is_not_0():
    base = {"seeds": {"start": 0, "count": 4}, "counts": {"acquisitions": 5, "seeds_run": 4}, "failures": [],
            "tool_failures": [], "coverage_missed": []}
    cases = [({}, Exit.PASSED), ({"environment_failure": "the bucket is gone"}, Exit.ENVIRONMENT),
             ({"counts": {"acquisitions": 0, "seeds_run": 4}}, Exit.ENVIRONMENT),
             ({"failures": [{"seed": 1, "invariant": "INV-1"}]}, Exit.VIOLATION),
             ({"coverage_missed": ["a point"]}, Exit.VIOLATION),
             ({"tool_failures": [{"seed": 2}]}, Exit.TOOL),
             ({"partial": {"signal": "SIGTERM", "of": {"start": 0, "count": 9}}}, Exit.TERMINATED)]
    for change, status in cases:
        got, why = assess(dict(base, **change))
        assert got == status, change
        assert (why is None) == (status == Exit.PASSED), (change, why)


# --- compared by value --------------------------------------------------------------------------------------


def _jq(value):
    """What `jq .` does to numbers: a float with no fraction is written as an integer."""
    if isinstance(value, float) and value == int(value):
        return int(value)
    if isinstance(value, dict):
        return {k: _jq(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jq(v) for v in value]
    return value


def test_a_counterexample_reformatted_by_jq_replays_as_the_same_run(tmp_path, capsys):
    """(Used to be exit 5, "the code changed", for the same run: 0.0 read back as 0 hashes apart.)"""
    plan = json.loads(open(os.path.join(REPO, "tests", "plans", "readme-unlocked_resolver.json")).read())
    reformatted = _jq(plan)
    assert json.dumps(reformatted) != json.dumps(plan)  # there were floats to lose
    path = tmp_path / "jq.json"
    path.write_text(json.dumps(reformatted, indent=2))
    assert main(["replay", str(path)]) == Exit.VIOLATION
    out = capsys.readouterr().out  # the same run (a kind added since, off in it, leaves it so: issue 46)
    assert "matches the counterexample: the replay is byte-identical" in out or "the same run; the options grew" in out


def test_every_kept_counterexample_gets_its_number_types_back():
    """What `as_written` restores is exactly what was written, for every kept plan (none of its integers made a
    float that was not one)."""
    import glob

    from nodelease.replay import as_written

    paths = glob.glob(os.path.join(REPO, "tests", "plans", "**", "*.json"), recursive=True)
    plans = [json.load(open(p)) for p in paths]
    plans = [p for p in plans if p.get("format") == "nodelease-counterexample/1"]
    assert len(plans) > 50
    for plan in plans:
        assert json.dumps(as_written(_jq(plan))["options"]) == json.dumps(plan["options"])


# --- signals at any instant ----------------------------------------------------------------------------------


def _wait_until_ours(pid: int) -> None:
    """Until the tool's first line has run: runner.py holds SIGINT and SIGTERM off (blocked) from its first line
    until its handler is in place. Before that the process is the Python interpreter starting (its own handler,
    its site imports): a signal there is Python's, not the tool's, and no instant the tool can answer for."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/status") as f:
                blocked = int(next(x for x in f if x.startswith("SigBlk:")).split()[1], 16)
        except (OSError, StopIteration):
            return  # gone, or no /proc: as good as ours
        if blocked & (1 << (signal.SIGINT - 1)):
            return
        time.sleep(0.0005)


def _interrupt(tmp_path, after_line: str | None, delay_s: float, twice: bool, seeds: int = 40) -> tuple:
    """A campaign in a process of its own, sent SIGINT (twice, 3 ms apart, if `twice`) `delay_s` after the first
    line starting with `after_line` (None: after the tool's first line ran) -- to its whole process group, as a
    terminal's Ctrl-C is. Returns (exit status, stderr, the report path)."""
    path = tmp_path / "c.json"
    proc = subprocess.Popen([sys.executable, RUNNER, "run", "--seeds", str(seeds), "--workers", "2", "--scenario",
                             "calm", "--report", str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=tmp_path, env=ENV, start_new_session=True)
    if after_line is not None:
        for line in proc.stdout:
            if line.startswith(after_line):
                break
    else:
        _wait_until_ours(proc.pid)
    time.sleep(delay_s)
    os.killpg(proc.pid, signal.SIGINT)
    if twice:
        time.sleep(0.003)
        try:
            os.killpg(proc.pid, signal.SIGINT)
        except ProcessLookupError:
            pass
    try:
        _out, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("the run hung after SIGINT")
    return proc.returncode, err, path


def _check_interrupted(code, err, path) -> None:
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    if code == Exit.PASSED:  # the signal came after the run had finished its work: a pass says nothing on stderr
        assert err == "", err
        return
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    line = lines[0]
    assert code == Exit.INTERRUPTED, err
    if path.exists():
        rep = json.loads(path.read_text())  # whole, never half
        if "partial" in rep:
            assert "(partial)" in line and rep["passed"] is False and rep["exit_status"] == 130, line
            return
    assert "no verdict" in line or "no partial report could be written" in line, line


@pytest.mark.parametrize("after_line, delay_s, twice", [(None, 0.0, True), ("correct/calm:", 0.0, False),
                                                        ("correct/calm:", 0.0, True)],
                         ids=["at-start-twice", "mid-run-once", "mid-run-twice"])
def test_sigint_at_an_instant_leaves_one_line_and_the_partial_report(tmp_path, after_line, delay_s, twice):
    _check_interrupted(*_interrupt(tmp_path, after_line, delay_s, twice))


@pytest.mark.slow
def test_sigint_at_many_instants_once_and_twice(tmp_path):
    """Forty instants from the tool's first line to the end of its run, 50 ms apart, each once and twice in a row
    (two Ctrl-Cs 3 ms apart used to leave no partial report in 8 of 60 runs and a traceback in 3)."""
    for k in range(40):
        for twice in (False, True):
            d = tmp_path / f"{k}-{twice}"
            os.makedirs(d)
            _check_interrupted(*_interrupt(d, None, 0.05 * k, twice, seeds=60))
