"""Breaks BD-3: a pass over the pending entries never stops on refusals (the ADR: it stops after 32 in a
row, the entries still waiting wait their back-off), so a refusing or throttling bucket gets every due
retry at once, as fast as the answers come back.
Caught by: BD-3 (checkers/refusals.py), which counts the refusals in a row on the answers the world
delivered to the background task and sees an entry that was waiting when the 32nd came sent again
before its back-off from then. The swarm reaches it since issue 39's crowd released into a hanging
bucket partition (scenarios/faults/release_crowd.py: entries answered once, due again and waiting
behind BD-2's cap when 32 retries time out together): 22 of seeds 0..199 (0 before, a survivor); the
scripted lapse with 100 holds and refused record writes catches it too (tests/checkers/test_bounds.py).
"""

from model.node import Model

RULE = "BD-3"
CATCHES = "BD-3"


class EndlessPass(Model):
    name = "endless_pass"
    refusals_per_pass = 1_000_000


MODEL = EndlessPass()
step = MODEL.step
