"""Timing parameters of the protocol (T-1..T-6) and their validation.

A configuration that breaks T-2, T-3, T-4 or T-6 is refused with a message that
names the rule. Everything is in integer milliseconds.
"""

from __future__ import annotations

from dataclasses import dataclass, fields


class ParamsError(ValueError):
    """A configuration the protocol refuses; the message names the rule."""


@dataclass(frozen=True, slots=True)
class Params:
    # T-1 defaults
    ttl_ms: int = 10_000
    grace_ms: int = 5_000
    safety_ms: int = 2_000
    max_skew_ms: int = 1_000
    # T-3: the configured heartbeat period; the lease period is min(this, ttl / 3)
    heartbeat_period_ms: int = 3_000
    # T-4: the implementation's default attempt timeout
    attempt_timeout_ms: int = 2_000

    @property
    def period_ms(self) -> int:
        """T-3: P = min(heartbeat period, ttl / 3)."""
        return min(self.heartbeat_period_ms, self.ttl_ms // 3)

    @property
    def lease_span_ms(self) -> int:
        """NL-4: a lease is valid ttl - safety after the send of the acknowledged write."""
        return self.ttl_ms - self.safety_ms

    @property
    def takeover_ms(self) -> int:
        """T-5 / FN-5: ttl + grace."""
        return self.ttl_ms + self.grace_ms

    @property
    def handed_recheck_ms(self) -> int:
        """BD-5: a handed alarm is looked at again after 30 s, or twice ttl + grace if that is longer
        (the sender's release may be pending; its record frees on the release or a fence). Alarms
        are outside this model until an issue asks for them; the bound is kept beside the others."""
        return max(30_000, 2 * self.takeover_ms)

    def to_dict(self) -> dict[str, int]:
        # (every field an int: `asdict`'s deep copy of each value cost 65,000 instructions a call, and a campaign
        # validates every seed's draw with it before the first runs)
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, d: dict) -> "Params":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ParamsError(
                f"unknown parameter {unknown[0]!r} (known: {', '.join(sorted(known))})"
            )
        for k, v in d.items():
            if not isinstance(v, int) or isinstance(v, bool):
                raise ParamsError(f"parameter {k} must be an integer number of ms, got {v!r}")
        return validate(cls(**d))


def validate(p: Params) -> Params:
    """Return `p` if the protocol accepts it; raise ParamsError naming the rule otherwise."""
    for f in fields(p):
        v = getattr(p, f.name)
        if v < 0:
            raise ParamsError(f"{f.name} must not be negative, got {v}")
        if v == 0 and f.name in ("ttl_ms", "heartbeat_period_ms", "attempt_timeout_ms"):
            raise ParamsError(f"{f.name} must be positive, got {v}")
    if p.safety_ms >= p.ttl_ms:
        raise ParamsError(f"NL-4: safety_ms ({p.safety_ms}) must be below ttl_ms ({p.ttl_ms})")
    # T-2
    if p.grace_ms + p.safety_ms < 2 * p.max_skew_ms:
        raise ParamsError(
            f"T-2: grace_ms + safety_ms ({p.grace_ms} + {p.safety_ms}) must be at least "
            f"2 * max_skew_ms ({2 * p.max_skew_ms})"
        )
    # T-3: a heartbeat period above ttl / 3 is refused
    if 3 * p.heartbeat_period_ms > p.ttl_ms:
        raise ParamsError(
            f"T-3: heartbeat_period_ms ({p.heartbeat_period_ms}) must be at most ttl_ms / 3 "
            f"({p.ttl_ms / 3:g})"
        )
    # T-4
    if 3 * p.attempt_timeout_ms > p.ttl_ms - p.safety_ms:
        raise ParamsError(
            f"T-4: attempt_timeout_ms ({p.attempt_timeout_ms}) must be at most "
            f"(ttl_ms - safety_ms) / 3 ({(p.ttl_ms - p.safety_ms) / 3:g})"
        )
    # T-6 (this project's, from ADR section 5's arithmetic; a question to its authors, Q-8): a write sent a
    # period after an acknowledged one has its whole attempt before the lease runs out
    if p.period_ms + p.attempt_timeout_ms > p.lease_span_ms:
        raise ParamsError(
            f"T-6: the lease period P ({p.period_ms}) plus attempt_timeout_ms ({p.attempt_timeout_ms}) must be at "
            f"most ttl_ms - safety_ms ({p.lease_span_ms}): otherwise the lease runs out between two writes (Q-8)"
        )
    return p


DEFAULT = Params()
