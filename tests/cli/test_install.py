"""The tool installed, away from the checkout: a wheel built from the project's files, installed in
a fresh virtual environment, and its console script run from a directory of its own.

Every subcommand's --help, a tiny campaign, the replay of its report and a short `broken` run:
their exit statuses, and their reports under that directory's reports/ (nothing of the tool may
depend on being run from a checkout). The environment sees this Python's site-packages for the
dependencies (nothing is downloaded); the Cython build is skipped (NODELEASE_NO_COMPILE), and
every package of the tool must import from the environment, not from any checkout.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, REPO)
from nodelease.cli import SUBCOMMANDS  # noqa: E402

PACKAGES = ("model", "history", "scenarios", "checkers", "broken_models", "amendments", "counterexamples", "explore",
            "mutants", "guided", "nodelease")


def _sh(args, cwd, env=None, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(the console script, the environment's python, a working directory outside the checkout)."""
    tmp = tmp_path_factory.mktemp("install")
    src = tmp / "src"  # the project's files only: no .compiled/, no build/ left in the checkout
    src.mkdir()
    for name in PACKAGES:
        shutil.copytree(os.path.join(REPO, name), src / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "setup.py"):
        shutil.copy(os.path.join(REPO, name), src)
    env = dict(os.environ, NODELEASE_NO_COMPILE="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)
    r = _sh([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w",
             str(tmp / "dist"), str(src)], cwd=tmp, env=env)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    (wheel,) = glob.glob(str(tmp / "dist" / "*.whl"))
    venv = tmp / "venv"
    r = _sh([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], cwd=tmp)
    assert r.returncode == 0, r.stderr
    python = venv / "bin" / "python"
    # the dependencies are where this interpreter has them: in the system's site-packages, or in a
    # virtual environment of their own (CI's) that --system-site-packages does not see. A path in a
    # .pth comes after the environment's own site-packages, and the .pth files there (an editable
    # install of a checkout among them) are not read.
    here = subprocess.run([sys.executable, "-c", "import site; print('\\n'.join(site.getsitepackages()))"],
                          capture_output=True, text=True, check=True).stdout
    (site_packages,) = glob.glob(str(venv / "lib" / "python*" / "site-packages"))
    with open(os.path.join(site_packages, "dependencies.pth"), "w") as f:
        f.write(here)
    # (pip among those dependencies, run by the environment's interpreter, installs into the environment)
    r = _sh([str(python), "-m", "pip", "install", "--no-deps", "--no-index", wheel], cwd=tmp, env=env)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    work = tmp / "work"
    work.mkdir()
    return str(venv / "bin" / "nodelease-check"), str(python), work


def script(installed, *args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    exe, _python, work = installed
    env = dict(os.environ, COLUMNS="160")
    env.pop("PYTHONPATH", None)
    return _sh([exe, *args], cwd=work, env=env, timeout=timeout)


def test_every_package_imports_from_the_environment(installed):
    _exe, python, work = installed
    venv = os.path.dirname(os.path.dirname(python))
    r = _sh([python, "-c", "import importlib, sys; print('\\n'.join(importlib.import_module(p).__file__ "
                           f"for p in {PACKAGES!r}))"], cwd=work)
    assert r.returncode == 0, r.stderr
    assert all(path.startswith(venv) for path in r.stdout.split()), r.stdout


@pytest.mark.parametrize("name", [s.name for s in SUBCOMMANDS])
def test_each_subcommand_says_what_it_takes(installed, name):
    r = script(installed, name, "--help")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"usage: nodelease-check {name}") and r.stderr == ""


def test_a_campaign_lands_under_the_working_directory_and_replays(installed):
    _exe, _python, work = installed
    r = script(installed, "run", "--seeds", "3", "--workers", "1")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    path = work / "reports" / "correct-swarm-s0-n3.json"
    rep = json.loads(path.read_text())
    assert rep["passed"] and rep["seeds"] == {"start": 0, "count": 3}
    assert rep["command"] == "nodelease-check run --seeds 3 --workers 1"
    assert rep["git_commit"] is None  # an install is no checkout
    assert "report: reports/correct-swarm-s0-n3.json" in r.stdout
    r = script(installed, "replay", "reports/correct-swarm-s0-n3.json", "--seed", "2")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "matches the report: the replay is byte-identical" in r.stdout


def test_broken_runs_and_exits_as_its_report_says(installed):
    """A short `broken` (the control and one model, 2 seeds): its exit status is what its rows say."""
    _exe, _python, work = installed
    r = script(installed, "--broken", "no_grace", "--seeds", "2", "--workers", "1")
    rep = json.loads((work / "reports" / "broken-swarm-s0-n2.json").read_text())
    assert [row["model"] for row in rep["models"]] == ["correct", "no_grace"]
    assert r.returncode == (0 if all(row["ok"] for row in rep["models"]) else 1), r.stderr
    assert (work / "reports" / "no_grace-swarm-s0-n2.json").exists()


def test_an_unknown_option_is_one_line_and_exit_2(installed):
    r = script(installed, "replay", "x.json", "--workers", "2")
    assert r.returncode == 2
    assert r.stderr == "nodelease-check: error: replay takes no --workers (it goes with run, explore, broken, amendments)\n"
