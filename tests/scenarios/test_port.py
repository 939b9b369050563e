"""The network and the port (issue 46, parts 1 and 2).

The fault kinds reach the world only through its port (scenarios/port.py): any other member, a private one
above all, fails here, naming the file and line. Their event hooks are methods of FaultKind found by
override. The network (scenarios/network.py) dispatches every request's fate through one table: a fate it
does not know is a loud error naming the kind that gave it. And `pauses`, written from the port alone, pauses
and crashes processes.
"""

from __future__ import annotations

import ast
import os

import pytest

from model.node import MODEL
from scenarios import faults
from scenarios.faults import KINDS, FaultKind
from scenarios.network import SEND_FATES, UnknownFate
from scenarios.port import PORT
from scenarios.sim import SimWorld

FAULTS = os.path.dirname(faults.__file__)


def _uses() -> list[tuple[str, int, str]]:
    """(file, line, member) for every member a kind's code reaches on the world (`w.X`, `world.X`)."""
    out = []
    for name in sorted(os.listdir(FAULTS)):
        if not name.endswith(".py"):
            continue
        path = os.path.join(FAULTS, name)
        for node in ast.walk(ast.parse(open(path).read(), path)):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in ("w", "world"):
                out.append((f"scenarios/faults/{name}", node.lineno, node.attr))
    return out


def test_the_kinds_reach_the_world_only_through_its_port():
    state = {attr for kind in KINDS.values() for attr in kind.state}
    uses = _uses()
    assert len(uses) > 200  # (a guard against a scan that reads nothing)
    private = [f"{f}:{n} w.{m}" for f, n, m in uses if m.startswith("_")]
    assert not private, "private world members used by fault kinds: " + ", ".join(private)
    outside = [f"{f}:{n} w.{m}" for f, n, m in uses if m not in PORT and m not in state]
    assert not outside, "world members used by fault kinds that the port does not name: " + ", ".join(outside)
    # a kind's own state is public and its own: no two kinds share an attribute, none shadows the port
    declared = [attr for kind in KINDS.values() for attr in kind.state]
    assert len(declared) == len(set(declared)) and not set(declared) & set(PORT)


def test_every_port_member_is_on_the_world():
    w = SimWorld(1, MODEL, "swarm")
    assert [name for name in PORT if not hasattr(w, name)] == []


def test_event_hooks_are_found_by_override():
    """A kind acts at a moment by overriding the base's method; the world installs it only then."""
    assert FaultKind().overrides("on_lease_acked") is False
    assert KINDS["deadline_races"].overrides("on_lease_acked") and not KINDS["crashes"].overrides("on_lease_acked")
    core = open(os.path.join(os.path.dirname(FAULTS), "core.py")).read()
    assert 'hasattr(k, "on_' not in core and "hasattr(k, 'on_" not in core
    seed = next(s for s in range(200) if KINDS["deadline_races"].active(SimWorld(s, MODEL, "swarm").options))
    w = SimWorld(seed, MODEL, "swarm")
    assert KINDS["deadline_races"].on_lease_acked in w.acked_hooks


def test_an_unknown_fate_is_a_loud_error_naming_the_kind(monkeypatch):
    kind = KINDS["fail_fast"]
    monkeypatch.setattr(kind, "send_early", lambda w, proc, req, f: ("teleported", 1))
    seed = next(s for s in range(200) if kind.active(SimWorld(s, MODEL, "swarm").options))
    with pytest.raises(UnknownFate, match=r"the fault kind fail_fast gave request .* the fate 'teleported'"):
        SimWorld(seed, MODEL, "swarm").run()
    assert set(SEND_FATES) == {"ok", "late", "lost", "fail_fast", "fast_5xx", "applied_5xx", "conflict", "sdk_retry"}


def test_the_network_passes_every_request_and_reply_to_its_observers():
    """Every request's route and every reply's fate pass one place, where a ledger can count them (issue 48)."""
    w = SimWorld(4, MODEL, "swarm")
    routes, replies = [], []
    w.network.observers.append(lambda proc, req, route: routes.append(route))
    w.network.reply_observers.append(lambda proc, req, reply, ms: replies.append(ms))
    w.run()
    assert w.bucket_requests >= len(routes) > 0.9 * w.bucket_requests  # (a race may hold a request: no route)
    assert len(replies) > 0 and all(ms is None or ms > 0 for ms in replies)


def _paused(then: str):
    """A calm world of two nodes whose n0 is paused for 3 ttl from 20 s, then resumes or is killed."""
    w = SimWorld(0, MODEL, "calm")
    w.options["pauses"] = [["n0", 20_000, 3 * w.params.ttl_ms, then]]
    return w, w.run()


@pytest.mark.parametrize("then", ["resume", "crash"])
def test_the_pause_kind_pauses_and_crashes_processes_written_from_the_port(then):
    """NL-4, NL-10: a paused process wakes to find its lease gone by its own clock, and no invariant breaks;
    killed as it wakes, its supervisor starts another instance."""
    from checkers.verdict import judge

    w, h = _paused(then)
    strikes = [e for e in h.events if e.kind == "fault" and e.fields.what == "pause"]
    assert len(strikes) == 1 and strikes[0].t_ms == 20_000 + (w.options["pauses"][0][1] - 20_000)
    n0 = strikes[0].proc
    length = 3 * w.params.ttl_ms
    # nothing reached it while paused: its first event after the pause is at or after it resumed
    during = [e for e in h.events if e.proc == n0 and strikes[0].t_ms < e.t_ms < strikes[0].t_ms + length
              and e.kind not in ("client", "apply", "refused", "conflicted", "fault")]  # (the world's and bucket's)
    assert during == []
    crashes = [e for e in h.events if e.kind == "crash" and e.proc == n0]
    if then == "crash":
        assert [e.t_ms for e in crashes] == [strikes[0].t_ms + length]
        assert sum(1 for p in h.processes if p.node_id == "n0") == 2  # restarted: a new instance
    else:
        assert crashes == [] and any(e.proc == n0 and e.kind == "lease_lost" for e in h.events)
    assert judge(h).violations == []
