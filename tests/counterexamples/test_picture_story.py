"""The story beside the picture (issue 27): a node's routine runs folded between its faults.

On the shrunk counterexample of unconditional_fence (a stored plan, tests/plans/pinned/: two nodes
renewing in turn, seven faults; INV-3) and on a scripted node serving one actor every 500 ms: nothing is lost by
the folds, nothing foldable is left unfolded, and every fault is told in its place.
"""

from __future__ import annotations

import re

import pytest

import pinned
from counterexamples.shrink import violations
from counterexamples.story import FAULTS, TOLD, _renewal, tell


FENCE = "story-unconditional-fence"  # unconditional_fence's counterexample (INV-3), shrunk from seed 0's run


def _fence(name: str = FENCE):
    """(history, its INV-3 violation) of the stored plan `name` (tests/plans/pinned/)."""
    history = pinned.run(name)
    return history, next(v for v in violations(history) if v.invariant == "INV-3")


@pytest.fixture(scope="module")
def serving():
    """(history, a stand-in violation at its last request served) of a scripted world: n0 serves t0/c/a0
    every 500 ms from 20 s to 40 s, and a reply to its lease write is lost at 30 s (FN-1's retry follows)."""
    from history import Violation
    from scenarios.script import NetRule, ScriptedWorld

    world = ScriptedWorld(nodes=2)
    for t_ms in range(20_000, 40_000, 500):
        world.at(t_ms, "request", "n0", "t0/c/a0")
    world.rule(NetRule("lose_reply", node="n0", op="PUT", key="nodes/", after_ms=30_000))
    history = world.run(until_ms=45_000)
    last = max(i for i, e in enumerate(history.events) if e.kind == "served")
    return history, Violation("INV-1", "a stand-in, to tell the story up to here", (last,))


def happened(story: str) -> list[str]:
    return story.split("What happened")[1].split("\nThe violation:")[0].strip().splitlines()[1:]


LINE = re.compile(r"^(..)\s*(\d+\.\d+) s  (\S+)\s+(.*)$")


def test_every_renewal_is_told_once_and_runs_are_folded_whole():
    """The renewals told (one a line, or N in a folded line) are the history's, every one; and no
    process has two renewal lines with nothing of its own between them unless a fault struck
    between, or one of them proves the violation."""
    _every_renewal_told(FENCE)


def _every_renewal_told(name: str) -> None:
    history, violation = _fence(name)
    lines = happened(tell(None, history, violation, limit=10_000))
    renewals = sum(1 for i in range(len(history.events)) if _renewal(history, i))
    told = 0
    last_of: dict[str, str] = {}  # process -> what its previous line was: "renewal", "fault" or "other"
    for line in lines:
        mark, _t, who, what = LINE.match(line).groups()
        folded = re.match(r"renews its node lease (\d+) times", what)
        single = re.match(r'wrote "live (\w+) \d+" to nodes/\S+ \(if-match #\d+, .*was "live (\w+) ', what)
        kind = "fault" if mark == " !" else "renewal" if folded or (single and single[1] == single[2]) else "other"
        told += int(folded[1]) if folded else 1 if kind == "renewal" else 0
        if kind == "renewal" and mark != ">>":
            assert last_of.get(who) != "renewal", f"{who}: two renewal lines in a row, unfolded: {line}"
        if kind == "fault" and who == "world":
            last_of = {}
        last_of[who] = kind if mark != ">>" else "other"
    assert told == renewals, (told, renewals)


def test_the_shrunk_fence_is_told_in_a_minute():
    """122 events, 7 faults: 52 lines of what happened before the per-node fold, 34 with it (under 40),
    with each of the 7 faults in its place and the unconditional fence marked."""
    _told_in_a_minute(FENCE)


def _told_in_a_minute(name: str) -> None:
    history, violation = _fence(name)
    lines = happened(tell(None, history, violation))
    faults = [i for i, e in enumerate(history.events) if e.kind in FAULTS]
    assert sum(1 for line in lines if line.startswith(" !")) == len(faults) > 0
    assert any(line.startswith(">>") and "(unconditional" in line for line in lines)
    unfolded = sum(1 for i, e in enumerate(history.events) if e.kind in TOLD + FAULTS or i in violation.events)
    assert len(lines) < 40 < unfolded, (len(lines), unfolded)


def test_a_node_serving_one_actor_is_one_line_per_run(serving):
    """Requests served at one generation, their segments written and acknowledged, fold into one line
    counting them; a run ends at a fault that strikes the node and at its other events."""
    history, violation = serving
    lines = happened(tell(None, history, violation))
    served = sum(1 for e in history.events if e.kind == "served")
    runs = [re.search(r"serves (\d+) requests for t0/c/a0 at generation 1, until (\d+\.\d+) s", line) for line in lines]
    singles = sum(1 for line in lines if re.search(r"  served t0/c/a0 at generation", line))
    assert sum(int(r[1]) for r in runs if r) + singles == served == 40
    shown = [line for line in lines if re.search(r"  (served|serves|data acked|a client asks)|to wal/", line)]
    assert len(shown) < served / 4, (len(shown), served)  # not four lines a request
    faults = [float(LINE.match(line)[2]) for line in lines if line.startswith(" !") and "n0/" in line]
    assert faults, "the lost reply is told"
    for line, run in zip(lines, runs):
        if run:
            start, until = float(LINE.match(line)[2]), float(run[2])
            assert not any(start < t < until for t in faults), f"a run folds over a fault: {line}"
