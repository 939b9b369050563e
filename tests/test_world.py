"""The SimPy world keeps model.io's contract with the model it runs (scenarios/sim.py).

A recording proxy stands between the world and the correct model and checks,
for every process: its local time never runs backwards; each Send is answered
by exactly one ReplyArrived, no later than its timeout on the process's own
clock; a timer fires only if set and not cancelled, never before its time;
nothing arrives after Exit. The history records every process start and the
seed's drawn options.
"""

from __future__ import annotations

import pytest

from model import MODEL
from model.io import CancelTimer, Exit, ProcessStarted, ReplyArrived, Send, SetTimer, TimerFired
from scenarios.sim import run_seed
from scenarios.swarm import SCENARIOS


class ContractRecorder:
    """Wraps a model; `problems` lists every way the world broke model.io's contract."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.procs: dict[str, dict] = {}
        self.problems: list[tuple] = []
        self.replies = 0
        self.timers_fired = 0

    def step(self, state, inp, now_ms):
        if type(inp) is ProcessStarted:
            assert inp.instance not in self.procs, f"instance {inp.instance} started twice"
            who = inp.instance
            self.procs[who] = {"now": now_ms, "sent": {}, "timers": {}, "exited": False}
        else:
            who = state.instance
        p = self.procs[who]
        if now_ms < p["now"]:
            self.problems.append(("local time ran backwards", who, p["now"], now_ms))
        p["now"] = now_ms
        if p["exited"]:
            self.problems.append(("input after Exit", who, inp))
        if type(inp) is ReplyArrived:
            self.replies += 1
            sent = p["sent"].pop(inp.request_id, None)
            if sent is None:
                self.problems.append(("reply to no request in flight", who, inp))
            elif now_ms > sent[0] + sent[1].timeout_ms:
                self.problems.append(("reply after the timeout", who, now_ms - sent[0], sent[1], inp.reply.status))
        elif type(inp) is TimerFired:
            self.timers_fired += 1
            at = p["timers"].pop(inp.key, None)
            if at is None:
                self.problems.append(("timer fired that is not set", who, inp.key))
            elif now_ms < at:
                self.problems.append(("timer fired early", who, inp.key, at, now_ms))
        new, effects = self.inner.step(state, inp, now_ms)
        for e in effects:
            t = type(e)
            if t is Send:
                p["sent"][e.request_id] = (now_ms, e)
            elif t is SetTimer:
                p["timers"][e.key] = e.at_ms
            elif t is CancelTimer:
                p["timers"].pop(e.key, None)
            elif t is Exit:
                p["exited"] = True
        return new, effects


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_world_keeps_the_io_contract(scenario):
    for seed in range(8):
        rec = ContractRecorder(MODEL)
        h = run_seed(seed, rec, scenario, None, "correct")
        assert rec.problems == [], f"{scenario} seed {seed}: {rec.problems[:5]}"
        assert rec.replies > 0 and rec.timers_fired > 0
        starts = [e for e in h.events if e[2] == "start"]
        assert len(starts) == len(h.processes)
        assert set(rec.procs) <= {p.instance for p in h.processes}  # (the operator runs no node model)
        assert h.options and h.header()["options"] == h.options  # every drawn option is in the history
