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
import re
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
sys.path.insert(0, sys.argv[1])
from campaign.compiled import plain_tuples
sources = sys.argv[2:]
ext = cythonize(sources, language_level=3, nthreads=2, quiet=True,
                compiler_directives={"binding": False, "annotation_typing": False})
for e in ext:
    for c in e.sources:
        if c.endswith(".c"):
            plain_tuples(c)
dist = Distribution({"ext_modules": ext, "script_name": "compiled", "script_args": ["build_ext", "--inplace", "-j", "2"]})
dist.parse_command_line()
dist.run_commands()
"""
# The build's recipe: a manifest written by another (an older build, without `plain_tuples`) is stale, every
# module of it rebuilt. Bump it when what the build makes of a source changes.
RECIPE = 2

# Between Cython and the C compiler, two exact rewrites of the generated C (`plain_tuples`), for the named tuples
# (the model's states, inputs and effects, the history's events and their fields, the ledger's rows):
# - Cython unpacks a sequence (`a, b = x`, `for t, p, kind, fields in events`) by index only when `x` is exactly a
#   tuple or a list, and through an iterator otherwise: a named tuple took the slow way, about 38,000 times a
#   seed. A tuple whose type iterates as `tuple` does (a named tuple defines no `__iter__`) yields by index
#   exactly what its iterator yields, so both tests of each unpacking accept it (`__Pyx_PlainTuple`).
# - Cython reads `x[i]` (an int i) by index only when `x` is exactly a tuple or a list; a subclass's `sq_item` is
#   CPython's generic slot that calls `__getitem__` as a method (750 instructions a read, 11 M a seed). A tuple
#   whose type subscripts as `tuple` does (no `__getitem__` of its own) gives exactly the tuple's item, so the
#   tuple's fast path takes it (`__Pyx_IndexedTuple`).
# A tuple subclass with an `__iter__` or a `__getitem__` of its own still goes through it.
PLAIN_TUPLE = ("#define __Pyx_PlainTuple(o) (PyTuple_Check(o) && Py_TYPE(o)->tp_iter == PyTuple_Type.tp_iter)\n"
               "#define __Pyx_IndexedTuple(o) (PyTuple_CheckExact(o) || (PyTuple_Check(o) && "
               "Py_TYPE(o)->tp_as_mapping->mp_subscript == PyTuple_Type.tp_as_mapping->mp_subscript))")
_INDEX = "    if (PyTuple_CheckExact(o)) {\n        return __Pyx_GetItemInt_Tuple_Fast(o, i, wraparound, boundscheck,"
_UNPACK = re.compile(r"^(\s*if \(\(likely\()PyTuple_CheckExact(\((\w+)\)\)\) \|\| \(PyList_CheckExact\(\w+\)\)\) \{)$")
_UNPACK_INNER = "if (likely(PyTuple_CheckExact(sequence))) {"


def plain_tuples(path: str) -> int:
    """Let every unpacking and every read by an int index in the C file at `path` (made by Cython) take a plain
    tuple's fast path for a tuple whose type iterates (subscripts) as `tuple` does; returns how many places it
    changed. Each unpacking tests its sequence twice (the outer test, then which of tuple or list it is, a few
    lines below): both are changed, or neither."""
    with open(path) as f:
        lines = f.read().split("\n")
    n = 0
    for i, line in enumerate(lines):
        m = _UNPACK.match(line)
        if not m or i + 1 >= len(lines) or lines[i + 1].strip() != f"PyObject* sequence = {m.group(3)};":
            continue
        j = next((k for k in range(i + 2, min(i + 16, len(lines))) if _UNPACK_INNER in lines[k]), None)
        if j is None:
            continue
        lines[i] = m.group(1) + "__Pyx_PlainTuple" + m.group(2)
        lines[j] = lines[j].replace(_UNPACK_INNER, "if (likely(__Pyx_PlainTuple(sequence))) {")
        n += 1
    at = next((i for i, line in enumerate(lines) if line.startswith('#include "Python.h"')), None)
    if at is None:
        return 0  # not Cython's C: left as it is
    if lines[at + 1] != PLAIN_TUPLE.split("\n")[0]:  # (once: a C file Cython did not write again keeps its rewrite)
        lines.insert(at + 1, PLAIN_TUPLE)
    text = "\n".join(lines)
    n += text.count(_INDEX)  # (`__Pyx_GetItemInt_Fast`, once a module)
    text = text.replace(_INDEX, _INDEX.replace("PyTuple_CheckExact(o)", "__Pyx_IndexedTuple(o)"))
    with open(path, "w") as f:
        f.write(text)
    return n


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
        ours = doc.get("python") == sys.implementation.cache_tag and doc.get("recipe") == RECIPE
        return doc["modules"] if ours else {}
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
    p = subprocess.run([sys.executable, "-c", _BUILD, ROOT, *sources], cwd=src_root, capture_output=True, text=True)
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
        json.dump({"python": sys.implementation.cache_tag, "recipe": RECIPE, "modules": manifest}, f, indent=1,
                  sort_keys=True)
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
