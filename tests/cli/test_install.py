"""The tool installed, away from the checkout: a wheel built in a fresh virtual environment of this
machine's Python by that environment's own build tools (the pip and setuptools `python -m venv` brings:
setuptools 65 with Python 3.11, none from 3.12 on, then this interpreter's), installed there, and its
console script run from a directory of its own.

Every subcommand's --help, a tiny campaign, the replay of its report and a short `broken` run:
their exit statuses, and their reports under that directory's reports/ (nothing of the tool may
depend on being run from a checkout; a command that does says so, exit 2). The wheel holds every
module and data file of the tool's packages (house/packages.py names them). The environment sees this
Python's site-packages for the dependencies (nothing is downloaded), after its own; the Cython build is
skipped (NODELEASE_NO_COMPILE), and every package of the tool must import from the environment, not
from any checkout.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, REPO)
from nodelease.cli import SUBCOMMANDS  # noqa: E402
from house.packages import DATA, PACKAGES  # noqa: E402


def _sh(args, cwd, env=None, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(the wheel, the environment's python, the setuptools that built it: "version path"), the wheel built
    from a copy of the project's files by a fresh environment's own pip and setuptools."""
    tmp = tmp_path_factory.mktemp("install")
    src = tmp / "src"  # the project's files only: no .compiled/, no build/ left in the checkout
    src.mkdir()
    for name in PACKAGES:
        shutil.copytree(os.path.join(REPO, name), src / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "setup.py"):
        shutil.copy(os.path.join(REPO, name), src)
    env = dict(os.environ, NODELEASE_NO_COMPILE="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)
    venv = tmp / "venv"
    r = _sh([sys.executable, "-m", "venv", str(venv)], cwd=tmp)  # with its own pip (and setuptools, up to 3.11)
    assert r.returncode == 0, r.stderr
    python = venv / "bin" / "python"
    # the dependencies are where this interpreter has them: in the system's site-packages, or in a virtual
    # environment of their own (CI's). A path in a .pth comes after the environment's own site-packages (its
    # pip and setuptools first), and the .pth files there (an editable install of a checkout among them) are
    # not read.
    here = subprocess.run([sys.executable, "-c", "import site; print('\\n'.join(site.getsitepackages()))"],
                          capture_output=True, text=True, check=True).stdout
    (site_packages,) = glob.glob(str(venv / "lib" / "python*" / "site-packages"))
    with open(os.path.join(site_packages, "dependencies.pth"), "w") as f:
        f.write(here)
    r = _sh([str(python), "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w",
             str(tmp / "dist"), str(src)], cwd=tmp, env=env)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    (wheel,) = glob.glob(str(tmp / "dist" / "*.whl"))
    tools = _sh([str(python), "-c", "import setuptools; print(setuptools.__version__, setuptools.__file__)"],
                cwd=tmp).stdout.strip()
    return wheel, str(python), tools


@pytest.fixture(scope="module")
def installed(built):
    """(the console script, the environment's python, a working directory outside the checkout)."""
    wheel, python, _tools = built
    venv = os.path.dirname(os.path.dirname(python))
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)
    r = _sh([python, "-m", "pip", "install", "--no-deps", "--no-index", wheel], cwd=venv, env=env)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    work = os.path.join(os.path.dirname(venv), "work")
    os.makedirs(work, exist_ok=True)
    from pathlib import Path

    return os.path.join(venv, "bin", "nodelease-check"), python, Path(work)


def test_the_environment_s_own_setuptools_built_the_wheel(built):
    """The build ran on the fresh environment's own setuptools when `python -m venv` gave it one (this
    interpreter's otherwise): the install works with what a new user has, whatever its version."""
    _wheel, python, tools = built
    version, path = tools.split(" ", 1)
    venv = os.path.dirname(os.path.dirname(python))
    bundled = glob.glob(os.path.join(venv, "lib", "python*", "site-packages", "setuptools"))
    assert path.startswith(venv) == bool(bundled), (version, path)


def test_every_module_and_data_file_of_the_packages_is_in_the_wheel(built):
    """The wheel's contents, listed: every file of every package of the tool (its modules, its subpackages',
    the data files house/packages.py's DATA names), and nothing else but its metadata."""
    wheel, _python, _tools = built
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = set()
    for package in PACKAGES:
        for folder, dirs, files in os.walk(os.path.join(REPO, package)):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            expected |= {os.path.relpath(os.path.join(folder, f), REPO).replace(os.sep, "/") for f in files
                         if not f.endswith((".pyc", ".so", ".c"))}
    assert sorted(expected - names) == []
    assert {n.split("/")[0] for n in names} == set(PACKAGES) | {"nodelease_check-0.1.0.dist-info"}
    data = {n for n in names if not n.endswith(".py") and ".dist-info/" not in n}
    assert data and all(n.split("/")[0] in DATA for n in data), data


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


def test_a_command_that_needs_the_checkout_says_so(installed):
    """`amendments` replays the findings' plans, which are the tests' (tests/plans/): installed, one line
    that says it runs from a checkout, exit 2; never a traceback."""
    r = script(installed, "amendments", "--seeds", "1")
    assert r.returncode == 2, r.stdout[-2000:] + r.stderr[-2000:]
    assert r.stderr.count("\n") == 1 and "runs from a checkout of the project" in r.stderr, r.stderr
