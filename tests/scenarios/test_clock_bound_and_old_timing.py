"""Issue 39, parts 1 and 2: every process's clock at the skew bound (T-1), and the old binary at its own
drawn cadence (section 6; UP-2's checker computing its test from the rule's text, not the model's code).
"""

from __future__ import annotations

import ast
import dataclasses
import pathlib

import model.upgrade
from checkers import start_guard
from checkers.coverage import reached
from checkers.upgrade_coverage import is_old
from model.node import MODEL
from scenarios.sim import run_seed
from scenarios.swarm import CLOCK_BOUND_SHARE, draw, draw_params

BOUND = "every clock at the bound"


def _drawn(seed: int, scenario: str = "swarm"):
    p = draw_params(seed, scenario=scenario)[0]
    return p, draw(seed, scenario, p)


def test_t1_every_clock_at_an_end_of_the_band_in_a_share_of_seeds():
    """T-1 at its bound: in about CLOCK_BOUND_SHARE of seeds every machine's clock without drift (the old
    binaries', the operator's, the twins', the replacement's too) sits at base - max_skew or base + max_skew,
    both ends in use; every clock stays within max_skew of true time in every seed (T-1)."""
    bound = 0
    for seed in range(300):
        p, o = _drawn(seed, "upgrade" if seed % 3 == 0 else "swarm")
        S, base = p.max_skew_ms, o["clock_base"]
        for m, (off, drift) in o["clocks"].items():
            if m != "omf":  # (the retired node's clock far ahead: outside the band on purpose, UP-2)
                assert abs(off - base) <= S, (seed, m)
        if o["clock_bound"]:
            bound += 1
            ends = {off - base for m, (off, drift) in o["clocks"].items() if not drift and m != "omf"}
            assert ends == {-S, S}, (seed, ends)
    assert abs(bound / 300 - CLOCK_BOUND_SHARE) < 0.1, bound


def test_the_bound_point_needs_a_gap_beside_a_node():
    """The point "every clock at the bound" (T-1, T-2): reached by a seed whose clocks are at the bound and
    that runs a process off the node machines; not by the same history with every clock on true time."""
    seed = next(s for s in range(50) if _drawn(s)[1]["clock_bound"])
    h = run_seed(seed, MODEL)
    assert BOUND in reached(h)
    flat = dataclasses.replace(h, processes=[dataclasses.replace(pr, offset_ms=0) for pr in h.processes], cache={})
    flat._sha = None
    assert BOUND not in reached(flat)


def test_the_old_binary_s_timing_is_drawn_in_upgrade_seeds():
    """Section 6: the old binaries' cadence is their own configuration, drawn in a share of upgrade seeds:
    3 s whatever the new timing, the new nodes' period, or three of it (UP-2's horizon barely covers it)."""
    beats = set()
    for seed in range(120):
        p, o = _drawn(seed, "upgrade")
        t = o["upgrade"]["old_timing"]
        if t is not None:
            hb = p.heartbeat_period_ms
            assert t[0] in (3_000, hb, 3 * hb) and t[1] in (None, p.ttl_ms // 4)
            beats.add("3s" if t[0] == 3_000 else "hb" if t[0] == hb else "3hb")
    assert beats == {"3s", "hb", "3hb"}


def test_the_old_binary_beats_at_its_drawn_period():
    """model/old_lease.py follows its drawn OldTiming in the world: an old binary's consecutive heartbeats
    (the applied ones, sent on its clock) are its drawn period apart, never the new nodes' period."""
    seed = next(s for s in range(60) if (t := _drawn(s, "upgrade")[1]["upgrade"]["old_timing"])
                and t[0] == 3 * _drawn(s, "upgrade")[0].heartbeat_period_ms)
    p, o = _drawn(seed, "upgrade")
    beat = o["upgrade"]["old_timing"][0]
    h = run_seed(seed, MODEL, "upgrade")
    sends: dict[int, list[int]] = {}
    for e in h.events:
        if (e.kind == "apply" and e.fields.op == "PUT" and e.fields.key.startswith("nodes/")
                and e.fields.state.startswith("node ") and is_old(h.processes[e.proc].machine)):
            sends.setdefault(e.proc, []).append(h.processes[e.proc].clock.local(e.fields.sent_ms))
    gaps = [b - a for v in sends.values() for a, b in zip(v, v[1:])]
    assert gaps and min(gaps) >= beat and gaps.count(beat) >= len(gaps) // 2, (beat, gaps[:10])
    assert "old beat at the guard's horizon" in reached(h)
    # the point needs an old binary's beats: the same history with its old processes on new machines misses it
    renamed = dataclasses.replace(h, processes=[dataclasses.replace(pr, machine="x" + pr.machine)
                                                if is_old(pr.machine) else pr for pr in h.processes], cache={})
    renamed._sha = None
    assert "old beat at the guard's horizon" not in reached(renamed)


def test_up2_s_checker_computes_its_test_from_the_rule_not_the_model(monkeypatch):
    """UP-2: checkers/start_guard.py imports nothing of model/ (it computes horizon + ttl + grace from the
    rule's text); a model whose horizon changes leaves the checker's test as it was."""
    source = pathlib.Path(__file__).resolve().parents[2] / "checkers" / "start_guard.py"  # (the module may be compiled)
    tree = ast.parse(source.read_text())
    imported = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)] + \
               [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert not [m for m in imported if m and m.split(".")[0] == "model"], imported
    p, _ = _drawn(0, "upgrade")
    before = start_guard.stale_after_ms(p)
    monkeypatch.setattr(model.upgrade, "old_heartbeat_horizon_ms", lambda params: 0)
    assert start_guard.stale_after_ms(p) == before == 3 * p.heartbeat_period_ms + p.ttl_ms + p.grace_ms
