"""`amendments`: every variant of amendments/ judged, its verdict compared with the recorded one
(amendments/verdicts.json); exit 1 if one changed (issue 31).

A variant's verdict, from what this module measures:

- its plans (the finding's kept plans, tests/plans/f*.json) run with the variant substituted for
  their model, judged under --strict: each passes, or fails naming what;
- a campaign of the variant (seeds 0..N-1 of `swarm`, not strict) against the correct model's on
  the same seeds: the violations no finding explains (unsafe: the first such seed is recorded as
  a counterexample plan under reports/), the findings' seed counts, and nodelease/diff.py's
  comparison (coverage lost, margins shrunk beyond the tolerances below).

An amendment's verdict: "removes F-n" (its plans pass strict, no new violation, F-n gone from
the campaign, nothing worse in the diff), "removes F-n, but the diff is worse" (coverage or a
margin), "does not remove F-n" (a plan still fails strict), or "unsafe" (a violation no finding
explains). A question's: "load-bearing: the other reading is unsafe" (a violation no finding
explains), "load-bearing" (it reaches a finding more often than the correct model) or "not load-bearing, within these bounds".

Must not know the parser (nodelease/cli.py).
"""

from __future__ import annotations

import json
import os

from .errors import Exit, UsageError

RECORD = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "amendments", "verdicts.json")
DEFAULT_SEEDS = 300
COVERAGE_TOL_PP = 5.0  # a coverage point's share may fall this much (small campaigns are noisy)
MARGIN_TOL_MS = 250  # a margin's minimum may shrink this much


def options(p) -> None:
    p.add_argument("names", nargs="*", metavar="VARIANT", help="only these variants (default: all)")
    p.add_argument("--seeds", type=int, default=DEFAULT_SEEDS,
                   help=f"seeds per campaign, the variant's and the correct model's (default {DEFAULT_SEEDS})")
    p.add_argument("--record", action="store_true",
                   help="write the verdicts measured to amendments/verdicts.json instead of comparing")
    p.add_argument("--json", metavar="PATH", help="also write every measurement as JSON here")


def run_plans(name: str, plans) -> dict:
    """Each plan run with the model `name` substituted, judged strict: path -> invariants failed."""
    from counterexamples.shrink import run_plan, violations

    out = {}
    for path in plans:
        with open(path) as f:
            plan = json.load(f)
        plan = dict(plan, model=name)
        out[path] = sorted({v.invariant for v in violations(run_plan(plan), strict=True)})
    return out


def campaign(name: str, seeds: int) -> dict:
    """The report of seeds 0..seeds-1 of `swarm` for the model `name`, one worker, not written."""
    from rich.console import Console

    from .campaign import parse_pins, run_campaign

    params = parse_pins([], scenario="swarm", start=0, count=seeds)
    return run_campaign(Console(quiet=True), name, "swarm", params, 0, seeds, 1, os.devnull, quiet=True)


def counterexample(name: str, report: dict) -> str | None:
    """The first seed failing a violation no finding explains, recorded as a plan under reports/."""
    from counterexamples.shrink import record_seed, write_plan

    from .campaign import parse_pins
    from .report import reports_path

    if not report["failures"]:
        return None
    f = report["failures"][0]
    seed = f["seed"]
    plan, history = record_seed(seed, name, "swarm", parse_pins([], scenario="swarm", start=seed, count=1))
    plan.update(invariant=f["invariant"], strict=False, history_sha256=history.sha256())
    path = reports_path(f"{name}-s{seed}-{f['invariant']}.json")
    write_plan(path, plan)
    return os.path.relpath(path)


def measure(v, seeds: int, base: dict) -> dict:
    """Everything a verdict is taken from, for the variant `v` (an amendments.Variant or any object
    with name, kind, addresses, plans) against the correct model's report `base`."""
    from .diff import compare

    plans = run_plans(v.name, v.plans)
    rep = campaign(v.name, seeds)
    d = compare(base, rep, COVERAGE_TOL_PP, MARGIN_TOL_MS)
    worse_diff = [w.split("; replay:")[0] for w in d["worse"] if w.startswith(("coverage", "margin"))]
    findings = {fid: b.get("seeds", 0) for fid, b in (rep.get("protocol_findings") or {}).items()}
    base_findings = {fid: b.get("seeds", 0) for fid, b in (base.get("protocol_findings") or {}).items()}
    violations = sorted({f["invariant"] for f in rep["failures"]})
    m = {"seeds": seeds, "plans": plans, "violations": violations,
         "violating_seeds": len(rep.get("failing_seeds") or []), "findings": findings,
         "correct_findings": base_findings, "diff_worse": worse_diff,
         "history_digest": rep.get("history_digest"), "counterexample": counterexample(v.name, rep)}
    m["verdict"] = verdict(v, m)
    return m


def verdict(v, m: dict) -> str:
    fid = v.addresses
    if m["violations"]:
        return "load-bearing: the other reading is unsafe" if v.kind == "question" else "unsafe"
    if v.kind == "question":
        more = [f for f, n in m["findings"].items() if n > m["correct_findings"].get(f, 0)]
        return "load-bearing" if more else "not load-bearing, within these bounds"
    if any(m["plans"].values()) or m["findings"].get(fid):
        return f"does not remove {fid}"
    if m["diff_worse"]:
        return f"removes {fid}, but the diff is worse"
    return f"removes {fid}"


def load_record() -> dict:
    if not os.path.exists(RECORD):
        return {}
    with open(RECORD) as f:
        return json.load(f)


def command(console, args) -> int:
    """`amendments [VARIANT...] [--seeds N] [--record]`: exit 0 (every verdict as recorded), 1 (one changed)."""
    from amendments import is_variant, variant, names

    chosen = args.names or names()
    for n in chosen:
        if not is_variant(n):
            raise UsageError(f"unknown variant {n!r} (choices: {', '.join(names())})")
    if args.seeds < 1:
        raise UsageError(f"--seeds must be at least 1, got {args.seeds}")
    record = load_record()
    print(f"the correct model's campaign: {args.seeds} seeds of swarm", flush=True)
    base = campaign("correct", args.seeds)
    measured, changed = {}, []
    for n in chosen:
        v = variant(n)
        m = measure(v, args.seeds, base)
        measured[n] = m
        was = (record.get(n) or {}).get("verdict")
        mark = "" if was == m["verdict"] else f"  CHANGED (recorded: {was or 'none'})"
        if was != m["verdict"]:
            changed.append(n)
        extra = [f"plans failing strict: {sum(1 for x in m['plans'].values() if x)}/{len(m['plans'])}"] if m["plans"] else []
        if m["violations"]:
            extra.append(f"violations {', '.join(m['violations'])} in {m['violating_seeds']} seeds")
        if m["counterexample"]:
            extra.append(f"counterexample {m['counterexample']}")
        if m["diff_worse"]:
            extra.append(f"diff worse: {'; '.join(m['diff_worse'])}")
        print(f"{v.addresses:4} {n}: {m['verdict']}" + (f" ({'; '.join(extra)})" if extra else "") + mark, flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(measured, f, indent=1, sort_keys=True)
    if args.record:
        record.update({n: {"verdict": m["verdict"], "seeds": m["seeds"], "addresses": variant(n).addresses}
                       for n, m in measured.items()})
        with open(RECORD, "w") as f:
            json.dump(record, f, indent=1, sort_keys=True)
            f.write("\n")
        print(f"recorded: {os.path.relpath(RECORD)}")
        return Exit.PASSED
    if changed:
        print(f"{len(changed)} verdict(s) changed from the recorded ones: {', '.join(changed)}")
        return Exit.VIOLATION
    print("every verdict as recorded")
    return Exit.PASSED
