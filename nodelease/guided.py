"""`guided` and `bakeoff`: the guided search's command (guided/search.py) and its bake-off against
uniform seeds (nodelease/bakeoff.py).

    python runner.py guided --model unlocked_resolver --seed 1 --budget-s 600
    python runner.py bakeoff --mutants-report reports/mutants-200.json --reps 5 --cap-s 30 --jobs 2

`guided` runs until its budget (CPU-seconds, or `--runs`) is spent or a run fails; a failing run
is written as a counterexample (a plan: `replay` and `shrink` take it), and the report has a seed
campaign's shape (its "seeds" are the search's runs, numbered from 1) plus the corpus's growth.
Exit status: 0 the budget spent with no violation, 1 a violation (the plan's path and the commands
to replay and shrink it printed), 2 bad usage, 4 the tool failed (a run the world could not run, a
checker that raised: never counted as a catch).
"""

from __future__ import annotations

import os
import time

from campaign.run import resolve
from house.errors import Exit, UsageError
from campaign.report import build_report, exit_status, invoked_as, print_summary, reports_path, write_report


def options(p) -> None:
    p.add_argument("--model", default="correct", help="the model searched: correct (default) or a broken model")
    p.add_argument("--scenario", default="swarm", help="the fault mix the fresh seeds draw (default: swarm)")
    p.add_argument("--seed", type=int, default=1, help="the search's seed: the same seed, the same runs (default 1)")
    p.add_argument("--budget-s", dest="budget_s", type=float, default=60.0, metavar="S",
                   help="CPU-seconds to spend (default 60)")
    p.add_argument("--runs", type=int, metavar="N", help="stop after N runs (a budget that no machine's speed moves)")
    p.add_argument("--param", action="append", default=[], metavar="KEY=MS", help="pin a timing parameter (repeatable)")
    p.add_argument("--strict", action="store_true", help="known protocol findings fail a run too")
    p.add_argument("--report", metavar="PATH", help="the JSON report (default: reports/guided-<model>-g<seed>.json); "
                                                    "a counterexample beside it")


def command(console, args) -> int:
    from guided.search import Search

    if args.budget_s <= 0:
        raise UsageError(f"--budget-s must be positive, got {args.budget_s:g}")
    if args.runs is not None and args.runs < 1:
        raise UsageError(f"--runs must be at least 1, got {args.runs}")
    spec = resolve(args.model, args.scenario, args.param, args.strict, 0, 1)
    scenario = spec.scenario
    path = args.report or reports_path(f"guided-{args.model}-g{args.seed}.json")
    budget = f"{args.budget_s:g} CPU-s" + (f" or {args.runs} runs" if args.runs else "")
    print(f"guided search: model {args.model}, scenario {scenario}, seed {args.seed}, budget {budget}", flush=True)
    t0 = time.monotonic()
    search = Search(spec, args.seed, budget_s=args.budget_s, max_runs=args.runs,
                    say=lambda line: print(line, flush=True))
    out = search.run()
    extra = {"strict": args.strict, "guided": {
        "seed": args.seed, "budget_s": args.budget_s, "max_runs": args.runs, "runs": out.runs, "cpu_s": out.cpu_s,
        "corpus": len(out.corpus), "features": len(search.hits), "operators": out.ops, "growth": out.growth,
        "replay_mismatch": out.replay_mismatch, "failure_run": out.failure_run, "failure_cpu_s": out.failure_cpu_s}}
    report = build_report(out.results, world="sim", model=args.model, scenario=scenario, params=spec.world_params, start=1,
                          count=out.runs, elapsed_s=time.monotonic() - t0, report_path=path, replayable=False,
                          extra=extra)
    # a campaign of seeds must reach every coverage point; a search is judged by what it finds (its
    # coverage is shown, not required)
    report["coverage_missed"] = []
    report["passed"] = not report["failures"] and not report.get("tool_failures")
    plan_path = None
    if out.failure is not None:
        from counterexamples.shrink import write_plan

        plan_path = os.path.splitext(path)[0] + f"-run{out.failure_run}-{out.failure['invariant']}.json"
        write_plan(plan_path, out.failure)
        report["guided"]["counterexample"] = os.path.relpath(plan_path)
    write_report(path, report)
    print_summary(console, report, path)
    g = report["guided"]
    print(f"guided: {g['runs']} runs in {g['cpu_s']:.1f} CPU-s; corpus {g['corpus']} plans, {g['features']} features; "
          + ", ".join(f"{op} {n[0]} run/{n[1]} kept" for op, n in g["operators"].items()))
    if plan_path:
        rel = os.path.relpath(plan_path)
        print(f"violation at run {out.failure_run} ({out.failure_cpu_s:.1f} CPU-s): {out.failure['invariant']}")
        print(f"counterexample: {rel}")
        print(f"replay: {invoked_as()} replay {rel}")
        print(f"shrink: {invoked_as()} shrink {rel}")
        return Exit.VIOLATION
    status = exit_status(report)
    return Exit.PASSED if status == Exit.VIOLATION else status


def bakeoff_options(p) -> None:
    p.add_argument("targets", nargs="*", metavar="TARGET", help="only these broken models or mutant ids")
    p.add_argument("--mutants-report", metavar="PATH", help="a `mutants --report` JSON: its mutants caught in "
                                                           "under 5 %% of seeds join the broken models")
    p.add_argument("--reps", type=int, default=5, help="repetitions per target and method (default 5)")
    p.add_argument("--cap-s", dest="cap_s", type=float, default=30.0, metavar="S",
                   help="CPU-seconds per search before it gives up (default 30)")
    p.add_argument("--jobs", type=int, default=1, help="targets run at once, each in its own copy (default 1)")
    p.add_argument("--report", metavar="PATH", help="the JSON results (default: reports/bakeoff.json); "
                                                    "a markdown table beside it")


def bakeoff_command(console, args) -> int:
    import json

    from . import bakeoff

    if args.reps < 1 or args.jobs < 1 or args.cap_s <= 0:
        raise UsageError("--reps and --jobs must be at least 1, --cap-s positive")
    if args.mutants_report and not os.path.exists(args.mutants_report):
        raise UsageError(f"no mutants report at {args.mutants_report} (make one: {invoked_as()} mutants --seeds 200 "
                         f"--report {args.mutants_report})")
    chosen = bakeoff.targets(args.mutants_report)
    if args.targets:
        known = {t["id"] for t in chosen}
        unknown = [t for t in args.targets if t not in known]
        if unknown:
            raise UsageError(f"not a target: {', '.join(unknown)} (broken models, and mutants rare in the report)")
        chosen = [t for t in chosen if t["id"] in args.targets]
    rows = bakeoff.run(console, chosen, args.reps, args.cap_s, args.jobs)
    path = args.report or reports_path("bakeoff.json")
    with open(path, "w") as f:
        json.dump({"reps": args.reps, "cap_s": args.cap_s, "rows": rows, "summary": bakeoff.summary(rows)}, f, indent=1)
    md = os.path.splitext(path)[0] + ".md"
    cmd = f"{invoked_as()} bakeoff" + (f" --mutants-report {args.mutants_report}" if args.mutants_report else "") + \
        f" --reps {args.reps} --cap-s {args.cap_s:g} --jobs {args.jobs}"
    with open(md, "w") as f:
        f.write(bakeoff.markdown(rows, args.reps, args.cap_s, cmd))
    for group, s in bakeoff.summary(rows).items():
        print(f"{group}: {s['targets']} targets, median ratio guided/uniform {s['median_ratio']}, guided faster on "
              f"{s['guided_wins']}, uniform on {s['uniform_wins']} (sign test p {s['sign_test_p']}, Wilcoxon p "
              f"{s['wilcoxon_p']})")
    print(f"report: {os.path.relpath(path)}; table: {os.path.relpath(md)}")
    return Exit.TOOL if any("error" in r for r in rows) else Exit.PASSED
