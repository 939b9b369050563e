"""Breaks BD-1: the cap counts only the fences whose write is in flight (the ADR: at most 8 fences at once; a
fence is at work from its fresh read, FN-3, until its write's answer): with more peers lapsed at once than
the cap, a node sends every fence's read at once, and the writes that follow them.
Caught by: BD-1 (judged on world facts: the fences' requests, reads and writes, a process had in flight when it
sent one, counted by the world from the send to the answer or timeout it delivered).
"""

from model.node import Model

RULE = "BD-1"
CATCHES = "BD-1"


class FenceReadsUncounted(Model):
    name = "fence_reads_uncounted"

    @staticmethod
    def fences_held(st) -> int:
        return sum(1 for purpose in st.inflight.values() if purpose[0] == "fence_write")


MODEL = FenceReadsUncounted()
step = MODEL.step
