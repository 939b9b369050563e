"""The one-rule mutant probe (mutants/, `runner.py mutants`): the catalogue follows the model, and the
probe measures a mutant in a copy of the project without touching the checkout."""

from __future__ import annotations

import hashlib
import json
import os

from mutants.catalog import MUTANTS
from mutants.probe import ROOT, stale
from nodelease.cli import main


def test_every_catalogue_snippet_occurs_exactly_once_in_the_model():
    """A model change that moves a mutated snippet must update mutants/catalog.py (the probe refuses to
    run stale entries, exit 2)."""
    ids = [m["id"] for m in MUTANTS]
    assert len(ids) == len(set(ids)) and len(ids) >= 100
    assert stale(MUTANTS) == []
    assert {m["rule"].split("-")[0] for m in MUTANTS} >= {"NL", "FN", "OR", "CS", "UP", "BD", "T"}


def test_the_probe_kills_a_mutant_in_a_copy_and_leaves_the_checkout_alone(tmp_path):
    """NL-5 with the start check waiting ttl, not ttl + grace: killed by LEASE-1 within 20 seeds; the
    model files of the checkout are byte for byte what they were."""
    def digest():
        h = hashlib.sha256()
        for name in sorted(os.listdir(os.path.join(ROOT, "model"))):
            if name.endswith(".py"):
                with open(os.path.join(ROOT, "model", name), "rb") as f:
                    h.update(f.read())
        return h.hexdigest()

    before = digest()
    out = tmp_path / "probe.json"
    assert main(["mutants", "nl5_check_ttl_only", "--seeds", "20", "--report", str(out)]) == 0
    rep = json.loads(out.read_text())
    (r,) = rep["mutants"]
    assert r["status"] == "killed" and "LEASE-1" in r["invariants"] and r["failing_seeds"] >= 1
    # the runs that differ from the correct model's, seed by seed (the mutated rule reached): at least the
    # failing ones, at most all
    assert r["failing_seeds"] <= r["differs"] <= 20
    assert "#seed_hashes" not in rep["control_findings"]
    # the correct model ran the same seeds as the control: a finding the mutant shows more often is said
    assert isinstance(rep["control_findings"], dict) and isinstance(r["findings_over_control"], list)
    assert digest() == before
    assert main(["mutants", "no_such_mutant"]) == 2


def test_a_campaign_that_only_missed_a_coverage_point_is_not_a_kill():
    """Issue 44 part 8: exit 1 with failures is a kill; exit 1 with none (a coverage point never reached)
    is `coverage`, reported apart with the points it missed; exit 0 survives; anything else an error."""
    from mutants.probe import outcome

    failed = {"failures": [{"invariant": "INV-1"}], "failing_seeds": [3], "coverage_missed": []}
    assert outcome(1, "", failed, 20)["status"] == "killed"
    only_missed = {"failures": [], "failing_seeds": [], "coverage_missed": ["takeover at the deadline"]}
    r = outcome(1, "", only_missed, 20)
    assert r["status"] == "coverage" and r["missed"] == ["takeover at the deadline"] and r["failing_seeds"] == 0
    assert outcome(0, "", {"failures": []}, 20)["status"] == "survived"
    assert outcome(4, "boom", None, 20) == {"status": "error", "failing_seeds": 0, "invariants": [], "error": "boom"}


def _unbound_globals(source: str, filename: str) -> set[str]:
    """Names a module's functions read as globals that the module never binds and Python does not
    provide: each would raise NameError at its first use."""
    import builtins
    import symtable

    top = symtable.symtable(source, filename, "exec")
    bound = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported()} | set(dir(builtins))
    out: set[str] = set()
    stack = list(top.get_children())
    while stack:
        scope = stack.pop()
        stack.extend(scope.get_children())
        for s in scope.get_symbols():
            if s.is_referenced() and s.is_global() and s.get_name() not in bound:
                out.add(s.get_name())
    return out


def test_every_mutant_names_only_what_its_module_binds():
    """A mutant whose replacement reads a name its module never imports raises at its first use: every
    seed a tool failure, never a kill, and the catalogue's figure silently one short (fn5_fenced_as_live
    read RELEASED in model/ownership.py, which imports LIVE only, and errored in every run of the
    catalogue). Each mutated module names only what it binds, as the unmutated one does."""
    bad = {}
    for m in MUTANTS:
        with open(os.path.join(ROOT, m["file"])) as f:
            source = f.read()
        before = _unbound_globals(source, m["file"])
        after = _unbound_globals(source.replace(m["orig"], m["repl"], 1), m["file"])
        if after - before:
            bad[m["id"]] = sorted(after - before)
    assert bad == {}
