"""Breaks NL-5 (as UP-1 meets it): the start check's ttl + grace is counted from the process's start, not
from the check's first read, so the time its bucket check took (retried every second while the bucket
cannot be reached) and a slow or failed first read are taken out of the wait.

The check then watches nodes/<id> for less than ttl + grace, and a process under this id whose object
was deleted while it still ran may not have shown itself yet when this one writes. LEASE-1's test of the
same rule counts from the start, as this model does, and sees nothing.
Caught by: UP-1 (checkers/start_order.py): the first lease write sent less than ttl + grace after the
check's first answered read of nodes/<id>, on the process's clock.
"""

from model.frozen import replace
from model.io import CancelTimer
from model.node import Model
from model.node_lease import CHECK

RULE = "NL-5"
CATCHES = "UP-1"


class CheckWaitFromStart(Model):
    name = "check_wait_from_start"

    def on_start(self, inp, now, out):
        st = super().on_start(inp, now, out)
        return self._from(st, now.mono_ms + st.params.takeover_ms)

    def on_reply_bucket_check(self, st, purpose, reply, now, out):
        deadline = st.lease.check_deadline_ms
        return self._from(super().on_reply_bucket_check(st, purpose, reply, now, out), deadline)

    def on_reply_check_read(self, st, purpose, reply, now, out):
        first = not st.lease.check_seen
        deadline = st.lease.check_deadline_ms
        st = super().on_reply_check_read(st, purpose, reply, now, out)
        ls = st.lease
        if first and deadline and ls.phase == CHECK and ls.check_seen and deadline < ls.check_deadline_ms:
            st = replace(st, lease=replace(ls, check_deadline_ms=deadline))  # the wait as counted from the start
            if now.mono_ms >= deadline:
                out.append(CancelTimer("check_read"))
                return self.first_write(st, now, out)
        return st

    @staticmethod
    def _from(st, deadline: int):
        """Keep the start's deadline until the check's first read answers (the check sets none before)."""
        if st.lease.phase != CHECK or st.lease.check_seen:
            return st
        return replace(st, lease=replace(st.lease, check_deadline_ms=deadline))


MODEL = CheckWaitFromStart()
step = MODEL.step
