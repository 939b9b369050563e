"""The house's layers, read off every import of the project (top-level and inside functions, by `ast`):

    house < model < history < scenarios < checkers < counterexamples < traces < explore < mutants < guided
          < campaign < nodelease < runner.py

A module imports only from its own layer or those below it: house/ (the errors, the map of the
packages) imports nothing of the project, and every layer may import it. Beside the stack, the
registries of models: `broken_models` and `amendments` import only house/, model/ and (broken_models)
amendments, and every layer above model/ may use them; so no layer below campaign/ and no registry
imports campaign/ (the library the command line calls) or nodelease/ (the command line). No import
cycle joins two of these. A failure names the importing file and line. The packages and layers are
house/packages.py's (the one list of them), and docs/architecture.md's picture of the layers must
show the same.
"""

from __future__ import annotations

import ast
import os
import re
from collections import defaultdict

import pytest

from house import packages

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAYERS = packages.LAYERS + ("runner.py",)
REGISTRIES = packages.REGISTRIES
PACKAGES = list(packages.PACKAGES)
ENTRY_POINTS = {"runner.py": "runner.py", "setup.py": "runner.py"}  # the build script sits with the entry point
# what each registry may import
REGISTRY_IMPORTS = {"broken_models": ("house", "model", "amendments"), "amendments": ("house", "model")}


def unit_of(module: str) -> str | None:
    """The unit of the layering a dotted module name belongs to (None: not the project's)."""
    top = module.split(".")[0]
    if top in PACKAGES:
        return top
    return {"runner": "runner.py", "setup": "runner.py"}.get(top)


def project_files() -> dict[str, str]:
    """path relative to the repository -> dotted module name, for every module of the project."""
    out = {}
    for package in PACKAGES:
        for folder, dirs, files in os.walk(os.path.join(REPO, package)):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for f in files:
                if f.endswith(".py"):
                    rel = os.path.relpath(os.path.join(folder, f), REPO)
                    name = rel[:-3].replace(os.sep, ".")
                    out[rel] = name[: -len(".__init__")] if name.endswith(".__init__") else name
    for script in ENTRY_POINTS:
        out[script] = script[:-3]
    return out


def imports_of(path: str, module: str) -> list[tuple[int, str]]:
    """(line, the dotted module each import names), relative imports resolved against `module`."""
    tree = ast.parse(open(os.path.join(REPO, path)).read(), path)
    package = module.split(".") if path.endswith("__init__.py") else module.split(".")[:-1]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if node.module is None:  # `from . import x`: each x is a module of the package
                out += [(node.lineno, f"{target}.{a.name}") for a in node.names]
            else:
                out.append((node.lineno, target))
    return out


def arrows() -> dict[tuple[str, str], list[str]]:
    """(importing unit, imported unit) -> where ("path:line imports name"), between distinct units."""
    found: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path, module in project_files().items():
        src = ENTRY_POINTS.get(path) or unit_of(module)
        for line, name in imports_of(path, module):
            dst = unit_of(name)
            if dst is not None and dst != src:
                found[(src, dst)].append(f"{path}:{line} imports {name}")
    return found


ARROWS = arrows()


def test_the_walk_sees_every_layer():
    """The test reads real imports (a walk that found nothing would pass every rule)."""
    units = {u for pair in ARROWS for u in pair}
    assert set(LAYERS) | set(REGISTRIES) <= units, units


def test_every_package_of_the_checkout_is_on_the_map():
    """A top-level package of the checkout that house/packages.py does not name would be left out of the
    wheel and of every rule here: each folder with an __init__.py at the top is one of its PACKAGES."""
    found = sorted(d for d in os.listdir(REPO) if os.path.isfile(os.path.join(REPO, d, "__init__.py"))
                   and d != "tests")
    assert found == sorted(PACKAGES)


@pytest.mark.parametrize("package", ("house", "campaign", "nodelease"))
def test_an_init_run_by_the_first_imports_imports_nothing(package):
    """house/__init__.py runs before every import of the errors, campaign/__init__.py before the compiled-module
    finder (the command line's first import: no hot module may be imported before it), nodelease/__init__.py
    before the command line: none imports the project."""
    path = f"{package}/__init__.py"
    assert [f"{path}:{line} imports {n}" for line, n in imports_of(path, package) if unit_of(n)] == []


def outside(registry: str, arrows: dict[tuple[str, str], list[str]]) -> list[str]:
    """Where `registry` imports what it may not: anything but house/, model/ and (broken_models) amendments/."""
    return [w for (src, dst), where in arrows.items() if src == registry and dst not in REGISTRY_IMPORTS[registry]
            for w in where]


@pytest.mark.parametrize("registry", REGISTRIES)
def test_the_registries_import_only_the_model_and_each_other(registry):
    assert outside(registry, ARROWS) == []


def test_the_picture_of_the_layers_is_the_map():
    """docs/architecture.md draws the layers top down, a package a line (`  nodelease/   the command line`), and
    names the registries beside them: the same as house/packages.py (house/ at the bottom)."""
    with open(os.path.join(REPO, "docs", "architecture.md")) as f:
        page = f.read()
    picture = page.split("## The parts, in layers", 1)[1].split("```", 2)[1]
    drawn = re.findall(r"^\s{2}([a-z_]+)/\s", picture, re.M)
    assert tuple(reversed(drawn)) == packages.LAYERS, drawn
    beside = page.split("## The parts, in layers", 1)[1].split("## ", 1)[0]
    assert all(f"`{r}/`" in beside for r in REGISTRIES)


def upward(layer: str, arrows: dict[tuple[str, str], list[str]]) -> list[str]:
    """Where `layer` imports what it may not: a layer at or above it, or a registry when it is model/ or
    below (house/, at the bottom, may import nothing of the project)."""
    rank = LAYERS.index(layer)
    bad = []
    for (src, dst), where in arrows.items():
        if src != layer:
            continue
        if dst in REGISTRIES:
            ok = rank > LAYERS.index("model")
        else:
            ok = LAYERS.index(dst) < rank
        if not ok:
            bad += where
    return bad


@pytest.mark.parametrize("layer", LAYERS)
def test_no_arrow_points_up(layer):
    """`layer` imports only from the layers below it and the registries (above model/)."""
    bad = upward(layer, ARROWS)
    assert bad == [], f"{layer} imports from above it: " + "; ".join(bad)


def test_the_stack_is_the_one_issue_38_drew():
    """house/ at the bottom, under model/; campaign/ (the library) above the checkers, the scenarios and
    the counterexamples it runs, and above every other layer but the command line; nodelease/ (the
    command line) on top, under runner.py alone."""
    assert LAYERS[0] == "house" and LAYERS[1] == "model"
    assert LAYERS[-3:] == ("campaign", "nodelease", "runner.py")
    assert all(LAYERS.index(p) < LAYERS.index("campaign") for p in ("scenarios", "checkers", "counterexamples"))


def made_up(src: str, dst: str) -> dict[tuple[str, str], list[str]]:
    """One import of `dst` by a module of `src`, as arrows() would report it."""
    return {(src, dst): [f"{src}/made_up.py:1 imports {dst}.x"]}


@pytest.mark.parametrize("src, dst", [("house", "model"), ("house", "broken_models"), ("model", "broken_models"),
                                      ("checkers", "campaign"), ("guided", "campaign"), ("guided", "nodelease"),
                                      ("campaign", "nodelease"), ("nodelease", "runner.py")])
def test_an_import_up_the_stack_is_caught(src, dst):
    """The rule can fail: each made-up import against the stack is reported."""
    assert upward(src, made_up(src, dst)) == made_up(src, dst)[(src, dst)]


@pytest.mark.parametrize("src, dst", [("model", "house"), ("broken_models", "house"), ("campaign", "checkers"),
                                      ("nodelease", "campaign"), ("checkers", "broken_models")])
def test_an_import_down_the_stack_passes(src, dst):
    if src in REGISTRIES:
        assert outside(src, made_up(src, dst)) == []
    else:
        assert upward(src, made_up(src, dst)) == []


@pytest.mark.parametrize("registry", REGISTRIES)
@pytest.mark.parametrize("dst", ("campaign", "nodelease", "checkers"))
def test_a_registry_importing_above_the_model_is_caught(registry, dst):
    assert outside(registry, made_up(registry, dst)) == made_up(registry, dst)[(registry, dst)]


def test_no_import_cycle_between_packages():
    graph: dict[str, set[str]] = defaultdict(set)
    for src, dst in ARROWS:
        graph[src].add(dst)
    cycles = []

    def visit(node: str, path: list[str]) -> None:
        for nxt in sorted(graph[node]):
            if nxt in path:
                cycles.append(path[path.index(nxt):] + [nxt])
            elif nxt not in done:
                visit(nxt, path + [nxt])
        done.add(node)

    done: set[str] = set()
    for start in sorted(graph):
        if start not in done:
            visit(start, [start])
    assert cycles == [], "; ".join(" -> ".join(c) + " (" + ", ".join(ARROWS[(a, b)][0] for a, b in zip(c, c[1:])) + ")"
                                   for c in cycles)
