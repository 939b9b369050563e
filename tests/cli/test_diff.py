"""`runner.py diff OLD NEW` (campaign/diff.py): two campaign reports compared; exit 0 when nothing got worse
beyond the tolerances, 1 when something did (naming it), 2 on bad input (one line, never a traceback).

Two real campaigns are run once (the correct model twice on the same seeds, and early_takeover, which frees
one max_skew early: FN-5, T-2, T-5); the other cases edit copies of the correct model's report."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys

import pytest

from nodelease import cli

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "runner.py", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, COLUMNS="160"))


@pytest.fixture(scope="module")
def campaigns(tmp_path_factory) -> dict[str, str]:
    """Reports of seeds 0..3 of the deadline scenario (T-2's races, every seed): the correct model twice,
    early_takeover once."""
    folder = tmp_path_factory.mktemp("diff")
    out = {}
    for name, model in (("a", "correct"), ("b", "correct"), ("early", "early_takeover")):
        path = str(folder / f"{name}.json")
        r = run("run", "--model", model, "--scenario", "deadline", "--seeds", "4", "--workers", "1", "--report", path)
        assert r.returncode == (0 if model == "correct" else 1), r.stdout[-2000:] + r.stderr
        out[name] = path
    return out


def diff(capsys, *args: str) -> tuple[int, str, str]:
    status = cli.main(["diff", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def write(tmp_path, name: str, report: dict) -> str:
    path = str(tmp_path / name)
    with open(path, "w") as f:
        json.dump(report, f)
    return path


def load(path: str) -> dict:
    with open(path) as f:
        return json.load(f)


def test_two_runs_of_the_same_seeds_differ_in_nothing(campaigns, capsys):
    status, out, err = diff(capsys, campaigns["a"], campaigns["b"])
    assert status == 0, out + err
    assert "histories: the same (one digest)" in out and "diff: nothing got worse" in out
    assert "margins: least slack over the seeds" in out and "takeover" in out
    status, out, _err = diff(capsys, campaigns["a"], campaigns["b"], "--json")
    d = json.loads(out)
    assert status == 0 and d["status"] == 0 and d["worse"] == [] and d["same_histories"]
    assert d["failures"] == {"new": [], "gone": []}
    assert {m["margin"]: m["change_ms"] for m in d["margins"] if m["old_min"] is not None}["takeover"] == 0


def test_early_takeover_against_the_correct_model_is_worse_and_names_the_takeover_margin(campaigns, capsys):
    """FN-5, T-2, T-5: early_takeover frees one max_skew early; on the same seeds its takeovers come while the
    owners' leases are still valid (the takeover margin goes negative), and INV-1 fails."""
    status, out, err = diff(capsys, campaigns["a"], campaigns["early"])
    assert status == 1, out + err
    assert "diff: WORSE" in out
    assert "margin takeover (INV-1): min " in out and "now negative (broken)" in out
    status, out, _err = diff(capsys, campaigns["a"], campaigns["early"], "--json")
    d = json.loads(out)
    take = next(m for m in d["margins"] if m["margin"] == "takeover")
    assert take["worse"] and take["new_min"] < 0 <= take["old_min"] and take["new_replay"].endswith(
        f"--seed {take['new_seed']}")
    assert any(w.startswith("margin takeover (INV-1)") for w in d["worse"])
    assert any(f["invariant"] == "INV-1" for f in d["failures"]["new"])
    # the other way round, what was broken is gone and nothing got worse
    status, out, _err = diff(capsys, campaigns["early"], campaigns["a"], "--json")
    d = json.loads(out)
    assert status == 0 and d["failures"]["gone"] and not d["failures"]["new"], d["worse"]


def test_a_margin_shrinking_is_worse_beyond_its_tolerance_and_beyond_chance(campaigns, capsys, tmp_path):
    """A minimum that shrank past the tolerance is worse only when more of NEW's seeds fall below OLD's least value
    than chance puts there (the precedence test, checkers/confidence.py: C(n, k) / C(m + n, k) < 0.05); negative,
    or no longer measured, it is worse whatever the tolerance. Each row says which test decided."""
    old = load(campaigns["a"])
    name = next(k for k, m in old["margins"].items() if m["seeds"] and m["min"] >= 10)
    new = copy.deepcopy(old)
    new["margins"][name]["min"] -= 5  # one seed of 4 below OLD's least: a coin toss (p 0.5)
    path = write(tmp_path, "new.json", new)
    status, out, _err = diff(capsys, campaigns["a"], path, "--json")
    row = next(m for m in json.loads(out)["margins"] if m["margin"] == name)
    n = old["margins"][name]["seeds"]
    assert status == 0 and not row["worse"] and row["new_below_old_min"] == 1 and row["p"] == round(n / (2 * n), 4)
    assert row["test"].startswith(f"precedence: 1 of NEW's {n} seeds below OLD's least of {n}") and "within" in row["test"]
    # 40 seeds each, OLD's least 1.5 s: 5 of NEW's in the 0.1 .. 1 s bucket is beyond chance (p 0.027), 4 is not
    # (p 0.058)
    big_old = copy.deepcopy(old)
    big_old["margins"][name].update(seeds=40, min=1_500, histogram={"1 .. 10 s": 40})
    old_path = write(tmp_path, "big_old.json", big_old)
    paths = {}
    for below in (5, 4):
        big_new = copy.deepcopy(big_old)
        big_new["margins"][name].update(min=500, histogram={"0.1 .. 1 s": below, "1 .. 10 s": 40 - below})
        paths[below] = write(tmp_path, f"big{below}.json", big_new)
    status, out, _err = diff(capsys, old_path, paths[4])
    assert status == 0 and "diff: nothing got worse" in out, out
    status, out, _err = diff(capsys, old_path, paths[5])
    assert status == 1 and f"margin {name} (" in out and "shrank 1000 ms, tolerance 0 ms" in out
    assert "(test: precedence: 5 of NEW's 40 seeds below OLD's least of 40, p 0.0274 (beyond chance))" in out
    assert diff(capsys, old_path, paths[5], "--margin-tol-ms", "1000")[0] == 0
    # gone negative: worse whatever the tolerance
    new["margins"][name]["min"] = -1
    status, out, _err = diff(capsys, campaigns["a"], write(tmp_path, "neg.json", new), "--margin-tol-ms", "100000")
    assert status == 1 and "test: negative: a rule broken" in out
    # no longer measured at all: worse
    new["margins"][name].update(seeds=0, min=None, seed=None)
    status, out, _err = diff(capsys, campaigns["a"], write(tmp_path, "gone.json", new))
    assert status == 1 and "now in none" in out


def test_coverage_shares_findings_and_cost(campaigns, capsys, tmp_path):
    old = load(campaigns["a"])
    point = next(k for k, v in old["coverage"].items() if v >= 2)
    new = copy.deepcopy(old)
    new["coverage"][point] -= 1  # 25 percentage points of 4 seeds: within chance (the 95 % intervals overlap)
    status, out, _err = diff(capsys, campaigns["a"], write(tmp_path, "cov.json", new), "--json")
    row = next(r for r in json.loads(out)["coverage"] if r["point"] == point)
    assert status == 0 and not row["worse"] and row["test"] == "within chance: 95 % intervals overlap"
    # 2,000 seeds: 40 % -> 33 % is beyond chance (the intervals 37.8 .. 42.2 and 30.9 .. 35.1 are apart), worse
    # past the tolerance only; 40 % -> 38 % is listed (it moved more than 1 pp) but within chance
    big = copy.deepcopy(old)
    big["counts"]["seeds_run"] = 2_000
    big["coverage"][point] = 800
    old_path = write(tmp_path, "big_old.json", big)
    for seeds, wanted in ((660, 1), (760, 0)):
        big_new = copy.deepcopy(big)
        big_new["coverage"][point] = seeds
        path = write(tmp_path, f"big{seeds}.json", big_new)
        status, out, _err = diff(capsys, old_path, path)
        assert status == wanted, out
    status, out, _err = diff(capsys, old_path, str(tmp_path / "big660.json"))
    out = " ".join(out.split())  # (the console wraps long lines)
    assert f"coverage point {point!r}: 40.0 % of the seeds (95 % 37.8 .. 42.2) -> 33.0 % (30.9 .. 35.1)" in out
    assert "(test: Clopper-Pearson 95 % intervals apart)" in out
    assert diff(capsys, old_path, str(tmp_path / "big660.json"), "--coverage-tol", "8")[0] == 0
    new["coverage"][point] = 0  # a point reached, now never: worse whatever the tolerance
    status, out, _err = diff(capsys, campaigns["a"], write(tmp_path, "lost.json", new), "--coverage-tol", "100")
    assert status == 1 and "now never (test: reached in OLD, never in NEW" in " ".join(out.split())
    new = copy.deepcopy(old)
    new["protocol_findings"]["F-9"] = {"seeds": 1, "invariants": ["INV-1"], "first": None, "title": "x"}
    status, out, _err = diff(capsys, campaigns["a"], write(tmp_path, "finding.json", new))
    assert status == 1 and "finding F-9: 0 seeds -> 1" in out
    # with the seeds listed (every campaign's report lists them), paired seed by seed: 3 seeds only NEW shows
    # it in is chance (sign test p 0.25), 6 is not (p 0.031)
    for shown, status_wanted in ((3, 0), (6, 1)):
        new["protocol_findings"]["F-9"]["seeds"] = shown
        new["raw"]["finding_seeds"]["F-9"] = list(range(shown))
        status, out, _err = diff(capsys, campaigns["a"], write(tmp_path, f"paired{shown}.json", new))
        assert status == status_wanted, out
    assert "6 seeds only NEW shows it, 0 only OLD: sign test p 0.0312) (test: sign test over the seeds" in \
        " ".join(out.split())
    # the other way round, the same test (issue 44): OLD's 6 seeds gone in NEW is fewer beyond chance, 3 within it
    gone_old = copy.deepcopy(new)
    gone_new = copy.deepcopy(old)
    for shown, beyond in ((3, False), (6, True)):
        gone_old["protocol_findings"]["F-9"]["seeds"] = shown
        gone_old["raw"]["finding_seeds"]["F-9"] = list(range(shown))
        status, out, _err = diff(capsys, write(tmp_path, f"old{shown}.json", gone_old),
                                 write(tmp_path, "none.json", gone_new), "--json")
        row = next(r for r in json.loads(out)["findings"] if r["finding"] == "F-9")
        assert status == 0 and row["fewer_beyond_chance"] is beyond and not row["worse"]
    new = copy.deepcopy(old)
    new["seeds_per_s"] = old["seeds_per_s"] / 2
    path = write(tmp_path, "slow.json", new)
    status, out, _err = diff(capsys, campaigns["a"], path)
    assert status == 0 and "reported only" in out  # cost counts only when asked
    assert diff(capsys, campaigns["a"], path, "--cost-tol", "20")[0] == 1
    assert diff(capsys, campaigns["a"], path, "--cost-tol", "60")[0] == 0


@pytest.mark.parametrize("case, message", [
    ("missing", "no report at"),
    ("not json", "is not valid JSON"),
    ("not a report", "has no 'model' field"),
    ("broken", "is a `broken` report"),
    ("other seeds", "are not reports of the same campaign: seeds differ: OLD 0..3, NEW 10..13; --allow-different"),
    ("other scenario", "scenario differs: OLD 'deadline', NEW 'swarm'"),
    ("bad margins", "margins.takeover.seeds must be an integer"),
])
def test_bad_input_is_one_line_and_exit_2(campaigns, capsys, tmp_path, case, message):
    old = load(campaigns["a"])
    path = str(tmp_path / "new.json")
    if case == "not json":
        open(path, "w").write("{")
    elif case == "not a report":
        write(tmp_path, "new.json", {"seeds": {}})
    elif case == "broken":
        write(tmp_path, "new.json", dict(old, kind="broken"))
    elif case == "other seeds":
        write(tmp_path, "new.json", dict(old, seeds={"start": 10, "count": 4}))
    elif case == "other scenario":
        write(tmp_path, "new.json", dict(old, scenario="swarm"))
    elif case == "bad margins":
        bad = copy.deepcopy(old)
        bad["margins"]["takeover"]["seeds"] = "many"
        write(tmp_path, "new.json", bad)
    status, out, err = diff(capsys, campaigns["a"], path)
    assert status == 2, out + err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_different_campaigns_compared_when_allowed_are_warned(campaigns, capsys, tmp_path):
    old = load(campaigns["a"])
    other = write(tmp_path, "other.json", dict(old, seeds={"start": 10, "count": 4}))
    status, out, err = diff(capsys, campaigns["a"], other, "--allow-different")
    assert status == 0, out + err
    assert "WARNING seeds differ: OLD 0..3, NEW 10..13" in out
    older = copy.deepcopy(old)
    del older["margins"]  # a report written before margins were reported
    status, out, _err = diff(capsys, write(tmp_path, "older.json", older), campaigns["a"])
    assert status == 0 and "OLD has no margins" in out


def test_negative_tolerances_are_refused(campaigns, capsys):
    status, _out, err = diff(capsys, campaigns["a"], campaigns["b"], "--margin-tol-ms", "-1")
    assert status == 2 and "--margin-tol-ms: must be at least 0, got -1" in err


def test_a_failover_slower_beyond_chance_is_worse(campaigns, capsys, tmp_path):
    """The failover's p50 and p99 are compared with their order-statistic 95 % intervals (issue 48): NEW's
    interval wholly above OLD's is slower beyond chance, worse; overlapping intervals are chance."""
    old = load(campaigns["a"])
    old["failover_ms"] = {"count": 400, "p50": 18_000, "p99": 24_000, "max": 30_000,
                          "p50_ci95": [17_500, 18_600], "p99_ci95": [23_000, 26_000]}
    old_path = write(tmp_path, "fo_old.json", old)
    near = copy.deepcopy(old)
    near["failover_ms"].update(p50=18_400, p50_ci95=[18_000, 19_000])
    status, out, _err = diff(capsys, old_path, write(tmp_path, "fo_near.json", near), "--json")
    rows = {r["quantile"]: r for r in json.loads(out)["failover"]}
    assert status == 0 and not rows["p50"]["worse"] and rows["p50"]["test"].startswith("within chance")
    slow = copy.deepcopy(old)
    slow["failover_ms"].update(p50=19_500, p50_ci95=[19_000, 20_100])
    status, out, _err = diff(capsys, old_path, write(tmp_path, "fo_slow.json", slow))
    out = " ".join(out.split())
    assert status == 1 and "failover p50: 18000 ms (17500 .. 18600) -> 19500 ms (19000 .. 20100), slower beyond " \
                           "chance" in out


def test_reports_of_two_hash_encodings_are_warned(campaigns, capsys, tmp_path):
    """An older report (no hash_version: its hashes JSON's) against one of today's: the digests differ whatever
    the runs did, and diff says so (history/record.py, HASH_VERSION)."""
    old = load(campaigns["a"])
    assert old["hash_version"] == 2
    del old["hash_version"]
    status, out, _err = diff(capsys, write(tmp_path, "old", old), campaigns["b"])
    assert status == 0 and "hashes are of two encodings (hash_version 1 and 2)" in out, out
