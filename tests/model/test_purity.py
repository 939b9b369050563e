"""model/ is pure (STYLE.md 1, DESIGN.md): no clock, randomness, I/O, logging, simpy or boto3;
`step` never mutates the state it was given, and is deterministic.

The mutation checks compare a structural copy (nodekit.plain) taken before
and after each step; copy.deepcopy and pickle are checked on their own
(see test_state_can_be_deep_copied_and_pickled).
"""

from __future__ import annotations

import ast
import copy
import os
import pickle
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from model import Params, step
from model.io import (
    CONFLICT,
    DELETE,
    FAILED_FAST,
    GET,
    LIST,
    NOT_FOUND,
    OK,
    PRECONDITION_FAILED,
    PUT,
    TIMED_OUT,
    CancelTimer,
    Exit,
    Now,
    ProcessStarted,
    Reply,
    ReplyArrived,
    Send,
    SetTimer,
    TimerFired,
)
from model.records import OldHeartbeat, encode_old_heartbeat
from nodekit import fenced, live, plain, released

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODEL_DIR = os.path.join(REPO, "model")

FORBIDDEN = {
    # from the brief and STYLE.md 1: clocks, randomness, logging, the worlds, I/O
    "time", "random", "logging", "simpy", "boto3", "botocore", "os", "socket", "threading", "asyncio",
    "scenarios", "checkers", "runner", "datetime", "secrets", "uuid",
    # the same by other doors
    "subprocess", "multiprocessing", "concurrent", "importlib", "pathlib", "shutil", "tempfile",
    "signal", "select", "selectors", "urllib", "http", "requests", "io", "broken_models",
}
FORBIDDEN_CALLS = {"open", "print", "input", "__import__", "exec", "eval", "compile", "breakpoint", "hash"}


def model_files() -> list[str]:
    return sorted(os.path.join(MODEL_DIR, f) for f in os.listdir(MODEL_DIR) if f.endswith(".py"))


def absolute_imports(tree: ast.AST) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            out.append((node.lineno, node.module or ""))
    return out


@pytest.mark.parametrize("path", model_files(), ids=os.path.basename)
def test_model_module_imports_nothing_impure(path):
    """STYLE.md 1: no time, random, logging, simpy, boto3, os, ... anywhere in model/."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    bad = [f"{os.path.basename(path)}:{line}: import {name}"
           for line, name in absolute_imports(tree) if name.split(".")[0] in FORBIDDEN]
    assert bad == []


@pytest.mark.parametrize("path", model_files(), ids=os.path.basename)
def test_model_module_calls_no_io_builtins(path):
    """STYLE.md 1 and 9: no open/print/input, no dynamic import or eval, no hash() in model/."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    bad = [f"{os.path.basename(path)}:{node.lineno}: {node.func.id}()"
           for node in ast.walk(tree)
           if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS]
    assert bad == []


def test_importing_the_model_loads_nothing_impure_transitively():
    """What `import model` pulls in, in a fresh interpreter, includes none of the forbidden modules."""
    code = (
        "import sys; before = set(sys.modules); import model, model.records, model.params, model.io; "
        "print('\\n'.join(sorted(set(sys.modules) - before)))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    loaded = {m.split(".")[0] for m in out.stdout.split()}
    # dataclasses -> inspect loads importlib.machinery itself; the AST test covers model/ importing it
    assert loaded & (FORBIDDEN - {"io", "importlib"}) == set()
    assert "model" in loaded


# --- step never mutates its input and is deterministic ---------------------------------------------------

NODE = "n1"
OWN = "i-own"

bodies = st.one_of(
    st.builds(live, st.sampled_from([OWN, "i-other"]), st.integers(0, 300_000)),
    st.builds(fenced, st.sampled_from([OWN, "i-other", None]), st.integers(0, 300_000)),
    st.builds(released, st.sampled_from([OWN, "i-other"]), st.integers(0, 300_000)),
    st.builds(lambda w: encode_old_heartbeat(OldHeartbeat(1, NODE, w)), st.integers(0, 300_000)),
    st.sampled_from(["", "garbage", "wasmkeep-node 3\nalive x\n"]),
)
tokens = st.sampled_from(['"a"', '"b"', '"c"', '"w7"', '"r7"'])


def replies_for(send: Send):
    """A reply a bucket could give to this request (the world's contract: one reply per Send)."""
    op = send.request.op
    failures = st.sampled_from([Reply(TIMED_OUT), Reply(FAILED_FAST)])
    if op == GET:
        return st.one_of(st.builds(lambda v, b: Reply(OK, v, b), tokens, bodies), st.just(Reply(NOT_FOUND)), failures)
    if op in (PUT, DELETE):
        return st.one_of(st.builds(lambda v: Reply(OK, v), tokens),
                         st.sampled_from([Reply(PRECONDITION_FAILED), Reply(CONFLICT), Reply(NOT_FOUND)]), failures)
    if op == LIST:
        entries = st.lists(st.tuples(st.sampled_from(["nodes/n1", "nodes/n2", "nodes/n3"]), tokens),
                           max_size=3, unique_by=lambda e: e[0]).map(lambda es: tuple(sorted(es)))
        return st.one_of(st.builds(lambda es: Reply(OK, entries=es), entries), failures)
    raise AssertionError(f"unknown op {op}")


def drive(data, steps: int, check) -> None:
    """Run one node through `steps` inputs the bucket and clock choose; call check(state, inp, now)
    before each step with the state about to be given."""
    now = data.draw(st.integers(0, 1_000_000), label="start")
    params = Params()
    inp = ProcessStarted(NODE, OWN, params)
    state = None
    inflight: dict[int, Send] = {}
    timers: dict[str, int] = {}
    for _ in range(steps):
        state, effects = check(state, inp, now)
        exited = False
        for e in effects:
            if type(e) is Send:
                inflight[e.request_id] = e
            elif type(e) is SetTimer:
                timers[e.key] = e.at_ms
            elif type(e) is CancelTimer:
                timers.pop(e.key, None)
            elif type(e) is Exit:
                exited = True
        if exited or not (inflight or timers):
            return
        choices = [("reply", rid) for rid in sorted(inflight)] + [("timer", k) for k in sorted(timers)]
        what, which = data.draw(st.sampled_from(choices), label="next")
        if what == "reply":
            send = inflight.pop(which)
            reply = data.draw(replies_for(send), label="reply")
            now += data.draw(st.integers(0, send.timeout_ms), label="delay")
            inp = ReplyArrived(which, reply)
        else:
            now = max(now, timers.pop(which))
            inp = TimerFired(which)


def checked_step(state, inp, now):
    before = plain(state)
    new, effects = step(state, inp, Now(now, now))
    assert plain(state) == before, f"step mutated its input state on {inp!r}"
    again, effects2 = step(state, inp, Now(now, now))
    assert again == new and effects2 == effects, f"step is not deterministic on {inp!r}"
    assert plain(state) == before
    return new, effects


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_step_never_mutates_its_input_and_is_deterministic(data):
    """DESIGN.md: step never mutates the state it was given; the same state, input and time give
    equal outputs (over Hypothesis-chosen reply sequences, timers and delays)."""
    drive(data, 60, checked_step)


def test_step_never_mutates_its_input_over_a_long_calm_run():
    """The same, on a long hand-made run: start, check, first write, many acknowledged writes."""
    from nodekit import Node

    n = Node()  # Node.feed compares plain(state) before and after every step
    n.start_running()
    for i in range(20):
        rid, _ = n.tick()
        n.reply(rid, Reply(OK, f'"v{i + 2}"'), n.now + 10)
    assert n.exit is None


def test_step_does_not_depend_on_hash_seed():
    """STYLE.md 9: the effects of a fixed input sequence are the same under any PYTHONHASHSEED."""
    code = (
        "from nodekit import Node; from model.io import Reply\n"
        "n = Node(); n.start_running()\n"
        "for i in range(5):\n"
        "    rid, _ = n.tick(); n.reply(rid, Reply('ok', '\"v%d\"' % i), n.now + 10)\n"
        "print(repr([(t, e) for t, e in n.log]))\n"
    )
    outs = set()
    for seed in ("0", "7", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=os.pathsep.join([REPO, os.path.join(REPO, "tests", "kits")]))
        r = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, check=True)
        outs.add(r.stdout)
    assert len(outs) == 1


def test_state_can_be_deep_copied_and_pickled():
    """A model state is plain immutable data (model.io): it copies and pickles like any value."""
    state, _ = step(None, ProcessStarted(NODE, OWN, Params()), Now(1_000, 1_000))
    assert copy.deepcopy(state) == state
    assert pickle.loads(pickle.dumps(state)) == state
