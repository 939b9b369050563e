"""Variant models: proposed amendments to ADR 0020 and the other readings of its open questions
(issue 31).

Each module of this package is one variant: like a broken model (broken_models/) it subclasses
`model.node.Model` and overrides one decision, but it is proposed, not broken: `runner.py broken`
never runs it, and the correct model's campaign never sees it. It declares

    ADDRESSES = "F-2"        # the finding it would remove, or the question (Q-1..) it answers
    KIND = "amendment"       # "amendment" (removes a finding) or "question" (the other reading)
    RULES = ("OR-8",)        # the rules it changes (docs/protocol.md)
    ADR = "..."              # the ADR text it would change, quoted from adr-0020-node-lease.md
    PROPOSED = "..."         # the text it proposes instead
    PLANS = ("tests/plans/f2-....json",)  # the finding's plans, run with this variant substituted
    MODEL = ...              # the model object (with .step)

`runner.py amendments` (nodelease/amendments.py) judges every variant and compares its verdict
with the one recorded in amendments/verdicts.json. A variant runs anywhere a model name is taken
(`run --model <name>`, a plan naming it): broken_models.load_model knows this registry too.

Imports only model/ (and, for a variant built on another, that variant's module here).
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass

KINDS = ("amendment", "question")
_ATTRS = ("ADDRESSES", "KIND", "RULES", "ADR", "PROPOSED", "MODEL")


@dataclass(frozen=True)
class Variant:
    name: str
    addresses: str
    kind: str
    rules: tuple[str, ...]
    adr: str
    proposed: str
    plans: tuple[str, ...]
    summary: str
    module: str

    def load(self):
        return importlib.import_module(self.module).MODEL


def names() -> list[str]:
    """Every variant's name, ordered by what it addresses (F-1.., then Q-1..), then by name."""
    found = sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))
    return sorted(found, key=lambda n: (_order(variant(n).addresses), n))


def _order(addresses: str) -> tuple:
    kind, _, num = addresses.partition("-")
    return (kind != "F", int(num) if num.isdigit() else 99, addresses)


def is_variant(name: str) -> bool:
    return name in {m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")}


def variant(name: str) -> Variant:
    mod = importlib.import_module(f"{__name__}.{name}")
    for attr in _ATTRS:
        if not hasattr(mod, attr):
            raise TypeError(f"amendments/{name}.py declares no {attr}")
    if mod.KIND not in KINDS:
        raise TypeError(f"amendments/{name}.py: KIND {mod.KIND!r} is not one of {KINDS}")
    summary = (mod.__doc__ or "").strip().split("\n", 1)[0]
    return Variant(name, mod.ADDRESSES, mod.KIND, tuple(mod.RULES), mod.ADR, mod.PROPOSED,
                   tuple(getattr(mod, "PLANS", ())), summary, mod.__name__)


def variants() -> list[Variant]:
    return [variant(n) for n in names()]
