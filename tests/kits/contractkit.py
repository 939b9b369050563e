"""A model wrapper that checks a world keeps model.io's contract: one reply per request, never
after its timeout; timers never early, never after they were cancelled; nothing after Exit;
local time never running backwards. Shared by the simulated and the real-S3 world's tests."""

from __future__ import annotations

from model.io import CancelTimer, Exit, ProcessStarted, ReplyArrived, Send, SetTimer, TimerFired


class ContractRecorder:
    """Wraps a model; `problems` lists every way the world broke model.io's contract.
    `jitter_ms`: how late a timeout may be answered (a real-time world answers it when its
    loop gets to it, a few ms after it is due; the simulated world, exactly on time)."""

    def __init__(self, inner, jitter_ms: int = 0) -> None:
        self.inner = inner
        self.jitter_ms = jitter_ms
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
            elif now_ms > sent[0] + sent[1].timeout_ms + self.jitter_ms:
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


def unexplained(problems: list[tuple], processes) -> list[tuple]:
    """The problems a step of the process's clock does not explain (T-1: NTP may step a clock forward or back
    within max_skew of true time, scenarios/faults/clock_steps.py): its local time runs back by a step back,
    and a reply within its timeout (a duration, true time) reads up to the steps forward later on its clock.
    Every other problem stands, and one a step does not account for in full."""
    steps = {p.instance: p.steps for p in processes}
    out = []
    for pr in problems:
        s = steps.get(pr[1], ())
        if pr[0] == "local time ran backwards" and pr[2] - pr[3] <= sum(-d for _, d in s if d < 0):
            continue
        if pr[0] == "reply after the timeout" and pr[2] - pr[3].timeout_ms <= sum(d for _, d in s if d > 0):
            continue
        out.append(pr)
    return out
