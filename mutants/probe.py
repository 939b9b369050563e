"""Measure the checkers against one-rule mutants of the model: `python runner.py mutants`.

Each mutant of mutants/catalog.py is applied to a private copy of the project (the checkout itself
is never edited), and a campaign of the mutated model runs there (`run --seeds N`, the swarm
unless `--scenario`): killed when it exits 1 with a violation in its report, survived when it exits 0; one
that exits 1 only because a coverage point was never reached is reported apart (`coverage`), not as a kill;
a campaign that exits otherwise (4: the mutated model raised, which no checker judged) is an error, never a
kill. The table shows, per mutant, the invariants it broke and in how many seeds, and the totals
per rule family; `--report` writes them as JSON. Exit status: 0 measured (survivors are a
measurement, not a failure), 2 bad usage or a catalogue entry whose snippet no longer occurs
exactly once (the model changed under it: the catalogue must follow), 4 a campaign that could
not run or raised.

    python runner.py mutants --seeds 300 --jobs 2          # every mutant, two at a time
    python runner.py mutants fn2_watch_P_only nl5_check_ttl_only

This module knows the catalogue and the lanes; the command line (nodelease/cli.py) parses the
options and calls `probe`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

from rich.table import Table

from checkers.confidence import share
from checkers.paired import finding_seeds, rises
from house.errors import Exit, ToolFailure, UsageError
from house.packages import PACKAGES

from .catalog import MUTANTS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the directory holding the packages
# what a campaign needs: every package of the tool (house/packages.py), copied once per lane, the mutated file
# restored after each mutant
COPY = PACKAGES
# the lane's own command line: its packages come first on its path (a checkout or an install alike)
CAMPAIGN = ("-c", "import sys; from nodelease.cli import main; sys.exit(main())", "run")


def stale(mutants) -> list[str]:
    """The ids whose snippet does not occur exactly once in their file."""
    out = []
    for m in mutants:
        with open(os.path.join(ROOT, m["file"])) as f:
            if f.read().count(m["orig"]) != 1:
                out.append(m["id"])
    return out


def _lane_copy() -> str:
    d = tempfile.mkdtemp(prefix="mutants-")
    for name in COPY:
        shutil.copytree(os.path.join(ROOT, name), os.path.join(d, name), ignore=shutil.ignore_patterns("__pycache__"))
    os.makedirs(os.path.join(d, "reports"), exist_ok=True)
    if os.path.isdir(os.path.join(ROOT, ".compiled")):
        # the compiled hot modules (campaign/compiled.py): each loads only while the lane's source matches it,
        # so the mutated module runs from its edited source and the rest run compiled
        os.symlink(os.path.join(ROOT, ".compiled"), os.path.join(d, ".compiled"))
    return d


def _campaign(lane: str, name: str, seeds: int, scenario: str) -> tuple[int | None, str, dict | None]:
    """(exit status or None if it timed out, stderr's last line, its report if written) of a campaign of the
    lane's model as it stands."""
    report = os.path.join(lane, "reports", name + ".json")
    try:
        p = subprocess.run([sys.executable, *CAMPAIGN, "--seeds", str(seeds), "--workers", "1", "--scenario",
                            scenario, "--report", report], cwd=lane, capture_output=True, text=True, timeout=3600,
                           env=dict(os.environ, PYTHONPATH=lane))
        rc, tail = p.returncode, (p.stderr.strip().splitlines() or [""])[-1]
    except subprocess.TimeoutExpired:
        return None, "timed out", None
    rep = None
    if rc in (0, 1) and os.path.exists(report):
        with open(report) as f:
            rep = json.load(f)
    return rc, tail, rep


def control(lane: str, seeds: int, scenario: str) -> dict[str, list[int]]:
    """The correct model's campaign on the same seeds: finding id -> the seeds that showed it (each mutant's are
    set against them: a mutant whose violations hide as a finding shows it in more seeds), and under the key
    `SEED_HASHES` each seed's history hash (a mutant's run that differs from it reached the mutated rule)."""
    rc, tail, rep = _campaign(lane, "control", seeds, scenario)
    if rep is None or rc != 0:
        raise ToolFailure(f"the correct model's campaign (the mutants' control) did not pass: {tail}")
    return {**{fid: sorted(v) for fid, v in finding_seeds(rep).items()}, SEED_HASHES: list(rep.get("seed_hashes") or [])}


SEED_HASHES = "#seed_hashes"


def differing(rep: dict, against: dict) -> int | None:
    """How many seeds' histories differ from the correct model's: the mutated rule reached and acted on (a kill
    in few seeds of many differing: the check needs more than the situation; in few of few: the situation is
    rare). None when either side kept no hashes."""
    ours, theirs = rep.get("seed_hashes") or [], against.get(SEED_HASHES) or []
    if not ours or len(ours) != len(theirs):
        return None
    return sum(1 for a, b in zip(ours, theirs) if a != b)


def outcome(rc: int | None, tail: str, rep: dict | None, seeds: int) -> dict:
    """A mutant's status from its campaign: `killed` only when the report has failures (a violation judged
    in some seed); a campaign that exited 1 only because a coverage point was never reached (the mutant
    made some situation rarer, or impossible) is `coverage`, reported apart and never counted as a kill:
    no checker judged anything wrong (issue 44); 0 is `survived`; anything else an `error`."""
    if rc == 1 and rep is not None and rep.get("failures"):
        return dict(status="killed", failing_seeds=len(rep["failing_seeds"]),
                    invariants=sorted({x["invariant"] for x in rep["failures"]}),
                    catch_rate=share(len(rep["failing_seeds"]), seeds))  # with its 95 % interval (issue 48)
    if rc == 1 and rep is not None and rep.get("coverage_missed"):
        return dict(status="coverage", failing_seeds=0, invariants=[], missed=list(rep["coverage_missed"]))
    if rc == 0:
        return dict(status="survived", failing_seeds=0, invariants=[])
    return dict(status="error", failing_seeds=0, invariants=[], error=tail)


def run_one(lane: str, m: dict, seeds: int, scenario: str, against: dict | None = None) -> dict:
    path = os.path.join(lane, m["file"])
    with open(path) as f:
        original = f.read()
    with open(path, "w") as f:
        f.write(original.replace(m["orig"], m["repl"], 1))
    t0 = time.time()
    try:
        rc, tail, rep = _campaign(lane, m["id"], seeds, scenario)
    finally:
        with open(path, "w") as f:
            f.write(original)
    out = {"id": m["id"], "rule": m["rule"], "file": m["file"], "desc": m["desc"], "seconds": round(time.time() - t0, 1)}
    out.update(outcome(rc, tail, rep, seeds))
    if rep is not None and against is not None:
        out["differs"] = differing(rep, against)
        # said, never hidden: a known finding the mutant shows in more seeds than the correct model (issue 36)
        out["findings_over_control"] = rises(finding_seeds(rep), {k: v for k, v in against.items()
                                                                  if k != SEED_HASHES}, "the correct model")
    return out


def _detail(r: dict, seeds: int) -> str:
    differs = "" if r.get("differs") is None else f"; runs differ from the correct model's in {r['differs']}"
    if r["status"] == "killed":
        return f" ({', '.join(r['invariants'])}; {r['failing_seeds']}/{seeds} seeds{differs})"
    if r["status"] == "survived":
        return f" ({differs[2:]})" if differs else ""
    if r["status"] == "coverage":
        return f" (no violation; missed {', '.join(r['missed'])})"
    return f": {r.get('error')}" if r["status"] == "error" else ""


def probe(console, ids: list[str], seeds: int = 300, scenario: str = "swarm", jobs: int = 1,
          report: str | None = None, list_only: bool = False) -> int:
    """Run the mutants `ids` (default: the whole catalogue), `jobs` at a time, and show the table."""
    known = {m["id"]: m for m in MUTANTS}
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise UsageError(f"unknown mutant {', '.join(unknown)} (mutants --list shows the catalogue)")
    chosen = [known[i] for i in ids] if ids else list(MUTANTS)
    if list_only:
        for m in chosen:
            console.print(f"{m['id']:<40} {m['rule']:<12} {m['desc']}", highlight=False)
        return Exit.PASSED
    bad = stale(chosen)
    if bad:
        raise UsageError(f"the model changed under {', '.join(bad)}: update mutants/catalog.py")
    lanes = [_lane_copy() for _ in range(min(jobs, len(chosen)))]
    free = list(lanes)
    results: list[dict] = []
    t0 = time.time()
    console.print(f"the control: the correct model, {seeds} seeds of {scenario}", highlight=False)
    against = control(lanes[0], seeds, scenario)

    def work(m):
        lane = free.pop()
        try:
            return run_one(lane, m, seeds, scenario, against)
        finally:
            free.append(lane)

    try:
        with ThreadPoolExecutor(len(lanes)) as pool:
            for k, r in enumerate(pool.map(work, chosen), 1):
                results.append(r)
                console.print(f"[{k}/{len(chosen)}] {r['id']}: {r['status']}"
                              + _detail(r, seeds)
                              + "".join(f"; shows {line}" for line in r.get("findings_over_control") or ()),
                              highlight=False)
    finally:
        for lane in lanes:
            shutil.rmtree(lane, ignore_errors=True)
    t = Table(title=f"one-rule mutants, {seeds} seeds of {scenario} each")
    for col in ("mutant", "rule", "what it breaks", "verdict", "runs differ"):
        t.add_column(col)
    for r in results:
        verdict = (f"killed: {', '.join(r['invariants'])} ({r['failing_seeds']}/{seeds})" if r["status"] == "killed"
                   else f"not killed, missed coverage: {', '.join(r['missed'])}" if r["status"] == "coverage"
                   else r["status"])
        over = [line.split(" (")[0] for line in r.get("findings_over_control") or ()]
        verdict += "".join(f"; {x} (more than the correct model)" for x in over)
        t.add_row(r["id"], r["rule"], r["desc"], verdict, "" if r.get("differs") is None else str(r["differs"]))
    console.print(t)
    families: dict[str, list[int]] = {}
    for r in results:
        fam = families.setdefault(r["rule"].split("-")[0], [0, 0])
        fam[0 if r["status"] == "killed" else 1] += 1
    killed = sum(1 for r in results if r["status"] == "killed")
    coverage_only = [r["id"] for r in results if r["status"] == "coverage"]
    console.print(f"killed {killed} of {len(results)} ("
                  + ", ".join(f"{f} {k}/{k + s}" for f, (k, s) in sorted(families.items()))
                  + f"); {time.time() - t0:.0f} s", highlight=False)
    if coverage_only:
        console.print(f"not counted as killed: {len(coverage_only)} only missed a coverage point, no violation "
                      f"({', '.join(coverage_only)})", highlight=False)
    if report:
        with open(report, "w") as f:
            json.dump({"seeds": seeds, "scenario": scenario, "killed": killed, "coverage_only": coverage_only,
                       "control_findings": {k: v for k, v in against.items() if k != SEED_HASHES},
                       "mutants": results}, f, indent=1)
        console.print(f"report: {report}")
    return Exit.TOOL if any(r["status"] == "error" for r in results) else Exit.PASSED
