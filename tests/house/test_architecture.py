"""The house's layers, read off every import of the project (top-level and inside functions, by `ast`):

    model < history < scenarios < checkers < counterexamples < explore < mutants < guided < nodelease < runner.py

A module imports only from its own layer or those below it. Beside the stack, the registries of models:
`broken_models` and `amendments` import only model/, nodelease.errors and (broken_models) amendments, and
every layer above model/ may use them; `nodelease.errors` and `nodelease.house` import nothing of the
project, and anyone may import them. No import cycle joins two of these. A failure names the importing
file and line. The packages and layers are nodelease/house.py's (the one list of them), and
docs/architecture.md's picture of the layers must show the same.
"""

from __future__ import annotations

import ast
import os
import re
from collections import defaultdict

import pytest

from nodelease import house

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAYERS = house.LAYERS + ("runner.py",)
EVERYONE = house.EVERYONE
REGISTRIES = house.REGISTRIES
PACKAGES = list(house.PACKAGES)
ENTRY_POINTS = {"runner.py": "runner.py", "setup.py": "runner.py"}  # the build script sits with the entry point
# what each registry may import, beside the modules everyone may
REGISTRY_IMPORTS = {"broken_models": ("model", "amendments"), "amendments": ("model",)}


def unit_of(module: str) -> str | None:
    """The unit of the layering a dotted module name belongs to (None: not the project's)."""
    for name in EVERYONE:
        if module == name or module.startswith(name + "."):
            return name
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
    assert set(LAYERS) | set(EVERYONE) | set(REGISTRIES) <= units, units


def test_every_package_of_the_checkout_is_on_the_map():
    """A top-level package of the checkout that nodelease/house.py does not name would be left out of the
    wheel and of every rule here: each folder with an __init__.py at the top is one of its PACKAGES."""
    found = sorted(d for d in os.listdir(REPO) if os.path.isfile(os.path.join(REPO, d, "__init__.py"))
                   and d != "tests")
    assert found == sorted(PACKAGES)


@pytest.mark.parametrize("name", EVERYONE)
def test_what_everyone_imports_imports_nothing_of_the_project(name):
    """Everyone may import nodelease.errors and nodelease.house, so they import no one; nor does the
    package's __init__, which every import of them runs first."""
    assert [w for (src, _dst), where in ARROWS.items() if src == name for w in where] == []
    init = [f"nodelease/__init__.py:{line} imports {n}" for line, n in imports_of("nodelease/__init__.py", "nodelease")
            if unit_of(n)]
    assert init == []


@pytest.mark.parametrize("registry", REGISTRIES)
def test_the_registries_import_only_the_model_and_each_other(registry):
    bad = [w for (src, dst), where in ARROWS.items()
           if src == registry and dst not in REGISTRY_IMPORTS[registry] + EVERYONE for w in where]
    assert bad == []


def test_the_picture_of_the_layers_is_the_map():
    """docs/architecture.md draws the layers top down, a package a line (`  nodelease/   the command line`), and
    names the registries beside them: the same as nodelease/house.py."""
    with open(os.path.join(REPO, "docs", "architecture.md")) as f:
        page = f.read()
    picture = page.split("## The parts, in layers", 1)[1].split("```", 2)[1]
    drawn = re.findall(r"^\s{2}([a-z_]+)/\s", picture, re.M)
    assert tuple(reversed(drawn)) == house.LAYERS, drawn
    beside = page.split("## The parts, in layers", 1)[1].split("## ", 1)[0]
    assert all(f"`{r}/`" in beside for r in REGISTRIES) and all(f"`{m.replace('.', '/')}.py`" in beside
                                                                for m in EVERYONE)


@pytest.mark.parametrize("layer", LAYERS)
def test_no_arrow_points_up(layer):
    """`layer` imports only from the layers below it, the registries (above model/) and what everyone may."""
    rank = LAYERS.index(layer)
    bad = []
    for (src, dst), where in ARROWS.items():
        if src != layer or dst in EVERYONE:
            continue
        if dst in REGISTRIES:
            ok = rank > LAYERS.index("model")
        else:
            ok = LAYERS.index(dst) < rank
        if not ok:
            bad += where
    assert bad == [], f"{layer} imports from above it: " + "; ".join(bad)


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
