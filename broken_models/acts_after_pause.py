"""Breaks NL-4 and OR-4 (issue 47, part 3): the node trusts its lease until the lapse timer says otherwise,
instead of reading its clock at every act. Validity is "running, not lapsed, not made invalid": the deadline
timer (NL-11) alone ends it. A process paused past its lease's end (a GC pause, SIGSTOP, a frozen VM) resumes
with the requests that queued meanwhile delivered before that timer, which came due in the pause too: it
serves them, and acknowledges data, on a lease that ran out while it stood still: it acts after a pause
without checking validity again.
Caught by: INV-1 (every act inside a hold whose node lease is valid at that instant, rebuilt from the
bucket's facts and the process's clock). A catch needs a pause of a holder past its lease with requests for its
actors queued before the deadline timer came due. Measured over seeds 0..199 of swarm (issue 47 asks 10 %):
INV-1 in 5 at 959d006 (2.5 %; the run failed in 27, 13.5 %, most of them INV-7); since a "long" or "deadline"
pause finding no holder waits for the next acquisition, a client request for a held actor reaches the stopped
holder, and two "deadline" pauses in three end past the lease (scenarios/faults/pauses.py): at 01465c1, INV-1
in 20 of seeds 0..199 (10.0 %; the run failing in 38, INV-7 in 16, INV-4 in 3) and in 23 of seeds 200..399
(11.5 %); 19 and 23 at 5930396. Since "long" and "deadline" pauses are drawn two in seven each, strike holders
no race keeps calm, and a restart race waits for a paused process to resume (issue 47q): 36 of seeds 0..199
(18 %) and 27 of 200..399 (13.5 %). Also caught in the scripted pause of tests/scenarios/test_pauses.py.
"""

from model.node import Model
from model.node_lease import RUNNING

RULE = "NL-4"
CATCHES = "INV-1"


class ActsAfterPause(Model):
    name = "acts_after_pause"

    def lease_valid(self, st, now) -> bool:
        ls = st.lease
        return ls.phase == RUNNING and not ls.lapsed and not ls.invalidated  # (no reading of the clock)


MODEL = ActsAfterPause()
step = MODEL.step
