"""Every occurrence reported (issue 44, part 3): no checker keeps only the first violation per actor, process or
node when a later one is independent (a new hold, a new fence, a new lease window, a new stretch over a cap), so
that a finding that explains the first can never hide the next. Hand-made histories of world facts, each with
two independent occurrences; each checker reports both."""

from __future__ import annotations

from checkers import bounds, generations, lease
from factkit import ev, finish, heartbeats, history, put

A = "t0/c/a0"


def test_lease1_reports_each_pair_of_overlapping_windows():
    """Two processes of n0 valid at once from 0 to 8 s, then again from 40 s: two windows apart, two
    violations (it reported one per node)."""
    h = history(("n0", "a"), ("n0", "b"))
    for start in (0, 40_000):
        heartbeats(h, 0, start, start + 6_000)
        heartbeats(h, 1, start + 500, start + 6_500)
    vs = [v for v in lease.check(finish(h)) if "both held node lease n0" in v.message]
    assert len(vs) == 2


def test_inv2_reports_each_hold_whose_generation_is_not_above():
    """Actor A held at generation 3, then at 2 (not above), then at 3 by a later hold (the last real one was
    at 3: not above either): two holds, two violations (it reported one per actor)."""
    h = history(("n0", "a"), ("n1", "b"))
    heartbeats(h, 0, 0, 60_000)
    heartbeats(h, 1, 0, 60_000)
    key = "owners/" + A
    put(h, 1_000, 0, key, "held n0 a 3")
    put(h, 5_000, 1, key, "held n1 b 2")
    put(h, 9_000, 0, key, "held n0 a 3")
    assert len([v for v in generations.check(finish(h)) if v.invariant == "INV-2"]) == 2


def test_bd1_reports_each_stretch_over_the_cap():
    """A process over BD-1's cap of fences in flight, back under it, over again: two stretches, two
    violations (it reported one per process)."""
    h = history(("n0", "a"))
    for t, n in ((1_000, 9), (1_100, 10), (5_000, 3), (9_000, 9)):
        ev(h, t, 0, "fence_sent", key="nodes/n1", in_flight=n)
    assert len([v for v in bounds.check(finish(h)) if v.invariant == "BD-1"]) == 2
