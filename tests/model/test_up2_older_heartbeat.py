"""UP-2: every old-format heartbeat the guard reads holds the start until it is stale by its own date.

Upgrade seed 824 of the merged draw (issues 37 and 39), shrunk and kept as a plan: the clocks of the new
node n0 and of the old binary n2 are 2 max_skew apart (22.5 s, T-2), so n2's last on-time heartbeat looked
dated in the future to n0 when first read, and lapsed span + max_skew after that read (UP-2's rule for a
future-dated body). Two older heartbeats of n2, written before it and held back in the network, were applied
over it 27 and 39 s later; the guard kept judging by the fresher body it had seen first and passed at 310.5 s
while the older body in the bucket was still fresh by its own date (stale only at 312.5 s). The model now
keeps the latest instant any older body read holds the start to (`OldSeen.held_until_ms`); a model without it
is caught by UP-2's checker on the same plan.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from broken_models import load_model
from checkers import check_all
from counterexamples.shrink import Choices
from model.params import Params
from scenarios.sim import SimWorld

PLAN = Path(__file__).parents[1] / "plans" / "up2-older-heartbeat-outlasts-a-future-dated-one.json"


def _run(model):
    plan = json.loads(PLAN.read_text())
    world = SimWorld(plan["seed"], model, plan["scenario"], Params(**plan["params"]), "correct",
                     options=copy.deepcopy(plan["options"]), choices=Choices(plan["choices"], plan["workload"]))
    return world.run()


def _up2(h):
    return [v for v in check_all(h) if v.invariant == "UP-2"]


def test_an_older_heartbeat_applied_late_holds_the_guard_to_its_own_staleness():
    correct = load_model("correct")
    assert _up2(_run(correct)) == []

    class KeepsOnlyTheFreshest(type(correct)):
        """The model before the fix: an older body read after a fresher one changes nothing."""

        def old_heartbeat_blocks(self, st, seen, now_ms):
            return super().old_heartbeat_blocks(st, seen._replace(held_until_ms=0), now_ms)

    (v,) = _up2(_run(KeepsOnlyTheFreshest()))
    assert "start guard passed" in v.message and "nodes/n2" in v.message
