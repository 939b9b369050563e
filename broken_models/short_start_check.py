"""Breaks NL-5: the start check waits ttl, not ttl + grace, before the first write (the grace that pays
for two clocks up to 2 * max_skew apart, T-2): a new process may write while its predecessor's last
write, or a twin's, is still valid.
Caught by: LEASE-1 (judged on world facts: a process's first node-lease write reaching the bucket was
sent at least ttl + grace after it started, on its own clock, but for the shortcut of a fenced or
released object whose kept written_at + ttl + grace had passed).
"""

from model.node import Model

RULE = "NL-5"
CATCHES = "LEASE-1"


class ShortStartCheck(Model):
    name = "short_start_check"

    def check_wait_ms(self, st):
        return st.params.ttl_ms


MODEL = ShortStartCheck()
step = MODEL.step
