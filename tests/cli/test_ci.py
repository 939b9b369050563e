"""CI-shaped runs (issue 14): --shard K/N and `merge` give the unsharded report, --time-budget,
--junit that parses as JUnit XML. Each run is a real `python runner.py` under a temporary folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# what a joined report may differ in from the unsharded one: how long it took, how it was made
VOLATILE = {"elapsed_s", "seeds_per_s", "command", "merged_from", "git_commit", "workers", "pictures", "compiled"}


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "runner.py", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, COLUMNS="120"))


def load(path) -> dict:
    with open(path) as f:
        return json.load(f)


def _strip_paths(failures: list[dict]) -> list[dict]:
    return [{k: v for k, v in f.items() if k not in ("replay", "shrink")} for f in failures]


@pytest.mark.parametrize("model, seeds, shards", [("correct", 12, 3), ("unconditional_fence", 10, 2)])
def test_shards_merged_equal_the_unsharded_run(tmp_path, model, seeds, shards):
    whole = tmp_path / "whole.json"
    r = run("--model", model, "--seeds", str(seeds), "--start", "5", "--workers", "2", "--report", str(whole))
    # the control passes its seeds; BM-1 fails some of any 10 (INV-3 caught 127 of 200 seeds)
    assert r.returncode == (0 if model == "correct" else 1), r.stdout[-2000:] + r.stderr
    failing = set(load(whole)["failing_seeds"])
    assert bool(failing) == (model != "correct"), sorted(failing)
    parts = []
    for k in range(1, shards + 1):
        path = tmp_path / f"shard{k}.json"
        shard = run("--model", model, "--seeds", str(seeds), "--start", "5", "--shard", f"{k}/{shards}",
                    "--workers", "1", "--report", str(path))
        s = load(path)["seeds"]
        # a shard exits 1 exactly when one of its own seeds fails (the unsharded run's failing seeds say which)
        assert shard.returncode == (1 if failing & set(range(s["start"], s["start"] + s["count"])) else 0), (
            k, shard.stderr)
        parts.append(str(path))
    sliced = [load(p)["seeds"] for p in parts]
    assert sliced[0]["start"] == 5 and sum(s["count"] for s in sliced) == seeds
    merged = tmp_path / "merged.json"
    m = run("merge", *reversed(parts), "--report", str(merged))  # any order
    assert m.returncode == r.returncode, m.stdout[-2000:] + m.stderr
    a, b = load(whole), load(merged)
    assert b["history_digest"] == a["history_digest"]
    assert b["counts"] == a["counts"] and b["failing_seeds"] == a["failing_seeds"]
    assert _strip_paths(b["failures"]) == _strip_paths(a["failures"])
    for key in set(a) - VOLATILE - {"failures", "protocol_findings", "margins"}:
        assert b[key] == a[key], key
    # the margins add up; each seed's replay names the report it is read from
    assert {k: dict(m, replay=None) for k, m in b["margins"].items()} == \
        {k: dict(m, replay=None) for k, m in a["margins"].items()}
    assert all(m["replay"] is None or m["replay"].endswith(f"--seed {m['seed']}") for m in b["margins"].values())
    if model == "correct":
        assert a["failures"] == b["failures"] == []
    else:
        assert a["failures"] and b["failures"][0]["replay"].endswith(f"replay {os.path.relpath(merged, REPO)} "
                                                                     f"--seed {b['failures'][0]['seed']}")


def test_merge_refuses_shards_that_do_not_join(tmp_path):
    paths = []
    for k in (1, 3):
        path = tmp_path / f"s{k}.json"
        assert run("--seeds", "6", "--shard", f"{k}/3", "--workers", "1", "--report", str(path)).returncode == 0
        paths.append(str(path))
    merged = str(tmp_path / "merged.json")  # (never the checkout's reports/: the suite runs in two processes)
    r = run("merge", *paths, "--report", merged)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "do not join" in r.stderr
    other = tmp_path / "other.json"
    assert run("--seeds", "2", "--start", "2", "--scenario", "calm", "--workers", "1",
               "--report", str(other)).returncode == 0
    r = run("merge", paths[0], str(other), "--report", merged)
    assert r.returncode == 2 and "different campaigns" in r.stderr
    assert run("--seeds", "4", "--shard", "5/4").returncode == 2
    assert run("--seeds", "4", "--shard", "x").returncode == 2


def test_a_time_budget_runs_seeds_in_order_until_it_is_spent(tmp_path):
    path = tmp_path / "tb.json"
    r = run("--time-budget", "1.5", "--workers", "1", "--report", str(path))
    assert r.returncode == 0, r.stderr
    rep = load(path)
    n = rep["seeds"]["count"]
    assert n >= 1 and rep["time_budget"] == {"budget_s": 1.5, "seeds_run": n, "stopped_by_budget": True}
    assert len(rep["seed_hashes"]) == n and f"{n} seeds run" in r.stdout
    assert run("--time-budget", "0").returncode == 2


def _parse_junit(path) -> ET.Element:
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    assert int(suite.get("tests")) == len(cases) and all(c.get("name") and c.get("classname") for c in cases)
    assert int(suite.get("failures")) == sum(1 for c in cases if c.find("failure") is not None)
    return suite


def test_junit_gives_a_case_per_invariant_and_the_first_violation(tmp_path):
    ok = tmp_path / "ok.xml"
    assert run("--seeds", "2", "--workers", "1", "--report", str(tmp_path / "ok.json"),
               "--junit", str(ok)).returncode == 0
    suite = _parse_junit(ok)
    names = [c.get("name") for c in suite.findall("testcase")]
    assert "INV-1" in names and "LEASE-1" in names and suite.get("failures") == "0" and suite.get("errors") == "0"
    assert "no exception in a model, a world or a checker" in names  # the tool's own case (an error if one raised)
    bad = tmp_path / "bad.xml"
    assert run("--model", "unconditional_fence", "--seeds", "3", "--workers", "1",
               "--report", str(tmp_path / "bad.json"), "--junit", str(bad)).returncode == 1
    suite = _parse_junit(bad)
    failed = {c.get("name"): c.find("failure") for c in suite.findall("testcase") if c.find("failure") is not None}
    assert "INV-3" in failed
    assert "replay: python runner.py replay" in failed["INV-3"].text
    assert failed["INV-3"].get("message").startswith("seed ")
