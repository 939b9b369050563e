"""Re-record the `history_sha256` of every stored plan after a deliberate change to the world (a
new event kind, a new field): each plan is replayed as it is, and only its hash text is replaced, so
a reviewed diff shows nothing else moved. Run it only when the change is meant to alter histories,
and say so in the commit; a plan whose replay no longer shows what its test expects is a real
regression, which this tool does not hide (the tests that load the plans judge them).

With `--new KIND[,KIND]` (the observation kinds the world started recording), a plan is re-recorded
only if its replay without the events of those kinds hashes to the stored value: the same run,
proved, with the new records added; a plan whose run changed otherwise is named and left alone.

    python tests/kits/rehash.py                               # every plan under tests/plans/ (gzipped too) and amendments/plans/
    python tests/kits/rehash.py --new record_reply,answer     # ... only where nothing else moved (issue 37)
    python tests/kits/rehash.py --check                       # exit 1 naming the plans whose hash moved
"""

from __future__ import annotations

import copy
import gzip
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from counterexamples.shrink import run_plan  # noqa: E402
from history.record import hash_version  # noqa: E402


def without(history, kinds: set[str]):
    """A copy of `history` without the events of `kinds`: its hash as a world recording none of them."""
    h = copy.copy(history)
    h.events = [e for e in history.events if e.kind not in kinds]
    h._sha = None
    h.cache = {}
    return h


def main(argv: list[str]) -> int:
    check = "--check" in argv
    new_kinds = set(argv[argv.index("--new") + 1].split(",")) if "--new" in argv else None
    moved, changed = [], []
    paths = (sorted((ROOT / "tests" / "plans").rglob("*.json")) + sorted((ROOT / "tests" / "plans").rglob("*.json.gz"))
             + sorted((ROOT / "amendments" / "plans").glob("*.json")))
    for path in paths:
        zipped = path.name.endswith(".gz")  # a whole run kept gzipped (tests/kits/pinned.py)
        text = gzip.decompress(path.read_bytes()).decode() if zipped else path.read_text()
        plan = json.loads(text)
        old = plan.get("history_sha256")
        if old is None:
            continue
        history = run_plan(plan)
        version = hash_version(plan)  # (the plan keeps the encoding it was written with: its hash is re-recorded in it)
        new = history.sha256(version)
        if new == old:
            continue
        if new_kinds is not None and without(history, new_kinds).sha256(version) != old:
            changed.append(path.relative_to(ROOT))
            continue
        moved.append(path.relative_to(ROOT))
        if not check:
            assert text.count(old) == 1, f"{path}: its hash occurs {text.count(old)} times"
            text = re.sub(re.escape(old), new, text)
            if zipped:
                path.write_bytes(gzip.compress(text.encode(), 9, mtime=0))
            else:
                path.write_text(text)
    for p in moved:
        print(("moved: " if check else "re-recorded: ") + str(p))
    for p in changed:
        print(f"CHANGED beyond the new kinds ({', '.join(sorted(new_kinds or ()))}), left alone: {p}")
    print(f"{len(moved)} plan(s) {'whose hash moved' if check else 're-recorded'}")
    return 1 if check and moved or changed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
