"""Breaks BD-3: a pass over the pending entries never stops on refusals (the ADR: it stops after 32 in a
row, the entries still waiting wait their back-off), so a refusing or throttling bucket gets every due
retry at once, as fast as the answers come back.
Caught by: BD-3 (checkers/refusals.py), which counts the refusals in a row on the answers the world
delivered to the background task and sees an entry that was waiting when the 32nd came sent again
before its back-off from then. A survivor of the swarm for now: the streak is reached in 2 of 2,000
seeds at 67ed112, never with a retry waiting behind BD-2's cap (no seed of 0..1999 catches it); the
scripted lapse with 100 holds and refused record writes does (tests/checkers/test_bounds.py).
"""

from model.node import Model

RULE = "BD-3"
CATCHES = "BD-3"
SURVIVOR = ("the swarm reaches 32 refusals in a row in 0.1 % of seeds and never with a known retry waiting then (no "
            "seed of 0..1999); the scripted lapse and refusals catch it (tests/checkers/test_bounds.py)")


class EndlessPass(Model):
    name = "endless_pass"
    refusals_per_pass = 1_000_000


MODEL = EndlessPass()
step = MODEL.step
