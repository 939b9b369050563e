"""Reports and plans that survive the tool's growth (issue 46, part 3).

The run's hash leaves a fault kind's options at their off values out (history/record.py), so a kind
added to the tool, off in a seed, leaves that seed's hash as it was: `replay` says "the same run, the
options grew" apart from "the run changed" (exit 5). A report or plan hashed the way it was before
(every option) still replays as itself. And `replay --continue PLAN` replays a plan until the first
decision the code no longer asks for or asks anew, draws the rest, and says where it diverged.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys

import pytest

from campaign.run import run_one
from counterexamples.shrink import continue_run, record_seed, run_plan
from scenarios import faults
from scenarios.faults import FaultKind, stays_off
from scenarios.spec import RunSpec

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEED = 7


def run(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, COLUMNS="80")
    env.pop("PYTHONHASHSEED", None)
    return subprocess.run([sys.executable, "runner.py", *args], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture(scope="module")
def recorded():
    """Seed 7 of the swarm recorded as a plan (every decision in it, in the order its run made them)."""
    plan, history = record_seed(SEED, "correct", "swarm", {})
    plan.update(history.hash_fields())
    return plan, history


def _off_kind(options: dict) -> str:
    """A fault kind off in this run, whose options are all at their off values."""
    return next(k for k, kind in faults.KINDS.items()
                if kind.options and all(options.get(o) == off for o, off in kind.options.items()))


def test_a_kind_off_in_a_run_is_not_in_its_hash(recorded):
    """The hash of a plan without one kind's options (as if written before the kind existed) is the run's."""
    plan, history = recorded
    kind = _off_kind(plan["options"])
    older = copy.deepcopy(plan)
    for name in faults.KINDS[kind].options:
        del older["options"][name]
    assert run_plan(older).sha256() == history.sha256()
    # while an option that is on is part of it: the same events under another delay bound are another run
    assert history.sha256_every_option() != history.sha256()


def test_replay_says_the_options_grew_and_exits_as_the_run(recorded, tmp_path):
    plan, _history = recorded
    kind = _off_kind(plan["options"])
    older = copy.deepcopy(plan)
    for name in faults.KINDS[kind].options:
        del older["options"][name]
    path = tmp_path / "older.json"
    path.write_text(json.dumps(older))
    r = run("replay", str(path))
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "the same run; the options grew since the counterexample was written" in r.stdout and kind in r.stdout


def test_a_report_from_before_a_kind_replays_as_the_same_run(tmp_path):
    """A report that does not know a kind (its `fault_kinds` without it) replays its seed: the same run."""
    path = str(tmp_path / "r.json")
    r = run("--seeds", "1", "--start", str(SEED), "--workers", "1", "--report", path)
    assert r.returncode == 0, r.stderr[-2000:]
    report = json.load(open(path))
    assert report["fault_kinds"] == list(faults.KINDS)
    gone = report["fault_kinds"].pop()  # the newest kind: unknown when this report was written
    assert not faults.KINDS[gone].active(RunSpec().world(SEED).options)  # (off in this seed: the same run)
    json.dump(report, open(path, "w"))
    r = run("replay", path, "--seed", str(SEED))
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert ("the same run; the options grew since the report was written: " + gone + " added to the tool, held off "
            "in this replay") in r.stdout
    # a hash that is not the run's: exit 5, "the run changed"
    report["seed_hashes"] = ["0" * 64]
    json.dump(report, open(path, "w"))
    r = run("replay", path, "--seed", str(SEED))
    assert r.returncode == 5 and "the run changed" in r.stdout, r.stdout[-2000:]


def test_a_kind_added_since_a_report_is_held_off_in_its_seeds_replay(tmp_path):
    """Issue 46's acceptance: a seed that draws the new kind on replays as the report recorded it (the kind held
    off: `RunSpec.kinds_off`), exit 0; `--with-new-kinds` draws it, and the run changed, exit 5, naming it.
    The report here is made as a tool without the kind writes it (the seed's hash under kinds_off: the same as
    such a tool's, test_a_kind_held_off_is_a_tool_without_it); tests/kits/grows.py adds a kind for real."""
    gone = [k for k, kind in faults.KINDS.items() if kind.options][-1]  # the newest kind drawing options of its own
    seed = next(s for s in range(60) if faults.KINDS[gone].active(RunSpec().world(s).options))
    path = str(tmp_path / "r.json")
    r = run("--seeds", "1", "--start", str(seed), "--workers", "1", "--report", path)
    assert r.returncode in (0, 1), r.stderr[-2000:]
    report = json.load(open(path))
    report["fault_kinds"].remove(gone)
    report["seed_hashes"] = [run_one(seed, RunSpec(kinds_off=(gone,))).sha256]
    assert report["seed_hashes"] != [run_one(seed, RunSpec()).sha256]
    json.dump(report, open(path, "w"))
    r = run("replay", path, "--seed", str(seed))
    assert r.returncode in (0, 1), r.stdout[-2000:] + r.stderr[-2000:]
    assert f"the same run; the options grew since the report was written: {gone} added to the tool, held off" in r.stdout
    r = run("replay", path, "--seed", str(seed), "--with-new-kinds")
    assert r.returncode == 5, r.stdout[-2000:] + r.stderr[-2000:]
    assert f"the run changed ({gone}, added to the tool since, on in this run (drawn: --with-new-kinds))" in r.stdout


def test_with_new_kinds_is_refused_with_a_plan(recorded, tmp_path):
    plan, _history = recorded
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    r = run("replay", str(path), "--with-new-kinds")
    assert r.returncode == 2 and "--with-new-kinds goes with a report's seed" in r.stderr, r.stderr[-2000:]


class _Throwaway(FaultKind):
    """The recipe's kind (docs/architecture.md, "Add a fault kind"): drawn in draw_main from its own stream, a
    reply slowed by its fate hook."""

    id = "throwaway"
    options = {"p_throwaway": 0.0}

    def draw_main(self, ctx) -> None:
        ctx.o["p_throwaway"] = 0.2 if ctx.rng.random() < 0.5 and not stays_off(ctx) else 0.0

    @staticmethod
    def reply_late(world, proc, req, f, delay):
        rng = world.rngs["throwaway"]
        if rng.random() < world.options["p_throwaway"]:
            return "slow", delay + rng.randint(1, 200)
        return None


@pytest.mark.parametrize("scenario", ["swarm", "calm", "upgrade"])
def test_a_kind_held_off_is_a_tool_without_it(scenario, monkeypatch):
    """A kind held off (`kinds_off`) draws and runs each seed as the tool did before the kind was added: the
    same options (its own at their off values) and the same run, event for event, in the seeds that draw it
    on too."""
    from scenarios import core, swarm

    before = {seed: swarm.draw(seed, scenario, swarm.draw_params(seed, {}, scenario)[0]) for seed in range(200)}
    runs = {seed: run_one(seed, RunSpec(scenario=scenario)).sha256 for seed in range(6)}
    stages = list(swarm.STAGES)
    at = next(i for i, (part, _stage) in enumerate(stages) if part == "draw/clocks")
    stages.insert(at, ("draw/throwaway", _Throwaway().draw_main))
    monkeypatch.setattr(swarm, "STAGES", stages)
    monkeypatch.setitem(faults.KINDS, "throwaway", _Throwaway())
    monkeypatch.setattr(core, "OFF_OPTIONS", dict(core.OFF_OPTIONS, p_throwaway=0.0))  # (made at import)
    on = 0
    for seed, options in before.items():
        params = swarm.draw_params(seed, {}, scenario)[0]
        on += bool(swarm.draw(seed, scenario, params)["p_throwaway"])
        assert swarm.draw(seed, scenario, params, kinds_off=("throwaway",)) == dict(options, p_throwaway=0.0), seed
    assert on > 0 or scenario == "calm"
    held = {seed: run_one(seed, RunSpec(scenario=scenario, kinds_off=("throwaway",))).sha256 for seed in runs}
    assert held == runs
    if scenario == "swarm":  # (and drawn, it changes some of them: the check can fail)
        assert {seed: run_one(seed, RunSpec(scenario=scenario)).sha256 for seed in runs} != runs


@pytest.mark.slow
def test_reports_replay_after_the_recipe_s_kind_is_added_for_real():
    """The acceptance itself, in a scratch copy of the checkout (tests/kits/grows.py; 200 seeds by hand)."""
    r = subprocess.run([sys.executable, "tests/kits/grows.py", "--seeds", "30"], cwd=REPO, capture_output=True,
                       text=True, timeout=1800)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "replays as the run it recorded" in r.stdout


def test_a_hash_of_the_old_kind_still_matches(recorded, tmp_path):
    """A plan whose hash covers every option (written before issue 46) replays as itself."""
    plan, history = recorded
    old = {k: v for k, v in plan.items() if k != "hash_version"}  # (a plan of then holds none: JSON's encoding)
    old["history_sha256"] = history.sha256_every_option()
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old))
    r = run("replay", str(path))
    assert r.returncode == 0 and "its hash covers every option, as before issue 46" in r.stdout, r.stdout[-2000:]


def test_continue_replays_a_plan_the_code_still_asks_for_whole(recorded):
    plan, history = recorded
    h, choices = continue_run(plan, SEED)
    assert choices.diverged is None and choices.read == len(plan["choices"]) and choices.drawn == 0
    assert h.sha256() == history.sha256()


def test_continue_sees_a_decision_asked_anew_and_draws_the_rest(recorded):
    """A decision the plan lacks (the code asks for one the old code never did): the replay stops reading the
    plan there and draws the rest from the seed given."""
    plan, _history = recorded
    keys = list(plan["choices"])
    missing = keys[len(keys) // 2]
    cut = copy.deepcopy(plan)
    del cut["choices"][missing]
    h, choices = continue_run(cut, 99)
    d = choices.diverged
    assert d is not None and d["how"] == "asks anew" and d["asked"] == missing
    assert choices.read == len(keys) // 2 and choices.drawn > 0 and isinstance(d["t_ms"], int)
    assert h.seed == 99


def test_continue_sees_a_decision_no_longer_asked_for(recorded):
    """A decision the code no longer asks for (a request the old code sent): the replay diverges where the
    code asks for the next one instead."""
    plan, _history = recorded
    keys = list(plan["choices"])
    k = len(keys) // 3
    table = {}
    for i, key in enumerate(keys):
        if i == k:
            table["send m9 PUT owners/never #0"] = ["ok", 1]
        table[key] = plan["choices"][key]
    _h, choices = continue_run(dict(plan, choices=table), SEED)
    d = choices.diverged
    assert d is not None and d["how"] == "no longer asks for" and d["expected"] == "send m9 PUT owners/never #0"
    assert d["asked"] == keys[k] and choices.read == k


def test_replay_continue_on_the_command_line(recorded, tmp_path):
    plan, _history = recorded
    keys = list(plan["choices"])
    cut = copy.deepcopy(plan)
    del cut["choices"][keys[5]]
    path = tmp_path / "cut.json"
    path.write_text(json.dumps(cut))
    out = tmp_path / "continued.json"
    r = run("replay", "--continue", str(path), "--seed", "3", "--report", str(out))
    assert r.returncode in (0, 1), r.stdout[-2000:] + r.stderr[-2000:]
    assert f"after 5 of the plan's {len(keys) - 1} decisions: the code asks anew for {keys[5]}" in r.stdout
    assert "the rest drawn from seed 3" in r.stdout
    continued = json.load(open(out))
    assert continued["seed"] == 3 and continued["source"]["diverged"]["asked"] == keys[5]
    r = run("replay", str(out))  # the continued run is a plan like any other: it replays as itself
    assert r.returncode in (0, 1) and "matches the counterexample" in r.stdout, r.stdout[-2000:]


def test_a_report_and_a_plan_of_the_json_encoding_replay_as_the_same_run(recorded, tmp_path):
    """The hash's encoding moved (issue 46, part 5: marshal for the events, `hash_version` 2 in what the tool
    writes): a report or a plan that holds no `hash_version` is of the JSON encoding, and its hash is computed
    that way, so it replays as the same run (exit 0, not 5); a report's seeds in the new one, as the tool writes
    them now. A version this tool does not know is refused in one line (exit 2)."""
    from history.record import HASH_VERSION

    plan, history = recorded
    path = str(tmp_path / "r.json")
    r = run("--seeds", "1", "--start", str(SEED), "--workers", "1", "--report", path)
    assert r.returncode == 0, r.stderr[-2000:]
    report = json.load(open(path))
    assert report["hash_version"] == HASH_VERSION == 2 and report["seed_hashes"] == [history.sha256()]
    older = dict(report, seed_hashes=[history.sha256(1)])
    del older["hash_version"]
    json.dump(older, open(path, "w"))
    r = run("replay", path, "--seed", str(SEED))
    assert r.returncode == 0 and "matches the report: the replay is byte-identical" in r.stdout, r.stdout[-2000:]
    assert f"history sha256: {history.sha256(1)}" in r.stdout
    # the new hash in a report that says it is of the JSON encoding: the run changed
    json.dump(dict(older, seed_hashes=[history.sha256()]), open(path, "w"))
    assert run("replay", path, "--seed", str(SEED)).returncode == 5
    json.dump(dict(report, hash_version=3), open(path, "w"))
    r = run("replay", path, "--seed", str(SEED))
    assert r.returncode == 2 and "hash_version 3" in r.stderr, r.stderr[-2000:]

    assert plan["hash_version"] == 2
    old = {k: v for k, v in plan.items() if k != "hash_version"}
    old["history_sha256"] = history.sha256(1)
    p = tmp_path / "old.json"
    p.write_text(json.dumps(old))
    r = run("replay", str(p))
    assert r.returncode == 0 and "matches the counterexample: the replay is byte-identical" in r.stdout, r.stdout[-2000:]
    p.write_text(json.dumps(dict(old, history_sha256=history.sha256())))
    assert run("replay", str(p)).returncode == 5
    p.write_text(json.dumps(plan))
    r = run("replay", str(p))
    assert r.returncode == 0 and "matches the counterexample: the replay is byte-identical" in r.stdout, r.stdout[-2000:]
    # --continue writes the continued run in the new encoding, whatever the plan's was
    p.write_text(json.dumps(old))
    out = tmp_path / "cont.json"
    r = run("replay", "--continue", str(p), "--report", str(out))
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    cont = json.loads(out.read_text())
    assert cont["hash_version"] == 2 and cont["history_sha256"] == history.sha256()


def test_shards_of_two_encodings_do_not_merge(tmp_path):
    from campaign.report import merge_reports
    from house.errors import UsageError

    paths = [str(tmp_path / f"s{k}.json") for k in (1, 2)]
    for k, path in enumerate(paths, 1):
        r = run("--seeds", "2", "--shard", f"{k}/2", "--workers", "1", "--report", path)
        assert r.returncode == 0, r.stderr[-2000:]
    a, b = (json.load(open(p)) for p in paths)
    merge_reports([a, b], str(tmp_path / "m.json"))
    del b["hash_version"]
    with pytest.raises(UsageError, match="different encodings"):
        merge_reports([a, b], str(tmp_path / "m.json"))
