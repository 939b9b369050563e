"""`amendments`: every variant of amendments/ judged, its verdict compared with the recorded one
(amendments/verdicts.json); exit 1 if one changed (issue 31).

A variant's verdict, from what this module measures:

- its plans: the ones it declares and every plan kept for its finding (tests/plans/f<n>-*.json, paths
  from the checkout's root), each run under the variant and under the correct model: the invariants
  failing it --strict, those no finding explains, the findings it shows (they are the tests', not
  installed: installed, `amendments` says it runs from a checkout, exit 2);
- a campaign of the variant (seeds 0..N-1 of `swarm`, not strict) against the correct model's on
  the same seeds: the violations no finding explains (unsafe: the first such seed is recorded as
  a counterexample plan under reports/), the findings' seeds paired seed by seed, and campaign/diff.py's
  comparison (coverage lost, margins shrunk beyond the tolerances below).

Verdicts rest on evidence (issue 36), with the same rigour both ways (issue 44). An amendment's:
"unsafe" (a violation no finding explains, in the campaign or in a plan; a cost check's, COST-n, is said
as ", but it costs more than the ADR says (COST-4)" instead), "does not remove F-n" (a
plan still shows F-n, or F-n shows in the variant's campaign: a fact, no chance involved), "removes
F-n" (gone from the variant's campaign and its plans, shown by the correct model in more of the same
seeds beyond chance: the paired sign test a rise needs, checkers/paired.py; ", but the diff is worse"
when coverage or a margin is), "F-n 2 -> 0, within chance" (gone, but from too few seeds to tell from
chance), "F-n not reached at N seeds" (the correct model never showed it: the campaign is no evidence);
each with what its plans did ("; its 3 plans pass", or the other findings they show); any other finding
that shows under the variant in more seeds than under the correct model, beyond chance, is added ("...,
but F-3 rises"). A question's: "load-bearing: the other reading is unsafe" (a violation no finding
explains), "load-bearing" (it reaches a finding in more seeds than the correct model, beyond chance)
or "not load-bearing, within these bounds". Either kind: "changed nothing" when no run of the first
REACH_SEEDS differs from the correct model's, no plan's outcome differs from the correct model's and
no finding moves (the campaign says nothing of it; a scripted scenario must).

Verdicts are recorded per seed count (a verdict at 300 seeds is not one at 2,000: F-2's bound
passed 300 and failed at 802). With --rebase, every broken model whose decisions the variant does
not also change is stacked on it (its class first, the variant's next) and must still be caught
by its declared invariant within --rebase-seeds seeds when it is caught within them on model/.

Must not know the parser (nodelease/cli.py).
"""

from __future__ import annotations

import json
import os

from campaign.outputs import FORCE_HELP, Outputs, secondary, write_text
from house import inputs
from house.errors import Exit, UsageError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the directory holding the packages
RECORD = os.path.join(ROOT, "amendments", "verdicts.json")
DEFAULT_SEEDS = 300
COVERAGE_TOL_PP = 5.0  # a coverage point's share may fall this much (small campaigns are noisy)
MARGIN_TOL_MS = 250  # a margin's minimum may shrink this much
REBASE_SEEDS = 200  # as `broken`'s default


def options(p) -> None:
    p.add_argument("names", nargs="*", metavar="VARIANT", help="only these variants (default: all)")
    p.add_argument("--seeds", type=inputs.count(1), default=DEFAULT_SEEDS,
                   help=f"seeds per campaign, the variant's and the correct model's (default {DEFAULT_SEEDS})")
    p.add_argument("--workers", type=inputs.workers(), default=1, help="processes per campaign (default 1)")
    p.add_argument("--rebase", action="store_true",
                   help="also re-base every broken model on each variant and check it is still caught")
    p.add_argument("--rebase-seeds", type=inputs.count(1), default=REBASE_SEEDS, metavar="N",
                   help=f"seeds a re-based broken model gets to be caught in (default {REBASE_SEEDS})")
    p.add_argument("--record", action="store_true",
                   help="write the verdicts measured to amendments/verdicts.json (at this --seeds) instead of comparing")
    p.add_argument("--json", metavar="PATH", help="also write every measurement as JSON here; each variant's "
                                                  "counterexample beside it (default: under reports/)")
    p.add_argument("--force", action="store_true", help=FORCE_HELP)


def finding_plans(v) -> tuple[str, ...]:
    """The plans a variant's verdict replays: the ones it declares (PLANS), then every plan kept for the finding
    it addresses (tests/plans/f<n>-*.json, the convention docs/findings.md names), each once, in that order."""
    import glob

    kind, _, num = v.addresses.partition("-")
    kept = sorted(os.path.relpath(f, ROOT) for f in glob.glob(os.path.join(ROOT, "tests", "plans", f"f{num}-*.json"))) \
        if kind == "F" and num.isdigit() else []
    return tuple(dict.fromkeys(list(v.plans) + kept))


def run_plans(name: str, plans) -> dict:
    """Each plan run with the model `name` substituted, judged strict: path -> invariants failed."""
    return {path: out["fails"] for path, out in plan_outcomes(name, plans).items()}


def plan_outcomes(name: str, plans) -> dict:
    """Each plan run with the model `name` substituted: path -> {"fails": the invariants failing it --strict,
    "violations": those no finding explains, "findings": the findings it shows}."""
    from checkers.verdict import judge
    from counterexamples.shrink import run_plan

    out = {}
    for path in plans:
        with open(os.path.join(ROOT, path)) as f:
            plan = json.load(f)
        v = judge(run_plan(dict(plan, model=name)))
        unexplained = sorted({x.invariant for x in v.violations})
        fails = sorted(set(unexplained) | {x.invariant for vs in v.findings.values() for x in vs})
        out[path] = {"fails": fails, "violations": unexplained, "findings": sorted(v.findings)}
    return out


def campaign(name: str, seeds: int, workers: int = 1) -> dict:
    """The report of seeds 0..seeds-1 of `swarm` for the model `name`, not written."""
    from rich.console import Console

    from campaign.run import resolve, run_campaign

    spec = resolve(name, "swarm", [], False, 0, seeds)
    return run_campaign(Console(quiet=True), spec, 0, seeds, workers, os.devnull, quiet=True)


REACH_SEEDS = 200  # the seeds a variant's reach is counted on (each run twice: the variant, the correct model)
_CORRECT_EVENTS: dict[int, str] = {}


def _events_sha(seed: int, name: str) -> str:
    """The hash of a seed's events alone (a history's header names its model, so its own hash always differs)."""
    import hashlib

    from broken_models import load_model
    from scenarios.sim import run_seed

    from campaign.run import parse_pins

    h = run_seed(seed, load_model(name), "swarm", parse_pins([], scenario="swarm", start=seed, count=1), name)
    return hashlib.sha256(json.dumps(h.events, separators=(",", ":")).encode()).hexdigest()


def changed_runs(name: str, seeds: int) -> tuple[int, int]:
    """(seeds whose events differ from the correct model's, seeds compared: the first REACH_SEEDS):
    how often the variant's decision changed a run at all (one that changes none says nothing of
    its question)."""
    n = min(seeds, REACH_SEEDS)
    for s in range(n):
        if s not in _CORRECT_EVENTS:
            _CORRECT_EVENTS[s] = _events_sha(s, "correct")
    return sum(1 for s in range(n) if _events_sha(s, name) != _CORRECT_EVENTS[s]), n


def counterexample_path(name: str, seed: int, invariant: str, folder: str | None = None) -> str:
    """Where a variant's counterexample goes: beside the --json the user named, else under reports/."""
    from campaign.report import reports_path

    base = f"{name}-s{seed}-{invariant}.json"
    return os.path.join(folder, base) if folder else reports_path(base)


def counterexample(name: str, report: dict, folder: str | None = None, force: bool = False) -> str | None:
    """The first seed failing a violation no finding explains, recorded as a plan beside the --json named
    (or under reports/); never over a file of the user's (campaign/outputs.py: a warning instead)."""
    from campaign.outputs import Outputs, secondary
    from counterexamples.shrink import record_seed, write_plan

    from campaign.run import parse_pins

    if not report["failures"]:
        return None
    f = report["failures"][0]
    seed = f["seed"]
    plan, history = record_seed(seed, name, "swarm", parse_pins([], scenario="swarm", start=seed, count=1))
    plan.update(invariant=f["invariant"], strict=False, **history.hash_fields())
    path = counterexample_path(name, seed, f["invariant"], folder)

    def write() -> None:
        outputs = Outputs(force)
        outputs.add(path, f"{name}'s counterexample")
        outputs.check()
        write_plan(path, plan)

    return os.path.relpath(path) if secondary(write) else None


_CORRECT_PLANS: dict[str, dict] = {}


def measure(v, seeds: int, base: dict, workers: int = 1, folder: str | None = None, force: bool = False) -> dict:
    """Everything a verdict is taken from, for the variant `v` (an amendments.Variant or any object
    with name, kind, addresses, plans) against the correct model's report `base`."""
    from checkers.paired import finding_seeds, findings_paired

    from campaign.diff import compare

    paths = finding_plans(v)
    plans = plan_outcomes(v.name, paths)
    for path in paths:
        if path not in _CORRECT_PLANS:
            _CORRECT_PLANS.update(plan_outcomes("correct", [path]))
    rep = campaign(v.name, seeds, workers)
    d = compare(base, rep, COVERAGE_TOL_PP, MARGIN_TOL_MS)
    worse_diff = [w.split("; replay:")[0] for w in d["worse"] if w.startswith(("coverage", "margin"))]
    findings = {fid: b.get("seeds", 0) for fid, b in (rep.get("protocol_findings") or {}).items()}
    base_findings = {fid: b.get("seeds", 0) for fid, b in (base.get("protocol_findings") or {}).items()}
    # seed by seed: where a finding shows under one model only (a variant's other requests shift the
    # faults later requests draw, so a few seeds move either way by chance)
    paired = findings_paired(finding_seeds(rep), finding_seeds(base))
    violations = sorted({f["invariant"] for f in rep["failures"]})
    m = {"seeds": seeds, "plans": plans, "correct_plans": {p: _CORRECT_PLANS[p] for p in paths},
         "violations": violations,
         "violating_seeds": len(rep.get("failing_seeds") or []), "findings": findings,
         "correct_findings": base_findings, "findings_paired": paired, "diff_worse": worse_diff,
         "changed_runs": None, "reach_seeds": None,
         "history_digest": rep.get("history_digest"), "counterexample": counterexample(v.name, rep, folder, force)}
    m["changed_runs"], m["reach_seeds"] = changed_runs(v.name, seeds)
    m["verdict"] = verdict(v, m)
    return m


def _plans_moved(m: dict) -> bool:
    """Whether any plan's outcome under the variant differs from the correct model's (a plan the correct model
    was not run on counts as moved when it fails: the old shape's judgement)."""
    theirs = m.get("correct_plans") or {}
    return any(out != theirs.get(p, {"fails": [], "violations": [], "findings": []}) for p, out in m["plans"].items())


def removed(d: dict | None) -> bool:
    """A finding shows under the correct model in more seeds than under the variant, beyond chance: the same
    paired sign test a rise needs (checkers/paired.py, `less_often`)."""
    from checkers.paired import less_often

    return bool(d) and less_often(d)


def is_cost(invariant: str) -> bool:
    """A cost check (checkers/cost.py: the ADR's Cost section, COST-n): a variant that fails only those is not
    unsafe; it costs more than the ADR says, and its verdict says so."""
    return invariant.startswith("COST-")


def verdict(v, m: dict) -> str:
    """The verdict, from evidence only, with the same rigour both ways (issue 44): a finding is removed only
    where the correct model showed it in more of those seeds than the variant, beyond chance (the paired sign
    test a rise needs); fewer, within chance, is said as the counts ("F-2 2 -> 0, within chance"). The finding's
    kept plans are replayed under the variant and their outcome is part of the verdict: one that still shows the
    finding means it is not removed, one failing on a violation no finding explains is unsafe, and every one
    passing is said ("its 3 plans pass"). "Changed nothing" only when no run of the first REACH_SEEDS differs, no
    plan's outcome differs from the correct model's and no finding moves. Another finding that rises beyond
    chance (paired seeds) is part of the verdict."""
    from checkers.paired import more_often

    fid = v.addresses
    n = m.get("seeds")
    plans = m["plans"]
    broken = set(m["violations"]) | {x for p in plans.values() for x in p["violations"]}
    costs = sorted(x for x in broken if is_cost(x))
    if broken - set(costs):
        return "load-bearing: the other reading is unsafe" if v.kind == "question" else "unsafe"
    cost = f"it costs more than the ADR says ({', '.join(costs)})" if costs else ""
    rises = [f for f, d in (m.get("findings_paired") or {}).items() if more_often(d)]
    if m.get("changed_runs") == 0 and not _plans_moved(m) and not rises and not costs:
        return "changed nothing"
    if v.kind == "question":
        said = "load-bearing" if rises else "not load-bearing, within these bounds"
        return said + (f", but {cost}" if cost else "")
    others = [f for f in rises if f != fid]
    rise = f"{' and '.join(others)} {'rise' if len(others) > 1 else 'rises'}" if others else ""
    if any(fid in p["findings"] for p in plans.values()) or m["findings"].get(fid):
        buts = [b for b in (cost, rise) if b]
        return f"does not remove {fid}" + (f", but {' and '.join(buts)}" if buts else "")
    shown = sorted({f for p in plans.values() for f in p["findings"]})
    costly = any(p["violations"] for p in plans.values())  # (costs only, by now)
    many = len(plans) > 1
    said = f"its plans show {' and '.join(shown)}" if shown else "" if not plans \
        else (f"its {len(plans)} plans are safe" if many else "its plan is safe") if costly \
        else (f"its {len(plans)} plans pass" if many else "its plan passes")
    buts = [b for b in (cost, rise) if b]
    c = (m.get("correct_findings") or {}).get(fid, 0)
    d = (m.get("findings_paired") or {}).get(fid)
    if not c:
        # the correct model never reached it in these seeds: the campaign is no evidence either way
        head = f"{fid} not reached at {n} seeds"
    elif removed(d):
        head = f"removes {fid}"
        buts = (["the diff is worse"] if m["diff_worse"] else []) + buts
    else:
        head = f"{fid} {c} -> 0, within chance"
    return head + (f"; {said}" if said else "") + (f", but {' and '.join(buts)}" if buts else "")


def overridden(model) -> set[str]:
    """The decisions a model's class changes: the methods its own classes (below model.node.Model)
    define."""
    from model.node import Model

    names: set[str] = set()
    for cls in type(model).__mro__:
        if cls is Model or not issubclass(cls, Model):
            break
        names |= {k for k, val in vars(cls).items() if callable(val) and not k.startswith("__")}
    return names


def rebased(broken_name: str, variant_name: str):
    """The broken model `broken_name` on top of the variant: a class whose bases are the broken
    model's class, then the variant's (each override calls on to the next), or None with the reason
    when both change the same decision (the broken model's override would replace the variant's:
    re-basing it there says nothing)."""
    from broken_models import load_model

    b, v = load_model(broken_name), load_model(variant_name)
    both = sorted(overridden(b) & overridden(v))
    if both:
        return None, f"both change {', '.join(both)}"
    cls = type(f"{type(b).__name__}On{type(v).__name__}", (type(b), type(v)), {"name": f"{broken_name}+{variant_name}"})
    return cls(), None


def first_catch(model, declared: str, seeds: int) -> int | None:
    """The first of seeds 0..seeds-1 of `swarm` where `declared` catches `model` (None: none does)."""
    from checkers.verdict import judge
    from scenarios.sim import run_seed

    from campaign.run import parse_pins

    for s in range(seeds):
        h = run_seed(s, model, "swarm", parse_pins([], scenario="swarm", start=s, count=1), model.name)
        if any(x.invariant == declared for x in judge(h).violations):
            return s
    return None


def rebase(variant_name: str, seeds: int) -> dict:
    """Every broken model of the registry re-based on the variant: caught by its declared invariant
    within `seeds` seeds, as on model/? -> {"caught": {bm: seed}, "lost": {bm: seed on model/},
    "neither": [bm], "skipped": {bm: why}}."""
    from broken_models import entries, load_model

    out: dict = {"seeds": seeds, "caught": {}, "lost": {}, "neither": [], "skipped": {}}
    for e in entries():
        if e.kind != "broken":
            continue
        m, why = rebased(e.name, variant_name)
        if m is None:
            out["skipped"][e.name] = why
            continue
        k = first_catch(m, e.catches, seeds)
        if k is not None:
            out["caught"][e.name] = k
            continue
        plain = first_catch(load_model(e.name), e.catches, seeds)
        if plain is None:
            out["neither"].append(e.name)
        else:
            out["lost"][e.name] = plain
    return out


def load_record() -> dict:
    """amendments/verdicts.json: variant -> {"addresses", "verdicts": {seeds (str): verdict}}."""
    if not os.path.exists(RECORD):
        return {}
    with open(RECORD) as f:
        return json.load(f)


def recorded(record: dict, name: str, seeds: int) -> str | None:
    return ((record.get(name) or {}).get("verdicts") or {}).get(str(seeds))


def line(v, m: dict) -> str:
    extra = [f"plans failing strict: {sum(1 for x in m['plans'].values() if x['fails'])}/{len(m['plans'])} (the correct "
             f"model's: {sum(1 for x in (m.get('correct_plans') or {}).values() if x['fails'])})"] if m["plans"] else []
    extra.append(f"runs changed {m['changed_runs']}/{m['reach_seeds']}")
    if m["violations"]:
        extra.append(f"violations {', '.join(m['violations'])} in {m['violating_seeds']} seeds")
    if m["counterexample"]:
        extra.append(f"counterexample {m['counterexample']}")
    if m["diff_worse"]:
        extra.append(f"diff worse: {'; '.join(m['diff_worse'])}")
    if m.get("findings") != m.get("correct_findings"):
        extra.append("findings " + ", ".join(f"{f} {m['correct_findings'].get(f, 0)}->{m['findings'].get(f, 0)}"
                                             for f in sorted(set(m["findings"]) | set(m["correct_findings"]))
                                             if m["findings"].get(f, 0) != m["correct_findings"].get(f, 0)))
    r = m.get("rebase")
    if r:
        extra.append(f"re-based broken models: {len(r['caught'])} caught, {len(r['lost'])} lost"
                     + (f" ({', '.join(r['lost'])})" if r["lost"] else "")
                     + f", {len(r['neither'])} caught on neither in {r['seeds']} seeds, {len(r['skipped'])} not re-based")
    return f"{v.addresses:4} {v.name}: {m['verdict']} ({'; '.join(extra)})"


def command(console, args) -> int:
    """`amendments [VARIANT...] [--seeds N] [--rebase] [--record]`: exit 0 (every verdict as recorded
    at N seeds), 1 (one changed, none recorded at N, or a re-based broken model lost)."""
    from amendments import is_variant, variant, names

    chosen = args.names or names()
    for n in chosen:
        if not is_variant(n):
            raise UsageError(f"unknown variant {n!r} (choices: {', '.join(names())})")
    workers = getattr(args, "workers", 1) or 1
    folder = os.path.dirname(os.path.abspath(args.json)) if args.json else None
    force = getattr(args, "force", False)
    if args.json:
        outputs = Outputs(force)
        outputs.add(args.json, "the measurements")
        outputs.check()
    missing = [p for n in chosen for p in variant(n).plans if not os.path.exists(os.path.join(ROOT, p))]
    if missing:
        raise UsageError(f"amendments runs from a checkout of the project: the findings' plans its variants replay "
                         f"are kept with its tests ({missing[0]} is not in {ROOT})")
    record = load_record()
    print(f"the correct model's campaign: {args.seeds} seeds of swarm", flush=True)
    base = campaign("correct", args.seeds, workers)
    measured, changed, lost = {}, [], []
    for n in chosen:
        v = variant(n)
        m = measure(v, args.seeds, base, workers, folder, force)
        if getattr(args, "rebase", False):
            m["rebase"] = rebase(n, args.rebase_seeds)
            if m["rebase"]["lost"]:
                lost.append(n)
        measured[n] = m
        was = recorded(record, n, args.seeds)
        mark = "" if was == m["verdict"] else f"  CHANGED (recorded at {args.seeds} seeds: {was or 'none'})"
        if was != m["verdict"]:
            changed.append(n)
        print(line(v, m) + mark, flush=True)
    if args.json:
        secondary(write_text, args.json, json.dumps(measured, indent=1, sort_keys=True, allow_nan=False),
                  "the measurements")
    if args.record:
        record = load_record()  # read again: another `amendments --record` may have written since
        for n, m in measured.items():
            entry = record.setdefault(n, {})
            entry["addresses"] = variant(n).addresses
            entry.setdefault("verdicts", {})[str(args.seeds)] = m["verdict"]
            r = m.get("rebase")
            if r:
                entry["rebase"] = {"seeds": r["seeds"], "caught": len(r["caught"]), "lost": sorted(r["lost"]),
                                   "neither": sorted(r["neither"]), "skipped": r["skipped"]}
        with open(RECORD, "w") as f:
            json.dump(record, f, indent=1, sort_keys=True)
            f.write("\n")
        print(f"recorded at {args.seeds} seeds: {os.path.relpath(RECORD)}")
        return Exit.VIOLATION if lost else Exit.PASSED
    status = Exit.PASSED
    if changed:
        print(f"{len(changed)} verdict(s) differ from the ones recorded at {args.seeds} seeds: {', '.join(changed)}")
        status = Exit.VIOLATION
    if lost:
        print(f"re-based on {', '.join(lost)}, a broken model caught on model/ is no longer caught")
        status = Exit.VIOLATION
    if status == Exit.PASSED:
        print(f"every verdict as recorded at {args.seeds} seeds")
    return status
