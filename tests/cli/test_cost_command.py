"""`runner.py cost` (issue 48, parts 3 and 4): the listing swept over cluster sizes against the ADR's
N x (1 + N) with the ADR's own figures beside, and the amendments' cost column."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from campaign import cost

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _cost(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, os.path.join(REPO, "runner.py"), "cost", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=600)


def test_the_sweep_fits_the_listing_and_prints_the_adr_s_figures(tmp_path):
    out = tmp_path / "sweep.json"
    r = _cost("--nodes", "2,3", "--seeds", "1", "--json", str(out))
    assert r.returncode == 0, r.stderr
    assert "fit of the listing's requests a period: R(N) =" in r.stdout
    assert "12 a period, about 260,000 GETs and 86,000 LISTs a day, about $0.50 a day" in r.stdout
    data = json.loads(out.read_text())
    rows = {row["nodes"]: row for row in data["rows"]}
    # the model reads every object but its own: N LISTs and N x (N - 1) GETs a period
    assert abs(rows[3]["lists"] - 3) < 0.2 and abs(rows[3]["gets"] - 6) < 0.3
    assert abs(data["fit"]["b"] - 1) < 0.1 and abs(data["fit"]["a"]) < 0.3
    assert abs(rows[3]["lease_writes"] - 3) < 0.2  # COST-1: a lease write per node per period


def test_the_fit_tells_the_adr_s_count_from_the_model_s():
    adr = [{"nodes": n, "lists": n, "gets": n * n} for n in (3, 5, 10, 20)]
    model = [{"nodes": n, "lists": n, "gets": n * (n - 1)} for n in (3, 5, 10, 20)]
    assert [round(x, 6) for x in cost.fit(adr)] == [1.0, 1.0]
    assert [round(x, 6) for x in cost.fit(model)] == [0.0, 1.0]


def test_the_adr_s_dollars_against_the_table():
    # the ADR: about $0.50 a day at three nodes, about $8 at twenty (listing alone, S3 Standard)
    assert abs(cost.per_day_usd(3, 9, 3_000) - 0.536) < 0.001
    assert abs(cost.per_day_usd(20, 400, 3_000) - 7.488) < 0.001


def test_the_amendments_column_says_what_a_variant_saves(tmp_path):
    out = tmp_path / "column.json"
    r = _cost("--amendments", "p1_etag_gated_listing", "--nodes", "3", "--seeds", "2", "--json", str(out))
    assert r.returncode == 0, r.stderr
    row = json.loads(out.read_text())["variants"]["p1_etag_gated_listing"]["sizes"]["3"]
    assert row["gets_change"] < 0 and row["says"].startswith("saves ")
    assert "p1_etag_gated_listing" in r.stdout and "listing GETs a period" in r.stdout


def test_a_bad_size_is_refused_in_one_line():
    r = _cost("--nodes", "3,x")
    assert r.returncode == 2 and "--nodes takes sizes" in r.stderr and "Traceback" not in r.stderr
