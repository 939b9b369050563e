"""Breaks BD-1: fences are not bounded (the ADR: at most 8 at once, on a task of their own, so
that a hung fence never delays the listing): with most of a large cluster gone at once, a node
fences every silent peer at the same time.
Caught by: BD-1 (judged on world facts: the fence writes a process had in flight when it sent
one, counted by the world from the send to the reply or timeout it delivered).
"""

from model.node import Model

RULE = "BD-1"
CATCHES = "BD-1"


class UnboundedFences(Model):
    name = "unbounded_fences"
    fence_concurrency = 1_000


MODEL = UnboundedFences()
step = MODEL.step
