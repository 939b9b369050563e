"""The bounds of the small explorations pinned in tests/explore/test_pinned.py (and checked to
replay in tests/explore/test_explore.py): one place, so both read the same state space."""

# BM-1 (FN-3 broken): one outage of n0, no request, no fault, true clocks
BM1 = dict(requests=0, faults=0, outages=1, delays=[1], offsets=[[0, 0]])
# BM-2 (OR-3 broken): two requests around a hibernation, one owners/ write lost
BM2 = dict(horizon_s=12, requests=2, hibernations=1, faults=1, delays=[1], focus=["PUT owners/"], offsets=[[0, 0]])
# the correct model: one request, one owners/ write fault, two clock combinations
CALM = dict(horizon_s=10, requests=1, faults=1, delays=[1], focus=["PUT owners/"], offsets=[[0, 0], [1000, -1000]])
# an upgrade (section 6): one old per-actor-lease node is asked for the actor at 0.25 s and stops at 2 s,
# cleanly or by a crash; one new node starts then or 6 s later; the old GC at the switch keeps or deletes
# the released lease; one request at the new node; true clocks. 2 x 2 explorations
UP = dict(nodes=1, upgrade=True, gaps_ms=[0, 6000], gc=True, requests=1, delays=[1], offsets=[[0, 0]])
UP_GC = dict(UP, faults=0)  # seed_from_old_lease_only (UP-3: the GC's delete), unconditional_marker
UP_GUARD = dict(UP, faults=1, focus=["GET nodes/"])  # guard_fails_open (UP-2: a guard read lost); the correct model
