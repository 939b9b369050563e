"""`list [SECTION...]`: what there is to run, a section each (models, scenarios).

A section is a name and a function that yields its lines; adding one (invariants, fault kinds,
coverage points) is adding an entry to SECTIONS. This module reads the registries; it must not
know the parser (nodelease/cli.py).
"""

from __future__ import annotations

from collections.abc import Iterator

from house.errors import Exit, UsageError


def models() -> Iterator[str]:
    from broken_models import entries

    for e in entries():
        if e.kind == "correct":
            yield f"{e.name:<28} {e.summary}"
        elif e.kind == "broken":
            yield f"{e.name:<28} breaks {e.rule}, must be caught by {e.catches}"
        else:
            yield f"{e.name:<28} breaks {e.rule}; survives this world (see its docstring)"


def scenarios() -> Iterator[str]:
    from scenarios.swarm import SCENARIOS

    for name, what in SCENARIOS.items():
        yield f"{name:<22} {what}"


def faults() -> Iterator[str]:
    from scenarios.faults import KINDS

    for kind in KINDS.values():
        yield f"{kind.id:<22} {kind.title} ({', '.join(kind.rules)})"


# section -> its lines, in the order `list` prints them
SECTIONS = {"models": models, "scenarios": scenarios, "faults": faults}


def command(console, args) -> int:
    unknown = [name for name in args.sections if name not in SECTIONS]
    if unknown:
        raise UsageError(f"unknown section {unknown[0]!r} (choices: {', '.join(SECTIONS)})")
    for name in args.sections or SECTIONS:
        print(f"{name}:")
        for line in SECTIONS[name]():
            print(f"  {line}")
    return Exit.PASSED
