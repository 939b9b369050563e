"""Shared fixtures: the repository on sys.path, and seeds found by running the world.

Seed numbers are never hard-coded: the draw of a seed changes whenever the
world learns a new fault or workload, so a test that needs "a seed where the
broken model is caught" finds one at run time, over a bounded range.
"""

from __future__ import annotations

import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KITS = os.path.join(REPO, "tests", "kits")  # what tests share: hand-made histories, scripted worlds' readers
for path in (KITS, REPO):
    if path not in sys.path:
        sys.path.insert(0, path)

# the hot modules run compiled where their build matches their source (campaign/compiled.py), as the
# command line runs them; an edited module is imported from its source; NODELEASE_PURE=1: source only
from campaign import compiled  # noqa: E402

compiled.install()

# LEASE-1 bites: adopt_any_instance in the 'twins' scenario was caught at seeds
# 13, 106, 159, 180, 209, 236, 253 of 0..299 when these tests were written
# (about 12 ms a seed); the scan stops at the first catch.
TWINS_SCAN_SEEDS = range(0, 300)


@pytest.fixture(scope="session")
def repo() -> str:
    return REPO


@pytest.fixture(scope="session")
def twins_catch():
    """(first seed of TWINS_SCAN_SEEDS where adopt_any_instance violates LEASE-1, its violations)."""
    from broken_models import load
    from checkers import check_all
    from scenarios.sim import run_seed

    broken = load("adopt_any_instance").MODEL
    for seed in TWINS_SCAN_SEEDS:
        history = run_seed(seed, broken, "twins", None, "adopt_any_instance")
        caught = [v for v in check_all(history) if v.invariant == "LEASE-1"]
        if caught:
            return seed, caught
    pytest.fail(
        f"adopt_any_instance (breaks NL-9) was not caught by LEASE-1 in the twins scenario over seeds "
        f"{TWINS_SCAN_SEEDS.start}..{TWINS_SCAN_SEEDS.stop - 1}"
    )


# --- the suite in two processes (pytest-xdist: `-n auto --dist loadgroup` in pyproject.toml) ----------------
# Most of the suite's time is real time, not CPU: the real-S3 tests wait on their servers' clocks (a third
# of the run), and the campaigns the command-line tests start use both cores only part of the time. Two
# processes overlap them. A work unit is a test file (a module's fixtures, e.g. test_dask.py's cluster, and
# its tests' order stay whole), but for these, one unit each: every real-S3 test (they run one after the
# other, never beside each other: real time is their measure), and a directory whose files share a session
# fixture (the three shrinks of tests/counterexamples, the explorations of tests/explore), so nothing is
# computed twice. Units go out longest first (LONGEST: measured), the rest in the order of collection.
GROUPS = {
    "tests/conformance/": "real-s3",
    "tests/scenarios/test_s3_world.py": "real-s3",
    "tests/check_trace/test_cluster.py": "real-s3",
    "tests/counterexamples/": "counterexamples",
    "tests/explore/": "explore",
}
LONGEST = ("real-s3", "counterexamples", "explore", "tests/cli/test_dask.py", "tests/cli/test_ci.py",
           "tests/cli/test_install.py", "tests/cli/test_runner.py", "tests/cli/test_reliability.py")
WORKERS = 2  # the project's machine has two cores


def pytest_xdist_auto_num_workers(config) -> int:
    """`-n auto`: two processes for the suite or a directory of it, none for a file or a test (starting
    workers would cost more than it saves)."""
    args = [a.split("::")[0] for a in config.args] or ["."]
    return min(WORKERS, os.cpu_count() or 1) if all(os.path.isdir(a) for a in args) else 0


def pytest_configure(config):
    """The groups reach xdist's scheduler in the tests' ids ("...@real-s3"), which pytest-xdist 3.8 sets as
    `item._nodeid`; from pytest 9.1 an id is no longer read from there, the groups are lost without a word and
    the real-S3 tests run side by side (they did in CI with pytest 9.2, and timed each other out). Refuse that."""
    import xdist

    old_xdist = tuple(int(x) for x in xdist.__version__.split(".")[:2]) <= (3, 8)
    if old_xdist and pytest.version_tuple[:2] >= (9, 1) and config.getoption("dist", "no") == "loadgroup":
        raise pytest.UsageError(f"pytest {pytest.__version__} with pytest-xdist {xdist.__version__} ignores the test "
                                "groups of tests/conftest.py: install pytest<9.1 (pip install -e '.[test]')")


def _unit(item) -> str:
    rel = os.path.relpath(str(item.path), REPO).replace(os.sep, "/")
    return next((g for prefix, g in GROUPS.items() if rel.startswith(prefix)), rel)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return  # one process: the order of collection
    for item in items:
        item.add_marker(pytest.mark.xdist_group(_unit(item)))
    rank = {u: k for k, u in enumerate(LONGEST)}
    order = {id(item): k for k, item in enumerate(items)}
    items.sort(key=lambda item: (rank.get(_unit(item), len(LONGEST)), order[id(item)]))
