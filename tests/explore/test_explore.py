"""The exhaustive explorer (issue 15): it finds the named broken models' violations (BM-1, BM-2,
BM-3) with 2 nodes and 1 actor, writes each as a plan the SimPy world replays byte for byte,
explores the correct model to exhaustion within small bounds, and stops cleanly at a budget.

Bounds are small so that each test takes seconds; the figures of larger explorations are in
docs/exhaustive.md.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from broken_models import load
from counterexamples.shrink import run_plan, violations
from explore.search import MARGINS, Bounds, Explorer, FidelityError
from history import event
from model import MODEL
from model.params import Params
from explorekit import BM1, BM2, CALM, UP_GC, UP_GUARD

PARAMS = Params(**MARGINS)
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def explore(model_name: str, **bounds):
    model = MODEL if model_name == "correct" else load(model_name).MODEL
    explorer = Explorer(model, model_name, PARAMS, Bounds(**bounds))
    return explorer, explorer.run()


def replayed(explorer, out, invariant: str):
    """The counterexample's plan, run in the SimPy world: it fails `invariant` with the same hash."""
    plan, history = explorer.counterexample(out)
    assert plan["invariant"] == invariant
    again = run_plan(plan)
    assert again.sha256() == plan["history_sha256"] == history.sha256()
    assert invariant in {v.invariant for v in violations(again)}
    return plan


def test_margins_meet_t2_t3_t4_with_equality():
    # the explored configuration sits on the bounds (T-2, T-3, T-4), where the timing bugs live
    p = PARAMS
    assert p.grace_ms + p.safety_ms == 2 * p.max_skew_ms
    assert 3 * p.heartbeat_period_ms == p.ttl_ms
    assert 3 * p.attempt_timeout_ms == p.ttl_ms - p.safety_ms


def test_bm1_unconditional_fence_found_and_replayed(explored):
    # FN-3 broken: an outage of n0 lets n1 fence it; the fence overwrites n0's record unconditionally
    explorer, out = explored("unconditional_fence", **BM1)
    assert out.status == "violation" and out.violation.invariant == "INV-3"
    plan = replayed(explorer, out, "INV-3")
    assert plan["options"]["outages"] and plan["source"]["path"]


def test_bm2_reused_generation_found_and_replayed(explored):
    # OR-3 broken: a hibernation's release is lost, the next request re-acquires at the same generation
    explorer, out = explored("reused_generation", **BM2)
    assert out.status == "violation" and out.violation.invariant == "INV-2"
    plan = replayed(explorer, out, "INV-2")
    assert [s[1] for s in plan["workload"]] == ["ask", "hibernate", "ask"]
    assert any(v == ["lost", 0] for v in plan["choices"].values())


@pytest.mark.slow
def test_bm3_unlocked_resolver_found_and_replayed():
    # OR-9 broken: an unresolved acquisition's resolver releases a second acquisition's live hold
    explorer, out = explore("unlocked_resolver", horizon_s=10, requests=2, faults=1, delays=[1, 500],
                            focus=["PUT owners/", "GET owners/"], offsets=[[0, 0]])
    assert out.status == "violation" and out.violation.invariant in ("INV-6", "INV-1")
    replayed(explorer, out, out.violation.invariant)


@pytest.mark.parametrize("model_name", ["drain_with_pending", "acquire_when_drained"])
def test_a_drain_finds_the_drain_models_and_replays(model_name):
    # OR-11 / CS-5 broken: a drained node keeps (or takes) an actor; the explorer drains one node
    # (then stops it cleanly) at each quantum and finds the run in which it still holds one (INV-5)
    explorer, out = explore(model_name, horizon_s=10, requests=1, faults=0, drains=1, delays=[1], offsets=[[0, 0]])
    assert out.status == "violation" and out.violation.invariant == "INV-5"
    plan = replayed(explorer, out, "INV-5")
    assert plan["options"]["drains"] and any("drain" in line for line in plan["source"]["path"])


def test_a_straggler_finds_stop_without_cut_and_replays():
    # CS-1 broken: a clean stop leaves its lease valid and cuts nothing; the explorer lets a served
    # request's event run until the process sends `released` (a straggler) and stops the node at each
    # quantum: the straggler's answer comes after `released` was sent
    explorer, out = explore("stop_without_cut", horizon_s=14, requests=1, faults=0, stops=1,
                            events=[0, None], delays=[1], offsets=[[0, 0]])
    assert out.status == "violation" and out.violation.invariant == "CS-1"
    plan = replayed(explorer, out, "CS-1")
    assert None in plan["choices"].values() and plan["options"]["stops"]


def test_the_correct_model_survives_every_stop_and_drain():
    # a clean stop (CS-1..CS-4) and a drain (OR-11, CS-5) at every quantum from 3 s, with one
    # request, on clocks at opposite ends of the skew band: no violation
    _, out = explore("correct", horizon_s=8, from_s=3, requests=1, faults=0, stops=1, drains=1, delays=[1],
                     offsets=[[1000, -1000]])
    assert out.status == "exhausted", out.violation and out.violation.message
    assert out.distinct > 1000


def test_the_correct_model_survives_a_stop_with_a_straggler(monkeypatch):
    # a clean stop at every quantum from 6.5 s (the nodes' leases are up), one request whose event
    # ends at once or runs on until `released` is sent: the correct model cuts the straggler first
    # (CS-1), and runs in which it does are judged
    import counterexamples.shrink as shrink

    cut = []
    real = shrink.violations
    monkeypatch.setattr(shrink, "violations", lambda h, strict=False: cut.extend(
        1 for e in h.of_kind("event_cut") if "clean stop" in h.events[e][3][3]) or real(h, strict))
    _, out = explore("correct", horizon_s=13.5, from_s=6.5, requests=1, faults=0, stops=1, events=[0, None],
                     delays=[1], offsets=[[1000, -1000]])
    assert out.status == "exhausted", out.violation and out.violation.message
    assert out.distinct > 500 and cut


def test_correct_model_is_exhausted_without_a_violation(explored):
    _explorer, out = explored("correct", **CALM)
    assert out.status == "exhausted", out.violation and out.violation.message
    assert out.combinations == 2 and out.distinct > 50
    # the same exploration twice: the same states
    _, again = explore("correct", **CALM)
    assert (again.distinct, again.states, again.depth) == (out.distinct, out.states, out.depth)


def test_every_generated_state_is_judged_those_that_meet_a_seen_state_too(monkeypatch):
    # a path that reaches a state seen before ends there: its own last steps are judged before it does
    import counterexamples.shrink as shrink

    judged = []
    real = shrink.violations
    monkeypatch.setattr(shrink, "violations", lambda h, strict=False: judged.append(len(h.events)) or real(h, strict))
    _, out = explore("correct", horizon_s=8, requests=1, faults=1, delays=[1], focus=["PUT owners/"],
                     offsets=[[0, 0]])
    assert out.status == "exhausted"
    assert out.states > out.distinct  # some paths met
    # (an injection's branches have, at their instant, one history: judged once, the verdict shared)
    assert len(judged) + out.shared_verdicts == out.states


def test_atomic_steps_count_each_callback_of_a_path_once_not_its_re_runs(monkeypatch):
    """`Outcome.steps` (the system states passed through between choice points, one per atomic
    step) is every callback that ran to its end, less the ones `decide` ran again to branch: counted
    here from outside, by wrapping the world's callbacks and `decide`."""
    from explore.world import ExploreWorld

    completed, rerun = [0], [0]
    pop, advance, decide = ExploreWorld.pop, ExploreWorld.advance, Explorer.decide

    def counted_pop(self):
        pop(self)
        completed[0] += 1

    def counted_advance(self):
        begun = self.begun
        advance(self)
        completed[0] += not begun  # the start; a begun world's advance is a pop, counted there

    def counted_decide(self, state, n, *args):
        rerun[0] += n  # the n callbacks before the decision, run again on a copy of `state`
        return decide(self, state, n, *args)

    monkeypatch.setattr(ExploreWorld, "pop", counted_pop)
    monkeypatch.setattr(ExploreWorld, "advance", counted_advance)
    monkeypatch.setattr(Explorer, "decide", counted_decide)
    _, out = explore("correct", horizon_s=8, requests=1, faults=1, delays=[1], focus=["PUT owners/"],
                     offsets=[[0, 0]])
    assert out.status == "exhausted"
    assert rerun[0] > 0 and out.steps == completed[0] - rerun[0]
    assert out.steps > 10 * out.states  # many atomic steps between two choice points
    # a run with no choice at all is one path: every callback is a step, none is run twice
    completed[0] = rerun[0] = 0
    _, calm = explore("correct", horizon_s=8, requests=0, faults=0, delays=[1], offsets=[[0, 0]])
    assert calm.status == "exhausted" and calm.distinct == 2 and rerun[0] == 0
    assert calm.steps == completed[0] == calm.callbacks + 1 > 1  # (the start is a step, not a callback)


def test_every_offset_combination_is_explored():
    b = Bounds(nodes=2)
    assert sorted(b.combinations(1000)) == sorted((a, c) for a in (-1000, 0, 1000) for c in (-1000, 0, 1000))


def test_a_budget_stops_cleanly():
    _, out = explore("correct", requests=1, faults=1, max_states=40, offsets=[[0, 0]])
    assert out.status == "stopped: 40 distinct states" and out.distinct >= 40


def test_the_digest_leaves_out_history_but_not_the_bucket():
    explorer, _ = explore("correct", requests=0, faults=0, delays=[1], offsets=[[0, 0]], horizon_s=1)
    w = explorer.initial((0, 0))
    while not w.begun or w.next_due() is not None and w.next_due() < 8_000:
        w.advance()
    assert "nodes/n0" in w.bucket.objects
    twin = w.clone()
    twin.history.add(w.t, -1, "quiet", ())
    assert twin.digest() == w.digest()
    twin.bucket.remove("nodes/n0")
    assert twin.digest() != w.digest()


def test_a_clone_shares_nothing_mutable():
    explorer, _ = explore("correct", requests=0, faults=0, delays=[1], offsets=[[0, 0]], horizon_s=1)
    w = explorer.initial((0, 0))
    w.advance()
    c = w.clone()
    before = w.digest()
    while c.next_due() is not None and c.next_due() < 5_000:
        c.advance()
    assert w.digest() == before and len(c.history.events) > len(w.history.events)


def test_a_growing_history_is_indexed_as_a_fresh_one_and_its_copy_apart():
    """The index by kind a path's history carries (issue 15: judged incrementally where possible)
    equals a fresh index of the same events at every step, and a branch's growth leaves its
    parent's index alone."""
    from history import History

    explorer, _ = explore("correct", requests=1, faults=0, delays=[1], offsets=[[0, 0]], horizon_s=1)
    w = explorer.initial((0, 0))
    kinds = ("apply", "refused", "fault", "lease_valid")
    while not w.begun or w.next_due() is not None and w.next_due() < 6_000:
        w.advance()
        fresh = History(0, "m", "s", {}, {}, events=list(w.history.events))
        for k in kinds:
            assert w.history.of_kind(k) == fresh.of_kind(k)
        assert w.history.of_kind(*kinds) == fresh.of_kind(*kinds)
    parent = list(w.history.of_kind("apply"))
    c = w.clone()
    while c.next_due() is not None and c.next_due() < 12_000:
        c.advance()
    assert len(c.history.of_kind("apply")) > len(parent) and w.history.of_kind("apply") == parent


def test_a_disagreement_with_the_simpy_world_is_loud(monkeypatch):
    explorer, out = explore("unconditional_fence", requests=0, faults=0, outages=1, delays=[1], offsets=[[0, 0]])
    out.world.history.events.insert(0, event(0, -1, "quiet"))  # what the SimPy world will not do
    with pytest.raises(FidelityError):
        explorer.counterexample(out)


def _cli(*args, env=None):
    return subprocess.run([sys.executable, "runner.py", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=300, env=env)


def test_cli_writes_a_counterexample_that_replays(tmp_path):
    report = tmp_path / "bm1.json"
    r = _cli("explore", "--model", "unconditional_fence", "--requests", "0", "--faults", "0", "--outages", "1",
             "--delays", "1", "--offsets", "0,0", "--report", str(report))
    assert r.returncode == 1, r.stderr
    assert "explore: violation" in r.stdout and "replay it in the simulated world" in r.stdout
    doc = json.loads(report.read_text())
    assert doc["status"] == "violation" and doc["distinct_states"] > 0
    cx = tmp_path / "bm1-INV-3.json"
    assert f"replay it in the simulated world: python runner.py replay {os.path.relpath(cx, REPO)}" in r.stdout
    r = _cli("replay", str(cx))
    assert r.returncode == 1 and "matches the counterexample: the replay is byte-identical" in r.stdout


def test_cli_exhausts_and_is_deterministic_across_hash_seeds(tmp_path):
    outs = []
    for hash_seed in ("0", "4242"):
        report = tmp_path / f"c{hash_seed}.json"
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        # (the old mode flag, as CI and docs/exhaustive.md run it)
        r = _cli("--explore", "--requests", "1", "--faults", "1", "--delays", "1", "--focus", "PUT owners/",
                 "--horizon-s", "9", "--offsets=-1000,1000", "--report", str(report), env=env)
        assert r.returncode == 0, r.stdout + r.stderr
        doc = json.loads(report.read_text())
        assert doc["status"] == "exhausted"
        outs.append((doc["distinct_states"], doc["states"], doc["depth"]))
    assert outs[0] == outs[1]


@pytest.mark.parametrize("args, message", [
    (["--offsets", "0,5000"], "skew band"),
    (["--offsets", "0"], "names 1 clocks for 2 nodes"),
    (["--delays", "0"], "--delays"),
    (["--faults", "-1"], "--faults: must be at least 0, got -1"),
    (["--explore-budget", "5", "--broken"], "--explore and --broken go one at a time"),
    (["--seeds", "5"], "explore takes no --seeds"),
    (["--nodes", "1", "--upgrade", "--offsets", "0"], "names 1 clocks for 1 nodes and 1 old ones"),
    (["--upgrade", "--old-stops", "halt"], "--old-stops"),
    (["--upgrade", "--gaps-ms", "-5"], "--gaps-ms"),
])
def test_cli_usage_errors_are_one_line(args, message, capsys):
    from nodelease.cli import main

    assert main(["--explore", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_every_injection_replays_in_the_simpy_world_event_for_event():
    # the explorer's world and the SimPy world are one core: a path with each kind of injection and
    # each fault, run as a plan in the SimPy world, gives the explorer's own events
    explorer = Explorer(MODEL, "correct", PARAMS, Bounds(horizon_s=12, requests=2, hibernations=1, crashes=1,
                                                         fences=1, outages=1, twins=1, deletes=1, stops=1,
                                                         drains=1, faults=2, events=[0, None],
                                                         delays=[1, 500], offsets=[[1000, -1000]]))
    kinds: dict = {}
    w = explorer.initial((1000, -1000))
    frontier = [w]
    for _ in range(400):  # a walk down the tree, taking the last successor of each: injections, then faults
        nexts = explorer.successors(frontier[-1])
        if not nexts:
            break
        for s in nexts:
            for line in s.path[len(frontier[-1].path):]:
                kinds.setdefault(line.split()[2].rstrip(":"), s)
        frontier.append(nexts[-1])
    assert {"ask", "hibernate", "crash", "fence", "outage", "twin", "stop", "drain", "delete"} <= set(kinds)
    for s in list(kinds.values()) + [frontier[-1]]:
        explorer.as_plan(s, s.t + 1)  # raises FidelityError on any difference


def test_worker_processes_explore_the_same_states_and_find_the_same_counterexample():
    bounds = dict(horizon_s=9, requests=1, faults=1, delays=[1], focus=["PUT owners/"],
                  offsets=[[0, 0], [1000, -1000], [-1000, 1000]])
    explorer = Explorer(MODEL, "correct", PARAMS, Bounds(**bounds))
    one, two = explorer.run(), explorer.run(workers=2)
    assert one.status == "exhausted"
    assert (two.status, two.distinct, two.states, two.steps, two.per_offsets) == (
        one.status, one.distinct, one.states, one.steps, one.per_offsets)
    broken = Explorer(load("unconditional_fence").MODEL, "unconditional_fence", PARAMS,
                      Bounds(requests=0, faults=0, outages=1, delays=[1], offsets=[[1000, 0], [0, 0]]))
    seq, par = broken.run(), broken.run(workers=2)
    assert par.status == seq.status == "violation"
    assert par.plan["history_sha256"] == broken.counterexample(seq)[0]["history_sha256"]


def test_the_progress_line_moves_while_worker_processes_explore():
    """Issue 15's progress line (depth, states, distinct, frontier) with worker processes: what each
    running combination last reported is shown before any combination ends, and never more than the
    exploration ends with (a report that arrives after its combination's outcome is not counted twice)."""
    seen = []
    bounds = Bounds(horizon_s=14, requests=1, faults=1, delays=[1], offsets=[[0, 0], [1000, -1000]])
    # (reported every 50 ms, not every second: a combination may end within a second)
    explorer = Explorer(MODEL, "correct", PARAMS, bounds,
                        progress=lambda out, depth, frontier, _s, _o: seen.append(
                            (out.combinations, out.states, out.distinct, depth, frontier)), progress_every_s=0.05)
    out = explorer.run(workers=2)
    assert out.status == "exhausted"
    assert any(done == 0 and states > 0 and frontier > 0 for done, states, _d, _depth, frontier in seen), seen
    assert all(states <= out.states and distinct <= out.distinct for _c, states, distinct, _d, _f in seen), seen
    assert [s[1] for s in seen] == sorted(s[1] for s in seen), seen


def test_no_choice_before_from_s():
    explorer = Explorer(MODEL, "correct", PARAMS, Bounds(horizon_s=9, requests=1, faults=1, delays=[1, 500],
                                                         focus=["PUT owners/"], from_s=7.2, offsets=[[0, 0]]))
    w = explorer.initial((0, 0))
    seen = []
    frontier = [w]
    while frontier:
        nexts = explorer.successors(frontier.pop())
        seen += [s for s in nexts if s.path]
        frontier += nexts[:2]
    assert seen and all(float(s.path[0].split()[0]) >= 7.2 for s in seen)


# --- an upgrade (section 6) ----------------------------------------------------------------------


@pytest.mark.parametrize("model_name, bounds, invariant", [
    ("seed_from_old_lease_only", UP_GC, "INV-2"),  # UP-3: the GC deleted the old lease; owners/ seeded below
    ("unconditional_marker", UP_GC, "INV-3"),  # UP-3: the marker written over the old lease unconditionally
    ("guard_fails_open", UP_GUARD, "UP-2"),  # UP-2: a lost guard read let the new node start
    ("guard_ignores_old_heartbeats", UP_GC, "UP-2"),  # UP-2: the guard passes beside a fresh old heartbeat
])
def test_an_upgrade_finds_the_up_models_and_replays(explored, model_name, bounds, invariant):
    # an old per-actor-lease binary serves the actor first and stops; the new node starts after it
    explorer, out = explored(model_name, **bounds)
    assert out.status == "violation" and out.violation.invariant == invariant
    plan = replayed(explorer, out, invariant)
    assert plan["options"]["upgrade"] and plan["workload"][0][1:] == ["ask", "o0", "t0/c/a0"]


def test_the_correct_model_survives_an_upgrade_under_reused_ids_too():
    # the new node takes the old one's id (UP-4: the old start check reads a format it cannot read)
    _, out = explore("correct", **dict(UP_GC, same_ids=True))
    assert out.status == "exhausted", out.violation and out.violation.message
    assert out.combinations == 4 and out.distinct > 100


def test_an_upgrade_explores_the_old_clocks_and_each_variant():
    b = Bounds(nodes=1, upgrade=True, gaps_ms=[0, 6000])
    assert sorted(b.combinations(1000)) == sorted((a, c) for a in (-1000, 0, 1000) for c in (-1000, 0, 1000))
    assert b.variants() == [("clean", 0), ("clean", 6000), ("crash", 0), ("crash", 6000)]
    assert b.count_runs() == len(list(b.runs(1000))) == 36
    assert next(Bounds(nodes=2).runs(1000)) == ((-1000, -1000), None)


def test_an_upgrade_world_clones_its_old_binaries_apart():
    explorer, _ = explore("correct", **dict(UP_GC, horizon_s=1))
    w = explorer.initial((0, 0), ("clean", 0))
    w.advance()
    c = w.clone()
    before = w.digest()
    assert c.old_slots[0] is not w.old_slots[0] and c.old_slots[0].proc is c.procs[c.old_slots[0].proc.index]
    while c.next_due() is not None and c.next_due() < 5_000:
        c.advance()
    assert w.digest() == before and not c.old_slots[0].proc.alive and w.old_slots[0].proc.alive


def test_calm_upgrade_names_every_entry_an_upgrade_draws():
    # the explorer's upgrade (scenarios/faults/upgrade.py `calm_upgrade`) and a drawn one: the same keys
    from scenarios.faults.upgrade import calm_upgrade
    from scenarios.sim import SimWorld

    drawn = SimWorld(3, MODEL, "upgrade").options["upgrade"]
    assert drawn and set(calm_upgrade(2_000, 0, ["clean"])) == set(drawn)


def test_worker_processes_explore_an_upgrade_s_variants_alike():
    explorer = Explorer(MODEL, "correct", PARAMS, Bounds(**UP_GC))
    one, two = explorer.run(), explorer.run(workers=2)
    assert one.status == two.status == "exhausted"
    assert (two.distinct, two.states, two.per_offsets) == (one.distinct, one.states, one.per_offsets)
    assert [label for label, _n in one.per_offsets] == [(0, 0, "clean", 0), (0, 0, "clean", 6000),
                                                        (0, 0, "crash", 0), (0, 0, "crash", 6000)]
