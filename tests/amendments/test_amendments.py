"""`runner.py amendments` (nodelease/amendments.py, issue 31): a verdict can fail, and a changed
verdict fails the command."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from amendments import names, variant
from broken_models import entries, entry, load_model
from nodelease import amendments as am


def test_variants_are_models_but_never_broken_ones():
    """A variant loads by name (run --model, a plan naming it) but `broken` never runs it."""
    listed = {e.name for e in entries()}
    for n in names():
        assert entry(n).kind == "variant"
        assert hasattr(load_model(n), "step")
        assert n not in listed
        v = variant(n)
        assert v.adr and v.proposed and v.rules


def test_a_deliberately_unsafe_variant_is_unsafe_with_a_counterexample(tmp_path, monkeypatch):
    """BM-1 (unconditional_fence, breaks FN-4) taken as the other reading of a question: verdict load-bearing (unsafe),
    and its first violating seed kept as a plan that fails when replayed."""
    from counterexamples.shrink import run_plan, violations

    monkeypatch.chdir(tmp_path)
    fake = SimpleNamespace(name="unconditional_fence", kind="question", addresses="Q-0", plans=())
    base = am.campaign("correct", 10)
    m = am.measure(fake, 10, base)
    assert m["verdict"] == "load-bearing: the other reading is unsafe"
    assert m["violations"]
    plan = json.loads((tmp_path / m["counterexample"]).read_text()) if not m["counterexample"].startswith("/") \
        else json.loads(open(m["counterexample"]).read())
    assert {v.invariant for v in violations(run_plan(plan))} >= {plan["invariant"]}


def test_an_amendment_whose_plans_still_fail_does_not_remove_its_finding():
    """The correct model offered as F-2's amendment: F-2's plans fail strict (OR-8 unbounded)."""
    fake = SimpleNamespace(name="correct", kind="amendment", addresses="F-2", plans=variant("f2_resolver_bound").plans)
    m = {"violations": [], "plans": am.plan_outcomes("correct", am.finding_plans(fake)), "findings": {}, "diff_worse": []}
    assert len(m["plans"]) == 4  # its three, and the fourth kept for F-2 (tests/plans/f2-*.json)
    assert all("F-2" in o["findings"] for o in m["plans"].values())
    assert am.verdict(fake, m) == "does not remove F-2"


def test_a_verdict_differing_from_the_record_exits_1(tmp_path, monkeypatch, capsys):
    record = tmp_path / "verdicts.json"
    record.write_text(json.dumps({"q7_guard_two_skews": {"addresses": "Q-7", "verdicts": {"5": "load-bearing"}}}))
    monkeypatch.setattr(am, "RECORD", str(record))
    args = SimpleNamespace(names=["q7_guard_two_skews"], seeds=5, record=False, json=None)
    assert am.command(None, args) == 1
    assert "CHANGED (recorded at 5 seeds: load-bearing)" in capsys.readouterr().out
    args.record = True
    assert am.command(None, args) == 0
    args.record = False
    assert am.command(None, args) == 0
    args.seeds = 6  # a verdict is recorded per seed count: none at 6
    assert am.command(None, args) == 1
    assert "recorded at 6 seeds: none" in capsys.readouterr().out
    assert set(json.loads(record.read_text())["q7_guard_two_skews"]["verdicts"]) == {"5"}


def test_reach_counts_runs_whose_events_differ_not_their_header():
    """A history's header names its model, so its hash differs for any variant; reach compares the events.
    The correct model against itself changes no run; UP-2's guard with two skews changes a few of 30."""
    assert am.changed_runs("correct", 12) == (0, 12)
    changed, n = am.changed_runs("q7_guard_two_skews", 30)
    assert n == 30 and 0 < changed < 30


def test_a_variant_that_changes_no_run_changed_nothing_rather_than_safe():
    """A variant (question or amendment) that never changes a run is not judged by that campaign: its verdict
    is "changed nothing", never "safe" nor "removes" (issue 36)."""
    q = SimpleNamespace(name="x", kind="question", addresses="Q-9")
    m = {"violations": [], "plans": {}, "findings": {}, "correct_findings": {}, "diff_worse": [], "changed_runs": 0}
    assert am.verdict(q, m) == "changed nothing"
    assert am.verdict(q, dict(m, changed_runs=3)) == "not load-bearing, within these bounds"
    a = SimpleNamespace(name="y", kind="amendment", addresses="F-2")
    assert am.verdict(a, dict(m, correct_findings={"F-2": 4})) == "changed nothing"


GREEN = {"fails": [], "violations": [], "findings": []}
SHOWS_F1 = {"fails": ["INV-1"], "violations": [], "findings": ["F-1"]}


def test_an_amendment_removes_only_a_finding_the_correct_model_reached():
    """"removes F-n" rests on evidence: the correct model showed F-n in those seeds and the variant does not.
    Where the correct model never reached it, the verdict says so with the seed count (issue 36: F-1 is 1 seed
    of 20,000, so 2,000 seeds say nothing of an F-1 amendment)."""
    a = SimpleNamespace(name="y", kind="amendment", addresses="F-1")
    m = {"seeds": 2000, "violations": [], "plans": {"p.json": GREEN}, "correct_plans": {"p.json": SHOWS_F1},
         "findings": {}, "correct_findings": {}, "diff_worse": [], "changed_runs": 17, "findings_paired": {}}
    assert am.verdict(a, m) == "F-1 not reached at 2000 seeds; its plan passes"
    reached = dict(m, correct_findings={"F-1": 6}, findings_paired={"F-1": {"variant_only": 0, "correct_only": 6}})
    assert am.verdict(a, reached) == "removes F-1; its plan passes"
    assert am.verdict(a, dict(reached, findings={"F-1": 1})) == "does not remove F-1"
    assert am.verdict(a, dict(reached, plans={"p.json": SHOWS_F1})) == "does not remove F-1"
    assert am.verdict(a, dict(reached, diff_worse=["coverage x"])) == "removes F-1; its plan passes, but the diff is worse"


def test_removes_needs_the_sign_test_a_rise_needs():
    """Issue 44: a fall is held to the same paired sign test as a rise. F-n shown by the correct model in 1, or 5,
    seeds and by the variant in none is "within chance" (5 : 0 has p 0.0625), never "removes"; 6 : 0 is beyond it."""
    a = SimpleNamespace(name="y", kind="amendment", addresses="F-2")
    m = {"seeds": 300, "violations": [], "plans": {}, "findings": {}, "diff_worse": [], "changed_runs": 9}
    for c, said in ((1, "F-2 1 -> 0, within chance"), (5, "F-2 5 -> 0, within chance"), (6, "removes F-2")):
        got = am.verdict(a, dict(m, correct_findings={"F-2": c},
                                 findings_paired={"F-2": {"variant_only": 0, "correct_only": c}}))
        assert got == said
    assert not am.removed({"variant_only": 0, "correct_only": 5}) and am.removed({"variant_only": 0, "correct_only": 6})
    assert not am.removed({"variant_only": 1, "correct_only": 6})  # 6 : 1, p 0.125


def test_a_variant_that_turns_its_plans_green_changed_something():
    """Issue 44: F-6's variant changes no run of the swarm's first seeds, yet turns all three of F-6's plans green:
    that is not "changed nothing", and the verdict says what the plans did; a plan failing on a violation no
    finding explains makes the variant unsafe."""
    a = SimpleNamespace(name="y", kind="amendment", addresses="F-6")
    shows = {"fails": ["INV-4"], "violations": [], "findings": ["F-6"]}
    m = {"seeds": 300, "violations": [], "plans": {"a": GREEN, "b": GREEN, "c": GREEN},
         "correct_plans": {"a": shows, "b": shows, "c": shows}, "findings": {}, "correct_findings": {},
         "diff_worse": [], "changed_runs": 0, "findings_paired": {}}
    assert am.verdict(a, m) == "F-6 not reached at 300 seeds; its 3 plans pass"
    assert am.verdict(a, dict(m, correct_plans=m["plans"])) == "changed nothing"
    other = {"fails": ["INV-9"], "violations": [], "findings": ["F-4"]}
    assert am.verdict(a, dict(m, plans={"a": GREEN, "b": other, "c": GREEN})) == "F-6 not reached at 300 seeds; its plans show F-4"
    unsafe = {"fails": ["INV-1"], "violations": ["INV-1"], "findings": []}
    assert am.verdict(a, dict(m, plans={"a": GREEN, "b": unsafe, "c": GREEN})) == "unsafe"


def test_a_variant_failing_only_a_cost_check_costs_more_and_is_not_unsafe():
    """The cost checks (checkers/cost.py, COST-n: the ADR's Cost section) are not safety: a variant whose plans or
    seeds fail only those costs more than the ADR says, and its verdict says so beside the rest; any other
    violation is unsafe as before."""
    a = SimpleNamespace(name="y", kind="amendment", addresses="F-2")
    cost4 = {"fails": ["COST-4"], "violations": ["COST-4"], "findings": []}
    shows = {"fails": ["INV-11"], "violations": [], "findings": ["F-2"]}
    m = {"seeds": 300, "violations": [], "plans": {"a": cost4, "b": GREEN}, "correct_plans": {"a": shows, "b": shows},
         "findings": {}, "correct_findings": {"F-2": 1}, "diff_worse": [], "changed_runs": 9,
         "findings_paired": {"F-2": {"variant_only": 0, "correct_only": 1}}}
    assert am.verdict(a, m) == "F-2 1 -> 0, within chance; its 2 plans are safe, but it costs more than the ADR " \
                               "says (COST-4)"
    assert am.verdict(a, dict(m, violations=["COST-3"])) == "F-2 1 -> 0, within chance; its 2 plans are safe, but " \
                                                            "it costs more than the ADR says (COST-3, COST-4)"
    assert am.verdict(a, dict(m, violations=["INV-1"])) == "unsafe"
    q = SimpleNamespace(name="x", kind="question", addresses="Q-9")
    assert am.verdict(q, dict(m, plans={}, violations=["COST-3"])) == \
        "not load-bearing, within these bounds, but it costs more than the ADR says (COST-3)"


def test_f6_variant_turns_every_kept_plan_of_f6_green():
    """The real plans: every plan kept for F-6 shows F-6 under the correct model and nothing under its variant."""
    v = variant("f6_old_format_releases_first")
    paths = am.finding_plans(v)
    assert len(paths) == 3
    assert all(o["findings"] == ["F-6"] for o in am.plan_outcomes("correct", paths).values())
    assert all(o == GREEN for o in am.plan_outcomes(v.name, paths).values())


def test_another_finding_rising_beyond_chance_is_part_of_the_verdict():
    """An amendment that removes its finding while another shows in more seeds than under the correct model,
    beyond chance (paired seeds), says so; the same rise within chance does not."""
    a = SimpleNamespace(name="y", kind="amendment", addresses="F-2")
    m = {"seeds": 2000, "violations": [], "plans": {}, "findings": {"F-3": 7}, "correct_findings": {"F-2": 14},
         "diff_worse": [], "changed_runs": 40,
         "findings_paired": {"F-2": {"variant_only": 0, "correct_only": 14}, "F-3": {"variant_only": 7, "correct_only": 0}}}
    assert am.verdict(a, m) == "removes F-2, but F-3 rises"
    m["findings_paired"]["F-3"] = {"variant_only": 3, "correct_only": 2}
    assert am.verdict(a, m) == "removes F-2"


def test_re_basing_stacks_the_broken_decision_on_the_variant_and_refuses_an_overlap():
    """A re-based broken model has both decisions (its class first); one changing the decision the variant
    changes is not re-based (its override would replace the variant's), and says which."""
    from amendments.f2_resolver_bound import ResolverBound
    from broken_models.unlocked_resolver import UnlockedResolver

    m, why = am.rebased("unlocked_resolver", "f2_resolver_bound")
    assert why is None and isinstance(m, UnlockedResolver) and isinstance(m, ResolverBound)
    assert am.overridden(m) >= am.overridden(UnlockedResolver()) | am.overridden(ResolverBound())
    clash = sorted(am.overridden(ResolverBound()))[0]
    for e in entries():
        if e.kind == "broken" and clash in am.overridden(load_model(e.name)):
            m, why = am.rebased(e.name, "f2_resolver_bound")
            assert m is None and clash in why
            break


def test_a_re_based_broken_model_that_is_no_longer_caught_is_lost(monkeypatch):
    """If stacking a broken model on a variant hides it (caught on model/ within the seeds, not on the
    variant), the re-base says it is lost, and `amendments` exits 1 on it."""
    calls = []

    def fake_first_catch(model, declared, seeds):
        calls.append(model.name)
        return None if "+" in model.name else 0  # never caught re-based, caught at seed 0 on model/

    monkeypatch.setattr(am, "first_catch", fake_first_catch)
    r = am.rebase("q7_guard_two_skews", 3)
    assert r["lost"] and not r["caught"] and set(r["lost"]) <= {e.name for e in entries()}


@pytest.mark.parametrize("bad", [["no_such_variant"]])
def test_an_unknown_variant_is_a_usage_error(bad):
    from house.errors import UsageError

    with pytest.raises(UsageError):
        am.command(None, SimpleNamespace(names=bad, seeds=5, record=False, json=None))


def test_broken_refuses_a_variant(capsys):
    """`runner.py broken VARIANT` is a usage error: a variant is proposed, not broken."""
    from nodelease.cli import main

    assert main(["broken", "f2_resolver_bound", "--seeds", "1"]) == 2


def test_bm3_is_still_caught_when_re_based_on_the_f2_amendment():
    """BM-3 (unlocked_resolver, OR-9) on top of f2_resolver_bound (OR-8's bound) is still caught by
    INV-6: the bound does not hide the race the lock prevents (4 of the first 200 seeds, as on model/)."""
    from amendments.f2_resolver_bound import ResolverBound
    from broken_models.unlocked_resolver import UnlockedResolver
    from checkers.verdict import judge
    from campaign.run import parse_pins
    from scenarios.sim import run_seed

    class Rebased(UnlockedResolver, ResolverBound):
        name = "unlocked_resolver+f2_resolver_bound"

    m = Rebased()
    caught = [s for s in range(60) if any(v.invariant == "INV-6" for v in judge(run_seed(
        s, m, "swarm", parse_pins([], scenario="swarm", start=s, count=1), m.name)).violations)]
    assert caught


def test_a_question_is_load_bearing_on_a_finding_only_beyond_chance():
    """Q-4 and Q-6 at 2,000 seeds: F-2 in 15 seeds against the correct model's 14, three seeds only under the
    variant and two only under the correct model: chance (a variant's other requests shift the faults later
    requests draw). Six seeds to none is not."""
    q = SimpleNamespace(name="x", kind="question", addresses="Q-9")
    base = {"violations": [], "plans": {}, "diff_worse": [], "changed_runs": 40}
    noise = dict(base, findings_paired={"F-2": {"variant_only": 3, "correct_only": 2}})
    assert am.verdict(q, noise) == "not load-bearing, within these bounds"
    real = dict(base, findings_paired={"F-2": {"variant_only": 6, "correct_only": 0}})
    assert am.verdict(q, real) == "load-bearing"
    from checkers.paired import sign_test_p

    assert sign_test_p(0, 0) == 1.0 and sign_test_p(6, 0) < 0.05 < sign_test_p(5, 0)


@pytest.mark.slow
def test_a_real_variants_recorded_verdict_is_recomputed_end_to_end(capsys):
    """Issue 36, 44: a recorded verdict is what `amendments` measures again, end to end (the campaigns of both
    models, the plans under both, the reach, the paired findings): f2_resolver_resends at 300 seeds, recorded as
    "removes F-2" before issue 44 on one seed of F-2 to none, now judged by the sign test a rise needs ("F-2
    1 -> 0, within chance") with its four plans, safe under the variant and failing under the correct model, and
    the cost of its second seeding (COST-3, COST-4: checkers/cost.py) said."""
    args = SimpleNamespace(names=["f2_resolver_resends"], seeds=300, record=False, json=None)
    assert am.command(None, args) == 0, capsys.readouterr().out
    out = capsys.readouterr().out
    assert "every verdict as recorded at 300 seeds" in out
    assert "f2_resolver_resends: F-2 1 -> 0, within chance; its 4 plans are safe, but it costs more" in out
