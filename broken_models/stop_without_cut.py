"""Breaks CS-1: a clean stop does not make its lease locally invalid, and so no lost-lease cut
ends the events still running; it stops the lease task and writes `released` all the same.

A straggler (an event that outlasted the stop's bounded wait for its releases) keeps acting as
owner while `released` goes out and lands, and peers free every record naming a released
instance at once (FN-5): the straggler's answer may follow the next owner's acts.
Caught by: CS-1 (checkers/clean_stops.py): an act after the process sent its `released` write,
judged on world facts (the world ends a straggler at the worst instant: right after that send).
"""

from model.node import Model

RULE = "CS-1"
CATCHES = "CS-1"


class StopWithoutCut(Model):
    name = "stop_without_cut"

    def lost_lease_cut(self, st, out):
        return st  # neither made invalid nor cut: the straggler runs on


MODEL = StopWithoutCut()
step = MODEL.step
