"""Measure the checkers against one-rule mutants of the model: `python -m mutants.probe`.

Each mutant of mutants/catalog.py is applied to a private copy of the project (the checkout itself
is never edited), and a campaign of the mutated model runs there (`runner.py --seeds N`, the swarm
unless `--scenario`): killed when it exits 1 (a violation), survived when it exits 0. The table
shows, per mutant, the invariants it broke and in how many seeds, and the totals per rule family;
`--report` writes them as JSON. Exit status: 0 measured (survivors are a measurement, not a
failure), 2 bad usage or a catalogue entry whose snippet no longer occurs exactly once (the model
changed under it: the catalogue must follow), 3 a campaign that could not run.

    python -m mutants.probe --seeds 300 --jobs 2          # every mutant, two at a time
    python -m mutants.probe fn2_watch_P_only nl5_check_ttl_only
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

from rich.console import Console
from rich.table import Table

from .catalog import MUTANTS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# what a campaign needs: copied once per lane, the mutated file restored after each mutant
COPY = ("model", "history", "nodelease", "scenarios", "checkers", "broken_models", "counterexamples", "explore", "runner.py",
        "reporting.py", "compiled.py", "pyproject.toml")


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
        src = os.path.join(ROOT, name)
        if os.path.isdir(src):
            shutil.copytree(src, os.path.join(d, name), ignore=shutil.ignore_patterns("__pycache__"))
        elif os.path.exists(src):
            shutil.copy2(src, os.path.join(d, name))
    os.makedirs(os.path.join(d, "reports"), exist_ok=True)
    if os.path.isdir(os.path.join(ROOT, ".compiled")):
        # the compiled hot modules (compiled.py): each loads only while the lane's source matches it,
        # so the mutated module runs from its edited source and the rest run compiled
        os.symlink(os.path.join(ROOT, ".compiled"), os.path.join(d, ".compiled"))
    return d


def run_one(lane: str, m: dict, seeds: int, scenario: str) -> dict:
    path = os.path.join(lane, m["file"])
    with open(path) as f:
        original = f.read()
    with open(path, "w") as f:
        f.write(original.replace(m["orig"], m["repl"], 1))
    report = os.path.join(lane, "reports", m["id"] + ".json")
    t0 = time.time()
    try:
        p = subprocess.run([sys.executable, "runner.py", "--seeds", str(seeds), "--workers", "1", "--scenario",
                            scenario, "--report", report], cwd=lane, capture_output=True, text=True, timeout=3600,
                           env=dict(os.environ, PYTHONPATH=lane))
        rc = p.returncode
        tail = (p.stderr.strip().splitlines() or [""])[-1]
    except subprocess.TimeoutExpired:
        rc, tail = None, "timed out"
    finally:
        with open(path, "w") as f:
            f.write(original)
    out = {"id": m["id"], "rule": m["rule"], "file": m["file"], "desc": m["desc"], "seconds": round(time.time() - t0, 1)}
    if rc == 1 and os.path.exists(report):
        with open(report) as f:
            rep = json.load(f)
        out.update(status="killed", failing_seeds=len(rep["failing_seeds"]),
                   invariants=sorted({x["invariant"] for x in rep["failures"]}))
    elif rc == 0:
        out.update(status="survived", failing_seeds=0, invariants=[])
    else:
        out.update(status="error", failing_seeds=0, invariants=[], error=tail)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m mutants.probe", description=__doc__.split("\n\n")[0])
    p.add_argument("ids", nargs="*", help="mutant ids (default: the whole catalogue)")
    p.add_argument("--seeds", type=int, default=300, help="seeds per mutant (default 300)")
    p.add_argument("--scenario", default="swarm", help="the fault mix (default: swarm)")
    p.add_argument("--jobs", type=int, default=1, help="mutants run at once, each in its own copy (default 1)")
    p.add_argument("--report", help="write the results as JSON here")
    p.add_argument("--list", action="store_true", help="list the catalogue and exit")
    args = p.parse_args(argv)
    console = Console()
    known = {m["id"]: m for m in MUTANTS}
    unknown = [i for i in args.ids if i not in known]
    if unknown or args.seeds < 1 or args.jobs < 1:
        console.print(f"mutants.probe: error: {'unknown mutant ' + ', '.join(unknown) if unknown else 'seeds and jobs must be >= 1'}")
        return 2
    chosen = [known[i] for i in args.ids] if args.ids else list(MUTANTS)
    if args.list:
        for m in chosen:
            console.print(f"{m['id']:<40} {m['rule']:<12} {m['desc']}")
        return 0
    bad = stale(chosen)
    if bad:
        console.print(f"mutants.probe: error: the model changed under {', '.join(bad)}: update mutants/catalog.py")
        return 2
    lanes = [_lane_copy() for _ in range(min(args.jobs, len(chosen)))]
    free = list(lanes)
    results: list[dict] = []
    t0 = time.time()

    def work(m):
        lane = free.pop()
        try:
            return run_one(lane, m, args.seeds, args.scenario)
        finally:
            free.append(lane)

    try:
        with ThreadPoolExecutor(len(lanes)) as pool:
            for k, r in enumerate(pool.map(work, chosen), 1):
                results.append(r)
                console.print(f"[{k}/{len(chosen)}] {r['id']}: {r['status']}"
                              + (f" ({', '.join(r['invariants'])}; {r['failing_seeds']}/{args.seeds} seeds)"
                                 if r["status"] == "killed" else (f": {r.get('error')}" if r["status"] == "error" else "")),
                              highlight=False)
    finally:
        for lane in lanes:
            shutil.rmtree(lane, ignore_errors=True)
    t = Table(title=f"one-rule mutants, {args.seeds} seeds of {args.scenario} each")
    for col in ("mutant", "rule", "what it breaks", "verdict"):
        t.add_column(col)
    for r in results:
        verdict = (f"killed: {', '.join(r['invariants'])} ({r['failing_seeds']}/{args.seeds})" if r["status"] == "killed"
                   else r["status"])
        t.add_row(r["id"], r["rule"], r["desc"], verdict)
    console.print(t)
    families: dict[str, list[int]] = {}
    for r in results:
        fam = families.setdefault(r["rule"].split("-")[0], [0, 0])
        fam[0 if r["status"] == "killed" else 1] += 1
    killed = sum(1 for r in results if r["status"] == "killed")
    console.print(f"killed {killed} of {len(results)} ("
                  + ", ".join(f"{f} {k}/{k + s}" for f, (k, s) in sorted(families.items()))
                  + f"); {time.time() - t0:.0f} s", highlight=False)
    if args.report:
        with open(args.report, "w") as f:
            json.dump({"seeds": args.seeds, "scenario": args.scenario, "killed": killed, "mutants": results}, f, indent=1)
        console.print(f"report: {args.report}")
    return 3 if any(r["status"] == "error" for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
