"""One world core, two interpreters (scenarios/core.py, sim.py, s3.py).

The worlds share every method that is the same in both; each interpreter keeps only how time
passes and how a request reaches the bucket. These tests hold the code to that shape (no
method written twice, no world importing the command line), and pin what moved out of the
worlds into the model: the old binary's garbage collection and the record state lines.
"""

from __future__ import annotations

import ast
import os

import pytest

from model.old_lease import gc_collectable
from model.records import OldLease, encode_marker, encode_old_lease, Marker, state_line

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCENARIOS = os.path.join(REPO, "scenarios")

# What an interpreter supplies to the core (scenarios/core.py, "What a world supplies"), and
# what a scripted world overrides: the only names two modules may both define.
HOOKS = {"__init__", "now", "later", "to_bucket", "remove_object", "read_bucket", "run", "counts",
         "scripted_fate", "schedule_script", "event_ms",
         "send"}  # (script.UpgradeWorld wraps it, calling the core's, to log every request sent)


def _definitions(path: str) -> dict[str, int]:
    """name -> line of every function and method a module defines."""
    tree = ast.parse(open(path).read())
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.setdefault(node.name, node.lineno)
    return out


def test_no_method_is_written_twice_in_the_worlds():
    modules = sorted(f for f in os.listdir(SCENARIOS) if f.endswith(".py"))
    seen: dict[str, str] = {}
    twice = []
    for module in modules:
        for name, line in _definitions(os.path.join(SCENARIOS, module)).items():
            if name in HOOKS:
                continue
            if name in seen:
                twice.append(f"{name}: {seen[name]} and {module}:{line}")
            else:
                seen[name] = f"{module}:{line}"
    assert twice == [], "defined in two modules of scenarios/: " + "; ".join(twice)


def test_the_worlds_import_nothing_from_the_command_line():
    for module in sorted(f for f in os.listdir(SCENARIOS) if f.endswith(".py")):
        tree = ast.parse(open(os.path.join(SCENARIOS, module)).read())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                assert name.split(".")[0] not in ("runner", "reporting"), f"scenarios/{module} imports {name}"


def test_both_interpreters_take_every_shared_method_from_the_core():
    from scenarios.core import World
    from scenarios.s3 import S3World
    from scenarios.sim import SimWorld

    # the core and the parts it is made of (processes, workload, quiet phase)
    shared = {n for cls in World.__mro__ if cls is not object for n, v in vars(cls).items()
              if callable(v) and n not in HOOKS}
    assert len(shared) > 40
    for name in shared:
        assert getattr(SimWorld, name) is getattr(World, name), name
        assert getattr(S3World, name) is getattr(World, name), name


def test_the_old_gc_rule_is_the_model_s():
    """The old garbage collection (ADR 0012, before) deletes released old leases whose actor's
    segments still carry the lease's generation, and nothing else: not a held lease, not a
    marker, not a lease whose generation no segment carries."""
    leases = {
        "leases/t0/c/a0": encode_old_lease(OldLease("n0", 3, 0)),  # released, segments at 3: collectable
        "leases/t0/c/a1": encode_old_lease(OldLease("n0", 4, 0)),  # released, segments only at 2: kept
        "leases/t0/c/a2": encode_old_lease(OldLease("n1", 1, 99_000)),  # held: kept
        "leases/t0/c/a3": encode_marker(Marker(5)),  # a marker: kept
        "leases/t0/c/a10": encode_old_lease(OldLease("n1", 1, 0)),  # no segments (a1's are not a10's): kept
    }
    data = ["wal/t0/c/a0/000003-i-00001", "wal/t0/c/a1/000002-i-00001", "wal/t0/c/a3/000009-i-00001",
            "wal/t0/c/a2/000001-i-00001"]
    assert gc_collectable(leases, data) == ["leases/t0/c/a0"]


def test_state_lines_are_read_beside_the_codecs():
    assert state_line("wasmkeep-node 3\nfenced ab12\nwritten_at_ms 77\nnode n1\n") == "fenced ab12 77"
    assert state_line("wasmkeep-owner 1\nnobody 4\n") == "nobody 4"
    assert state_line("wasmkeep-node 2\nnode n1\nwritten_at_ms 5\n") == "node n1"
    assert state_line("") == ""


def test_the_quiet_phase_resumes_the_drains_the_world_asked_for():
    """The world keeps its own note of the drains it asked for (it never reads the model's state):
    a node still draining when the quiet phase begins is told to resume, and serves again."""
    from model import MODEL
    from scenarios.script import ScriptedWorld

    world = ScriptedWorld(nodes=2, model=MODEL)
    world.at(20_000, "command", "n0", "drain")
    world.options["quiet_ms"] = 60_000
    world.options["quiet_crash"] = False
    h = world.run(until_ms=30_000)
    proc = world.live_proc("n0")
    assert proc is not None and proc.draining is False and proc.state.draining is False
    drained = [e for e in h.events if e[2] == "drain_began"]
    assert drained, "the drain was not delivered"


def _hanging(world) -> list:
    """Requests of live processes still unanswered well after their attempt timeout at the run's end."""
    end = world.now
    limit = world.params.attempt_timeout_ms + 2 * world.params.max_skew_ms + 10
    return [(p.label if hasattr(p, "label") else p.node_id, rid, sent) for p in world.procs if p.alive
            for rid, sent in p.pending.items() if sent < end - limit]


@pytest.mark.parametrize("scenario", ["lossy", "outages", "blip", "swarm"])
def test_lazy_timeouts_answer_every_request_the_reply_does_not(scenario):
    """The SimPy world schedules a timeout only once the reply will not come first (a lost request
    or reply, a late write, a slow reply, a reply cut off on arrival): no request of a live process
    is left waiting past its timeout (NL-11 and OR-7 rely on the timeout answering)."""
    from model import MODEL
    from scenarios.sim import SimWorld

    assert SimWorld.lazy_timeouts
    for seed in range(6):
        world = SimWorld(seed, MODEL, scenario)
        world.run()
        assert _hanging(world) == [], (scenario, seed)


def test_the_hanging_check_sees_a_timeout_never_scheduled(monkeypatch):
    """The check above can fail: with the reply path's scheduling switched off, requests whose
    replies were lost wait for ever."""
    from model import MODEL
    from scenarios.sim import SimWorld

    monkeypatch.setattr(SimWorld, "_deadline_due", lambda self, proc, rid, answered_at: None)
    hung = []
    for seed in range(6):
        world = SimWorld(seed, MODEL, "lossy")
        world.run()
        hung += _hanging(world)
    assert hung


def test_a_stream_draws_the_numbers_random_draws():
    """`Stream.randint` and `Stream.below` inline CPython's draw over `getrandbits` (the world's most
    called draws), and `World.delay` inlines `randint(1, delay_ms_max)` over the network's stream: the
    same numbers as `Random.randint` and `Random.randrange`, in the same order, whatever the range, and
    the same state left behind for the draws that follow."""
    import random

    from scenarios.core import World
    from scenarios.streams import Stream

    ranges = [(0, 0), (1, 1), (0, 1), (1, 20), (3, 7), (0, 999), (50, 1_000), (1, 2**31), (7, 2**40 + 3)]
    for seed in range(30):
        ours, theirs = Stream(seed), random.Random(seed)
        for _ in range(100):
            for a, b in ranges:
                assert ours.randint(a, b) == theirs.randint(a, b)
                assert ours.below(b + 1) == theirs.randrange(b + 1)
        assert ours.random() == theirs.random()
        world, theirs = object.__new__(World), random.Random(seed)
        world._net_bits = random.Random(seed).getrandbits
        for n in (1, 5, 20, 60, 120):
            world._delay_ms_max = n
            assert [world.delay() for _ in range(50)] == [theirs.randint(1, n) for _ in range(50)]
    with pytest.raises(ValueError):
        ours.below(0)


def test_each_part_draws_from_a_stream_of_its_own():
    """A part's stream is derived from the seed and the part's name by sha256 (never `hash()`): the same
    numbers in any process, two parts' streams unrelated, and a planned run's streams refuse every draw."""
    import hashlib
    import random

    from scenarios.streams import Streams, derive

    assert derive(7, "network") == int.from_bytes(hashlib.sha256(b"7/network").digest(), "big")
    s = Streams(7)
    assert s["network"].random() == random.Random(derive(7, "network")).random()
    assert s["network"] is s["network"] and s["network"] is not s["requests"]
    assert [s["requests"].random() for _ in range(3)] != [Streams(7)["network"].random() for _ in range(3)]
    planned = Streams(7, planned=True)
    with pytest.raises(RuntimeError, match="a random draw \\(requests\\) in a planned run"):
        planned["requests"].randint(1, 2)
