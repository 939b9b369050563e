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

What a step does in the world: the machine's clock (shared by its processes) reads the new offset from
that instant; every process running there carries the step in the history (`Process.steps`: the
checkers read its clock as it was at each instant); its timers, set for instants on its clock, fire when
the clock reads them (re-armed: a step back makes them come later, a step forward at once if passed);
requests in flight keep their timeouts (durations, on a monotonic clock). A `fault` event names it
(`clock_step`: the machine, the step in ms).
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
        out = []
        for _ in range(rng.randint(1, 4) if on else 0):
            m = machines[rng.randrange(len(machines))]
            # an old machine's step while the old binaries run (from the run's start), another's in the fault phase
            at = rng.randint(0, o["upgrade"]["new_at"] if m.startswith("om") else o["fault_ms"])
            out.append([m, at, (-S, S, S, -S, rng.randint(-S, S))[rng.randrange(5)]])
        o["clock_steps"] = sorted(out, key=lambda e: (e[1], e[0]))

    def schedule(self, w, base: int) -> None:
        entries = [e for e in w.options.get("clock_steps", ()) if e is not None]
        if entries:
            w.timer_at = {}  # the timers' instants on their clocks, re-armed at a step (core.set_timer notes them)
        pair = w.options.get("slow_fast") if w.options.get("deadline_races") else None
        for machine, at, to in entries:  # (an upgrade's old machines step from its start, the others from base)
            if pair and machine in pair:
                continue  # a deadline race needs its slow and fast clocks where the draw put them (T-2's margin)
            w.later((0 if machine.startswith("om") else base) + at, w.fault_step, self.id, "step", machine, to)

    def step(self, w, machine: str, to: int) -> None:
        c = w.clocks.get(machine)
        if c is None or c.drift_ppm or w.in_quiet:
            return
        new = w.options["clock_base"] + to
        delta = new - c.offset_ms
        if not delta:
            return
        now = w.now
        c.offset_ms = new  # (the world's clocks read now and later: the history keeps the step, below)
        w.fault_event(WORLD, "clock_step", machine, delta, f"stepped {delta:+d} ms: true time {to:+d} ms")
        procs = w.history.processes
        for k, proc in enumerate(w.procs):
            if proc.machine != machine or not proc.alive:
                continue
            procs[k] = dataclasses.replace(procs[k], steps=procs[k].steps + ((now, delta),))
            for key in sorted(proc.timers):  # its timers fire when its clock reads their instants
                at = w.timer_at.get((k, key)) if w.timer_at is not None else None
                if at is None:
                    continue
                w.rearm_timer(proc, key, max(0, at - new - now))


KIND = ClockSteps()
