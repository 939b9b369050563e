"""Breaks CS-2: a clean stop retries its failing `released` write for ever, with no stop limit
(the ADR: retried for A + 1 s within the stop limit; past it the lease stays live and peers free
the actors by fencing). A stop during a bucket outage never ends.
Caught by: CS-2 (judged on world facts: told to stop, the process has exited within the stop
limit and the attempts still in flight).
"""

from model.clean_stop import RELEASED_RETRY_MS
from model.io import SetTimer
from model.node import Model

RULE = "CS-2"
CATCHES = "CS-2"


class StopRetriesForever(Model):
    name = "stop_retries_forever"

    def retry_released(self, st, now, out):
        out.append(SetTimer("stop", now.mono_ms + RELEASED_RETRY_MS))
        return st

    def on_timer_stop(self, st, key, now, out):
        if st.stop is not None and st.stop.stage == "writing":
            return self.write_released(st, now, out)  # a retry, whatever the window says
        return super().on_timer_stop(st, key, now, out)


MODEL = StopRetriesForever()
step = MODEL.step
