"""The report's bounds (campaign/report.py, issue 48 part 5): every figure that varies by seed shown with its
95 % interval in the JSON (`confidence`, `failover_ms.p50_ci95`), the summary and JUnit's properties; shards
merged give the block of the whole. Built from hand-made seed results: no campaign runs here."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from campaign import report as reporting
from checkers.confidence import clopper_pearson, quantile_interval, zero_bound


def _result(seed: int, failures=(), coverage=(), failover=(), findings=()) -> reporting.SeedResult:
    return reporting.SeedResult(seed, f"{seed:064x}", {"bucket_requests": 10}, {}, failures=list(failures),
                                coverage=list(coverage), failover_ms=list(failover), findings=list(findings))


def _report(results, tmp_path, start=0):
    return reporting.build_report(results, world="sim", model="correct", scenario="deadline", params={},
                                  start=start, count=len(results), elapsed_s=1.0,
                                  report_path=str(tmp_path / "r.json"))


def _props(report) -> dict:
    return {p.get("name"): p.get("value") for p in ET.fromstring(reporting.junit_xml(report)).iter("property")}


def test_no_violation_in_n_seeds_is_a_bound_per_seed_everywhere_it_shows(tmp_path):
    results = [_result(s, coverage=["clock stepped back"] if s % 4 == 0 else [], failover=[10_000 + 37 * s])
               for s in range(400)]
    report = _report(results, tmp_path)
    conf = report["confidence"]
    assert conf["seeds"] == 400 and conf["violations"]["k"] == 0
    assert conf["violations"]["upper_one_sided"] == pytest.approx(zero_bound(400), rel=1e-5)
    assert conf["violations"]["rule_of_three"] == 3 / 400
    cov = conf["coverage"]["clock stepped back"]
    assert (cov["k"], cov["n"]) == (100, 400)
    assert cov["interval"] == pytest.approx(list(clopper_pearson(100, 400)), rel=1e-5)
    f = report["failover_ms"]
    values = [10_000 + 37 * s for s in range(400)]
    assert f["p50_ci95"] == quantile_interval(values, 0.5) and f["p99_ci95"] == quantile_interval(values, 0.99)
    assert f["p50_ci95"][0] < f["p50"] < f["p50_ci95"][1] and f["p99_ci95"][1] is not None
    text = reporting.summary_text(report)
    assert "violations per seed: 0 in 400 seeds: under 0.746 % per seed at 95 % (one-sided; 3/n = 0.75 %)" in text
    assert "p50 17.4 s (95 % " in text
    assert "clock stepped back" in text and "[25 % of 400 seeds, 95 % interval 20.8 % .. 29.5 %]" in text
    props = _props(report)
    assert props["violations.failing_seeds"] == "0" and float(props["violations.upper95_one_sided"]) == \
        pytest.approx(zero_bound(400), rel=1e-5)
    assert props["coverage.clock stepped back.seeds"] == "100"
    assert float(props["coverage.clock stepped back.ci95_low"]) == pytest.approx(clopper_pearson(100, 400)[0], rel=1e-5)
    assert props["failover.p99_ci95_high_ms"] == str(f["p99_ci95"][1])


def test_violations_and_findings_get_clopper_pearson_intervals(tmp_path):
    results = [_result(s, failures=[("INV-1", "two owners", "...")] if s in (3, 9) else [],
                       findings=[("F-2", "INV-11", "late drain", "...")] if s < 5 else []) for s in range(50)]
    report = _report(results, tmp_path)
    conf = report["confidence"]
    assert conf["violations"]["interval"] == pytest.approx(list(clopper_pearson(2, 50)), rel=1e-5)
    assert "upper_one_sided" not in conf["violations"]
    assert conf["invariants"]["INV-1"]["k"] == 2 and conf["findings"]["F-2"]["k"] == 5
    text = reporting.summary_text(report)
    assert "violations per seed: 2 in 50 seeds: 4 % per seed, 95 % interval 0.488 % .. 13.7 %" in text
    assert "INV-1: 2 seeds, first 3 (4 % of 50 seeds, 95 % interval 0.488 % .. 13.7 %)" in text
    assert "in 5 seeds (10 % of 50 seeds, 95 % interval 3.33 % .. 21.8 %)" in text
    props = _props(report)
    assert props["invariant.INV-1.failing_seeds"] == "2" and props["finding.F-2.seeds"] == "5"


def test_a_seed_that_raised_is_not_counted_among_those_judged(tmp_path):
    results = [_result(s) for s in range(10)]
    results[4].tool_failure = ("ValueError: x", "tb")
    results[4].failures = [("INV-1", "m", "e")]
    report = _report(results, tmp_path)
    assert report["confidence"]["seeds"] == 9 and report["confidence"]["violations"]["k"] == 0


def test_shards_merged_give_the_bounds_of_the_whole(tmp_path):
    results = [_result(s, failures=[("INV-7", "late", "...")] if s == 7 else [],
                       coverage=["clock stepped back"] if s % 3 == 0 else [], failover=[9_000 + 11 * s, 20_000 - s])
               for s in range(60)]
    whole = _report(results, tmp_path)
    halves = [dict(_report(results[:30], tmp_path), shard={"of": {"start": 0, "count": 60}}),
              dict(_report(results[30:], tmp_path, start=30), shard={"of": {"start": 0, "count": 60}})]
    merged = reporting.merge_reports(halves, str(tmp_path / "r.json"))
    assert merged["confidence"] == whole["confidence"]
    assert merged["failover_ms"] == whole["failover_ms"]


def test_a_broken_report_gives_each_models_catch_rate_with_its_interval():
    report = {"kind": "broken", "scenario": "swarm", "seeds": {"start": 0, "count": 200}, "models": [
        {"model": "correct", "rule_broken": "-", "must_catch": "-", "tool_failing_seeds": 0, "ok": True,
         "caught_seeds": 0, "seeds_run": 200},
        {"model": "no_fence", "rule_broken": "FN-3", "must_catch": "INV-1", "tool_failing_seeds": 0, "ok": True,
         "caught_seeds": 37, "seeds_run": 200}]}
    props = _props(report)
    assert props["broken.no_fence.caught_seeds"] == "37"
    assert float(props["broken.no_fence.ci95_low"]) == pytest.approx(clopper_pearson(37, 200)[0], rel=1e-5)
    assert not any(k.startswith("broken.correct") for k in props)
