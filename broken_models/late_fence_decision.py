"""Breaks T-5: a peer is fenced a whole lease period late. The fencer counts a dead process lapsed only
once written_at + ttl + grace + P has passed on its clock (FN-3 says written_at + ttl + grace), so every
failover loses a period: safe, but slower than the ADR's bound ("15 s after the last acknowledged write,
plus whatever part of P + A the fencer had not yet watched").
Caught by: INV-7, judged per takeover: the dead process's object was not fenced by the instant the
earliest peer able to could have fenced it, from that peer's own first sight of the object unchanged plus
a listing's slack. The worst-case bound alone (ttl + grace + P + A + 2 max_skew) let most of these pass.
"""

from model.node import Model

RULE = "T-5"
CATCHES = "INV-7"
# a failover judged needs an owner dead in the quiet phase with no restart replacing its object first, and a
# fence bound its watch did not dominate: caught in 18 of 200 swarm seeds (0-199), 99 of 200 fence seeds
# (nodes crash and come back slowly, or are cut off past ttl + grace); the correct model: 0 of 500 swarm,
# 0 of 200 fence, 0 of 150 each of deadline, outages, stops, twins. Since the quiet crash keeps half its
# machines down 2 to 3 ttl + grace (issue 45 part 4): 28 of 200 swarm seeds, 98 of 200 fence seeds; that slow
# back switched off (it left records only a return near the run's end could free): 21 at 5930396. Since three in
# four quiet crashes of a process that renewed its lease in the quiet phase are gone for good, fenced by a peer
# (scenarios/faults/quiet_crash.py, issue 47q): 32 of seeds 0..199, 33 of 200..399
SCENARIO = "fence"


class LateFenceDecision(Model):
    name = "late_fence_decision"

    def free_from_ms(self, st, written_at_ms):
        return super().free_from_ms(st, written_at_ms) + st.params.period_ms


MODEL = LateFenceDecision()
step = MODEL.step
