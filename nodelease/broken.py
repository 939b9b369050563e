"""`broken`: every broken model over the same seeds, the correct model as the control; each must
be caught by the invariant it declares (its CATCHES).

A broken model counts as caught only by its own invariant: another invariant's catch is shown and
warned about (the model, or its CATCHES, is not what it says), never counted; a seed that raised
is a tool failure, never a catch. This module knows the registry's entries (broken_models/) and
how a catch is counted; it must not know the parser (nodelease/cli.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from campaign.outputs import Outputs
from campaign.run import (
    DEFAULT_SCENARIO,
    MAIN_MODEL,
    campaign_outputs,
    check_scenario,
    parse_pins,
    run_campaign,
    save_campaign,
)
from house.errors import Exit, ToolFailure, UsageError
from campaign.report import (
    command_line,
    default_report_path,
    git_commit,
    junit_xml,
    pins_suffix,
    replay_command,
    reports_path,
    settle,
    share_text,
    write_junit,
    write_report,
)


@dataclass(frozen=True)
class Catch:
    """How a model's campaign caught it, read off its report."""

    declared: str  # the invariant the model declares must catch it ("-" for the control)
    seeds: int  # seeds the declared invariant caught
    first: int | None  # the first of them
    by: dict = field(default_factory=dict)  # every invariant that caught it -> seeds, the declared one too
    tool_failures: int = 0  # seeds that raised: never a catch

    @property
    def caught(self) -> bool:
        return self.seeds > 0

    @property
    def others(self) -> list[str]:
        """The invariants but the declared one that caught it."""
        return [inv for inv in self.by if inv != self.declared]


def count_catch(declared: str, report: dict) -> Catch:
    """The seeds of a campaign's report that `declared` caught, and which other invariants caught
    it where. A seed that raised counts for nothing but its tool failure, even if it had violated
    an invariant first."""
    raised = {t["seed"] for t in report.get("tool_failures") or []}
    by_inv: dict[str, set] = {}
    for f in report["failures"]:
        if f["seed"] not in raised:
            by_inv.setdefault(f["invariant"], set()).add(f["seed"])
    mine = sorted(by_inv.get(declared, ()))
    return Catch(declared, len(mine), mine[0] if mine else None,
                 {inv: len(seeds) for inv, seeds in sorted(by_inv.items())}, len(raised))


def judge_row(kind: str, catch: Catch, failing: int) -> tuple[bool, str]:
    """(ok, verdict) of one model's row: the control must fail nothing, a broken model must be
    caught by its declared invariant, a documented survivor may do either; a tool failure is never ok."""
    if catch.tool_failures:
        return False, f"TOOL FAILURE ({catch.tool_failures} seeds raised)"
    if kind == "correct":
        return (True, "passes (control)") if not failing else (False, "FAILS (the correct model!)")
    if kind == "survivor":
        return True, "caught" if failing else "survives (documented)"
    if catch.caught:
        return True, "caught"
    if catch.by:
        return False, f"NOT CAUGHT by {catch.declared}, only by {', '.join(catch.others)}"
    return False, "NOT CAUGHT"


def scenario_of(e, scenario: str) -> str:
    """Where a model runs: in the run's scenario, or, in the swarm's (the default mix), in the one its module
    names (SCENARIO: its rule lives in a part of the world the swarm seldom draws)."""
    return e.scenario if e.scenario and scenario == DEFAULT_SCENARIO else scenario


def command(console, args) -> int:
    """`broken [MODEL...]`: run the models (default: every one of the registry) and the control, in each
    scenario a model runs in."""
    from rich.table import Table

    from checkers.confidence import share
    from checkers.paired import finding_seeds
    from checkers.paired import rises as rises_over

    from broken_models import entries, entry
    from scenarios.spec import RunSpec

    check_scenario(args.scenario)
    params = parse_pins(args.param)
    chosen = ([entry(MAIN_MODEL)] + [entry(n) for n in args.models if n != MAIN_MODEL]) if args.models else entries()
    variants = [e.name for e in chosen if e.kind == "variant"]
    if variants:
        raise UsageError(f"{variants[0]} is a variant (amendments/), proposed, not broken: "
                         f"`amendments {variants[0]}` judges it")
    for e in chosen:
        check_scenario(scenario_of(e, args.scenario))
    models = [e for e in chosen if e.kind != "correct"]
    used = [args.scenario] + sorted({scenario_of(e, args.scenario) for e in models} - {args.scenario})
    control = entry(MAIN_MODEL)
    runs = [(control, s) for s in used] + [(e, scenario_of(e, args.scenario)) for e in models]
    # every output named before any seed (campaign/outputs.py): the report the user named, and beside it
    # each model's campaign report, named as `run` names its own
    path = args.report or reports_path(f"broken-{args.scenario}-s{args.start}-n{args.seeds}{pins_suffix(params)}.json")
    folder = os.path.dirname(os.path.abspath(path))
    outputs = Outputs(args.force)
    outputs.report(path, "the broken models' report")
    if args.junit:
        outputs.add(args.junit, "the JUnit XML")
    paths = {(e.name, scenario): default_report_path(e.name, scenario, args.start, args.seeds, params, folder=folder)
             for e, scenario in runs}
    for where in paths.values():
        campaign_outputs(where, outputs=outputs)
    outputs.check()
    rows = []
    warnings = []
    controls: dict[str, dict] = {}  # scenario -> the correct model's finding seeds there (the controls run first)
    for e, scenario in runs:
        where = paths[(e.name, scenario)]
        spec = RunSpec.of(e.name, scenario, params)  # (its model and scenario looked up above, the pins checked)
        rep = run_campaign(console, spec, args.start, args.seeds, args.workers, where)
        settle(rep)
        save_campaign(rep, where, spec)
        catch = count_catch(e.catches, rep)
        failing = rep["failing_seeds"]
        ok, verdict = judge_row(e.kind, catch, len(failing))
        if e.kind == "broken" and not catch.caught and catch.by:
            warnings.append(f"warning: {e.name} declares CATCHES = {e.catches!r}, but {e.catches} never caught it "
                            f"in {args.seeds} seeds; only {', '.join(f'{i} ({n} seeds)' for i, n in catch.by.items())} "
                            f"did: not counted as caught")
        # a model that shows a known finding in more seeds than the control, on the same seeds, says so: its own
        # violations may be taken for the finding (checkers/paired.py; issue 36)
        mine = finding_seeds(rep)
        if e.kind == "correct":
            controls[scenario] = mine
        rises = (rises_over(mine, controls[scenario], "the control") if scenario in controls and e.kind != "correct"
                 else [])
        warnings += [f"warning: {e.name} shows {line}: its own violations may be taken for that finding"
                     for line in rises]
        first = catch.first if catch.first is not None else (failing[0] if failing else None)
        tool = rep["tool_failures"]
        rows.append({"model": e.name, "scenario": scenario, "kind": e.kind, "survivor": e.kind == "survivor",
                     "rule_broken": e.rule,
                     "must_catch": e.catches, "invariants_violated": sorted(catch.by), "caught_by": catch.by,
                     "caught_seeds": catch.seeds, "first_caught_seed": catch.first,
                     # the catch rate with its 95 % interval (checkers/confidence.py; issue 48)
                     "catch_rate": share(catch.seeds, rep["counts"]["seeds_run"]),
                     "first_failing_seed": failing[0] if failing else None, "failing_seeds": len(failing),
                     "tool_failing_seeds": catch.tool_failures, "seeds_run": rep["counts"]["seeds_run"],
                     "findings": {fid: len(seeds) for fid, seeds in sorted(mine.items())}, "findings_over_control": rises,
                     "ok": ok, "verdict": verdict, "report": os.path.relpath(where),
                     "replay": replay_command(where, first) if first is not None else None,
                     "tool_replay": replay_command(where, tool[0]["seed"]) if tool else None})
    t = Table(title=f"broken models, seeds {args.start}..{args.start + args.seeds - 1}, scenario {args.scenario}"
                    + (" (or the one a model names)" if len(used) > 1 else ""))
    for col in ("model", "scenario", "rule broken", "must be caught by", "caught by (seeds)", "first caught",
                "verdict"):
        t.add_column(col)
    for r in rows:
        colour = "[green]" if r["ok"] and r["kind"] != "survivor" else "" if r["ok"] else "[red]"
        t.add_row(r["model"], r["scenario"], r["rule_broken"], r["must_catch"],
                  ", ".join(f"{i} {n}" for i, n in r["caught_by"].items()) or "-",
                  "-" if r["first_caught_seed"] is None else str(r["first_caught_seed"]), colour + r["verdict"])
    console.print(t)
    for line in warnings:
        console.print(f"[yellow]{line}[/yellow]", highlight=False)
    raised = [r for r in rows if r["tool_failing_seeds"]]
    failed = [r["model"] for r in rows if not r["ok"]]
    passed = not failed
    status = Exit.TOOL if raised else Exit.PASSED if passed else Exit.VIOLATION
    report = {"world": "sim", "kind": "broken", "scenario": args.scenario, "params": params,
              "seeds": {"start": args.start, "count": args.seeds}, "passed": passed, "exit_status": int(status),
              "why_not_passed": None if passed else
              (f"the tool failed in the seeds of {', '.join(r['model'] for r in raised)}" if raised else
               f"not caught by its invariant, or the control failed: {', '.join(failed)}"),
              "models": rows, "warnings": warnings, "git_commit": git_commit(), "command": command_line()}
    text = "\n".join(
        f"{r['model']:<28} ({r['scenario']}) breaks {r['rule_broken']:<6} must be caught by {r['must_catch']:<8} "
        f"caught by "
        f"{', '.join(f'{i} {n}' for i, n in r['caught_by'].items()) or '-':<24} of {r['seeds_run']}: {r['verdict']}"
        + (f" (caught {share_text(r['catch_rate'])})" if r["kind"] == "broken" else "")
        for r in rows) + "\n" + "".join(line + "\n" for line in warnings)
    write_report(path, report, text=text)
    console.print(f"report: {os.path.relpath(path)}", highlight=False)
    if args.junit:
        write_junit(args.junit, junit_xml(report))
    if raised:
        raise ToolFailure(f"{len(raised)} model(s) raised in their seeds ({', '.join(r['model'] for r in raised)}): "
                          f"not a catch; replay: {raised[0]['tool_replay']}")
    if not passed:
        console.print("[red]not every broken model was caught by its invariant, or the correct model failed[/red]")
        return Exit.VIOLATION
    return Exit.PASSED
