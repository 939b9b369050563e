"""Breaks BD-4: a foreground release (hibernation, a hand-over, a stop's or a drain's) keeps the full
attempt timeout instead of trying for 1 s and then being parked to the background retries, so a slow
bucket holds hibernations and hand-overs up for a whole attempt.
Caught by: BD-4 (checkers/release_tries.py), on the time the world saw the process give each release it sent
outside the background task: not 1 s.
"""

from model.node import Model

RULE = "BD-4"
CATCHES = "BD-4"


class LongForegroundRelease(Model):
    name = "long_foreground_release"
    release_tries_ms = None  # (the send's default: the attempt timeout)


MODEL = LongForegroundRelease()
step = MODEL.step
