"""Reports that replay after the tool grows (issue 46, part 3's acceptance), checked for real.

Writes a report of N seeds of each of `swarm`, `calm` and `upgrade` with this checkout, then adds a
throwaway fault kind by docs/architecture.md's recipe (one file under scenarios/faults/) in a scratch copy
of the checkout, and replays every seed of those reports there (`replay REPORT --seed S`, in one process).
Every replay must exit 0 or 1 (the run's own verdict), never 5 (REPLAY_DIFFERS) nor anything else: a
report's seeds replay with the kinds added since held off (`RunSpec.kinds_off`). And the new kind must be
on in some of those seeds as the copy draws them (`replay --with-new-kinds`), or the check proves nothing.

    python tests/kits/grows.py                   # 200 seeds of each scenario (about 10 min on 1 worker)
    python tests/kits/grows.py --seeds 30        # what the slow test runs
    python tests/kits/grows.py --keep DIR        # keep the reports and the copy in DIR (default: a temp dir)

Exit 0 when every replay is the run its report recorded; 1 naming the seeds that are not.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ("swarm", "calm", "upgrade")

# the recipe's kind: one file, drawn on in about 30 % of the seeds that draw late kinds, slowing 5 % of replies
THROWAWAY = '''"""A throwaway kind (tests/kits/grows.py): a reply slowed, drawn in 30 % of seeds."""

from __future__ import annotations

from . import FaultKind, stays_off


class Throwaway(FaultKind):
    id = "throwaway"
    title = "a throwaway: a reply slowed by up to 200 ms"
    rules = ("NL-3",)
    options = {"p_throwaway": 0.0}
    rates = ("p_throwaway",)

    def draw_main(self, ctx) -> None:
        on = ctx.rng.random() < 0.3
        ctx.o["p_throwaway"] = 0.05 if on and not stays_off(ctx) else 0.0

    @staticmethod
    def reply_late(world, proc, req, f, delay):
        rng = world.rngs["throwaway"]
        if f["p_throwaway"] and rng.random() < f["p_throwaway"]:
            return "slow", delay + rng.randint(1, 200)
        return None


KIND = Throwaway()
'''

SKIP = {".git", "reports", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis", "build"}


def scratch_copy(dest: Path) -> None:
    """The checkout copied to `dest` (its compiled modules too: an unchanged module runs compiled there), with
    the throwaway kind added as the recipe adds one."""
    shutil.copytree(ROOT, dest, ignore=lambda _d, names: [n for n in names if n in SKIP or n.endswith(".egg-info")])
    (dest / "reports").mkdir()
    (dest / "scenarios" / "faults" / "throwaway.py").write_text(THROWAWAY)


def replay_all(paths: list[str]) -> int:
    """(Run in the copy.) Every seed of each report replayed in this process; one line per seed that does not
    exit 0 or 1, then the counts as JSON on the last line."""
    sys.path.insert(0, os.getcwd())
    from campaign import compiled

    compiled.install()
    from nodelease.cli import main
    from scenarios.faults import KINDS
    from scenarios.spec import RunSpec

    assert "throwaway" in KINDS, "the copy's tool lacks the throwaway kind"
    statuses: collections.Counter = collections.Counter()
    bad, drawn_on = [], 0
    for path in paths:
        report = json.load(open(path))
        start, count = report["seeds"]["start"], report["seeds"]["count"]
        for seed in range(start, start + count):
            out = io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                status = main(["replay", path, "--seed", str(seed)])
            statuses[f"{report['scenario']} exit {status}"] += 1
            if status not in (0, 1):
                said = [line for line in out.getvalue().splitlines() if "the run changed" in line or "failure" in line]
                bad.append(f"{report['scenario']} seed {seed}: exit {status}: {(said or ['?'])[-1][:300]}")
            # as the grown tool draws it (replay --with-new-kinds): is the new kind on in this seed?
            world = RunSpec.of(report["model"], report["scenario"], report["params"]).world(seed)
            drawn_on += KINDS["throwaway"].active(world.options)
    for line in bad:
        print(line)
    print(json.dumps({"statuses": dict(sorted(statuses.items())), "not_the_same_run": len(bad),
                      "new_kind_drawn_on": drawn_on}))
    return 0


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--keep", metavar="DIR", help="work in DIR and leave it (default: a temporary directory)")
    ap.add_argument("--replay", nargs="+", metavar="REPORT", help=argparse.SUPPRESS)  # (the copy's half)
    args = ap.parse_args(argv)
    if args.replay:
        return replay_all(args.replay)
    work = Path(args.keep or tempfile.mkdtemp(prefix="grows-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        env = dict(os.environ)
        env.pop("PYTHONHASHSEED", None)
        reports = []
        for scenario in SCENARIOS:
            path = work / f"{scenario}.json"
            r = subprocess.run([sys.executable, "runner.py", "run", "--seeds", str(args.seeds), "--workers",
                                str(args.workers), "--scenario", scenario, "--report", str(path), "--force"],
                               cwd=ROOT, env=env, capture_output=True, text=True)
            if r.returncode not in (0, 1):
                print(f"the {scenario} report was not written (exit {r.returncode}): {r.stderr.strip()[-500:]}")
                return 2
            reports.append(str(path))
        copy = work / "checkout"
        if copy.exists():
            shutil.rmtree(copy)
        scratch_copy(copy)
        r = subprocess.run([sys.executable, "tests/kits/grows.py", "--replay", *reports], cwd=copy, env=env,
                           capture_output=True, text=True)
        print(r.stdout, end="")
        if r.returncode != 0:
            print(f"the replays failed (exit {r.returncode}): {r.stderr.strip()[-2000:]}")
            return 2
        counts = json.loads(r.stdout.strip().splitlines()[-1])
        if counts["not_the_same_run"]:
            return 1
        if not counts["new_kind_drawn_on"]:
            print("the throwaway kind is on in none of these seeds: the check proves nothing (more --seeds)")
            return 1
        print(f"every seed of {len(reports)} reports of {args.seeds} seeds replays as the run it recorded, "
              f"{counts['new_kind_drawn_on']} of them with the new kind on as the grown tool draws them")
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
