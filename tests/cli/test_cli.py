"""The command line's shape (nodelease/cli.py): subcommands, each with its own options and --help;
the old mode flags translated; refusals in one line (exit 2); reports under the working
directory; a tool failure is exit 4, listed apart, and never a catch; `broken` counts a model
caught only by the invariant it declares.

In-process (`main(argv)`), but for what needs a process of its own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import broken_models
from nodelease.broken import count_catch, judge_row
from nodelease.cli import SUBCOMMANDS, main, translate
from house.errors import Exit, UsageError

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = os.path.join(REPO, "tests", "kits", "models")  # models of the tests only (a model that raises)


def refused(capsys, *argv: str) -> str:
    """The one line a refused command line prints (asserting exit 2, one line, no traceback)."""
    assert main(list(argv)) == Exit.USAGE
    out, err = capsys.readouterr()
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err + out, err
    assert err.startswith("runner.py: error: ")
    return err.strip()[len("runner.py: error: "):]


# --- subcommands and the old mode flags -----------------------------------------------------------------


@pytest.mark.parametrize("name", [s.name for s in SUBCOMMANDS])
def test_each_subcommand_has_its_own_help(name, capsys):
    assert main([name, "--help"]) == Exit.PASSED
    out = capsys.readouterr().out
    assert out.startswith(f"usage: runner.py {name}")


def test_the_help_lists_every_subcommand(capsys):
    assert main(["--help"]) == Exit.PASSED
    out = capsys.readouterr().out
    assert all(f"    {s.name} " in out or f"    {s.name}\n" in out for s in SUBCOMMANDS), out


@pytest.mark.parametrize("old, new", [
    (["--seeds", "20000"], ["run", "--seeds", "20000"]),
    ([], ["run"]),
    (["--broken", "--seeds", "200"], ["broken", "--seeds", "200"]),
    (["--replay", "r.json", "--seed", "7"], ["replay", "r.json", "--seed", "7"]),
    (["--seed", "7", "--replay=r.json"], ["replay", "r.json", "--seed", "7"]),
    (["--shrink", "r.json", "--shrink-budget", "60"], ["shrink", "r.json", "--shrink-budget", "60"]),
    (["--explore", "--requests", "1"], ["explore", "--requests", "1"]),
    (["--s3", "http://h:9000", "--bucket", "b"], ["s3", "http://h:9000", "--bucket", "b"]),
    (["--model", "x", "--bench"], ["bench", "--model", "x"]),
    (["--list"], ["list"]),
    (["mutants", "--list"], ["mutants", "--list"]),  # after a subcommand, its own option
])
def test_the_old_mode_flags_are_their_subcommands(old, new):
    assert translate(old) == new


@pytest.mark.parametrize("argv, message", [
    (["--s3", "http://h:9000", "--bucket", "b", "--replay", "r.json"],
     "--s3 and --replay go one at a time: each is a subcommand of its own (s3, replay)"),
    (["--broken", "--explore"], "--broken and --explore go one at a time: each is a subcommand of its own "
                                "(broken, explore)"),
    (["replay", "r.json", "--shrink", "r.json"], "replay and --shrink go one at a time: each is a subcommand of its own"),
    (["--replay"], "--replay wants REPORT"),
])
def test_two_modes_at_once_are_refused(argv, message, capsys):
    assert refused(capsys, *argv) == message


@pytest.mark.parametrize("argv, message", [
    (["run", "--html", "x.html"], "run takes no --html (it goes with replay, shrink, check-trace)"),
    (["--seed", "7"], "run takes no --seed (it goes with replay, shrink, guided, s3); to run one seed: --start S --seeds 1"),
    (["replay", "r.json", "--workers", "2"], "replay takes no --workers (it goes with run, explore, broken, amendments)"),
    (["broken", "--strict"], "broken takes no --strict (it goes with run, shrink, explore, guided, s3, check-trace)"),
    (["--s3", "http://h:9000", "--time-budget", "5"], "s3 takes no --time-budget (it goes with run)"),
    (["--explore", "--bucket", "b"], "explore takes no --bucket (it goes with s3)"),
    (["merge", "a.json", "--dask", "local:2"], "merge takes no --dask (it goes with run)"),
    (["list", "--seeds", "3"], "list takes no --seeds (it goes with run, broken, bench, mutants, amendments, cost)"),
    (["--seeds", "3", "stray"], "run takes no argument 'stray'"),
    (["--workr", "2"], "run takes no --workr"),  # no abbreviations: `--seed` must never mean --seeds
    (["frobnicate"], "unknown subcommand 'frobnicate' (choices: run, replay, shrink, explore, broken, bench, merge, diff, guided, bakeoff, "
                     "s3, list, mutants, compile, docs, amendments, cost, check-trace)"),
])
def test_an_option_a_subcommand_does_not_take_is_refused_naming_who_takes_it(argv, message, capsys):
    assert refused(capsys, *argv) == message


def test_workers_with_dask_is_refused_not_ignored(capsys, tmp_path):
    """With --dask the cluster's workers run the seeds: a --workers given beside it would be ignored, so it is
    refused (its default, all cores, is not a choice and goes with --dask silently)."""
    msg = refused(capsys, "run", "--dask", "local:1", "--workers", "2", "--seeds", "1",
                  "--report", str(tmp_path / "r.json"))
    assert msg.startswith("--workers and --dask go one at a time") and "local:W" in msg


def test_explore_sizes_are_its_own(capsys):
    """--nodes and --actors: the explored size under explore (default 2 and 1), node ids and actors
    under s3 (default: as the scenario draws), nothing under run."""
    from nodelease.cli import parse

    e = parse(["explore"])
    assert (e.nodes, e.actors) == (2, 1)
    s = parse(["s3", "http://h:9000", "--bucket", "b"])
    assert (s.nodes, s.actors, s.duration) == (None, None, 30.0)
    assert refused(capsys, "run", "--nodes", "3") == "run takes no --nodes (it goes with explore, s3, cost)"


# --- reports under the working directory ----------------------------------------------------------------


def test_reports_default_to_reports_under_the_working_directory(tmp_path):
    """From a directory that is not the checkout, the report lands in its reports/, and the printed
    replay command, run there, replays it."""
    env = dict(os.environ, PYTHONPATH=REPO, COLUMNS="160")
    r = subprocess.run([sys.executable, os.path.join(REPO, "runner.py"), "--model", "unconditional_fence",
                        "--seeds", "1", "--workers", "1"], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 1, r.stdout[-2000:] + r.stderr[-2000:]
    rep = json.loads((tmp_path / "reports" / "unconditional_fence-swarm-s0-n1.json").read_text())
    assert rep["failures"][0]["replay"] == "python runner.py replay reports/unconditional_fence-swarm-s0-n1.json --seed 0"
    assert "report: reports/unconditional_fence-swarm-s0-n1.json" in r.stdout
    assert (tmp_path / "reports" / "unconditional_fence-swarm-s0-n1-INV-3.html").exists()  # its picture beside it
    replay = subprocess.run([sys.executable, os.path.join(REPO, "runner.py"), "replay",
                             "reports/unconditional_fence-swarm-s0-n1.json"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=300)
    assert replay.returncode == 1 and "matches the report: the replay is byte-identical" in replay.stdout


# --- a tool failure: exit 4, listed apart, never a catch ------------------------------------------------------


@pytest.fixture
def raising_model(monkeypatch):
    """`raises_at_start` (tests/kits/models/) registered as a broken model for this test."""
    monkeypatch.setattr(broken_models, "__path__", [*broken_models.__path__, MODELS])
    yield "raises_at_start"
    sys.modules.pop("broken_models.raises_at_start", None)


def test_a_model_that_raises_is_a_tool_failure_exit_4(raising_model, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "r.json"
    assert main(["run", "--model", raising_model, "--seeds", "2", "--workers", "1", "--report", str(path),
                 "--junit", str(tmp_path / "r.xml")]) == Exit.TOOL
    out, err = capsys.readouterr()
    assert err.startswith("runner.py: tool failure: 2 seeds raised (first, seed 0: RuntimeError: a bug in the model")
    assert err.strip().endswith(f"replay: python runner.py replay {os.path.relpath(path)} --seed 0")
    assert len(err.strip().splitlines()) == 1
    rep = json.loads(path.read_text())
    assert rep["failures"] == [] and rep["failing_seeds"] == [] and rep["passed"] is False
    assert [t["seed"] for t in rep["tool_failures"]] == [0, 1] and rep["counts"]["tool_failing_seeds"] == 2
    assert "RuntimeError: a bug in the model" in rep["tool_failures"][0]["traceback"]
    assert "TOOL FAILED (2 seeds raised)" in (tmp_path / "r.txt").read_text()
    assert '<error message="2 seeds raised; seed 0: RuntimeError' in (tmp_path / "r.xml").read_text()
    assert main(["replay", str(path)]) == Exit.TOOL  # its first tool failure, run again: the same
    assert "RuntimeError: a bug in the model" in capsys.readouterr().out


def test_a_model_that_names_its_scenario_runs_there_beside_a_control_of_it(tmp_path, monkeypatch):
    """A broken model whose rule lives where the swarm seldom goes (SCENARIO, broken_models/) runs in that scenario,
    and the correct model runs there too, as its control; every other model, and the first control, in the swarm;
    an explicit --scenario runs every model in it."""
    from broken_models import entry

    monkeypatch.chdir(tmp_path)
    assert entry("old_takes_marker").scenario == "upgrade" and entry("no_grace").scenario is None
    code = main(["broken", "old_takes_marker", "no_grace", "--seeds", "1", "--workers", "1"])
    rep = json.loads((tmp_path / "reports" / "broken-swarm-s0-n1.json").read_text())
    assert [(r["model"], r["scenario"]) for r in rep["models"]] == [
        ("correct", "swarm"), ("correct", "upgrade"), ("old_takes_marker", "upgrade"), ("no_grace", "swarm")]
    assert code == (Exit.PASSED if rep["passed"] else Exit.VIOLATION)
    assert (tmp_path / "reports" / "old_takes_marker-upgrade-s0-n1.json").exists()
    main(["broken", "old_takes_marker", "--seeds", "1", "--workers", "1", "--scenario", "twins"])
    rep = json.loads((tmp_path / "reports" / "broken-twins-s0-n1.json").read_text())
    assert [(r["model"], r["scenario"]) for r in rep["models"]] == [("correct", "twins"), ("old_takes_marker", "twins")]


def test_a_tool_failure_is_never_a_catch(raising_model, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["broken", raising_model, "--seeds", "1", "--workers", "1"]) == Exit.TOOL
    rep = json.loads((tmp_path / "reports" / "broken-swarm-s0-n1.json").read_text())
    control, row = rep["models"]
    assert control["model"] == "correct" and control["ok"]
    assert (row["model"], row["caught_seeds"], row["tool_failing_seeds"], row["ok"]) == (raising_model, 0, 1, False)
    assert row["verdict"] == "TOOL FAILURE (1 seeds raised)" and rep["passed"] is False
    assert "runner.py: tool failure: 1 model(s) raised in their seeds (raises_at_start)" in capsys.readouterr().err


# --- broken: caught only by the invariant it declares ------------------------------------------------------


def _report(failures: list[tuple[int, str]], raised: tuple[int, ...] = ()) -> dict:
    return {"failures": [{"seed": s, "invariant": inv} for s, inv in failures],
            "tool_failures": [{"seed": s} for s in raised]}


def test_a_catch_by_another_invariant_is_not_counted():
    c = count_catch("INV-1", _report([(3, "INV-3"), (5, "INV-3")]))
    assert (c.caught, c.seeds, c.first, c.by, c.others) == (False, 0, None, {"INV-3": 2}, ["INV-3"])
    assert judge_row("broken", c, 2) == (False, "NOT CAUGHT by INV-1, only by INV-3")


def test_a_catch_by_the_declared_invariant_counts_beside_others():
    c = count_catch("INV-1", _report([(3, "INV-3"), (4, "INV-1"), (4, "INV-3"), (9, "INV-1")]))
    assert (c.caught, c.seeds, c.first, c.by) == (True, 2, 4, {"INV-1": 2, "INV-3": 2})
    assert judge_row("broken", c, 3) == (True, "caught")


def test_a_seed_that_raised_counts_for_nothing_but_its_tool_failure():
    c = count_catch("INV-1", _report([(2, "INV-1")], raised=(2, 7)))
    assert (c.caught, c.seeds, c.tool_failures) == (False, 0, 2)
    assert judge_row("broken", c, 1) == (False, "TOOL FAILURE (2 seeds raised)")
    assert judge_row("correct", c, 0)[0] is False and judge_row("survivor", c, 0)[0] is False


def test_the_control_and_a_survivor():
    none = count_catch("-", _report([]))
    assert judge_row("correct", none, 0) == (True, "passes (control)")
    assert judge_row("correct", count_catch("-", _report([(1, "INV-1")])), 1) == (False, "FAILS (the correct model!)")
    assert judge_row("survivor", none, 0) == (True, "survives (documented)")
    assert judge_row("broken", none, 0) == (False, "NOT CAUGHT")


def test_broken_warns_naming_both_invariants(tmp_path, capsys, monkeypatch):
    """A model whose declared invariant misses it, caught by another: not counted, and the warning
    names both. (unconditional_fence, which INV-3 catches at seed 0, is made to declare INV-1.)"""
    import dataclasses

    import broken_models

    monkeypatch.chdir(tmp_path)
    real = broken_models.entry

    def entry(name):
        e = real(name)
        return dataclasses.replace(e, catches="INV-1") if name == "unconditional_fence" else e

    monkeypatch.setattr(broken_models, "entry", entry)
    assert main(["broken", "unconditional_fence", "--seeds", "1", "--workers", "1"]) == Exit.VIOLATION
    out = " ".join(capsys.readouterr().out.split())
    assert "warning: unconditional_fence declares CATCHES = 'INV-1', but INV-1 never caught it in 1 seeds; only " \
           "INV-3 (1 seeds) did: not counted as caught" in out
    rep = json.loads((tmp_path / "reports" / "broken-swarm-s0-n1.json").read_text())
    assert rep["warnings"] and rep["models"][1]["verdict"] == "NOT CAUGHT by INV-1, only by INV-3"


def test_the_exit_statuses_are_named_once_and_the_docs_list_each():
    assert [int(e) for e in Exit] == [0, 1, 2, 3, 4, 5, 130, 141, 143]
    assert UsageError("x").status == Exit.USAGE and all(e.meaning for e in Exit)
    with open(os.path.join(REPO, "docs", "exit-statuses.md")) as f:
        rows = {line.split("|")[1].strip() for line in f if line.startswith("| ") and line.count("|") >= 3}
    assert {str(int(e)) for e in Exit} <= rows


def test_broken_says_when_a_model_shows_a_finding_more_often_than_the_control(tmp_path, capsys, monkeypatch):
    """Issue 36: a broken model whose violations would hide as a known finding shows that finding in more seeds
    than the correct model on the same seeds; `broken` says so, naming the finding and the sign test (the
    campaigns here are stand-ins: the control shows F-2 in seed 3, the model in seeds 0..7)."""
    import nodelease.broken as nb

    monkeypatch.chdir(tmp_path)

    def fake(console, spec, start, count, workers, path, **kw):
        name = spec.model
        seeds = [3] if name == "correct" else list(range(8))
        return {"failures": [] if name == "correct" else [{"seed": 0, "invariant": "CONV-1"}],
                "failing_seeds": [] if name == "correct" else [0], "tool_failures": [],
                "counts": {"seeds_run": count}, "raw": {"finding_seeds": {"F-2": seeds}}}

    monkeypatch.setattr(nb, "run_campaign", fake)
    monkeypatch.setattr(nb, "save_campaign", lambda *a, **k: True)
    monkeypatch.setattr(nb, "write_report", lambda *a, **k: None)
    assert main(["broken", "pending_release_rereads", "--seeds", "8", "--workers", "1"]) == Exit.PASSED
    out = " ".join(capsys.readouterr().out.split())
    assert ("warning: pending_release_rereads shows F-2 in 7 seeds where the control does not (0 the other way; "
            "sign test p 0.0156: beyond chance): its own violations may be taken for that finding") in out
