"""`replay` and `shrink`: one seed of a report run again, or a counterexample (a plan) run again,
each hash-checked; a failing seed shrunk to a counterexample a person can read; the HTML picture.

This module reads reports and plans back and prints what a person needs to see the run; it
must not know the parser (nodelease/cli.py). Seeds run through campaign/run.py, plans
through counterexamples/.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import replace

from campaign.outputs import Outputs, secondary
from campaign.run import check_scenario, load_model, parse_pins, resolve, run_one
from house.errors import Exit, ReplayDiffers, ToolFailure, UsageError
from campaign.report import (git_commit, invoked_as, kinds_added, load_json, load_report, pins_suffix, reports_path,
                             timeline_text)


def pick_seed(report: dict, seed: int | None, what: str) -> int:
    """The seed asked for (in the report's range), or the report's first failing seed (for `replay`,
    the first that raised if none violated)."""
    start, count = report["seeds"]["start"], report["seeds"]["count"]
    if seed is None:
        failing = list(report.get("failing_seeds") or [])
        if what == "replay":
            failing += [t["seed"] for t in report.get("tool_failures") or []]
        if not failing:
            raise UsageError(f"{what} needs --seed S (the report ran seeds {start}..{start + count - 1}"
                             f" and none failed)")
        seed = min(failing)
    if not (start <= seed < start + count):
        raise UsageError(f"seed {seed} is not in the report's range {start}..{start + count - 1}")
    return seed


def write_picture(path: str, history, plan: dict | None, strict: bool = False, invariant: str | None = None) -> None:
    from counterexamples.picture import write_html
    from counterexamples.shrink import violations

    found = violations(history, strict)
    chosen = [v for v in found if v.invariant == invariant] or found
    if secondary(write_html, path, history, chosen[0] if chosen else None, plan):
        print(f"picture: {os.path.relpath(path)}")


# --- reading a counterexample back: its format, and its numbers by value ----------------------------


def plan_or_report(doc, path: str) -> bool:
    """Whether `doc` is a counterexample (a plan) rather than a report; a counterexample of another
    format version is named as such (UsageError), never taken for a malformed report."""
    from counterexamples.shrink import is_plan
    from scenarios.plan import FORMAT

    if is_plan(doc):
        return True
    fmt = doc.get("format") if isinstance(doc, dict) else None
    if isinstance(fmt, str) and fmt.startswith(FORMAT.rsplit("/", 1)[0] + "/"):
        raise UsageError(f"{path} is a counterexample of format {fmt!r}; this version of the tool reads {FORMAT!r} "
                         f"(replay it with the version that wrote it, or make it again)")
    if isinstance(fmt, str):
        raise UsageError(f"{path} is of format {fmt!r}: neither a report nor a counterexample of this tool")
    return False


def as_written(plan: dict) -> dict:
    """The plan with the number types its writer gave it: a counterexample is compared by value, not by its
    JSON text. A JSON tool may write 0.0 as 0 (`jq .` does); the world runs the same either way, but a
    history's hash encodes the options as they are, so a rate read back as the integer 0 would hash apart
    from the 0.0 the counterexample was made with (exit 5, "the code changed", for the same run). Each
    integer where the world keeps a float (in the options the plan's own seed draws, in the calm world's, or
    in an option named p_*, a probability) is a float again."""
    from model.params import Params
    from scenarios.script import calm_options
    from scenarios.swarm import draw

    options = plan.get("options")
    if not isinstance(options, dict):
        return plan
    templates: list = []
    try:
        params = Params(**plan["params"])
        templates.append(calm_options(1, params))
        templates.append(draw(plan["seed"], plan["scenario"], params))
    except Exception:  # (a plan of a world no draw knows: the calm world and the names say enough)
        pass
    return dict(plan, options=_floats_where(options, templates))


def _floats_where(value, templates: list, key: str = ""):
    """`value` with each integer made a float where a template holds a float (or its key is p_*)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        if key.startswith("p_") or any(isinstance(t, float) for t in templates):
            return float(value)
        return value
    if isinstance(value, dict):
        return {k: _floats_where(v, [t.get(k) for t in templates if isinstance(t, dict)], str(k))
                for k, v in value.items()}
    if isinstance(value, list):
        return [_floats_where(v, [t[i] for t in templates if isinstance(t, list) and i < len(t)], key)
                for i, v in enumerate(value)]
    return value


# --- replay --------------------------------------------------------------------------------------


def kinds_of(options: dict) -> list[str]:
    """The fault kinds a plan's options know: every kind but those none of whose options it holds (kinds
    added to the tool since it was written; a kind drawn within another's options is taken as known)."""
    from scenarios.faults import KINDS

    return [k for k, kind in KINDS.items() if not kind.options or any(name in options for name in kind.options)]


def same_run(expected: str | None, history, known: list | None, what: str,
             given: dict | None = None, held_off: tuple = (), version: int = 1) -> tuple[bool | None, str]:
    """Whether a replay is the run a report or a plan recorded (None: nothing to compare with), and the line
    that says so. The hash leaves a fault kind's options at their off values out (history/record.py), so a
    kind added to the tool since, off in this run (or `held_off`: a report's seed replayed without the kinds
    added since), leaves it the same run: "the options grew". A hash of the kind before issue 46 (every option
    in it) is compared as such: every option the run had, but those of kinds added since (or, `given` a plan's
    options, those the plan did not hold). `version`: the encoding the stored hash is of (the file's
    `hash_version`; history/record.py), the replay's hash computed the same way."""
    from scenarios.faults import KINDS

    added = [k for k in KINDS if known is not None and k not in known]
    if expected is None:
        return None, f"the {what} holds no hash to compare with"
    if expected == history.sha256(version):
        if added:
            how = ("held off in this replay, as the report's tool had none of them (replay --with-new-kinds "
                   "draws them)") if held_off else "off in this run"
            return True, (f"the same run; the options grew since the {what} was written: {', '.join(added)} "
                          f"added to the tool, {how}")
        return True, f"matches the {what}: the replay is byte-identical"
    leave_out = tuple(name for name in history.options if name not in given) if given is not None else \
        tuple(name for k in added for name in KINDS[k].options)
    if version == 1 and expected == history.sha256_every_option(leave_out):
        return True, f"matches the {what} (its hash covers every option, as before issue 46): the replay is byte-identical"
    on = [k for k in added if KINDS[k].active(history.options)]
    why = (f"{', '.join(on)}, added to the tool since, on in this run (drawn: --with-new-kinds)" if on else
           f"the code or the environment changed since the {what} was written")
    return False, f"DIFFERS from the {what}'s {expected}: the run changed ({why})"


def replay(console, args) -> int:
    """`replay REPORT|PLAN [--seed S] [--html PATH]`."""
    outputs = Outputs(getattr(args, "force", False))
    if args.html:
        outputs.add(args.html, "the picture")
    if getattr(args, "report", None):
        outputs.add(args.report, "the continued run")
    outputs.check()
    doc = load_json(args.report_or_plan, "report or counterexample")
    is_plan = plan_or_report(doc, args.report_or_plan)
    if is_plan and getattr(args, "with_new_kinds", False):
        raise UsageError(f"--with-new-kinds goes with a report's seed; {args.report_or_plan} is a counterexample, "
                         f"which holds its options (a kind added since is off in it)")
    if getattr(args, "cont", False):
        if not is_plan:
            raise UsageError(f"--continue takes a counterexample (a plan); {args.report_or_plan} is a report: "
                             f"a report's seed replays without it")
        return continue_plan(args.report_or_plan, doc, args.seed, args.html, getattr(args, "report", None),
                             getattr(args, "force", False))
    if getattr(args, "report", None):
        raise UsageError("--report goes with --continue (a replay writes nothing else)")
    if is_plan:
        if args.seed is not None:
            raise UsageError(f"{args.report_or_plan} is a counterexample (one run): it takes no --seed "
                             f"(but with --continue: the seed its rest is drawn from)")
        return replay_plan(args.report_or_plan, doc, args.html)
    return replay_seed(args.report_or_plan, load_report(args.report_or_plan, doc), args.seed, args.html,
                       getattr(args, "with_new_kinds", False))


def replay_seed(path: str, report: dict, seed: int | None, html: str | None, with_new_kinds: bool = False) -> int:
    """One seed of a report run again: its timeline, its violations, its hash against the report's. The fault
    kinds added to the tool since the report was written are held off (the seed's run as the report's tool drew
    it), or drawn with `with_new_kinds`."""
    from history.record import hash_version  # (lazily: the command line imports no hot module before compiled.install)

    if report.get("world", "sim") != "sim":
        raise UsageError(f"the report {path} is of the {report['world']} world; only sim runs replay")
    start, count = report["seeds"]["start"], report["seeds"]["count"]
    seed = pick_seed(report, seed, "replay")
    spec = resolve(report["model"], report["scenario"], [], bool(report.get("strict")), seed, 1, report["params"])
    held_off = () if with_new_kinds else kinds_added(report)
    spec = replace(spec, kinds_off=held_off)
    model_name, scenario = spec.model, spec.scenario
    result, history = run_one(seed, spec, keep_history=True)
    if history is not None:
        print(f"seed {seed}, model {model_name}, scenario {scenario}")
        print("drawn options: " + json.dumps(history.options, sort_keys=True))
        print(timeline_text(history), end="")
        print("rules hit: " + ", ".join(f"{k} {v}" for k, v in history.rules.items()))
        # the seed's margins (checkers/margins.py): what a report's `margins.<name>.seed` points here for
        shown = [f"{k} {v} ms" for k, v in result.margin_ms.items()]
        shown += [f"{k} {v} ms ({fid})" for k, (v, fid) in result.margin_findings.items()]
        print("margins (least slack to each bound; negative: broken): " + (", ".join(shown) or "none measured"))
        from checkers import ledger

        # the seed's request ledger (issue 48): what each cause sent in each phase, and what did not land as 2xx
        print("requests (the world's ledger, by cause and phase; COST-1..COST-6 judge them):")
        print("\n".join("  " + line for line in ledger.by_cause_lines(history)))
    for inv, msg, explanation in result.failures:
        print()
        print(explanation)
    for fid, inv, msg, explanation in result.findings:
        print()
        print(f"known protocol finding {fid} (not a failure; --strict makes it one):")
        print(explanation)
    if result.tool_failure is not None:
        print()
        print(f"the tool failed at seed {seed} (an exception in the model, the world or a checker):")
        print(result.tool_failure[1].rstrip())
    version = hash_version(report)
    sha = result.sha256 if history is None else history.sha256(version)  # (in the encoding the report's are of)
    print()
    print(f"history sha256: {sha}")
    expected = None
    hashes = report.get("seed_hashes")
    if isinstance(hashes, list) and len(hashes) == count:
        expected = hashes[seed - start]
    else:
        for f in report.get("failures", []):
            if f.get("seed") == seed:
                expected = f.get("history_sha256")
    known = report.get("fault_kinds") or None
    same, line = same_run(expected, history, known, "report", held_off=held_off, version=version) \
        if history is not None else \
        (None if expected is None else expected == result.sha256, "")
    print(line or ("the report holds no hash for this seed to compare with" if expected is None else
                   "matches the report: the replay is byte-identical" if same else
                   f"DIFFERS from the report's {expected}: the run changed"))
    if html and history is not None:
        write_picture(html, history, None, strict=bool(report.get("strict")))
    if same is False:
        raise ReplayDiffers(f"seed {seed}'s history sha256 {sha[:16]}... differs from the report's "
                            f"{expected[:16]}...: the run changed since {path} was written "
                            f"(what this run shows is above)")
    if result.tool_failure is not None:
        raise ToolFailure(f"seed {seed} raised {result.tool_failure[0]}")
    if result.failures:
        print(f"{len(result.failures)} violation(s): " + ", ".join(sorted({f[0] for f in result.failures})))
        return Exit.VIOLATION
    print("no violation")
    return Exit.PASSED


def replay_plan(path: str, doc: dict, html: str | None) -> int:
    """A counterexample (a plan) run again: its story, its timeline, its violation, the hash."""
    from history.record import hash_version

    from counterexamples.shrink import check_plan, run_plan, violations
    from counterexamples.story import tell

    plan = as_written(check_plan(doc, path))
    load_model(plan["model"])
    check_scenario(plan["scenario"])
    try:
        history = run_plan(plan)
    except Exception as e:  # a hand-edited plan the world cannot run: bad input, one line
        raise UsageError(f"the counterexample {path} does not run: {type(e).__name__}: {e}") from None
    found = violations(history, bool(plan.get("strict")))
    chosen = [v for v in found if v.invariant == plan.get("invariant")] or found
    if chosen:
        print(tell(plan, history, chosen[0]))
    print("The whole timeline:")
    print(timeline_text(history), end="")
    for v in found:
        print()
        print(v.explain(history))
    version = hash_version(plan)
    sha = history.sha256(version)  # (in the encoding the plan's is of)
    print()
    print(f"history sha256: {sha}")
    expected = plan.get("history_sha256")
    same, line = same_run(expected, history, kinds_of(plan["options"]), "counterexample", plan["options"],
                          version=version)
    print(line)
    if html:
        write_picture(html, history, plan, bool(plan.get("strict")), plan.get("invariant"))
    if same is False:
        raise ReplayDiffers(f"the history sha256 {sha[:16]}... differs from the counterexample's {expected[:16]}...: "
                            f"the run changed since {path} was written (what this run shows is above); "
                            f"`replay --continue {path}` replays it up to where it diverges")
    if found:
        print(f"{len(found)} violation(s): " + ", ".join(sorted({v.invariant for v in found})))
        return Exit.VIOLATION
    print("no violation")
    return Exit.PASSED


def continue_plan(path: str, doc: dict, seed: int | None, html: str | None, out_path: str | None,
                  force: bool = False) -> int:
    """`replay --continue PLAN [--seed S]`: the plan replayed until the first decision the code no longer asks
    for or asks anew (scenarios/plan.py, `Continuing`), the rest drawn from seed S (the plan's by default); where
    it diverged, the run's verdict, and the run written as a plan (a starting point for `shrink`)."""
    from history.record import hash_version

    from counterexamples.shrink import check_plan, continue_run, violations, write_plan

    plan = as_written(check_plan(doc, path))
    load_model(plan["model"])
    check_scenario(plan["scenario"])
    seed = plan["seed"] if seed is None else seed
    try:
        history, choices = continue_run(plan, seed)
    except Exception as e:  # a hand-edited plan the world cannot run: bad input, one line
        raise UsageError(f"the counterexample {path} does not run: {type(e).__name__}: {e}") from None
    print("The whole timeline:")
    print(timeline_text(history), end="")
    found = violations(history, bool(plan.get("strict")))
    for v in found:
        print()
        print(v.explain(history))
    print()
    total = len(choices.order)
    d = choices.diverged
    if d is None and choices.next == total:
        print(f"replayed every one of the plan's {total} decisions: the code asks what the plan holds")
    elif d is None:
        print(f"replayed {choices.read} of the plan's {total} decisions; the run ended without asking for the rest "
              f"(the first not asked: {choices.order[choices.next]})")
    else:
        at = f"{d['t_ms'] / 1000:.3f} s" if isinstance(d["t_ms"], int) else "?"
        what = (f"asks anew for {d['asked']}" if d["how"] == "asks anew" else
                f"no longer asks for {d['expected']} (it asked for {d['asked']} there)")
        print(f"diverged at {at}, after {choices.read} of the plan's {total} decisions: the code {what}; "
              f"the rest drawn from seed {seed} ({choices.drawn} decisions)")
    sha = history.sha256()
    expected = plan.get("history_sha256")
    same, line = same_run(expected, history, kinds_of(plan["options"]), "counterexample", plan["options"],
                          version=hash_version(plan))
    print(f"history sha256: {sha}")
    print(line)
    continued = {k: plan[k] for k in ("format", "model", "scenario") if k in plan}
    continued.update(seed=seed, params=dict(history.params), options=history.options, choices=choices.table,
                     workload=choices.workload, **history.hash_fields(),
                     source={"continued": os.path.relpath(path), "diverged": d, "git_commit": git_commit()})
    if plan.get("invariant"):
        continued.update(invariant=plan["invariant"], strict=bool(plan.get("strict")))
    target = out_path or reports_path(os.path.splitext(os.path.basename(path))[0] + "-continued.json")
    if out_path is None:  # (a --report given was checked before the run)
        outputs = Outputs(force)
        outputs.add(target, "the continued run")
        outputs.check()
    write_plan(target, json.loads(json.dumps(continued)))
    print(f"the continued run, as a plan: {os.path.relpath(target)} (replay it, or shrink it)")
    if html:
        write_picture(html, history, continued, bool(plan.get("strict")), plan.get("invariant"))
    if found:
        print(f"{len(found)} violation(s): " + ", ".join(sorted({v.invariant for v in found})))
        return Exit.VIOLATION
    print("no violation")
    return Exit.PASSED


# --- shrink --------------------------------------------------------------------------------------


def shrink(console, args) -> int:
    """`shrink REPORT [--seed S]`: the seed's run as data, shrunk while the same invariant fails;
    `shrink PLAN`: a counterexample (a guided search's) shrunk the same way."""
    from counterexamples.shrink import check_plan, record_seed, violations

    _shrink_outputs(args, args.report)  # the paths given, before anything runs (the default one needs the invariant)
    doc = load_json(args.report_path, "report or counterexample")
    if plan_or_report(doc, args.report_path):  # a counterexample (a guided search's, or one shrunk before)
        return _shrink_plan(console, args, as_written(check_plan(doc, args.report_path)))
    report = load_report(args.report_path)
    if report.get("world", "sim") != "sim":
        raise UsageError(f"the report {args.report_path} is of the {report['world']} world; only sim runs shrink")
    seed = pick_seed(report, args.seed, "shrink")
    model_name = report["model"]
    load_model(model_name)
    scenario = check_scenario(report["scenario"])
    strict = bool(report.get("strict")) or args.strict  # --strict: a known finding's seed shrinks too
    # the seed's run as the report recorded it: the kinds added to the tool since held off
    plan, history = record_seed(seed, model_name, scenario, parse_pins([], report["params"], scenario, seed, 1),
                                kinds_added(report))
    found = violations(history, strict)
    if not found:
        raise UsageError(f"seed {seed} of {args.report_path} does not fail here: nothing to shrink")
    invariant = args.invariant or found[0].invariant
    if invariant not in {v.invariant for v in found}:
        raise UsageError(f"seed {seed} fails {', '.join(sorted({v.invariant for v in found}))}, not {invariant}")
    return _shrunk(console, args, plan, history, found, invariant, strict,
                   {"report": os.path.relpath(args.report_path), "seed": seed, "git_commit": git_commit()},
                   f"seed {seed} of {os.path.relpath(args.report_path)}",
                   f"{model_name}-{scenario}-s{seed}{pins_suffix(report['params'])}{'-strict' if strict else ''}")


def _shrink_outputs(args, path: str | None) -> None:
    """A shrink's outputs (its counterexample, its picture) checked (campaign/outputs.py)."""
    outputs = Outputs(args.force)
    if path:
        outputs.add(path, "the counterexample")
    if args.html:
        outputs.add(args.html, "the picture")
    outputs.check()


def _shrink_plan(console, args, plan: dict) -> int:
    """`shrink PLAN`: a counterexample file shrunk while the same invariant fails."""
    from counterexamples.shrink import PLAN_KEYS, run_plan, violations

    load_model(plan["model"])
    check_scenario(plan["scenario"])
    strict = bool(plan.get("strict")) or args.strict
    history = run_plan(plan)
    found = violations(history, strict)
    if not found:
        raise UsageError(f"the counterexample {args.report_path} does not fail here: nothing to shrink")
    invariant = args.invariant or plan.get("invariant") or found[0].invariant
    if invariant not in {v.invariant for v in found}:
        raise UsageError(f"{args.report_path} fails {', '.join(sorted({v.invariant for v in found}))}, not {invariant}")
    base = os.path.splitext(os.path.basename(args.report_path))[0]
    source = {"plan": os.path.relpath(args.report_path), "git_commit": git_commit()}
    plan = {k: plan[k] for k in PLAN_KEYS if k in plan}
    return _shrunk(console, args, plan, history, found, invariant, strict, source, os.path.relpath(args.report_path),
                   base)


def _shrunk(console, args, plan, history, found, invariant, strict, source, what, name) -> int:
    from rich.table import Table

    from counterexamples.shrink import Shrinker, size, write_plan
    from counterexamples.story import tell

    path = args.report or reports_path(f"{name}-{invariant}-shrunk.json")
    _shrink_outputs(args, path)  # before the shrink's runs
    before = size(plan, history)
    model_name = plan["model"]
    print(f"shrinking {what}: model {model_name} fails {invariant}; "
          f"budget {args.budget_s:g} s", flush=True)
    last = [0.0]

    def say(line: str) -> None:  # progress, at most a line a second
        now = time.monotonic()
        if now - last[0] >= 1.0:
            last[0] = now
            print(line, flush=True)

    t0 = time.monotonic()
    shrinker = Shrinker(plan, invariant, args.budget_s, strict, say)
    best = shrinker.run()
    elapsed = time.monotonic() - t0
    after = size(best, shrinker.history)
    best.update(invariant=invariant, strict=strict, **shrinker.history.hash_fields(),
                source=source,
                shrunk={"before": before, "after": after, "runs": shrinker.runs, "steps": shrinker.accepted,
                        "seconds": round(elapsed, 1), "budget_s": args.budget_s,
                        "stopped_by": "the budget" if shrinker.out_of_time() else "no smaller failing plan"})
    write_plan(path, best)
    t = Table(title=f"shrunk in {elapsed:.0f} s, {shrinker.runs} runs ({best['shrunk']['stopped_by']})")
    for col in ("", "nodes", "actors", "processes", "faults", "client requests", "events", "simulated s"):
        t.add_column(col, justify="right")
    for name, s in (("seed", before), ("counterexample", after)):
        t.add_row(name, *(str(s[k]) for k in ("nodes", "actors", "processes", "faults", "client_requests", "events",
                                              "simulated_s")))
    console.print(t)
    print(tell(best, shrinker.history, shrinker.violation))
    if args.html:
        write_picture(args.html, shrinker.history, best, strict, invariant)
    print(f"counterexample: {os.path.relpath(path)}")
    print(f"replay: {invoked_as()} replay {os.path.relpath(path)}")
    return Exit.VIOLATION
