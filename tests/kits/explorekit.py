"""The bounds of the small explorations pinned in tests/explore/test_pinned.py (and checked to
replay in tests/explore/test_explore.py): one place, so both read the same state space."""

# BM-1 (FN-3 broken): one outage of n0, no request, no fault, true clocks
BM1 = dict(requests=0, faults=0, outages=1, delays=[1], offsets=[[0, 0]])
# BM-2 (OR-3 broken): two requests around a hibernation, one owners/ write lost
BM2 = dict(horizon_s=12, requests=2, hibernations=1, faults=1, delays=[1], focus=["PUT owners/"], offsets=[[0, 0]])
# the correct model: one request, one owners/ write fault, two clock combinations
CALM = dict(horizon_s=10, requests=1, faults=1, delays=[1], focus=["PUT owners/"], offsets=[[0, 0], [1000, -1000]])
