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

from campaign.outputs import FORCE_HELP, Outputs, secondary
from campaign.run import resolve, tool_failure
from house import inputs
from house.errors import Exit, ToolFailure, UsageError
from campaign.report import build_report, command_line, invoked_as, pins_suffix, print_summary, reports_path, settle, \
    write_report


def options(p) -> None:
    p.add_argument("--model", default="correct", help="the model searched: correct (default) or a broken model")
    p.add_argument("--scenario", default="swarm", help="the fault mix the fresh seeds draw (default: swarm)")
    p.add_argument("--seed", type=inputs.count(0), default=1,
                   help="the search's seed: the same seed, the same runs (default 1)")
    p.add_argument("--budget-s", dest="budget_s", type=inputs.seconds(), default=60.0, metavar="S",
                   help="CPU-seconds to spend (default 60)")
    p.add_argument("--runs", type=inputs.count(1), metavar="N",
                   help="stop after N runs (a budget that no machine's speed moves)")
    p.add_argument("--param", action="append", default=[], metavar="KEY=MS", help="pin a timing parameter (repeatable)")
    p.add_argument("--strict", action="store_true", help="known protocol findings fail a run too")
    p.add_argument("--report", metavar="PATH", help="the JSON report (default: reports/guided-<model>-<scenario>-g<seed>"
                                                    "[-<pins>][-strict].json); a counterexample beside it")
    p.add_argument("--force", action="store_true", help=FORCE_HELP)


def command(console, args) -> int:
    from guided.search import Search

    spec = resolve(args.model, args.scenario, args.param, args.strict, 0, 1)
    scenario = spec.scenario
    path = args.report or reports_path(f"guided-{args.model}-{scenario}-g{args.seed}{pins_suffix(dict(spec.pins))}"
                                       f"{'-strict' if args.strict else ''}.json")
    outputs = Outputs(args.force)
    outputs.report(path, "the search's report")
    outputs.check()
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
    status = settle(report)
    plan_path = None
    if out.failure is not None:
        plan_path = os.path.splitext(path)[0] + f"-run{out.failure_run}-{out.failure['invariant']}.json"
        report["guided"]["counterexample"] = os.path.relpath(plan_path)
    write_report(path, report)  # the verdict first; the counterexample beside it after
    if plan_path and not secondary(_write_counterexample, plan_path, out.failure, args.force):
        plan_path = None
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
    if status == Exit.TOOL:
        raise tool_failure(report)
    return status


def _write_counterexample(path: str, plan: dict, force: bool) -> None:
    """A search's counterexample (its name has the run that found it: known only now), never over a file
    of the user's."""
    from counterexamples.shrink import write_plan

    outputs = Outputs(force)
    outputs.add(path, "the counterexample")
    outputs.check()
    write_plan(path, plan)


def bakeoff_options(p) -> None:
    p.add_argument("targets", nargs="*", metavar="TARGET", help="only these broken models or mutant ids")
    p.add_argument("--mutants-report", metavar="PATH", help="a `mutants --report` JSON: its mutants caught in "
                                                           "under 5 %% of seeds join the broken models")
    p.add_argument("--reps", type=inputs.count(1), default=5, help="repetitions per target and method (default 5)")
    p.add_argument("--cap-s", dest="cap_s", type=inputs.seconds(), default=30.0, metavar="S",
                   help="CPU-seconds per search before it gives up (default 30)")
    p.add_argument("--jobs", type=inputs.workers(), default=1,
                   help="targets run at once, each in its own copy (default 1)")
    p.add_argument("--report", metavar="PATH", help="the JSON results (default: reports/bakeoff.json); "
                                                    "a markdown table beside it")
    p.add_argument("--force", action="store_true", help=FORCE_HELP)


def bakeoff_command(console, args) -> int:
    from campaign.outputs import write_json, write_text

    from . import bakeoff

    if args.mutants_report and not os.path.exists(args.mutants_report):
        raise UsageError(f"no mutants report at {args.mutants_report} (make one: {invoked_as()} mutants --seeds 200 "
                         f"--report {args.mutants_report})")
    path = args.report or reports_path("bakeoff.json")
    md = os.path.splitext(path)[0] + ".md"
    outputs = Outputs(args.force)
    outputs.add(path, "the bake-off's report")
    outputs.add(md, "the bake-off's table", beside=path)
    outputs.check()
    chosen = bakeoff.targets(bakeoff.read_mutants_report(args.mutants_report) if args.mutants_report else None)
    if args.targets:
        known = {t["id"] for t in chosen}
        unknown = [t for t in args.targets if t not in known]
        if unknown:
            raise UsageError(f"not a target: {', '.join(unknown)} (broken models, and mutants rare in the report)")
        chosen = [t for t in chosen if t["id"] in args.targets]
    rows = bakeoff.run(console, chosen, args.reps, args.cap_s, args.jobs)
    cmd = f"{invoked_as()} bakeoff" + (f" --mutants-report {args.mutants_report}" if args.mutants_report else "") + \
        f" --reps {args.reps} --cap-s {args.cap_s:g} --jobs {args.jobs}"
    errors = [r for r in rows if "error" in r]
    write_json(path, {"reps": args.reps, "cap_s": args.cap_s, "rows": rows, "summary": bakeoff.summary(rows),
                      "passed": not errors, "exit_status": int(Exit.TOOL if errors else Exit.PASSED),
                      "why_not_passed": f"{len(errors)} target(s) could not be measured" if errors else None,
                      "command": command_line()})
    secondary(write_text, md, bakeoff.markdown(rows, args.reps, args.cap_s, cmd), "the bake-off's table")
    for group, s in bakeoff.summary(rows).items():
        print(f"{group}: {s['targets']} targets, median ratio guided/uniform {s['median_ratio']}, guided faster on "
              f"{s['guided_wins']}, uniform on {s['uniform_wins']} (sign test p {s['sign_test_p']}, Wilcoxon p "
              f"{s['wilcoxon_p']})")
    print(f"report: {os.path.relpath(path)}; table: {os.path.relpath(md)}")
    if errors:
        raise ToolFailure(f"{len(errors)} target(s) could not be measured (first, {errors[0]['id']}: {errors[0]['error']})")
    return Exit.PASSED
