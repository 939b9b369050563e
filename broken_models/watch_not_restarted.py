"""Breaks FN-2: the fence watch counts from the node's first acknowledged lease write ever, not
from its first one after a lapse of its own. After a global outage every node judges its peers
by what it saw before: the peers could not write either, so it fences them as soon as its own
lease is back, and every node exits.
Caught by: INV-9 (a blip restarts the cluster), and INV-10/INV-1 where fenced owners still act.
"""

from model.node import Model

RULE = "FN-2"
CATCHES = "INV-9"


class WatchNotRestarted(Model):
    name = "watch_not_restarted"

    def watch_from(self, st, now):
        return now.mono_ms if st.watch_from_ms is None else st.watch_from_ms


MODEL = WatchNotRestarted()
step = MODEL.step
