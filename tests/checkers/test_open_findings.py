"""Plans kept in tests/plans/ on which the correct model still breaks an invariant that no finding
(checkers/findings.py) explains yet: replayed byte for byte, they stay visible until their cause is
registered or fixed (docs/findings.md, "Open: ...")."""

from __future__ import annotations

import json
from pathlib import Path

from checkers import CHECKERS, check_all
from checkers.findings import classify
from counterexamples.shrink import run_plan

PLAN = Path(__file__).parents[1] / "plans" / "inv7-request-at-a-draining-node.json"


def _replayed():
    plan = json.loads(PLAN.read_text())
    h = run_plan(plan)
    assert h.sha256() == plan["history_sha256"]
    return h


def test_inv7_seed_2000938_request_at_a_draining_node_is_not_the_wait():
    """INV-7, CS-3 (seed 2000938, shrunk): the first request for t1/c/a1 after it had to be free (18.724 s)
    reached n0, told to drain at 10.4 s and to resume only at 20.7 s; by CS-3 it acquires nothing new, and
    refused ("not ready: stopping or draining"). The wait starts at the next request (43.333 s), taken
    over at 43.340 s: INV-7 holds (before the fix it reported a violation here)."""
    h = _replayed()
    refused = [e for e in h.events if e.kind == "request_failed" and e.t_ms == 18_724]
    assert refused and refused[0].fields.reason == "not ready: stopping or draining"
    assert CHECKERS["INV-7"](h) == []


def test_open_inv11_seed_2000938_shrunk_plan_still_fails():
    """Open (docs/findings.md, "Open: INV-11 on the shrunk plan of seed 2000938"): the shrunk plan keeps
    slow and failed replies to n0's release of t1/c/a5 after the quiet phase began (11.418, 13.670,
    17.919 s); the release is dropped only at 25.932 s, and n0, draining since 10.4 s, never reports
    drained before its resume at 20.7 s. Unexplained by any finding: it must stay visible."""
    h = _replayed()
    unexplained, _found = classify(h, check_all(h))
    assert [v.invariant for v in unexplained] == ["INV-11"]
