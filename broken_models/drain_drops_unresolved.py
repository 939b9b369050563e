"""Breaks CS-3: a drain ends with an unresolved entry: once no hold, release or acquisition is left,
the drain gives its unresolved acquires up (as failed) and reports drained.

CS-3 reports drained only when nothing is pending, unresolved acquires included (they share the set,
OR-7): the write of such an acquire may still land, or may have landed with its reply lost, and only
the resolver (OR-8) releases it then. Given up, a write that lands leaves a record naming this live
process, which never holds it and never releases it.
Caught by: CONV-2 (a record names a running instance that never held it, and the instance sends
nothing on it for longer than the resolver's cadence once no fault touches it, or the record is left
so at the end). INV-5 only when the write lands while the node is still drained.
Once a survivor: the swarm told a drain while an acquisition was unresolved in 9.5 % of its seeds, and
CONV-2 caught it in 2 of 1,000 (336, 802; kept as tests/plans/conv2-drain-drops-unresolved.json). The
world's kind `open_entries` (issue 37, part 3) tells drains at those moments and holds acquisitions'
writes back past their timeout: CONV-2 catches it in 41 of seeds 0..199.
"""

from model.frozen import replace

from model.io import Mark, Observe
from model.node import Model

RULE = "CS-3"
CATCHES = "CONV-2"


class DrainDropsUnresolved(Model):
    name = "drain_drops_unresolved"

    def check_drained(self, st, now, out):
        if st.holds or st.acquiring or self.releases_outstanding(st):
            return st
        for (actor, generation), e in tuple(st.unresolved.items()):
            if e.rid is None:  # not while the resolver's read is in flight (it holds the lock, OR-9)
                out.append(Observe("unresolved_ended", (actor, generation)))
                st = replace(st, unresolved=st.unresolved.without((actor, generation)))
        if st.unresolved:
            return st
        out.append(Mark("CS-3"))
        out.append(Observe("drained"))
        return replace(st, drained=True)


MODEL = DrainDropsUnresolved()
step = MODEL.step
