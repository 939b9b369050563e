"""Issue 45 part 3's situations: each coverage point's share of the seeds that can reach it.

    python benchmarks/coverage_shares.py reports/correct-swarm-s0-n20000.json

reads a campaign report of the swarm (its `coverage`: seeds reaching each point) and draws every seed's
world again (`scenarios.swarm.draw`, about 2 ms a seed) to count the denominator each point names: the
seeds whose drawn options allow the situation at all (an old lease only in a seed that draws an upgrade,
fences past BD-1's cap only with a fence or mass crowd, the others in any seed). Prints one line a point,
and exits 1 if a point is under the 5 % the issue asks (part 3), so that a sweep can be judged by it.
"""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from campaign import compiled  # noqa: E402

compiled.install()

from scenarios.swarm import draw, draw_params  # noqa: E402


def _any(o: dict) -> bool:
    return True


def _upgrade(o: dict) -> bool:
    return bool(o.get("upgrade"))


def _crowd(o: dict) -> bool:
    return bool(o.get("fence_crowd")) or bool(o.get("mass"))


# point -> (who can reach it, in words; the test on a seed's drawn options)
SITUATIONS = {
    "two unknown acquires in a row": ("seeds (any seed can)", _any),
    "same id met an open entry": ("seeds (any seed can)", _any),
    "resolver at BD-2's cap": ("seeds (any seed can)", _any),
    "old lease at the margins of its expiry": ("seeds that draw an upgrade", _upgrade),
    "fences due past BD-1's cap across two passes": ("seeds of a fence or mass crowd", _crowd),
    "drain or move told while the fence cap is full": ("seeds of a fence or mass crowd", _crowd),
}
SHARE = 0.05


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python benchmarks/coverage_shares.py REPORT.json", file=sys.stderr)
        return 2
    try:
        with open(argv[0]) as f:
            report = json.load(f)
    except (OSError, ValueError) as e:
        print(f"cannot read {argv[0]}: {e}", file=sys.stderr)
        return 2
    if report.get("scenario") != "swarm" or report.get("params"):
        print("a report of the swarm with its drawn timings (no --param) is needed", file=sys.stderr)
        return 2
    start, count = report["seeds"]["start"], report["seeds"]["count"]
    can = dict.fromkeys(SITUATIONS, 0)
    for seed in range(start, start + count):
        params, _family = draw_params(seed)
        o = draw(seed, "swarm", params)
        for point, (_who, test) in SITUATIONS.items():
            can[point] += test(o)
    short = 0
    for point, (who, _test) in SITUATIONS.items():
        got = report["coverage"].get(point, 0)
        share = got / can[point] if can[point] else 0.0
        short += share < SHARE
        print(f"{point}: {got} of the {can[point]} {who} ({100 * share:.1f} %)"
              + ("  UNDER 5 %" if share < SHARE else ""))
    return 1 if short else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
