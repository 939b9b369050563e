"""`explore`: every run of a small configuration, breadth-first (explore/search.py); its bounds
read from the subcommand's options, its progress line, its summary and its counterexample.

This module turns options into the explorer's Bounds and its outcome into a report; it must not
know the parser (nodelease/cli.py) nor how the search works.
"""

from __future__ import annotations

import json
import os
import time

from campaign.outputs import Outputs, secondary, write_json
from campaign.run import load_model, parse_pins
from house.errors import Exit, UsageError
from campaign.report import command_line, invoked_as, reports_path


def _ints(text: str, what: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UsageError(f"{what} must be integers separated by commas, got {text!r}") from None


def bounds_from(args, params):
    """The explorer's Bounds from `explore`'s options (UsageError, one line, if they cannot hold)."""
    from explore.search import Bounds

    if not 0 <= args.from_s < args.horizon_s:
        raise UsageError(f"--from-s must be at least 0 and below --horizon-s, got {args.from_s:g}")
    nodes = args.nodes
    clocks = 2 * nodes if args.upgrade else nodes  # an upgrade's old machines after the nodes'
    offsets = None
    if args.offsets:
        offsets = [_ints(part, "--offsets") for part in args.offsets.split(";")]
        for combo in offsets:
            if len(combo) != clocks:
                raise UsageError(f"--offsets: {combo} names {len(combo)} clocks for {nodes} nodes"
                                 + (f" and {nodes} old ones" if args.upgrade else ""))
            if any(abs(x) > params.max_skew_ms for x in combo):
                raise UsageError(f"--offsets: {combo} leaves the skew band of +-{params.max_skew_ms} ms (T-2)")
    delays = _ints(args.delays, "--delays") if args.delays else None
    if delays is not None and (not delays or any(d < 1 for d in delays)):
        raise UsageError("--delays must name at least one delay of 1 ms or more")
    events = None
    if args.events:
        parts = [x.strip() for x in args.events.split(",") if x.strip()]
        events = [None if x == "straggler" else _ints(x, "--events (ms or straggler)")[0] for x in parts]
        if not events or any(e is not None and e < 0 for e in events):
            raise UsageError("--events must name lengths of 0 ms or more, or straggler")
    old_stops = [x.strip() for x in args.old_stops.split(",") if x.strip()]
    if not old_stops or any(x not in ("clean", "crash") for x in old_stops):
        raise UsageError(f"--old-stops must name clean, crash or both, got {args.old_stops!r}")
    gaps = _ints(args.gaps_ms, "--gaps-ms")
    if not gaps or any(g < 0 for g in gaps) or args.old_stop_s <= 0:
        raise UsageError("--gaps-ms must name gaps of 0 ms or more, --old-stop-s a positive instant")
    return Bounds(nodes=nodes, actors=args.actors, horizon_s=args.horizon_s, quantum_ms=args.quantum_ms,
                  faults=args.faults, crashes=args.crashes, requests=args.requests, hibernations=args.hibernations,
                  fences=args.fences, outages=args.outages, twins=args.twins, stops=args.stops, drains=args.drains,
                  deletes=args.deletes, from_s=args.from_s, offsets=offsets, delays=delays, events=events,
                  focus=args.focus, upgrade=args.upgrade, old_stop_s=args.old_stop_s, old_stops=old_stops,
                  gaps_ms=gaps, same_ids=args.same_ids, gc=args.gc,
                  max_states=args.max_states, budget_s=args.budget_s)


def default_path(model_name: str, bounds, pins: dict) -> str:
    """The report's name: the model, the size explored, the pins, and a digest of every other bound (but the
    budgets, which stop a search without changing it): two explorations that differ never share a report."""
    import hashlib
    from dataclasses import asdict

    from campaign.report import pins_suffix

    rest = {k: v for k, v in asdict(bounds).items() if k not in ("nodes", "actors", "budget_s", "max_states")}
    tag = hashlib.sha256(json.dumps(rest, sort_keys=True).encode()).hexdigest()[:8]
    return reports_path(f"explore-{model_name}-{bounds.nodes}n{bounds.actors}a{pins_suffix(pins)}-{tag}.json")


def command(console, args) -> int:
    """`explore`: the exploration's summary, a report, and a counterexample if one run fails (exit 1)."""
    from checkers import CHECKERS
    from counterexamples.shrink import write_plan
    from counterexamples.story import tell
    from explore.search import MARGINS, Explorer
    from model.params import Params, ParamsError

    pins = parse_pins(args.param)
    model = load_model(args.model)
    try:
        params = Params.from_dict({**MARGINS, **pins})
    except ParamsError as e:
        raise UsageError(str(e)) from None
    bounds = bounds_from(args, params)
    too_many = bounds.too_many()
    if too_many:  # refused before anything is made: its count is arithmetic (issue 50)
        raise UsageError(f"explore: {too_many}")
    path = args.report or default_path(args.model, bounds, pins)
    outputs = Outputs(args.force)
    outputs.report(path, "the exploration's report", summary=False, counterexamples=list(CHECKERS))
    outputs.check()
    started = time.monotonic()
    runs = bounds.count_runs()

    def progress(out, depth, frontier, elapsed, offsets) -> None:
        print(f"explore: depth {depth}, {out.states} states, {out.distinct} distinct, "
              f"{out.states / elapsed:,.0f} states/s ({out.steps / elapsed:,.0f} atomic steps/s), frontier {frontier}, clocks {list(offsets)} "
              f"({out.combinations} of {runs}), {elapsed:.0f} s", flush=True)

    print(f"explore: model {args.model}, {bounds.nodes} nodes x {bounds.actors} actors, {describe(bounds, params)}")
    explorer = Explorer(model, args.model, params, bounds, progress, strict=args.strict)
    out = explorer.run(args.workers)
    report = {"model": args.model, "params": params.to_dict(), "bounds": describe_dict(bounds, explorer),
              "status": out.status, "states": out.states, "distinct_states": out.distinct, "depth": out.depth,
              "wall_s": round(out.wall_s, 2), "states_per_s": round(out.states_per_s),
              "atomic_steps": out.steps, "atomic_steps_per_s": round(out.steps_per_s),
              "callbacks": out.callbacks, "callbacks_per_s": round(out.callbacks / out.wall_s) if out.wall_s else 0,
              "clock_combinations": [[list(o), n] for o, n in out.per_offsets],
              "passed": out.violation is None, "exit_status": int(Exit.PASSED if out.violation is None else
                                                                  Exit.VIOLATION),
              "why_not_passed": None, "command": command_line()}
    print(f"explore: {out.status}: {out.distinct:,} distinct states ({out.states:,} generated), depth {out.depth}, "
          f"{out.wall_s:.1f} s, {out.states_per_s:,.0f} states/s, {out.combinations} clock combination(s); "
          f"{out.steps:,} system states generated by atomic steps between them ({out.steps_per_s:,.0f}/s); "
          f"{out.callbacks:,} world callbacks run ({out.callbacks / max(out.wall_s, 1e-9):,.0f}/s)")
    code = Exit.PASSED
    cx = None
    if out.violation is not None:
        plan, history = (out.plan, out.history) if out.plan is not None else explorer.counterexample(out)
        cx = os.path.splitext(path)[0] + f"-{out.violation.invariant}.json"
        report["counterexample"] = os.path.relpath(cx)
        report["violation"] = out.violation.message
        report["why_not_passed"] = f"{out.violation.invariant}: {out.violation.message}"
        code = Exit.VIOLATION
    write_json(path, report)  # the verdict first (campaign/outputs.py); the counterexample after it
    if cx is not None:
        secondary(write_plan, cx, plan)
        print(tell(plan, history, out.violation))
        print("the choices that lead there (each one of several the explorer tried):")
        for line in plan["source"]["path"]:
            print("  " + line)
        print(f"counterexample: {os.path.relpath(cx)}")
        print(f"replay it in the simulated world: {invoked_as()} replay {os.path.relpath(cx)} "
              f"[--html {os.path.relpath(cx)[:-5]}.html]")
    print(f"report: {os.path.relpath(path)} ({time.monotonic() - started:.1f} s)")
    return code


def describe_dict(b, explorer) -> dict:
    d = {k: v for k, v in vars(b).items() if v is not None}
    d["delays"] = explorer.delays
    return d


def describe(b, params) -> str:
    from explore.search import INJECTIONS

    budgets = ", ".join(f"{getattr(b, name)} {name}" for name in ("faults",) + tuple(INJECTIONS.values())
                        if getattr(b, name))
    upgrade = (f"; an upgrade: old nodes stop at {b.old_stop_s:g} s ({', '.join(b.old_stops or ('clean', 'crash'))}), "
               f"the new ones start {', '.join(map(str, b.gaps_ms or (0,)))} ms after"
               f"{', under their ids' if b.same_ids else ''}{', the old GC at the switch' if b.gc else ''}"
               if b.upgrade else "")
    return (f"horizon {b.horizon_s:g} s, quantum {b.quantum_ms} ms, {budgets or 'no faults'}{upgrade}; "
            f"ttl {params.ttl_ms}, grace {params.grace_ms}, safety {params.safety_ms}, "
            f"max_skew {params.max_skew_ms}, heartbeat {params.heartbeat_period_ms}, "
            f"timeout {params.attempt_timeout_ms} ms")
