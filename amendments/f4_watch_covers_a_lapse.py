"""F-4: the fence watch lasts P + A + ttl, long enough for a peer whose validity ran out in a blip
to write again (amends FN-2's watch).

F-4: after a global blip shorter than B's remaining validity, B is no lapse of its own and may
fence A the moment A's validity ends, before A's first write after the blip lands. This variant
lengthens the watch by ttl, so B fences A only if A's object stays unchanged that much longer.
"""

from model.node import Model

ADDRESSES = "F-4"
KIND = "amendment"
RULES = ("FN-2",)
ADR = ("Section 2: B fences A only after watching it 'counted from B's first acknowledged lease write after any "
       "lapse of its own (so after a bucket outage every node first renews, and only then may judge the others)'")
PROPOSED = ("'... and for a full period plus an attempt timeout plus ttl, so a peer whose lease ran out during "
            "an outage B did not see renews first'")
PLANS = ("tests/plans/f4-fence-sent-before-the-fencer-lapsed.json",)


class WatchCoversALapse(Model):
    name = "f4_watch_covers_a_lapse"

    def watch_ms(self, st) -> int:
        return super().watch_ms(st) + st.params.ttl_ms


MODEL = WatchCoversALapse()
