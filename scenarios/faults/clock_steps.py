"""Clock steps (T-1, issue 39 part 1): a machine's clock jumps forward or back, as NTP steps a clock,
staying within max_skew of true time.

T-1 bounds every clock to max_skew of true time, not its course: NTP steps a clock that strayed, so a
clock may jump forward or back by up to 2 * max_skew (from one end of the band to the other) while it
stays in the band. A step back makes a node read the same instant twice (its lease valid again until its
clock reads the deadline again, NL-4: the checkers judge the validity as the node could apply it,
history/record.py `Clock.ends_at`); a step forward ends it early and ages every written_at it reads
(FN-5, UP-2, UP-3). Each entry [machine, at, to]: at `at` the machine's clock is set to true time + `to`
(`to` in [-max_skew, max_skew]; mostly an end of the band). A clock that drifts (the swarm's sweep)
keeps its course; a step that would not move a clock does nothing.

Every machine may step (issue 47): the nodes', the operator's, the twins' (t0.., and an upgrade's switch
twin), the replacement's (r0) and an upgrade's old binaries'; only the retired old node dated ahead on
purpose (omf) keeps its clock.

What a step does in the world: the machine's wall clock (shared by its processes) reads the new offset
from that instant; every process running there carries the step in the history (`Process.steps`: the
checkers read its clock as it was at each instant). Its monotonic clock does not move (model.io.Now):
timers and timeouts are durations on it, so a step moves none of them; a handler reads the wall clock
afresh when one fires (a lease deadline that came early by a step back waits again, NL-4). A `fault`
event names it (`clock_step`: the machine, the step in ms).
"""

from __future__ import annotations

import dataclasses

from . import FaultKind

WORLD = -1


class ClockSteps(FaultKind):
    id = "clock_steps"
    title = "a machine's clock steps forward or back within max_skew of true time (NTP), T-1"
    rules = ("T-1", "T-2", "NL-4", "FN-5", "UP-2")
    options = {"clock_steps": []}  # [[machine, at, to], ...]: at `at`, the clock set to true time + `to`
    scheduled = ("clock_steps",)
    at_field = {"clock_steps": 1}

    def draw_main(self, ctx) -> None:
        rng, o = ctx.rng, ctx.o
        on = rng.random() < 0.3 and not ctx.alone
        machines = ([f"m{i}" for i in range(o["nodes"])] + ["op"]
                    + ([f"om{i}" for i in range(o["nodes"])] if o.get("upgrade") else []))
        S = ctx.p.max_skew_ms

        def to() -> int:
            return (-S, S, S, -S, rng.randint(-S, S))[rng.randrange(5)]

        out = []
        for _ in range(rng.randint(1, 4) if on else 0):
            m = machines[rng.randrange(len(machines))]
            # an old machine's step while the old binaries run (from the run's start), another's in the fault phase
            at = rng.randint(0, o["upgrade"]["new_at"] if str.startswith(m, "om") else o["fault_ms"])
            out.append([m, at, to()])
        if on:
            # (issue 47, drawn after the steps above, which stay as they were) NTP steps a clock as its machine
            # boots (chrony's makestep, ntpd -g): each node machine's, in half the seeds, while its first start
            # check waits (NL-5: a wait, on the monotonic clock, that no step may shorten)
            for i, start in enumerate(o.get("starts") or ()):
                if rng.random() < 0.5:
                    out.append([f"m{i}", min(o["fault_ms"], start + rng.randint(0, ctx.tg)), to()])
            # and every other process may step too: a twin's machine, the replacement's, an upgrade's switch twin
            for m in [f"t{k}" for k in range(len(o.get("twins") or ()))] + ["r0"] + (["tu"] if o.get("upgrade") else []):
                if rng.random() < 0.5:
                    out.append([m, rng.randint(0, o["fault_ms"]), to()])
        o["clock_steps"] = sorted(out, key=lambda e: (e[1], e[0]))

    def schedule(self, w, base: int) -> None:
        entries = [e for e in w.options.get("clock_steps", ()) if e is not None]
        pair = w.options.get("slow_fast") if w.options.get("deadline_races") else None
        for machine, at, to in entries:  # (an upgrade's old machines step from its start, the others from base)
            if pair and machine in pair:
                continue  # a deadline race needs its slow and fast clocks where the draw put them (T-2's margin)
            w.later((0 if str.startswith(machine, "om") else base) + at, w.fault_step, self.id, "step", machine, to)

    def step(self, w, machine: str, to: int) -> None:
        c = w.clocks.get(machine)
        if c is None or c.drift_ppm or w.in_quiet:
            return
        set_clock(w, machine, w.options["clock_base"] + to, f"true time {to:+d} ms")


def set_clock(w, machine: str, offset_ms: int, detail: str = "") -> None:
    """The machine's wall clock reads true time + `offset_ms` from now (a script's step too): a `fault` event,
    and each process running there carries the step."""
    c = w.clocks[machine]
    delta = offset_ms - c.offset_ms
    if not delta:
        return
    now = w.now
    c.offset_ms = offset_ms  # (the world's clocks read now and later: the history keeps the step, below)
    w.fault_event(WORLD, "clock_step", machine, delta, f"stepped {delta:+d} ms" + (f": {detail}" if detail else ""))
    procs = w.history.processes
    for k, proc in enumerate(w.procs):
        if proc.machine == machine and proc.alive:
            procs[k] = dataclasses.replace(procs[k], steps=procs[k].steps + ((now, delta),))


KIND = ClockSteps()
