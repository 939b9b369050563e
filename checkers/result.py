"""One run's result, judged: every checker over its history (checkers/verdict.py, the one verdict) with the
counts a report sums. The one result type of every driver that runs the simulated world: a campaign's seeds
(campaign/run.py), the guided search's runs (guided/search.py), a bake-off's, a replay's.
"""

from __future__ import annotations

import hashlib
import traceback
from dataclasses import dataclass, field


@dataclass
class SeedResult:
    seed: int
    sha256: str
    counts: dict
    rules: dict
    failures: list = field(default_factory=list)  # (invariant, message, explanation): the violations
    failover_ms: list = field(default_factory=list)  # INV-7's measurements
    not_judged: dict = field(default_factory=dict)  # invariant -> why it was not judged
    findings: list = field(default_factory=list)  # (finding id, invariant, message, explanation): known about the ADR
    config: list = field(default_factory=list)  # [family, bounds it sits on, ttl, grace, safety, skew, heartbeat, attempt]
    coverage: list = field(default_factory=list)  # the coverage points it reached (checkers/coverage.py)
    margins: list = field(default_factory=list)  # deadline races: takeover minus the owner's last valid instant, ms
    tool_failure: tuple | None = None  # (message, traceback): an exception in a model, a world or a checker
    margin_ms: dict = field(default_factory=dict)  # margin -> the seed's least slack to its bound (checkers/margins.py)
    margin_findings: dict = field(default_factory=dict)  # margin -> (value, finding): a negative one a finding explains
    ledger: dict | None = None  # the request ledger's counts and node-time per phase (checkers/ledger.py summary)


def judge(seed: int, history, env_failure: str | None = None, world_failure: tuple[str, str] | None = None,
          strict: bool = False, not_calm: str | None = None, necessity=None) -> SeedResult:
    """Every checker over one history (checkers/verdict.py, the one verdict), with the counts a
    report sums. A violation a known protocol finding explains is counted as that finding, not
    as a failure (with `strict`, as both); with `necessity`, only if the run without its chain's cause no
    longer shows it (checkers/verdict.py). An exception met mid-run (`world_failure`) or raised by
    a checker is the seed's tool failure: what was judged before it stays judged."""
    from checkers.verdict import judge as verdict_of

    failures = []
    tool_failure = world_failure  # an exception in the model or the world, met mid-run
    found: list[tuple[str, str, str, str]] = []
    skip: dict = {}
    measured = {"failover_ms": [], "blip_judged": 0, "convergence_judged": 0, "coverage": [], "takeover_margin_ms": [],
                "margins": {}}
    try:
        v = verdict_of(history, strict=strict, env_failure=env_failure, measure=True, not_calm=not_calm,
                       necessity=necessity)
        skip = v.not_judged
        for fid, vs in v.findings.items():
            found += [(fid, x.invariant, x.message, x.explain(history)) for x in vs]
        failures += [(x.invariant, x.message, x.explain(history)) for x in v.violations]
        measured = v.measures
    except Exception as e:  # a checker that cannot read this history is a bug of the tool, not a verdict
        tool_failure = tool_failure or (f"{type(e).__name__}: {e}", traceback.format_exc())
    counts = dict(history.counts)
    counts["events"] = len(history.events)
    counts["acquisitions"] = len(history.of_kind("hold_began"))
    counts["blip_runs_judged"] = measured["blip_judged"]
    counts["convergence_judged"] = measured.get("convergence_judged", 0)  # CONV-1's blockers judged
    counts["acts"] = len(history.of_kind("served")) + len(history.of_kind("data_acked"))
    from model.params import Params
    from scenarios.swarm import PARAM_NAMES, on_bounds

    p = Params(**history.params)
    config = [history.options.get("config", "given"), "+".join(on_bounds(p)) or "-"] + [history.params[k] for k in PARAM_NAMES]
    return SeedResult(seed, history.sha256(), counts, history.rules, failures, measured["failover_ms"], dict(skip),
                      found, config, measured["coverage"], measured["takeover_margin_ms"], tool_failure,
                      measured.get("margins", {}), measured.get("margins_explained", {}), measured.get("ledger"))


def crashed(seed: int, error: BaseException) -> SeedResult:
    """The result of a seed whose model or world raised before there was a history to judge (its
    hash: of the traceback, so the digest still covers every seed)."""
    tb = "".join(traceback.format_exception(error))
    return SeedResult(seed, hashlib.sha256(tb.encode()).hexdigest(), {}, {},
                      tool_failure=(f"{type(error).__name__}: {error}", tb))
