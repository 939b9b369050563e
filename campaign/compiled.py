"""Compiled copies of the hot modules, loaded only while they match their source (issue 14).

`pip install -e .` (setup.py) compiles the modules in HOT with Cython into `.compiled/`: each
source is copied there, compiled beside its copy, and recorded in `.compiled/manifest.json` with
the sha256 of the source it was built from. `install()` (the first thing the command line does,
nodelease/cli.py) puts a finder in front of the import system that loads a module's compiled copy
only while the module's source file still hashes to the manifest's value. An edited module (a fix
under review, a mutant of `mutants/`) is imported from its source, so nobody runs stale code
unseen; `python runner.py compile` rebuilds what is stale.

The compiled code is the same Python, run without the interpreter's dispatch loop: the same
histories, digest for digest (tests/test_compiled.py compares them). Without a C compiler or
Cython, nothing is compiled and every module is imported from source, only slower.
`NODELEASE_PURE=1` turns the finder off (to compare the two).

Why not compile in place: a compiled module beside its source shadows it, so an edit of `model/`
after the install would run the old code without a word (docs/performance.md).

This module knows where the packages sit (ROOT, the directory holding them: a checkout, or
site-packages) and which of them are hot; it must not import any of them.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the directory holding the packages
OUT = os.path.join(ROOT, ".compiled")
MANIFEST = os.path.join(OUT, "manifest.json")

# where a seed spends its time (profiled: the step function, the history, the world core, every
# checker that runs on each history, the explorer's search): every module of these packages is
# hot, found on disk, so a module added to one is compiled without a list to keep
HOT_PACKAGES = ("model", "history", "scenarios", "checkers")
HOT_MODULES = ("explore.search", "explore.world")
# but these, with why (a module that reads its own __file__ belongs here too: its compiled copy's
# __file__ is in .compiled/, tests/test_compiled.py checks that no hot module reads it)
NOT_HOT = {
    "scenarios.s3": "the real-S3 world waits on the network, not on the interpreter",
    "scenarios.script": "the scripted world of the tests, never run by a campaign",
}


def _discover(root: str = ROOT) -> tuple[str, ...]:
    """Every module of HOT_PACKAGES (their subpackages too) and HOT_MODULES under `root`, but NOT_HOT."""
    names = []
    for package in HOT_PACKAGES:
        for folder, dirs, files in os.walk(os.path.join(root, package)):
            dirs[:] = sorted(d for d in dirs if os.path.exists(os.path.join(folder, d, "__init__.py")))
            prefix = os.path.relpath(folder, root).replace(os.sep, ".")
            # a package's __init__ stays source: the finder loads modules, not packages
            names += [f"{prefix}.{f[:-3]}" for f in sorted(files) if f.endswith(".py") and f != "__init__.py"]
    names += [n for n in HOT_MODULES if os.path.exists(source_path(n, root))]
    return tuple(n for n in names if n not in NOT_HOT)


def source_path(name: str, root: str = ROOT) -> str:
    return os.path.join(root, *name.split(".")) + ".py"


HOT = _discover()

_BUILD = """
import sys
from Cython.Build import cythonize
from setuptools import Distribution
sources = sys.argv[1:]
ext = cythonize(sources, language_level=3, nthreads=2, quiet=True,
                compiler_directives={"binding": False, "annotation_typing": False})
dist = Distribution({"ext_modules": ext, "script_name": "compiled", "script_args": ["build_ext", "--inplace", "-j", "2"]})
dist.parse_command_line()
dist.run_commands()
"""


def _sha256(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def read_manifest(path: str = MANIFEST) -> dict:
    """module -> {"so": path relative to .compiled/, "sha256": of the source it was built from}."""
    try:
        with open(path) as f:
            doc = json.load(f)
        return doc["modules"] if doc.get("python") == sys.implementation.cache_tag else {}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def stale(manifest: dict | None = None, root: str = ROOT, out_dir: str = OUT) -> list[str]:
    """The modules of HOT whose compiled copy is missing or differs from their source under `root`."""
    manifest = read_manifest() if manifest is None else manifest
    out = []
    for name in HOT:
        entry = manifest.get(name)
        if (entry is None or entry["sha256"] != _sha256(source_path(name, root))
                or not os.path.exists(os.path.join(out_dir, entry["so"]))):
            out.append(name)
    return out


def build(log=print) -> int:
    """Compile the stale modules of HOT into .compiled/; return how many were built. Raises
    RuntimeError (with the compiler's last words) if the build fails."""
    manifest = {k: v for k, v in read_manifest().items() if k in HOT}
    todo = stale(manifest)
    if not todo:
        return 0
    if importlib.util.find_spec("Cython") is None:
        raise RuntimeError("Cython is not installed here: `pip install -e .` compiles in its own build "
                           "environment, or `pip install cython` first")
    src_root = os.path.join(OUT, "src")
    sources, hashes = [], {}
    for name in todo:
        parts = name.split(".")
        dst = os.path.join(src_root, *parts) + ".py"
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        for i in range(1, len(parts)):  # a package's __init__.py: Cython names the module by it
            init = os.path.join(src_root, *parts[:i], "__init__.py")
            if not os.path.exists(init):
                open(init, "w").close()
        with open(source_path(name), "rb") as f:
            data = f.read()
        with open(dst, "wb") as f:
            f.write(data)
        hashes[name] = hashlib.sha256(data).hexdigest()
        sources.append(os.path.relpath(dst, src_root))
    log(f"compiling {len(todo)} modules with Cython into {os.path.relpath(OUT)} (a minute or two)")
    p = subprocess.run([sys.executable, "-c", _BUILD, *sources], cwd=src_root, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("the Cython build failed: " + " | ".join((p.stderr or p.stdout).strip().splitlines()[-3:]))
    suffixes = importlib.machinery.EXTENSION_SUFFIXES
    for name in todo:
        base = os.path.join(src_root, *name.split("."))
        so = next((base + s for s in suffixes if os.path.exists(base + s)), None)
        if so is None:
            raise RuntimeError(f"the Cython build made no extension for {name}")
        manifest[name] = {"so": os.path.relpath(so, OUT), "sha256": hashes[name]}
    tmp = MANIFEST + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"python": sys.implementation.cache_tag, "modules": manifest}, f, indent=1, sort_keys=True)
    os.replace(tmp, MANIFEST)
    return len(todo)


def clean() -> None:
    shutil.rmtree(OUT, ignore_errors=True)


class _Finder:
    """A meta-path finder for the modules of the manifest. It asks the finders behind it where the
    module's source is (the checkout it would be imported from: this one, a copy of it, a mutant's
    lane) and loads the compiled copy only if that very file hashes to the value the copy was built
    from; otherwise it returns the source's own spec."""

    def __init__(self, manifest: dict) -> None:
        self.manifest = manifest
        self.loaded: list[str] = []
        self.refused: list[str] = []  # differs from what was compiled: imported from source

    def find_spec(self, name, path=None, target=None):
        entry = self.manifest.get(name)
        if entry is None:
            return None
        spec = None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        so = os.path.join(OUT, entry["so"])
        if (spec is None or not spec.origin or not spec.origin.endswith(".py")
                or _sha256(spec.origin) != entry["sha256"] or not os.path.exists(so)):
            self.refused.append(name)
            return spec
        self.loaded.append(name)
        return importlib.util.spec_from_file_location(name, so)


_finder: _Finder | None = None


def install() -> None:
    """Load the hot modules compiled where their copy matches the source (idempotent)."""
    global _finder
    if _finder is not None or os.environ.get("NODELEASE_PURE"):
        return
    manifest = {k: v for k, v in read_manifest().items() if k in HOT}  # a module taken out of HOT stays out
    if manifest:
        _finder = _Finder(manifest)
        sys.meta_path.insert(0, _finder)


def status() -> str:
    """One line for reports and the benchmark: how many hot modules run compiled."""
    loaded = sum(1 for n in HOT if n in sys.modules and getattr(sys.modules[n], "__file__", "").endswith(
        tuple(importlib.machinery.EXTENSION_SUFFIXES)))
    imported = sum(1 for n in HOT if n in sys.modules)
    return f"{loaded} of {imported} hot modules imported compiled"


def command(console, args) -> int:
    """`compile [--check | --clean]`: build what is stale, say what is, or remove every build."""
    from house.errors import Exit, UsageError

    if args.clean:
        clean()
        print(f"removed {os.path.relpath(OUT)}")
        return Exit.PASSED
    if args.check:
        todo = stale()
        print(f"{len(HOT) - len(todo)} of {len(HOT)} hot modules compiled and current"
              + (f"; stale: {', '.join(todo)}" if todo else ""))
        return Exit.VIOLATION if todo else Exit.PASSED  # the check failed: some run from source
    try:
        n = build()
    except (RuntimeError, OSError) as e:  # no Cython, no compiler: the setup, not a run, failed
        raise UsageError(str(e)) from None
    print(f"{n} modules compiled" if n else "every hot module is compiled and current")
    return Exit.PASSED
