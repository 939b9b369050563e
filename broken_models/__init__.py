"""The registry of models: the correct one, and the deliberately broken ones, discovered.

Each module of this package is one broken model: it differs from model/ in exactly one rule
(it subclasses `model.node.Model` and overrides one decision), and declares

    RULE = "OR-9"      # the rule it breaks (docs/protocol.md)
    CATCHES = "INV-6"  # the invariant that must catch it: `broken` counts it caught only by this one
    MODEL = ...        # the model object (with .step)

and optionally `SURVIVOR = "why"` for a mutant this world does not catch (it is run and shown,
but its surviving fails nothing), and `SCENARIO = "upgrade"` for one whose rule lives in a part of
the world the swarm seldom draws (`broken` runs it there, beside a control in the same scenario).
Adding a broken model is adding its module: nothing else
lists it. `load_model(name)` gives the model object a name stands for ("correct": model/).

Imports only model/ (and amendments/, which imports only model/): every layer above may use the registry (the worlds do not need it).
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass

from house.errors import UsageError

CORRECT = "correct"
# the ADR's own three (BM-1..BM-3 in docs/protocol.md) are listed first, in that order; the rest by name
_FIRST = ("unconditional_fence", "reused_generation", "unlocked_resolver")


@dataclass(frozen=True)
class Entry:
    """One model of the registry."""

    name: str
    kind: str  # "correct", "broken" (must be caught by `catches`) or "survivor" (caught by nothing here)
    rule: str  # the rule it breaks ("-" for the correct model)
    catches: str  # the invariant that must catch it ("-" for the correct model)
    summary: str  # the first line of its docstring
    module: str
    scenario: str | None = None  # where `broken` runs it (None: the run's scenario, the swarm by default)

    def load(self):
        """The model object (with .step)."""
        return importlib.import_module(self.module).MODEL


def _names() -> list[str]:
    found = sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))
    return [n for n in _FIRST if n in found] + [n for n in found if n not in _FIRST]


def _entry(name: str) -> Entry:
    if name == CORRECT:
        return Entry(CORRECT, "correct", "-", "-", "the protocol as ADR 0020 specifies it", "model")
    mod = importlib.import_module(f"{__name__}.{name}")
    for attr in ("RULE", "CATCHES", "MODEL"):
        if not hasattr(mod, attr):
            raise TypeError(f"broken_models/{name}.py declares no {attr} (every broken model names the rule it "
                            f"breaks, the invariant that catches it, and its MODEL)")
    summary = (mod.__doc__ or "").strip().split("\n", 1)[0]
    kind = "survivor" if getattr(mod, "SURVIVOR", None) else "broken"
    return Entry(name, kind, mod.RULE, mod.CATCHES, summary, mod.__name__, getattr(mod, "SCENARIO", None))


def names() -> list[str]:
    """Every model's name: the correct one first, then the broken ones, the survivors last."""
    entries = [_entry(n) for n in _names()]
    return ([CORRECT] + [e.name for e in entries if e.kind == "broken"]
            + [e.name for e in entries if e.kind == "survivor"])


def entries() -> list[Entry]:
    """Every model's entry, in `names()` order."""
    return [entry(n) for n in names()]


def entry(name: str) -> Entry:
    """The entry of the model `name` (UsageError, one line, if there is none): the correct model, a
    broken one, or a variant of amendments/ (kind "variant": proposed, never run by `broken`)."""
    if name != CORRECT and name not in _names():
        from amendments import is_variant, variant

        if is_variant(name):
            v = variant(name)
            return Entry(name, "variant", ",".join(v.rules), "-", v.summary, v.module)
        raise UsageError(f"unknown model {name!r} (choices: {', '.join(names())}, or a variant of amendments/)")
    return _entry(name)


def load_model(name: str):
    """The model object (with .step) registered under `name`."""
    return entry(name).load()


def load(name: str):
    """A broken model's module (its RULE, CATCHES, MODEL and docstring)."""
    if name == CORRECT or name not in _names():
        raise UsageError(f"unknown broken model {name!r}")
    return importlib.import_module(f"{__name__}.{name}")
