"""campaign/compiled.py: the hot modules (found on disk) run compiled only while their source is the
one they were built from, the command line installs the finder before any of them is imported, and
compiled or not, a seed's history is the same (issue 14's speed may not cost a verdict)."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from campaign import compiled
from house.packages import PACKAGES

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILT = not compiled.stale()
needs_build = pytest.mark.skipif(not BUILT, reason="the hot modules are not compiled here (python runner.py compile)")


def _run(args, cwd=REPO, **env):
    e = dict(os.environ, COLUMNS="200")
    e.pop("NODELEASE_PURE", None)
    e.update(env)
    return subprocess.run([sys.executable, *args], cwd=cwd, env=e, capture_output=True, text=True, timeout=600)


def test_a_module_whose_source_differs_from_its_build_is_stale(tmp_path):
    """stale() compares each source with the hash its compiled copy was built from."""
    for name in compiled.HOT:
        dst = tmp_path / (compiled.source_path(name, str(tmp_path))[len(str(tmp_path)) + 1:])
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(compiled.source_path(name), dst)
    out = tmp_path / ".compiled"
    out.mkdir()
    manifest = {}
    for name in compiled.HOT:
        (out / (name + ".so")).write_bytes(b"")
        manifest[name] = {"so": name + ".so", "sha256": compiled._sha256(compiled.source_path(name))}
    assert compiled.stale(manifest, str(tmp_path), str(out)) == []
    with open(compiled.source_path("model.fencing", str(tmp_path)), "a") as f:
        f.write("# a fix under review\n")
    (out / "checkers.facts.so").unlink()
    assert compiled.stale(manifest, str(tmp_path), str(out)) == ["model.fencing", "checkers.facts"]


def test_a_manifest_of_another_python_is_not_read(tmp_path):
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps({"python": "cpython-00", "modules": {"model.io": {"so": "x", "sha256": "y"}}}))
    assert compiled.read_manifest(str(path)) == {}
    path.write_text("{not json")
    assert compiled.read_manifest(str(path)) == {}


@needs_build
def test_an_edited_module_runs_from_its_source_and_the_rest_compiled(tmp_path):
    """A copy of the checkout (as a mutant's lane is), one module edited: that module is imported
    from the edited source, every other hot module from its compiled copy."""
    lane = tmp_path / "lane"
    lane.mkdir()
    for name in PACKAGES:
        shutil.copytree(os.path.join(REPO, name), lane / name, ignore=shutil.ignore_patterns("__pycache__"))
    os.symlink(os.path.join(REPO, ".compiled"), lane / ".compiled")
    with open(lane / "model" / "fencing.py", "a") as f:
        f.write("\nEDITED = True\n")
    probe = ("import nodelease.cli, model.fencing, model.dispatch, scenarios.core\nfrom campaign import compiled\n"
             "print(model.fencing.EDITED, model.fencing.__file__)\n"
             "print(model.dispatch.__file__)\nprint(scenarios.core.__file__)\nprint(compiled._finder.refused)")
    r = _run(["-c", probe], cwd=lane)
    assert r.returncode == 0, r.stderr
    edited, dispatch, core, refused = r.stdout.splitlines()
    assert edited == f"True {lane / 'model' / 'fencing.py'}"
    assert dispatch.endswith(tuple(compiled.importlib.machinery.EXTENSION_SUFFIXES)), dispatch
    assert core.endswith(tuple(compiled.importlib.machinery.EXTENSION_SUFFIXES)), core
    assert refused == "['model.fencing']"


@needs_build
def test_compiled_and_source_give_the_same_histories(tmp_path):
    """The same 12 seeds, compiled and from source: the same digest, every hot module compiled in
    the one and none in the other (the report says which)."""
    digests = {}
    for pure in ("", "1"):
        report = tmp_path / f"r{pure}.json"
        env = {"NODELEASE_PURE": pure} if pure else {}
        r = _run(["runner.py", "--seeds", "12", "--workers", "1", "--report", str(report)], **env)
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
        doc = json.loads(report.read_text())
        digests[pure] = doc["history_digest"]
        n, _of, m = doc["compiled"].split()[:3]
        assert (n == "0") if pure else (n == m), doc["compiled"]
    assert digests[""] == digests["1"]


def test_the_hot_modules_are_found_on_disk(tmp_path):
    """HOT is every module of the hot packages (their subpackages too) and the explorer's search,
    but NOT_HOT and the packages' __init__: a module added to checkers/ is compiled without a list
    to keep."""
    for path in ("model/__init__.py", "model/new_rule.py", "checkers/__init__.py", "checkers/kinds/__init__.py",
                 "checkers/kinds/one.py", "scenarios/__init__.py", "scenarios/s3.py", "scenarios/core.py",
                 "explore/search.py", "explore/other.py", "counterexamples/shrink.py"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("")
    assert compiled._discover(str(tmp_path)) == ("model.new_rule", "scenarios.core", "checkers.kinds.one",
                                                 "explore.search")
    assert {"model.node", "history.record", "scenarios.core", "checkers.verdict", "explore.world"} <= set(compiled.HOT)
    assert not set(compiled.NOT_HOT) & set(compiled.HOT)


def test_no_hot_module_reads_its_own_file():
    """A compiled module's __file__ is its copy in .compiled/: a module that finds anything by its own
    __file__ must stay source (named in compiled.NOT_HOT, with why). The tool's own modules, which
    find the packages and .compiled/ by __file__ (compiled.ROOT), are none of them."""
    assert not [n for n in compiled.HOT if n.split(".")[0] in ("nodelease", "campaign", "house", "counterexamples",
                                                                 "mutants", "broken_models")]
    for name in compiled.HOT:
        with open(compiled.source_path(name)) as f:
            assert "__file__" not in f.read(), f"{name} reads __file__: name it in compiled.NOT_HOT"


def test_the_command_line_installs_the_finder_before_any_hot_module():
    """Importing the command line (as runner.py and the console script do) installs the finder and
    imports no hot module itself: every hot module is imported after it, compiled where current."""
    probe = ("import sys, nodelease.cli\nfrom campaign import compiled\n"
             "print([n for n in compiled.HOT if n in sys.modules])\nprint(compiled._finder is not None)")
    r = _run(["-c", probe], cwd=str(REPO))
    assert r.returncode == 0, r.stderr
    imported, installed = r.stdout.splitlines()
    assert imported == "[]"
    assert installed == str(bool(compiled.read_manifest()))  # (no manifest, nothing to install)
