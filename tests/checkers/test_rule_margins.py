"""The margins of the timing rules (checkers/margins.py, `@margin` beside each checker): each measured on a
hand-made history (its value where the bound holds, negative where it breaks, and then the invariant it
names flags the history too), and each shown by a broken model that eats it: on the same plan, the broken
model's value is below the correct model's, and a negative one comes with its invariant's violation. Then
the campaign's sums of them (campaign/report.py: MarginSums), which shards add up.

(Named test_rule_margins.py: tests/scenarios/test_margins.py holds the world's margins, and pytest wants
one basename per test module.)

Rules exercised: T-2, T-5, FN-3, FN-5, NL-4, NL-5, NL-12, CS-1, CS-2, CS-3, INV-7, INV-11, UP-2, FN-8.
"""

from __future__ import annotations

from functools import lru_cache

import pytest

import broken_models
from checkers import CHECKERS, MARGINS, check_all, facts, measure_all, registry
from checkers.margins import measured
from checkers.registry import Context, margin
from checkers.verdict import judge
import pinned
from factkit import ev, finish, heartbeats, history, live, put, record
from model import MODEL
from model.params import Params
from campaign import report as reporting
from scenarios.sim import SimWorld
from test_checkers_section4 import _failover_run  # (a sibling module: tests/checkers/ is on sys.path)
from test_checkers_world import _stuck_drain

A0 = "t0/c/a0"
P = Params()
SPAN = P.ttl_ms + P.grace_ms  # 15 s


def margins_of(h) -> dict:
    return measure_all(h)["margins"]


def flagged(h) -> set[str]:
    return {v.invariant for v in check_all(h)}


# --- the registry ------------------------------------------------------------------------------------------


def test_every_margin_names_a_declared_invariant_and_rules():
    """Each margin is declared once, names the invariant that flags a negative value and the rules whose
    bound it measures; MARGINS lists them in report order (by that invariant, then module)."""
    ms = registry.margins()
    assert [m.name for m in ms] == list(MARGINS)
    assert {"takeover", "record_freed", "failover", "drain", "released_retries", "stop", "fence", "node_handover",
            "start_check", "start_guard", "forget"} <= set(MARGINS)
    for m in ms:
        assert m.invariant in CHECKERS, m
        assert m.rules and m.unit == "ms" and m.doc
    orders = [m.order for m in ms]
    assert orders == sorted(orders)


def test_misuse_of_the_margin_registry_fails_at_definition():
    with pytest.raises(ValueError, match="lower-case identifier"):
        margin("Start Check", "x", invariant="LEASE-1", rules=("NL-5",))
    with pytest.raises(ValueError, match="unit 's'"):
        margin("x", "x", invariant="LEASE-1", rules=("NL-5",), unit="s")
    with pytest.raises(ValueError, match="rule ids"):
        margin("x", "x", invariant="LEASE-1", rules=())
    with pytest.raises(ValueError, match="declared twice"):
        margin("takeover", "again", invariant="INV-1", rules=("T-5",))(lambda c: None)
    assert MARGINS["takeover"].startswith("a deadline race")


def test_a_margin_of_an_invariant_not_judged_measures_nothing():
    """A history that cannot judge an invariant (checkers/verdict.py: not_judged) measures none of its margins
    (a plan shrunk from seed 2's run, which measures both INV-7's failover and FENCE-1's fence)."""
    h = pinned.run("margins-failover-and-fence")
    c = Context(h, facts(h))
    every = measured(c)
    assert "failover" in every and "fence" in every
    less = measured(c, frozenset({"INV-7", "FENCE-1"}))
    assert "failover" not in less and "fence" not in less and less == {k: v for k, v in every.items()
                                                                        if k not in ("failover", "fence")}


# --- each margin on a hand-made history ------------------------------------------------------------------


def test_node_handover_is_the_gap_between_two_processes_of_one_id():
    """LEASE-1, NL-4, NL-12: n0/a's last live write is sent at 9 s (valid until 9 s + ttl - safety = 17 s);
    n0/b's first lands at 20.02 s: a gap of 3.02 s. Landing at 15.02 s instead, the two overlap by 1.98 s:
    the margin is negative and LEASE-1 names the two windows."""
    def run(b_sent: int):
        h = history(("n0", "a"), ("n0", "b"), end_ms=40_000)
        heartbeats(h, 0, 0, 10_000)  # sent at 0, 3, 6 and 9 s
        live(h, b_sent, 1)
        return finish(h)

    h = run(20_000)
    assert margins_of(h)["node_handover"] == 20_020 - 17_000
    assert "LEASE-1" not in flagged(h)
    h = run(15_000)
    assert margins_of(h)["node_handover"] == 15_020 - 17_000
    assert "both held node lease n0" in " ".join(v.message for v in CHECKERS["LEASE-1"](h))


def test_start_check_is_the_first_write_past_start_plus_ttl_plus_grace():
    """LEASE-1, NL-5: started at 1 s, n0/a's first live write sent at 16.007 s is 7 ms past its bound; sent at
    15.9 s it is 100 ms early (negative, LEASE-1 flags it). With NL-5's shortcut (a `released` object of the id,
    kept written_at 0.5 s, in the bucket before the send) the bound is 15.5 s: sent at 15.503 s, 3 ms."""
    def run(sent: int, shortcut: bool = False):
        h = history(("n0", "x"), ("n0", "a"), end_ms=40_000)
        if shortcut:
            put(h, 600, 0, "nodes/n0", "released x 500")
        ev(h, 1_000, 1, "start", node_id="n0", instance="a", machine="m1")
        live(h, sent, 1)
        return finish(h)

    assert margins_of(run(16_007))["start_check"] == 7
    h = run(15_900)
    assert margins_of(h)["start_check"] == -100 and "LEASE-1" in flagged(h)
    h = run(15_503, shortcut=True)
    assert margins_of(h)["start_check"] == 3 and "LEASE-1" not in flagged(h)


def test_fence_is_the_send_past_written_at_plus_ttl_plus_grace():
    """FENCE-1, FN-3: n1 fences `live a 1000` on nodes/n0; W + ttl + grace = 16 s has passed from 16.001 s on
    n1's clock. Sent at 16.005 s: 4 ms; at 16 s: -1, and FENCE-1 flags the fence."""
    def run(sent: int):
        h = history(("n0", "a"), ("n1", "b"), end_ms=40_000)
        live(h, 1_000, 0)
        put(h, sent + 20, 1, "nodes/n0", "fenced a 1000", sent=sent)
        return finish(h)

    assert margins_of(run(16_005))["fence"] == 4
    h = run(16_000)
    assert margins_of(h)["fence"] == -1 and "FENCE-1" in flagged(h)


def test_record_freed_is_the_takeover_past_the_fences_written_at_plus_ttl_plus_grace():
    """INV-1, FN-5: n0/a's record of a0 is taken by n1/b over a fence of nodes/n0 keeping written_at 1 s
    (free from 16.001 s on n1's clock): sent at 17.2 s, 1,199 ms. Over a fence keeping 5 s (free from
    20.001 s), -2,801 ms: nothing frees n0/a, INV-1 says so. A `live` object of another instance frees at
    once: no bound, no value."""
    def run(state: str):
        h = history(("n0", "a"), ("n1", "b"), end_ms=40_000)
        heartbeats(h, 1, 0, 40_000)
        live(h, 1_000, 0)
        record(h, 2_000, 0, A0, 1)
        put(h, 17_100, 1, "nodes/n0", state)
        record(h, 17_220, 1, A0, 2, sent=17_200)
        return finish(h)

    assert margins_of(run("fenced a 1000"))["record_freed"] == 17_200 - 16_001
    h = run("fenced a 5000")
    assert margins_of(h)["record_freed"] == 17_200 - 20_001
    assert any("nothing there frees n0/a" in v.message for v in CHECKERS["INV-1"](h))
    assert "record_freed" not in margins_of(run("live z 17000"))


def test_failover_is_the_deadline_minus_the_new_hold():
    """INV-7, T-5 (test_checkers_section4.py's run: n0/a's last lease write takes effect at 7.02 s, it dies at
    10 s in the quiet phase; n1 fences it at 23 s, 2.001 s before its due; a0 is asked for at n1 at 30 s, after
    it had to be free: the deadline is 30 s + 2 A = 34 s). A new hold at 30.05 s leaves 2.001 s (the fence's
    slack is the least); one at 40 s is 6 s late, and never is -1 at best (here the deadline minus the run's
    end), both flagged by INV-7."""
    assert margins_of(_failover_run(30_050)[0])["failover"] == 25_001 - 23_000
    h, _ = _failover_run(40_000)
    assert margins_of(h)["failover"] == -6_000 and "INV-7" in flagged(h)
    h, _ = _failover_run(None)
    assert margins_of(h)["failover"] == 34_000 - 100_000 and "INV-7" in flagged(h)


def test_drain_is_the_bound_minus_the_report():
    """INV-11, CS-3 (test_checkers_world.py's drain: n0/a told to drain at 5 s, the bound ends at 20 s, the run
    at 40 s): drained at 5.2 s, 14.8 s before the bound's end; never, the bound's end minus the run's end
    (-20 s), which INV-11 flags."""
    assert margins_of(_stuck_drain(drains=True, drained_at=5_200)[0])["drain"] == 20_000 - 5_200
    h, _ = _stuck_drain()
    assert margins_of(h)["drain"] == -20_000 and "INV-11" in flagged(h)


def test_a_negative_margin_a_known_finding_explains_is_set_apart():
    """INV-11, F-2 (checkers/verdict.py): the same drain stuck on a lost acquire is F-2; its margin leaves the
    margins (a campaign's minimum) and is kept with the finding; with --strict it stays."""
    h, _ = _stuck_drain(lost_acquire=True)
    v = judge(h, measure=True)
    assert v.findings.keys() == {"F-2"} and not v.violations
    assert "drain" not in v.measures["margins"]
    assert v.measures["margins_explained"]["drain"] == (-20_000, "F-2")
    h.cache.clear()
    assert judge(h, strict=True, measure=True).measures["margins"]["drain"] == -20_000
    result = reporting.judge(0, h)
    assert "drain" not in result.margin_ms and result.margin_findings == {"drain": (-20_000, "F-2")}
    block = reporting.build_report([result], world="sim", model="hand", scenario="hand", params={}, start=0,
                                   count=1, elapsed_s=1.0, report_path=None)["margins"]["drain"]
    assert block["seeds"] == 0 and block["explained"] == {"F-2": 1}


def _stop_run(second_sent: int | None, exit_at: int | None):
    """n0/a is told to stop at 10 s; its `released` writes leave at 15 s and `second_sent`; it exits at
    `exit_at` (the bound: 20 s + 3 A + 1 s = 27 s after the instruction; the run ends at 60 s)."""
    h = history(("n0", "a"), end_ms=60_000)
    ev(h, 10_000, 0, "told", command="stop")
    ev(h, 15_000, 0, "released_sent")
    if second_sent is not None:
        ev(h, second_sent, 0, "released_sent")
    if exit_at is not None:
        ev(h, exit_at, 0, "exit", status=0, reason="stopped")
    return finish(h)


def test_released_retries_and_stop_are_cs2s_two_bounds():
    """CS-2 (and CS-1's stop limit): a retry 2.995 s after the first `released` write leaves 5 ms of A + 1 s
    (3 s); one 3.01 s after is 10 ms past it. An exit 26.993 s after the instruction leaves 7 ms of the
    stop's 27 s; a process never ending is past it. Each negative one is CS-2's violation."""
    h = _stop_run(15_000 + 2_995, 10_000 + 27_000 - 7)
    assert margins_of(h)["released_retries"] == 5 and margins_of(h)["stop"] == 7 and "CS-2" not in flagged(h)
    h = _stop_run(15_000 + 3_010, None)
    assert margins_of(h)["released_retries"] == -10 and margins_of(h)["stop"] == 27_000 - 50_000
    assert len(CHECKERS["CS-2"](h)) == 2
    assert "released_retries" not in margins_of(_stop_run(None, 20_000))  # one write: no retry to measure


# --- each margin eaten by a broken model, on the same plan as the correct model ---------------------------


@lru_cache(maxsize=None)
def _run(model_name: str, scenario: str, seed: int) -> tuple[dict, frozenset]:
    model = MODEL if model_name == "correct" else broken_models.load_model(model_name)
    h = SimWorld(seed, model, scenario, model_name=model_name).run()
    return margins_of(h), frozenset(flagged(h))


# (the plan, the margin): each plan a broken model's run (tests/plans/pinned/, shrunk from the seed named,
# where its value was found negative by scanning; the test asserts it rather than trusting it)
EATEN = [
    ("eaten-takeover", "takeover"),  # early_takeover, deadline seed 0; T-2, T-5: one max_skew early
    ("eaten-record-freed", "record_freed"),  # early_takeover, swarm seed 1; FN-5
    ("eaten-fence", "fence"),  # early_takeover, swarm seed 1; FN-3 (the fencer decides on the same free_from_ms)
    ("eaten-node-handover", "node_handover"),  # adopt_any_instance, twins seed 1; NL-9, NL-12
    ("eaten-start-check", "start_check"),  # instant_start_check, swarm seed 0; NL-5
    ("eaten-released-retries", "released_retries"),  # stop_retries_forever, stops seed 4; CS-2
    ("eaten-released-retries", "stop"),  # the same run: CS-2's stop limit, smaller, not negative
    ("eaten-drain", "drain"),  # drain_keeps_holds, swarm seed 15; CS-3 (test_checkers.py's plan's seed)
    ("eaten-start-guard", "start_guard"),  # guard_ignores_old_heartbeats, upgrade seed 0; UP-2
    ("eaten-forget", "forget"),  # forget_fresh_heartbeat, upgrade seed 12; FN-8 (the correct model forgets)
]


def _eats(name: str) -> None:
    """On plan `name`, each of its margins (EATEN): the broken model's value is below the correct model's
    (which is not negative), and negative (but CS-2's stop limit) with the margin's invariant's violation."""
    h = pinned.run(name)
    broken, invariants = margins_of(h), flagged(h)
    correct = margins_of(pinned.run(name, "correct"))
    for plan, margin_name in EATEN:
        if plan != name:
            continue
        inv = next(m.invariant for m in registry.margins() if m.name == margin_name)
        assert margin_name in broken and margin_name in correct, (margin_name, broken, correct)
        assert broken[margin_name] >= 0 or inv in invariants, (broken[margin_name], invariants)
        assert correct[margin_name] >= 0, correct[margin_name]
        assert broken[margin_name] < correct[margin_name], (broken[margin_name], correct[margin_name])
        if margin_name != "stop":
            assert broken[margin_name] < 0, broken[margin_name]


@pytest.mark.parametrize("name, margin_name", EATEN, ids=[e[1] for e in EATEN])
def test_a_broken_model_eats_its_margin(name, margin_name):
    """On the same plan, the broken model's value of the margin is below the correct model's (which is not
    negative there); a negative value comes with the violation of the margin's invariant."""
    _eats(name)


def test_failover_has_no_broken_model_but_its_hand_made_run_eats_it():
    """INV-7 has no broken model of its own (the world's bound is loose for every model of broken_models/); the
    hand-made runs above show it eaten. On swarm seeds the correct model measures it, never negative."""
    values: list[int] = []
    for s in range(40):  # the first swarm seeds that measure it (a fifth of them do)
        v = _run("correct", "swarm", s)[0].get("failover")
        if v is not None:
            values.append(v)
            if len(values) == 3:
                break
    assert len(values) == 3 and min(values) >= 0


# --- the campaign's sums -----------------------------------------------------------------------------------


def _result(seed: int, values: dict, explained: dict | None = None) -> reporting.SeedResult:
    return reporting.SeedResult(seed, f"{seed:064x}", {}, {}, margin_ms=values, margin_findings=explained or {})


def test_margin_sums_add_up_across_shards():
    """campaign/report.py MarginSums: the seeds measured, the least value and the first seed reaching it (with
    its replay command), a histogram of fixed buckets, the seeds a finding explains; two shards joined give
    the block of the whole."""
    results = [_result(0, {"fence": 40, "start_check": 5}), _result(1, {"fence": -3}),
               _result(2, {"fence": -3, "start_check": 12_000}), _result(3, {}, {"drain": (-9, "F-2")})]
    whole = reporting.MarginSums("reports/x.json")
    for r in results:
        whole.add(r.seed, r.margin_ms, r.margin_findings)
    block = whole.block()
    assert list(block) == list(MARGINS)
    f = block["fence"]
    assert (f["seeds"], f["min"], f["seed"], f["invariant"]) == (3, -3, 1, "FENCE-1")
    assert f["replay"].endswith("replay reports/x.json --seed 1")
    assert f["histogram"]["< 0 (broken)"] == 2 and f["histogram"]["10 .. 100 ms"] == 1
    assert block["start_check"]["histogram"][">= 10 s"] == 1
    assert block["drain"]["seeds"] == 0 and block["drain"]["explained"] == {"F-2": 1}
    assert block["takeover"] == dict(block["takeover"], seeds=0, min=None, seed=None, replay=None)
    halves = []
    for part in (results[:2], results[2:]):
        s = reporting.MarginSums("reports/part.json")
        for r in part:
            s.add(r.seed, r.margin_ms, r.margin_findings)
        halves.append(s.block())
    joined = reporting.MarginSums("reports/x.json")
    for b in halves:
        joined.join(b)
    assert joined.block() == block


def test_the_report_prints_each_margin_and_junit_holds_them_as_properties(tmp_path):
    """The report's `margins` block, its summary's lines (each with its seed's replay command), and JUnit's
    properties `margin.<name>.min_ms`, `.seed`, `.seeds`, `.replay`."""
    import xml.etree.ElementTree as ET

    results = [_result(0, {"fence": 40}), _result(1, {"fence": -3})]
    for r in results:
        r.counts, r.rules = {"events": 1}, {}
    report = reporting.build_report(results, world="sim", model="correct", scenario="swarm", params={}, start=0,
                                    count=2, elapsed_s=1.0, report_path=str(tmp_path / "r.json"))
    text = reporting.summary_text(report)
    assert "fence (FENCE-1; FN-3): min -3 ms (seed 1), 2 seeds measured" in text
    assert f"its seed: {reporting.replay_command(str(tmp_path / 'r.json'), 1)}" in text
    assert "takeover (INV-1; T-2, T-5, FN-5): no seed had its situation" in text
    props = {p.get("name"): p.get("value") for p in ET.fromstring(reporting.junit_xml(report)).iter("property")}
    assert props["margin.fence.min_ms"] == "-3" and props["margin.fence.seed"] == "1"
    assert props["margin.fence.seeds"] == "2" and props["margin.takeover.seeds"] == "0"
    assert props["margin.fence.replay"].endswith("--seed 1")
