"""Reading a history in scripted-scenario tests: events by kind, node, process and time.

Shared by tests/scenarios/test_scenarios_*.py. Events are `Event(t_ms, proc, kind, fields)`, the fields named
by kind (history/schema.py); `evs` returns `Found(i, t_ms, proc, fields)` so an assertion can point
at the event it found.
"""

from __future__ import annotations

from typing import NamedTuple

from checkers import check_all

A0 = "t0/c/a0"
OFFSET_MS = 100_000  # every machine's clock in a scripted world: true time + 100 s


class Found(NamedTuple):
    i: int  # the event's index in the history
    t_ms: int
    proc: int
    fields: tuple  # named: FIELDS[kind]


def evs(h, kind=None, node=None, proc=None, since=None, until=None, where=None):
    """Events as Found(i, t_ms, proc, fields), filtered (`where`: a test of the named fields)."""
    out = []
    for i, (t, p, k, f) in enumerate(h.events):
        if kind is not None and k != kind and not (isinstance(kind, tuple) and k in kind):
            continue
        if proc is not None and p != proc:
            continue
        if node is not None and (p < 0 or h.processes[p].node_id != node):
            continue
        if since is not None and t < since:
            continue
        if until is not None and t >= until:
            continue
        if where is not None and not where(f):
            continue
        out.append(Found(i, t, p, f))
    return out


def one(h, kind, **kw):
    found = evs(h, kind, **kw)
    assert len(found) == 1, f"expected one {kind} {kw}, found {len(found)}\n{h.timeline()}"
    return found[0]


def procs(h, node_id):
    """Indexes of the processes that served `node_id`, in start order."""
    return [p for p, pr in enumerate(h.processes) if pr.node_id == node_id]


def applies(h, key, **kw):
    """Bucket writes that took effect on `key` (fields: key, op, cond, prev_serial, named_serial, serial, state,
    prev_state, sent_ms)."""
    return evs(h, "apply", where=lambda f: f.key == key, **kw)


def owner_state(node, instance, generation):
    return f"held {node} {instance} {generation}"


def assert_clean(h):
    violations = check_all(h)
    assert violations == [], "\n".join(v.explain(h) for v in violations) + "\n" + h.timeline()


def invariants(h):
    return {v.invariant for v in check_all(h)}


def true_ms(local_ms):
    return local_ms - OFFSET_MS


def broken(name):
    """A broken model (or a documented survivor) the way the runner loads one, with its module."""
    from broken_models import load, load_model

    return load_model(name), load(name)
