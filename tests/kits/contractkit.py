"""A model wrapper that checks a world keeps model.io's contract: one reply per request, never
after its timeout; timers never early, never after they were cancelled; nothing after Exit;
the monotonic clock never running backwards (model.io.Now: timers and timeouts run on it, a step of the
wall clock moves neither). Shared by the simulated and the real-S3 world's tests."""

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

    def step(self, state, inp, now):
        now_ms = now.mono_ms  # (every duration and timer runs on the monotonic clock: model.io.Now)
        if type(inp) is ProcessStarted:
            assert inp.instance not in self.procs, f"instance {inp.instance} started twice"
            who = inp.instance
            self.procs[who] = {"now": now_ms, "sent": {}, "timers": {}, "exited": False}
        else:
            who = state.instance
        p = self.procs[who]
        if now_ms < p["now"]:
            self.problems.append(("monotonic time ran backwards", who, p["now"], now_ms))
        p["now"] = now_ms
        if p["exited"]:
            self.problems.append(("input after Exit", who, inp))
        if type(inp) is ReplyArrived:
            self.replies += 1
            sent = p["sent"].pop(inp.request_id, None)
            if sent is None:
                self.problems.append(("reply to no request in flight", who, inp))
            elif now_ms > sent[0] + sent[1].timeout_ms + self.jitter_ms:
                self.problems.append(("reply after the timeout", who, now_ms - sent[0], sent[1], inp.reply.status,
                                      sent[0]))
        elif type(inp) is TimerFired:
            self.timers_fired += 1
            at = p["timers"].pop(inp.key, None)
            if at is None:
                self.problems.append(("timer fired that is not set", who, inp.key))
            elif now_ms < at:
                self.problems.append(("timer fired early", who, inp.key, at, now_ms))
        new, effects = self.inner.step(state, inp, now)
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


def unexplained(problems: list[tuple], processes, history=None) -> list[tuple]:
    """The problems a world must not have. A step of a process's wall clock (T-1: NTP steps it forward or back
    within max_skew of true time, scenarios/faults/clock_steps.py) explains none of them since issue 47: timers
    and timeouts run on the monotonic clock, which never steps (model.io.Now). A pause of the process does
    explain a reply handed over after its timeout was due (`history` given): the reply arrived while the
    process was paused, before the timeout came due, and the world hands the queued inputs over at the resume
    in the order they arrived, the reply first (scenarios/faults/pauses.py)."""
    if history is None:
        return list(problems)
    from checkers.facts import pauses

    spans = pauses(history)
    index = {p.instance: i for i, p in enumerate(processes)}
    mono = {p.instance: p.clock for p in processes}

    def paused_at_due(x: tuple) -> bool:
        who, send, sent_mono = x[1], x[3], x[5]
        clock = mono.get(who)
        if clock is None:
            return False
        due = clock.mono_true_at(sent_mono + send.timeout_ms)
        return any(s <= due <= e for s, e in spans.get(index.get(who, -1), ()))

    return [x for x in problems if not (x[0] == "reply after the timeout" and paused_at_due(x))]
