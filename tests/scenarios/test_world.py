"""The SimPy world keeps model.io's contract with the model it runs (scenarios/sim.py).

A recording proxy stands between the world and the correct model and checks,
for every process: its local time never runs backwards (but by a step back of
its clock, T-1: clock_steps.py); each Send is answered by exactly one
ReplyArrived, no later than its timeout on the process's own clock (a
duration: a step forward reads it later by the step); a timer fires only if
set and not cancelled, never before its time;
nothing arrives after Exit. The history records every process start and the
seed's drawn options.
"""

from __future__ import annotations

import pytest

from model import MODEL
from contractkit import ContractRecorder, unexplained
from scenarios.sim import run_seed
from scenarios.swarm import SCENARIOS


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_world_keeps_the_io_contract(scenario):
    for seed in range(8):
        # a drifting clock (sweep mode) skips a local ms now and then: the first true instant at which
        # it reads a timeout's deadline may read the deadline + 1
        rec = ContractRecorder(MODEL, jitter_ms=1)
        h = run_seed(seed, rec, scenario, None, "correct")
        # (a clock stepped by NTP, T-1, runs back or reads a reply late by its steps: clock_steps.py)
        problems = unexplained(rec.problems, h.processes, h)
        assert problems == [], f"{scenario} seed {seed}: {problems[:5]}"
        assert rec.replies > 0 and rec.timers_fired > 0
        starts = [e for e in h.events if e[2] == "start"]
        assert len(starts) == len(h.processes)
        assert set(rec.procs) <= {p.instance for p in h.processes}  # (the operator runs no node model)
        assert h.options and h.header(every_option=True)["options"] == h.options  # every drawn option is in it
        # and its hash covers every option but a fault kind's at its off value (a kind added leaves the hash)
        hashed = h.header()["options"]
        assert {k for k in h.options if k not in hashed} == {k for k, v in h.options.items()
                                                            if k in h.off_options and v == h.off_options[k]}
