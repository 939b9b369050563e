"""LEASE-2 (T-4, NL-2, NL-3) on hand-made histories of world facts: every lease-write attempt answered
within A of its send on the writer's clock, and lease writes every P (within an attempt's end)."""

from __future__ import annotations

from factkit import ev, finish, history

from checkers import lease_attempts
from model.params import Params

P = Params()  # P 3 s, A 2 s
KEY = "nodes/n0"


def _attempt(h, sent: int, answered: int, status: str = "ok") -> None:
    ev(h, answered, 0, "record_reply", key=KEY, op="PUT", status=status, state=f"live i0 {sent}", serial=1,
       named_serial=0, sent_ms=sent)


def _cadence(every_ms: int, n: int = 6, end_ms: int | None = None):
    h = history(("n0", "i0"), end_ms=end_ms or (n * every_ms + 1_000))
    for k in range(n):
        _attempt(h, 1_000 + k * every_ms, 1_000 + k * every_ms + 30)
    return finish(h)


def test_lease_2_passes_writes_every_p_answered_within_a():
    """LEASE-2: writes every P, each answered in 30 ms: nothing to say, slack A - 30 ms."""
    h = _cadence(P.period_ms)
    assert lease_attempts.check(h) == []
    assert lease_attempts._judge(h)[1:] == (P.attempt_timeout_ms + lease_attempts.ROUNDING_MS - 30,
                                            max(P.period_ms, P.attempt_timeout_ms) + 1 - P.period_ms)


def test_lease_2_a_an_attempt_longer_than_a():
    """LEASE-2 (a), T-4: an attempt timed out 2 A after its send is flagged, naming it."""
    h = history(("n0", "i0"), end_ms=10_000)
    _attempt(h, 1_000, 1_030)
    _attempt(h, 4_000, 4_000 + 2 * P.attempt_timeout_ms, "timed_out")
    _attempt(h, 8_000, 8_020)
    h = finish(h)
    out = lease_attempts.check(h)
    assert len(out) == 1 and out[0].message.startswith("(a) n0/i0's lease write sent at 4.000 s")
    assert lease_attempts._judge(h)[1] < 0


def test_lease_2_e_a_period_skipped():
    """LEASE-2 (e), NL-2: lease writes every 2 P (a tick lost) are flagged; every P is not."""
    out = lease_attempts.check(_cadence(2 * P.period_ms))
    assert len(out) == 1 and out[0].message.startswith("(e) n0/i0 sent a lease write at 1.000 s and the next at 7.000 s")


def test_lease_2_e_a_pause_or_a_stop_excuses_the_gap():
    """LEASE-2 (e): a gap across the writer's own pause, or after it was told to stop, is no violation."""
    h = history(("n0", "i0"), end_ms=30_000)
    _attempt(h, 1_000, 1_030)
    ev(h, 2_000, 0, "fault", what="pause", target="m0", ms=8_000, detail="", state=None)
    _attempt(h, 10_500, 10_530)
    ev(h, 11_000, 0, "told", command="stop")
    assert lease_attempts.check(finish(h)) == []
