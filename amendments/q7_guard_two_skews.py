"""Q-7: UP-2's guard gives a future-dated old heartbeat 2 * max_skew where the rule adds one (the
other reading of UP-2).

The guard compares an old node's written_at (its clock) with its own; a future-dated heartbeat
lapses at the latest horizon + ttl + grace + max_skew after this node first read it. This variant
adds 2 * max_skew: if both are safe, one skew suffices within the world's bounds.
"""

from model.node import Model

ADDRESSES = "Q-7"
KIND = "question"
RULES = ("UP-2",)
ADR = ("Section 6: 'A heartbeat whose written_at is in the future lapses at the latest horizon plus ttl plus "
       "grace plus max skew after this node first read that same body'")
PROPOSED = "'... lapses at the latest horizon plus ttl plus grace plus twice max skew after this node first read ...'"


class GuardTwoSkews(Model):
    name = "q7_guard_two_skews"

    def old_heartbeat_blocks(self, st, seen, now) -> int:
        base = super().old_heartbeat_blocks(st, seen, now)
        if seen.ahead:
            from model.upgrade import old_heartbeat_horizon_ms

            p = st.params
            span = old_heartbeat_horizon_ms(p) + p.takeover_ms
            left = min(seen.written_at_ms + span - now.wall_ms, seen.first_read_ms + span + 2 * p.max_skew_ms - now.mono_ms)
            return max(0, left, seen.held_until_ms - now.mono_ms)
        return base


MODEL = GuardTwoSkews()
