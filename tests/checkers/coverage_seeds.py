"""Find, for every coverage point, the first seeds of `swarm` that reach it (issue 44, part 6), and keep them in
tests/checkers/data/coverage_seeds.json for tests/checkers/test_coverage_points.py, which replays them and recounts
each point from the history on its own.

    python tests/checkers/coverage_seeds.py [--seeds N] [--per-point K]

runs seeds 0..N-1 (default 600) until every point has K seeds (default 2), nice'd by the caller. Deterministic:
the same code finds the same seeds.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data", "coverage_seeds.json")


def history_of(seed: int):
    from broken_models import load_model
    from campaign.run import parse_pins
    from scenarios.sim import run_seed

    return run_seed(seed, load_model("correct"), "swarm", parse_pins([], scenario="swarm", start=seed, count=1),
                    "correct")


def main(argv=None) -> int:
    sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
    import checkers  # noqa: F401  (every point declared)
    from checkers.coverage import POINTS, reached

    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=600)
    ap.add_argument("--per-point", type=int, default=2)
    a = ap.parse_args(argv)
    found: dict[str, list[int]] = {p: [] for p in POINTS}
    for s in range(a.seeds):
        for p in reached(history_of(s)):
            if len(found[p]) < a.per_point:
                found[p].append(s)
        if all(len(v) >= a.per_point for v in found.values()):
            break
    with open(DATA, "w") as f:
        json.dump({"scenario": "swarm", "model": "correct", "searched": s + 1, "points": found}, f, indent=1)
        f.write("\n")
    missing = [p for p, v in found.items() if not v]
    print(f"searched seeds 0..{s}; {len(POINTS) - len(missing)} of {len(POINTS)} points found"
          + (f"; none for: {', '.join(missing)}" if missing else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
