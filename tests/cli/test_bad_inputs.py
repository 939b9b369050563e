"""Every bad input is exit 2, one line, no traceback, nothing run (issue 50): the table of
docs/exit-statuses.md ("Bad input"), run row by row, so that the table is the behaviour.

Each row's command runs in-process from an empty working directory, with its placeholders made
here (REPORT: a run's report; PLAN: a kept counterexample; PLAN_V2: the same of format version 2;
TEXT: not JSON; NAN: a report holding NaN; DEEP: JSON nested 200,000 deep; NOTES: a file of the
user's; DIR: a directory; OUT: an empty directory). Whatever would run a seed, an exploration, a
search, a mutant or a bucket call fails the test instead: a refusal comes before any of them.
"""

from __future__ import annotations

import json
import os
import re
import shlex

import pytest

from house.errors import Exit
from nodelease.cli import main

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TABLE = os.path.join(REPO, "docs", "exit-statuses.md")


def rows() -> list[tuple[str, int, str]]:
    """(command, exit status, what stderr says) per row of the table."""
    with open(TABLE) as f:
        text = f.read()
    body = text.split("<!-- bad inputs: tests/cli/test_bad_inputs.py runs each row -->", 1)[1]
    body = body.split("<!-- end bad inputs -->", 1)[0]
    out = []
    for line in body.splitlines():
        m = re.match(r"^\| `(.+)` \| (\d+) \| `(.+)` \|$", line)
        if m:
            out.append((m.group(1), int(m.group(2)), m.group(3)))
    return out


ROWS = rows()


def test_the_table_is_there_and_long():
    assert len(ROWS) >= 80
    assert all(status == Exit.USAGE for _c, status, _s in ROWS)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("bad")
    report = d / "report.json"
    assert main(["run", "--seeds", "2", "--workers", "1", "--scenario", "calm", "--report", str(report)]) == 0
    plan = json.loads(open(os.path.join(REPO, "tests", "plans", "readme-unlocked_resolver.json")).read())
    (d / "plan.json").write_text(json.dumps(plan))
    (d / "plan2.json").write_text(json.dumps(dict(plan, format="nodelease-counterexample/2")))
    (d / "text.json").write_text("not json at all\n")
    (d / "nan.json").write_text(report.read_text().replace('"elapsed_s": ', '"elapsed_s": NaN, "was": ', 1))
    (d / "deep.json").write_text("[" * 200_000 + "]" * 200_000)
    (d / "notes.json").write_text("my notes, not the tool's\n")
    os.makedirs(d / "dir")
    (d / "dir" / "x").write_text("")
    return {"REPORT": report, "PLAN_V2": d / "plan2.json", "PLAN": d / "plan.json", "TEXT": d / "text.json",
            "NAN": d / "nan.json", "DEEP": d / "deep.json", "NOTES": d / "notes.json", "DIR": d / "dir"}


@pytest.fixture
def nothing_runs(monkeypatch):
    """Whatever would do work fails the test: a refusal must come first."""
    from campaign import run as campaign
    from explore import search
    from guided import search as guided
    from mutants import probe
    from nodelease import bakeoff
    from scenarios import s3

    def ran(*_a, **_k):
        raise AssertionError("work began before the refusal")

    for where, name in ((campaign, "run_one"), (campaign, "run_seeds"), (search.Explorer, "run"),
                        (guided.Search, "run"), (probe, "probe"), (bakeoff, "run"), (s3, "make_client")):
        monkeypatch.setattr(where, name, ran)


@pytest.mark.parametrize("command, status, says", ROWS, ids=[r[0] for r in ROWS])
def test_each_bad_input_is_one_line_and_exit_2(command, status, says, files, nothing_runs, tmp_path, monkeypatch,
                                                capsys):
    monkeypatch.chdir(tmp_path)
    out_dir = tmp_path / "out"
    os.makedirs(out_dir)
    notes_before = files["NOTES"].read_text()
    argv = []
    for token in shlex.split(command):
        for name in sorted(files, key=len, reverse=True):  # (PLAN_V2 before PLAN)
            token = re.sub(rf"\b{name}\b", str(files[name]), token)
        argv.append(token.replace("OUT/", f"{out_dir}/"))
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == status, (command, code, err)
    assert err.count("\n") == 1 and "Traceback" not in err + out, err
    assert says in err, (says, err)
    assert files["NOTES"].read_text() == notes_before  # never replaced
    assert not any(os.scandir(out_dir)), os.listdir(out_dir)  # nothing written where it was refused


def test_force_replaces_a_file_the_tool_did_not_write(files, tmp_path, monkeypatch, capsys):
    """--force is the one way over a file of the user's; a report of an earlier run at the same --report path
    is replaced without it (as output options usually are)."""
    monkeypatch.chdir(tmp_path)
    mine = tmp_path / "r.json"
    mine.write_text("the user's\n")
    argv = ["run", "--seeds", "1", "--workers", "1", "--scenario", "calm", "--report", str(mine)]
    assert main(argv) == Exit.USAGE
    assert mine.read_text() == "the user's\n"
    assert main(argv + ["--force"]) == Exit.PASSED
    assert json.loads(mine.read_text())["passed"] is True
    assert main(argv) == Exit.PASSED  # the tool's own report, replaced by the same run
    (tmp_path / "r.txt").write_text("notes beside it\n")
    os.remove(mine)  # the report gone, the .txt beside it is the user's again
    assert main(argv) == Exit.USAGE
    assert "r.txt exists and was not written by nodelease-check" in capsys.readouterr().err
