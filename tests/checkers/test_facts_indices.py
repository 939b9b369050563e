"""The facts' shared indices (checkers/facts.py) answer as the scans and calls they replace (issue 46, part 5:
judging at a lower cost, the same verdicts): `keyed` as a scan of every event of its kinds filtered by key
prefix, `held_spans` as `valid_hold` (NL-4, OR-3, OR-4: a hold is valid while its record names it and its
process's node lease, unlapsed since it was acquired, is valid), at every act and at every edge of every hold
and lease window, where an off-by-one would show."""

from __future__ import annotations

from bisect import bisect_right

import pytest

from broken_models import load_model
from checkers.facts import facts, keyed
from scenarios.sim import run_seed

# swarm seeds with crowds, lapses and old binaries among them (each a few hundred acts)
SEEDS = (0, 3, 7, 8, 122)


@pytest.fixture(scope="module", params=SEEDS)
def history(request):
    return run_seed(request.param, load_model("correct"))


def test_keyed_is_the_scan_it_replaces(history):
    events = history.events
    for kinds in (("apply",), ("record_reply",), ("apply", "fault_delete", "fault_put")):
        for prefix in ("nodes/", "owners/", "leases/", "wal/"):
            scan = [i for i in history.of_kind(*kinds) if str.startswith(events[i].fields.key, prefix)]
            assert keyed(history, prefix, *kinds) == scan, (kinds, prefix)
    assert keyed(history, "owners/", "record_reply"), "a swarm seed answers owners/ requests"


def _held(spans, t: int) -> bool:
    if spans is None:
        return False
    k = bisect_right(spans[0], t) - 1
    return k >= 0 and t < spans[1][k]


def test_held_spans_answer_as_valid_hold(history):
    fx = facts(history)
    held = fx.held_spans()
    probes: set[tuple[int, str, int]] = {(p, actor, t) for t, p, actor, _what, _i in fx.acts}
    for h in fx.holds:
        for t in (h.start_ms, h.end_ms, h.lapse_ms):
            probes |= {(h.proc, h.actor, t + d) for d in (-1, 0, 1)}
        for s, e, _i in fx.lease.get(h.proc, ()):
            probes |= {(h.proc, h.actor, t + d) for t in (s, e) for d in (-1, 0, 1)}
    valid = 0
    for p, actor, t in sorted(probes):
        expected = fx.valid_hold(p, actor, t) is not None
        assert _held(held.get((p, actor)), t) == expected, (p, actor, t)
        valid += expected
    assert 0 < valid < len(probes), "the probes meet valid and invalid instants both"
