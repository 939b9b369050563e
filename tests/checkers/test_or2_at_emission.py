"""OR-2 judged at the process's step, not at the bytes leaving (issue 47's pauses, swarm seed 251).

n0 checks its lease valid and emits its acquisition of t1/c/a1; its process then pauses 8.9 s (a GC
pause) before the write leaves, its lease runs out in the pause, and the write lands at the resume. OR-2
("checked right before the record write") held of the process's steps; the write leaving late is the
world's delay of an outgoing request, which If-None-Match and OR-4's check at the answer cover: the hold
ends at the acknowledgement, unused, into a pending release. INV-1's OR-2 clause judged the departure and
failed the correct model; it now judges the instant the process emitted the write."""

from __future__ import annotations

import json
import os

from checkers.one_owner import _emitted
from checkers.verdict import judge
from counterexamples.shrink import run_plan

PLAN = os.path.join(os.path.dirname(os.path.dirname(__file__)), "plans", "pause-between-check-and-write.json")


def test_a_write_leaving_as_its_writers_pause_ends_was_emitted_when_the_pause_began():
    spans = [(78_578, 87_490)]
    assert _emitted(spans, 87_490) == 78_578  # (the world lets it leave at the resume)
    assert _emitted(spans, 87_491) == 78_578  # (a millisecond's rounding)
    assert _emitted(spans, 90_000) == 90_000  # sent after the resume: its own step, judged there
    assert _emitted(spans, 70_000) == 70_000
    assert _emitted([], 87_490) == 87_490


def test_the_seed_251_plan_passes_and_its_hold_ends_unused_at_the_answer():
    with open(PLAN) as f:
        plan = json.load(f)
    h = run_plan(plan)
    assert judge(h).violations == []
    kinds = [(e.kind, getattr(e.fields, "reason", None)) for e in h.events if e.kind in ("hold_began", "hold_ended")]
    assert kinds == [("hold_began", None), ("hold_ended", "lease not valid")]  # OR-4 at the answer
    pause = [e for e in h.events if e.kind == "fault" and e.fields.what == "pause"]
    assert len(pause) == 1 and pause[0].fields.ms > 8_000  # the pause is in the run, not removed
