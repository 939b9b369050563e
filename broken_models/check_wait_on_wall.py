"""Breaks NL-5 (and T-1's two clocks, issue 47): the start check times its ttl + grace wait on the wall
clock, not the monotonic one. A wall clock that runs fast (the swarm's sweep: a clock crossing the
max_skew band during the run) or steps forward (NTP, up to 2 * max_skew) ends the wait early in true
time, so a new process may write while its predecessor's last write, or a twin's, is still valid.
Caught by: UP-1 (NL-5 as the start order meets it, judged on world facts: a process's first node-lease
write was sent at least ttl + grace after its start check's first read was answered, on its monotonic
clock as the world ran it (true time but for NTP's slew, `Clock.mono_span`), but for the shortcut of a fenced or released object whose kept
written_at + ttl + grace had passed on its wall clock); LEASE-1, which counts from the process's start,
catches it in fewer seeds. Measured over seeds 0..199 of swarm: UP-1 in 28, LEASE-1 in 19 (the swarm's
sweep, a wall clock running fast across the band, and NTP's steps at boot, scenarios/faults/clock_steps.py).
"""

from model.node import Model

RULE = "NL-5"
CATCHES = "UP-1"


class CheckWaitOnWall(Model):
    name = "check_wait_on_wall"

    def check_clock(self, now) -> int:
        return now.wall_ms


MODEL = CheckWaitOnWall()
step = MODEL.step
