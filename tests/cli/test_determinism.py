"""Determinism is a feature (STYLE.md 9, DESIGN.md): one seed gives one byte-identical history, in
one process or another, under any PYTHONHASHSEED, with one worker or several."""

from __future__ import annotations

import copy
import json
import marshal
import os
import subprocess
import sys

import pytest

from history.record import HASH_VERSION
from history.schema import event
from model import MODEL
from scenarios.presets import SCENARIOS
from scenarios.sim import run_seed

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEEDS = (0, 3, 7)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_seed_twice_in_one_process_gives_the_same_history(seed):
    a = run_seed(seed, MODEL, "swarm", None, "correct")
    b = run_seed(seed, MODEL, "swarm", None, "correct")
    assert a.encode() == b.encode()
    assert a.sha256() == b.sha256()


def test_different_seeds_give_different_histories():
    hashes = {run_seed(s, MODEL, "swarm", None, "correct").sha256() for s in SEEDS}
    assert len(hashes) == len(SEEDS)


def test_hash_does_not_depend_on_pythonhashseed():
    """The same seed in subprocesses under PYTHONHASHSEED=7 and 4242 hashes as in this process."""
    here = {s: run_seed(s, MODEL, "swarm", None, "correct").sha256() for s in SEEDS}
    code = (
        "import json; from model import MODEL; from scenarios.sim import run_seed; "
        f"print(json.dumps({{s: run_seed(s, MODEL, 'swarm', None, 'correct').sha256() for s in {SEEDS!r}}}))"
    )
    for hash_seed in ("7", "4242"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        there = {int(k): v for k, v in json.loads(out.stdout).items()}
        assert there == here, f"PYTHONHASHSEED={hash_seed}"


def test_runner_digest_is_the_same_with_one_worker_or_two(tmp_path, capsys):
    """The report's history_digest does not depend on --workers (processes, not threads)."""
    from nodelease.cli import main

    digests = {}
    for workers in ("1", "2"):
        path = tmp_path / f"w{workers}.json"
        rc = main(["run", "--seeds", "20", "--workers", workers, "--report", str(path)])
        assert rc == 0, capsys.readouterr().out[-2000:]
        report = json.loads(path.read_text())
        assert report["counts"]["seeds_run"] == 20
        digests[workers] = (report["history_digest"], report["seed_hashes"])
    assert digests["1"] == digests["2"]


@pytest.mark.parametrize("seed", SEEDS)
def test_the_hashed_events_are_json_s_encoding_of_the_events_themselves(seed):
    # History.encode (version 1, every report and plan before hash_version) hands json plain tuples (a named
    # tuple is copied into a list before json writes it): the bytes, and so every older report's digest, must be
    # those of the events as recorded
    h = run_seed(seed, MODEL, "swarm", None, "correct")
    body = json.dumps(h.events, separators=(",", ":"))
    assert h.encode(version=1).split(b"\n")[1] == body.encode()


@pytest.mark.parametrize("seed", SEEDS)
def test_the_hash_of_encoding_2_is_marshal_s_of_the_events_as_plain_data(seed):
    """Version 2 (HASH_VERSION): the events by marshal at version 2 after the header and the rules as JSON. A
    history made anew from plain data (other objects, other strings: none of them interned or shared as the
    world's are) gives the same bytes."""
    h = run_seed(seed, MODEL, "swarm", None, "correct")
    assert HASH_VERSION == 2 and h.sha256() == h.sha256(2) != h.sha256(1)
    data = h.encode()
    assert data.startswith(b"v2\n") and data.split(b"\n", 3)[3] == marshal.dumps(
        [(t, p, k, tuple(f)) for t, p, k, f in h.events], 2)
    same = copy.copy(h)
    same._sha, same.cache = None, {}
    same.events = [event(t, p, "".join(list(k)), tuple(_fresh(v) for v in f)) for t, p, k, f in
                   json.loads(json.dumps(h.events))]
    # (json gives lists where the world wrote tuples: the world's own types, put back)
    same.events = [event(t, p, k, tuple(v if type(o) is not tuple else tuple(v) for v, o in zip(f, e.fields)))
                   for (t, p, k, f), e in zip(same.events, h.events)]
    assert same.events == h.events and same.encode() == data and same.sha256() == h.sha256()


def _fresh(v):
    """`v` made again of new objects (a string rebuilt character by character: not the interned one)."""
    if isinstance(v, str):
        return "".join(list(v))
    if isinstance(v, list):
        return [_fresh(x) for x in v]
    return v


def test_every_event_field_is_in_the_hash():
    """A change to any field of any event, or to its time, process or kind, changes the hash (both encodings)."""
    h = run_seed(3, MODEL, "swarm", None, "correct")
    seen = set()
    for i, (t, p, kind, fields) in enumerate(h.events):
        if kind in seen:
            continue
        seen.add(kind)
        changes = [(t + 1, p, kind, fields), (t, p + 1, kind, fields)]
        for j, v in enumerate(fields):
            other = (v + "x" if isinstance(v, str) else v + 1 if type(v) is int else not v if isinstance(v, bool)
                     else 0 if v is None else type(v)(list(v) + ["x"]) if isinstance(v, (list, tuple)) else None)
            changes.append((t, p, kind, fields[:j] + (other,) + fields[j + 1:]))
        for c in changes:
            g = copy.copy(h)
            g._sha, g.cache = None, {}
            g.events = h.events[:i] + [event(*c)] + h.events[i + 1:]
            for version in (1, 2):
                assert g.sha256(version) != h.sha256(version), (kind, c)
    assert len(seen) > 20


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_no_event_field_holds_a_set_or_a_tuple_s_subclass(scenario):
    """marshal would write a set in its iteration order (PYTHONHASHSEED's) and refuses a named tuple: no world
    puts either in an event's fields (the fields themselves are the kind's named tuple, sliced plain)."""
    def walk(v, where):
        assert not isinstance(v, (set, frozenset)), where
        assert type(v) in (str, int, float, bool, type(None), list, tuple, dict), (where, type(v))
        if isinstance(v, (list, tuple)):
            for x in v:
                walk(x, where)
        elif isinstance(v, dict):
            for k, x in v.items():
                walk(k, where)
                walk(x, where)

    for seed in range(3):
        h = run_seed(seed, MODEL, scenario, None, "correct")
        for e in h.events:
            for name, v in zip(e.fields._fields, e.fields):
                walk(v, f"{scenario} seed {seed} {e.kind}.{name}")
        h.encode()
