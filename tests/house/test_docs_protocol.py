"""docs/protocol.md defines every rule id the code cites, and no id twice.

The code cites protocol rules and checks by id (timing, node lease, fencing, ownership, clean
stop and drain, upgrade, bounds, invariants, broken models, and the project's own checks); each
must have an entry in docs/protocol.md, so that a reader of the code never needs a file outside
the repository. An entry is a line whose bold lead begins with the id (the id in bold at the
start of a line, or of a list item), or a heading that begins with it. A range such as
`CS-1..CS-4` (or `INV-4..6`) cites every id in it.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from house.packages import PACKAGES

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "protocol.md"

# where the project's Python code lives: every package of the tool (house/packages.py) and the tests (the
# top-level modules are scanned too)
CODE_DIRS = (*PACKAGES, "tests")

FAMILIES = ("T", "NL", "FN", "OR", "CS", "UP", "BD", "INV", "BM", "LEASE", "FENCE", "CONV", "COST", "SLOT")
# what else looks like an id in the code: findings and open questions (docs/findings.md: F-, Q-, P-), and
# words that are no ids at all. A family in neither list fails `test_every_id_family_is_known`.
NOT_PROTOCOL = {"F": "a known finding (docs/findings.md)", "Q": "an open question (docs/findings.md)",
                "P": "a proposal measured (docs/findings.md)", "UTF": "UTF-8", "TEST": "a registry test's made-up id",
                "N": "seeds 0..N-1"}
ANY_ID = re.compile(r"\b([A-Z]+)-[0-9]+\b")
_FAMILY = "|".join(FAMILIES)
CITED = re.compile(rf"\b({_FAMILY})-([0-9]+)\b")
RANGE = re.compile(rf"\b({_FAMILY})-([0-9]+) ?\.\.\.? ?(?:({_FAMILY})-)?([0-9]+)\b")
# an entry: `**ID ...` at the start of a line or list item, or a heading beginning with ID
DEFINED = re.compile(r"^(?:\s*(?:[-*+]\s+)?\*\*|#{1,6}\s+)([A-Z]+-[0-9]+)\b")


def python_files() -> list[Path]:
    files = sorted(ROOT.glob("*.py"))
    for d in CODE_DIRS:
        files.extend(sorted((ROOT / d).rglob("*.py")))
    return files


def cited_ids() -> dict[str, str]:
    """Every id the code cites -> the first place it is cited (path:line)."""
    where: dict[str, str] = {}
    for path in python_files():
        rel = path.relative_to(ROOT)
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for rule in ids_in(line):
                where.setdefault(rule, f"{rel}:{n}")
    return where


def ids_in(line: str) -> list[str]:
    """The ids a line cites, a range's included."""
    ids = [f"{fam}-{num}" for fam, num in CITED.findall(line)]
    for fam, lo, fam2, hi in RANGE.findall(line):
        if fam2 in ("", fam) and int(lo) < int(hi):
            ids.extend(f"{fam}-{k}" for k in range(int(lo), int(hi) + 1))
    return ids


def defined_ids() -> list[str]:
    """The ids docs/protocol.md defines, in order, repeats kept."""
    return [m.group(1) for line in DOC.read_text(encoding="utf-8").splitlines() if (m := DEFINED.match(line))]


def test_the_code_cites_rule_ids():
    """The scan finds the code's citations (a guard against a scan that reads nothing)."""
    assert len(cited_ids()) > 50


def test_every_cited_id_is_defined():
    defined = set(defined_ids())
    missing = {rule: at for rule, at in cited_ids().items() if rule not in defined}
    listed = ", ".join(f"{rule} ({at})" for rule, at in sorted(missing.items()))
    assert not missing, f"cited in the code but not defined in docs/protocol.md (add an entry `**ID ...**`): {listed}"


def test_every_id_family_is_known():
    """A new family of rule ids (as CONV- once was) is listed here, so that its ids need entries in
    docs/protocol.md, or says why it needs none: no family of ids passes unseen."""
    unknown: dict[str, str] = {}
    for path in python_files():
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for fam in ANY_ID.findall(line):
                if fam not in FAMILIES and fam not in NOT_PROTOCOL:
                    unknown.setdefault(fam, f"{path.relative_to(ROOT)}:{n}")
    listed = ", ".join(f"{fam}- ({at})" for fam, at in sorted(unknown.items()))
    assert not unknown, f"id families neither in FAMILIES nor NOT_PROTOCOL: {listed}"
    assert "CONV-1" in cited_ids()  # CONV-'s ids are judged against docs/protocol.md like every family's


def test_no_id_is_defined_twice():
    twice = sorted(rule for rule, n in Counter(defined_ids()).items() if n > 1)
    assert not twice, f"defined more than once in docs/protocol.md: {', '.join(twice)}"


def test_a_range_cites_every_id_in_it():
    assert set(ids_in("# a clean stop (CS-1..CS-4)")) == {"CS-1", "CS-2", "CS-3", "CS-4"}
    assert set(ids_in("INV-4..6, UP-2")) == {"INV-4", "INV-5", "INV-6", "UP-2"}
