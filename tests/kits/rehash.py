"""Re-record the `history_sha256` of every stored plan after a deliberate change to the world (a
new event kind, a new field): each plan is replayed as it is, and only its hash text is replaced, so
a reviewed diff shows nothing else moved. Run it only when the change is meant to alter histories,
and say so in the commit; a plan whose replay no longer shows what its test expects is a real
regression, which this tool does not hide (the tests that load the plans judge them).

    python tests/kits/rehash.py            # every plan under tests/plans/ and amendments/plans/
    python tests/kits/rehash.py --check    # exit 1 naming the plans whose hash moved
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from counterexamples.shrink import run_plan  # noqa: E402


def main(argv: list[str]) -> int:
    check = "--check" in argv
    moved = []
    for path in sorted([*(ROOT / "tests" / "plans").rglob("*.json"), *(ROOT / "amendments" / "plans").rglob("*.json")]):
        text = path.read_text()
        plan = json.loads(text)
        old = plan.get("history_sha256")
        if old is None:
            continue
        new = run_plan(plan).sha256()
        if new == old:
            continue
        moved.append(path.relative_to(ROOT))
        if not check:
            assert text.count(old) == 1, f"{path}: its hash occurs {text.count(old)} times"
            path.write_text(re.sub(re.escape(old), new, text))
    for p in moved:
        print(("moved: " if check else "re-recorded: ") + str(p))
    print(f"{len(moved)} plan(s) {'whose hash moved' if check else 're-recorded'}")
    return 1 if check and moved else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
