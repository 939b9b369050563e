"""compiled.py: the hot modules run compiled only while their source is the one they were built
from, and compiled or not, a seed's history is the same (issue 14's speed may not cost a verdict)."""

import json
import os
import shutil
import subprocess
import sys

import pytest

import compiled

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILT = not compiled.stale()
needs_build = pytest.mark.skipif(not BUILT, reason="the hot modules are not compiled here (python compiled.py)")


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
    for name in ("model", "scenarios", "checkers", "explore"):
        shutil.copytree(os.path.join(REPO, name), lane / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("runner.py", "reporting.py", "compiled.py"):
        shutil.copy(os.path.join(REPO, name), lane)
    os.symlink(os.path.join(REPO, ".compiled"), lane / ".compiled")
    with open(lane / "model" / "fencing.py", "a") as f:
        f.write("\nEDITED = True\n")
    probe = ("import runner, compiled, model.fencing, model.dispatch, scenarios.core\n"
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
    """The same 30 seeds, compiled and from source: the same digest, every hot module compiled in
    the one and none in the other (the report says which)."""
    digests = {}
    for pure in ("", "1"):
        report = tmp_path / f"r{pure}.json"
        env = {"NODELEASE_PURE": pure} if pure else {}
        r = _run(["runner.py", "--seeds", "30", "--workers", "1", "--report", str(report)], **env)
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
        doc = json.loads(report.read_text())
        digests[pure] = doc["history_digest"]
        n, _of, m = doc["compiled"].split()[:3]
        assert (n == "0") if pure else (n == m), doc["compiled"]
    assert digests[""] == digests["1"]


@needs_build
def test_no_compiled_module_moves_what_is_found_by_file():
    """A compiled module's __file__ is its copy in .compiled/: a module that finds the repository by its own
    __file__ (reporting.HERE: where reports land) must stay source. With the hot modules compiled, reports
    still land in the repository's reports/, and no hot module's source reads __file__."""
    probe = "import runner, compiled, reporting, scenarios.core\nprint(reporting.HERE)\nprint(compiled.status())"
    r = _run(["-c", probe])
    assert r.returncode == 0, r.stderr
    here, status = r.stdout.splitlines()
    assert here == REPO and not status.startswith("0 of"), (here, status)
    for name in compiled.HOT:
        with open(compiled.source_path(name)) as f:
            assert "__file__" not in f.read(), name
