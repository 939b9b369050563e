"""Clock steps (issue 39, part 1; T-1): a clock jumping forward or back within max_skew of true time, as
NTP steps one (scenarios/faults/clock_steps.py), read by the checkers as the process saw it."""

from __future__ import annotations

import dataclasses

from checkers.coverage import reached
from checkers.facts import facts
from factkit import history, live
from history import Clock
from model.node import MODEL
from scenarios.sim import run_seed
from scenarios.swarm import draw, draw_params


def _drawn(seed: int, scenario: str = "swarm"):
    p = draw_params(seed, scenario=scenario)[0]
    return p, draw(seed, scenario, p)


def _stepped_seed() -> int:
    """A swarm seed where a node's process had its clock stepped back while it ran."""
    return next(s for s in range(100) if any(e[0].startswith("m") for e in _drawn(s)[1]["clock_steps"])
                and any(pr.machine.startswith("m") and any(d < 0 for _, d in pr.steps)
                        for pr in run_seed(s, MODEL).processes))


BACK = "clock stepped back"


def test_t1_a_stepped_clock_reads_each_instant_as_the_step_left_it():
    """T-1: a clock stepped back at 1,000 ms reads 1,050 first at 950 and again, for good, at 1,250."""
    c = Clock(100).stepped(1_000, -300)
    assert (c.local(999), c.local(1_000), c.offset_ms) == (1_099, 800, -200)
    assert c.true_at(1_050) == 950 and c.ends_at(1_050) == 1_250
    f = Clock(0).stepped(500, 400)
    assert f.true_at(1_000) == f.ends_at(1_000) == 600 and f.local(499) == 499


def test_clock_steps_are_drawn_in_their_own_stream_and_never_in_calm():
    """T-1: steps within the band, drawn in a share of swarm seeds; calm draws none."""
    on = 0
    for seed in range(100):
        p, o = _drawn(seed)
        for machine, _at, to in o["clock_steps"]:
            assert abs(to) <= p.max_skew_ms and machine in o["clocks"]
        on += bool(o["clock_steps"])
        assert _drawn(seed, "calm")[1]["clock_steps"] == []
    assert 15 <= on <= 50, on


def test_a_step_strikes_every_process_on_its_machine_and_keeps_it_in_the_band():
    """T-1: each running process on a stepped machine carries the step (its history clock reads it), stays
    within max_skew of true time throughout, and its timers go on (its lease is written after the step)."""
    seed = _stepped_seed()
    p, o = _drawn(seed)
    h = run_seed(seed, MODEL)
    steps = [e for e in h.events if e.kind == "fault" and e.fields.what == "clock_step"]
    assert steps
    base, S = o["clock_base"], p.max_skew_ms
    stepped = [k for k, pr in enumerate(h.processes) if pr.steps]
    assert stepped
    for k in stepped:
        pr = h.processes[k]
        for at, delta in pr.steps:
            assert any(e.t_ms == at and e.fields.target == pr.machine and e.fields.ms == delta for e in steps)
            for t in (at - 1, at, at + 1_000):
                assert abs(pr.clock.local(t) - t - base) <= S
    k = next(k for k in stepped if h.processes[k].machine.startswith("m"))  # a node's process
    at = h.processes[k].steps[0][0]
    assert any(e.kind == "apply" and e.proc == k and e.fields.key.startswith("nodes/") and e.t_ms > at
               for e in h.events) or any(e.kind in ("exit", "crash") and e.proc == k for e in h.events)
    assert BACK not in reached(run_seed(seed, MODEL, "calm"))


def test_nl4_validity_is_judged_on_the_clock_as_it_was_stepped():
    """NL-4 with a step back (T-1): valid while its clock reads less than written_at + ttl - safety; the
    clock stepped back past that instant reads less again, so the world's facts keep the lease valid until
    the clock reads it for good (`Clock.ends_at`), not until it first did (`true_at`)."""
    h = history(("n0", "i0"))
    live(h, 1_000, 0)
    span = h.params["ttl_ms"] - h.params["safety_ms"]
    first = 1_000 + span  # the clock (on true time) first reads the deadline here
    h.processes[0] = dataclasses.replace(h.processes[0], steps=((first + 100, -500),))
    h.events.sort(key=lambda e: e.t_ms)
    window = facts(h).lease[0][-1]
    assert window[1] == first + 500 > h.processes[0].clock.true_at(1_000 + span) == first
    h.processes[0] = dataclasses.replace(h.processes[0], steps=())
    h.cache.clear()
    assert facts(h).lease[0][-1][1] == first


def test_a_stepped_process_is_encoded_with_its_steps_only():
    """The history's encoding: a process carries a sixth field, its steps, only if its clock stepped (every
    other history hashes as before)."""
    h = history(("n0", "i0"), ("n1", "i1"))
    h.processes[1] = dataclasses.replace(h.processes[1], steps=((5, 7),))
    rows = h.header()["processes"]
    assert len(rows[0]) == 5 and rows[1][5] == [[5, 7]]


def test_nl5_a_step_back_does_not_shorten_the_start_check_s_wait():
    """NL-5 on a stepped clock (T-1; seed 1254 of the swarm at 46b04b1): a process started on a clock at the
    band's fast end, stepped back 2 * max_skew before its first read, waits ttl + grace on its clock from that
    read. The readings' difference from its start is 2 * max_skew short of ttl + grace, but the clock read
    those instants twice: LEASE-1 counts the wait with the step back (`Clock.waited`), and still flags a write
    sent before ttl + grace of true time less nothing it may count."""
    from checkers.lease import check
    from factkit import ev, finish

    def run(extra: int):
        h = history(("n0", "i0"))
        tg = h.params["ttl_ms"] + h.params["grace_ms"]
        h.processes[0] = dataclasses.replace(h.processes[0], steps=((500, -2_000),))
        ev(h, 0, 0, "start", node_id="n0", instance="i0", machine="m0")
        live(h, tg + extra, 0)
        finish(h)
        return [v for v in check(h) if v.invariant == "LEASE-1"]

    assert run(100) == []  # ttl + grace + 100 ms of true time: its clock read ttl + grace - 1,900 ms, and the step
    assert run(-100)  # 100 ms short of ttl + grace: too early whatever the clock did


def _t2_equality_twin(model=None):
    """T-2 at its equality (grace + safety = 2 * max_skew), issue 47's scripted case: the original n0 runs on
    m0 at the band's fast end and serves t1/c/a0; cut off the bucket just after a lease write was acknowledged,
    its twin starts on t0 at the slow end and reads that write; during the twin's start check NTP steps the
    original's clock back by 2 * max_skew (its validity runs 2 * max_skew longer in true time, NL-4) and the
    twin's forward by 2 * max_skew. Clients ask both processes for the actor the whole time."""
    from checkers import check_all
    from model.params import Params
    from scenarios.script import ScriptedWorld

    S = 1_000
    p = Params(ttl_ms=10_000, grace_ms=1_000, safety_ms=1_000, max_skew_ms=S)
    w = ScriptedWorld(nodes=1, params=p, restart=False, model=model,
                      clocks={"m0": [100_000 + S, 0], "t0": [100_000 - S, 0]})
    w.at(14_000, "request", "n0", "t1/c/a0")
    w.at(20_030, "outage", "n0", 30_000, "blackhole")  # the write sent at 20,018 ms was acknowledged
    w.at(20_100, "twin", "n0", "t0")
    w.at(25_000, "clock", "m0", 100_000 - S)
    w.at(25_000, "clock", "t0", 100_000 + S)
    for t in range(28_000, 33_000, 250):
        w.at(t, "request", "n0", "t1/c/a0", "m0")
        w.at(t + 100, "request", "n0", "t1/c/a0", "t0")
    h = w.run(until_ms=60_000)
    return h, {v.invariant for v in check_all(h)}


def test_t2_equality_twin_with_opposite_steps_never_makes_two_owners():
    """NL-5 on the monotonic clock (T-1, issue 47): the twin waits ttl + grace of its own count, whatever its
    wall clock does, so it writes only after the original's validity, stretched by its step back, ended. Both
    served the actor (the original until its lease ran out, the twin after its first write), never at once."""
    h, broken = _t2_equality_twin()
    assert broken == set()
    orig, twin = (next(k for k, pr in enumerate(h.processes) if pr.machine == m) for m in ("m0", "t0"))
    ran_out = next(e.t_ms for e in h.events if e.kind == "lease_ran_out" and e.proc == orig)
    first = next(e.t_ms for e in h.events if e.kind == "check_passed" and e.proc == twin)
    served = {e.proc for e in h.events if e.kind == "served" and e.t_ms >= 28_000}
    assert served == {orig, twin} and ran_out < first  # (31,018 ms, then 31,116 ms at this commit)


def test_t2_equality_twin_caught_when_the_check_waits_on_the_wall_clock():
    """The same script against the broken model that times the start check on the wall clock: the twin's step
    forward ends its wait 2 * max_skew early, and two processes serve one actor (INV-1, LEASE-1; UP-1 too)."""
    from broken_models import load_model

    _h, broken = _t2_equality_twin(load_model("check_wait_on_wall"))
    assert {"INV-1", "LEASE-1", "UP-1"} <= broken
