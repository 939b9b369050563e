"""`python runner.py --explore`: the explorer's command line, its progress line and its summary."""

from __future__ import annotations

import json
import os
import time

from nodelease.errors import UsageError

from .search import INJECTIONS, MARGINS, Bounds, Explorer

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def add_arguments(parser) -> None:
    g = parser.add_argument_group("exhaustive mode (--explore): every run of a small configuration, breadth-first")
    g.add_argument("--explore", action="store_true", help="explore every run within the bounds below "
                   "(with --model; --nodes and --actors give the size, default 2 and 1)")
    g.add_argument("--horizon-s", type=float, default=20.0, metavar="S", help="simulated seconds per run (default 20)")
    g.add_argument("--quantum-ms", type=int, default=500, metavar="MS",
                   help="the time quantum: delays and injections fall on its multiples (default 500)")
    g.add_argument("--delays", metavar="MS,...", default="1", help="a request's and a reply's delays to explore "
                   "(default 1; e.g. 1,500,1000: each multiplies the states)")
    g.add_argument("--events", metavar="MS,...", help="how long a served request's event may run, each a "
                   "branch; `straggler`: until its process sends its `released` write, the worst instant for a "
                   "clean stop (CS-1) (e.g. 0,straggler); default: every event ends at once")
    g.add_argument("--focus", action="append", metavar="'OP PREFIX'", help="only requests starting so "
                   "(e.g. 'PUT owners/') get delays and faults; the rest are answered in 1 ms (repeatable)")
    g.add_argument("--faults", type=int, default=1, metavar="N", help="requests lost, writes applied late, "
                   "replies lost, per run (default 1)")
    for name, default, what in (("requests", 1, "client requests"), ("hibernations", 0, "hibernations"),
                                ("crashes", 0, "process crashes"), ("fences", 0, "operator `cluster fence`s"),
                                ("outages", 0, "outages of one node (ttl + grace + a quantum)"),
                                ("twins", 0, "twins (a second process under a node's id, 2 (ttl + grace) long)"),
                                ("stops", 0, "clean stops of a node (its supervisor restarts it a quantum later)"),
                                ("drains", 0, "drains of a node, each followed by a clean stop ttl + grace + a "
                                 "quantum later"),
                                ("deletes", 0, "mistaken deletes of a node's nodes/ record")):
        g.add_argument(f"--{name}", type=int, default=default, metavar="N", help=f"{what} per run (default {default})")
    g.add_argument("--offsets", metavar="A,B;C,D", help="clock offsets per node to explore, ms, e.g. --offsets=-1000,1000 (default: every "
                   "combination of -max_skew, 0, +max_skew)")
    g.add_argument("--from-s", type=float, default=0.0, metavar="S", help="no choice before S seconds "
                   "(requests answered in 1 ms, nothing injected): skips the start's interleavings (default 0)")
    g.add_argument("--explore-budget", type=float, metavar="S", help="stop cleanly after S seconds")
    g.add_argument("--max-states", type=int, metavar="N", help="stop cleanly after N distinct states")


def _ints(text: str, what: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UsageError(f"{what} must be integers separated by commas, got {text!r}") from None


def bounds_from(args, params) -> Bounds:
    for name in ("faults",) + tuple(INJECTIONS.values()):
        if getattr(args, name) < 0:
            raise UsageError(f"--{name} must not be negative, got {getattr(args, name)}")
    if args.horizon_s <= 0 or args.quantum_ms <= 0:
        raise UsageError("--horizon-s and --quantum-ms must be positive")
    if not 0 <= args.from_s < args.horizon_s:
        raise UsageError(f"--from-s must be at least 0 and below --horizon-s, got {args.from_s:g}")
    nodes = args.nodes or 2
    offsets = None
    if args.offsets:
        offsets = [_ints(part, "--offsets") for part in args.offsets.split(";")]
        for combo in offsets:
            if len(combo) != nodes:
                raise UsageError(f"--offsets: {combo} names {len(combo)} clocks for {nodes} nodes")
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
    return Bounds(nodes=nodes, actors=args.actors or 1, horizon_s=args.horizon_s, quantum_ms=args.quantum_ms,
                  faults=args.faults, crashes=args.crashes, requests=args.requests, hibernations=args.hibernations,
                  fences=args.fences, outages=args.outages, twins=args.twins, stops=args.stops, drains=args.drains,
                  deletes=args.deletes, from_s=args.from_s, offsets=offsets, delays=delays, events=events,
                  focus=args.focus,
                  max_states=args.max_states, budget_s=args.explore_budget)


def explore_command(console, args, pins: dict, load_model) -> int:
    from counterexamples.shrink import write_plan
    from counterexamples.story import tell
    from model.params import Params, ParamsError

    model = load_model(args.model)
    try:
        params = Params.from_dict({**MARGINS, **pins})
    except ParamsError as e:
        raise UsageError(str(e)) from None
    bounds = bounds_from(args, params)
    started = time.monotonic()

    def progress(out, depth, frontier, elapsed, offsets) -> None:
        print(f"explore: depth {depth}, {out.states} states, {out.distinct} distinct, "
              f"{out.states / elapsed:,.0f} states/s ({out.steps / elapsed:,.0f} atomic steps/s), frontier {frontier}, clocks {list(offsets)} "
              f"({out.combinations} of {len(bounds.combinations(params.max_skew_ms))}), {elapsed:.0f} s", flush=True)

    print(f"explore: model {args.model}, {bounds.nodes} nodes x {bounds.actors} actors, {describe(bounds, params)}")
    explorer = Explorer(model, args.model, params, bounds, progress, strict=args.strict)
    out = explorer.run(args.workers)
    report = {"model": args.model, "params": params.to_dict(), "bounds": describe_dict(bounds, explorer),
              "status": out.status, "states": out.states, "distinct_states": out.distinct, "depth": out.depth,
              "wall_s": round(out.wall_s, 2), "states_per_s": round(out.states_per_s),
              "atomic_steps": out.steps, "atomic_steps_per_s": round(out.steps_per_s),
              "callbacks": out.callbacks, "callbacks_per_s": round(out.callbacks / out.wall_s) if out.wall_s else 0,
              "clock_combinations": [[list(o), n] for o, n in out.per_offsets]}
    path = args.report or os.path.join(HERE, "reports", f"explore-{args.model}.json")
    print(f"explore: {out.status}: {out.distinct:,} distinct states ({out.states:,} generated), depth {out.depth}, "
          f"{out.wall_s:.1f} s, {out.states_per_s:,.0f} states/s, {out.combinations} clock combination(s); "
          f"{out.steps:,} system states generated by atomic steps between them ({out.steps_per_s:,.0f}/s); "
          f"{out.callbacks:,} world callbacks run ({out.callbacks / max(out.wall_s, 1e-9):,.0f}/s)")
    code = 0
    if out.violation is not None:
        plan, history = (out.plan, out.history) if out.plan is not None else explorer.counterexample(out)
        cx = path[:-5] + f"-{out.violation.invariant}.json" if path.endswith(".json") else path + ".cx.json"
        write_plan(cx, plan)
        report["counterexample"] = os.path.relpath(cx)
        report["violation"] = out.violation.message
        print(tell(plan, history, out.violation))
        print("the choices that lead there (each one of several the explorer tried):")
        for line in plan["source"]["path"]:
            print("  " + line)
        print(f"counterexample: {os.path.relpath(cx)}")
        print(f"replay it in the simulated world: python runner.py --replay {os.path.relpath(cx)} "
              f"[--html {os.path.relpath(cx)[:-5]}.html]")
        code = 1
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")
    print(f"report: {os.path.relpath(path)} ({time.monotonic() - started:.1f} s)")
    return code


def describe_dict(b: Bounds, explorer: Explorer) -> dict:
    d = {k: v for k, v in vars(b).items() if v is not None}
    d["delays"] = explorer.delays
    return d


def describe(b: Bounds, params) -> str:
    budgets = ", ".join(f"{getattr(b, name)} {name}" for name in ("faults",) + tuple(INJECTIONS.values())
                        if getattr(b, name))
    return (f"horizon {b.horizon_s:g} s, quantum {b.quantum_ms} ms, {budgets or 'no faults'}; "
            f"ttl {params.ttl_ms}, grace {params.grace_ms}, safety {params.safety_ms}, "
            f"max_skew {params.max_skew_ms}, heartbeat {params.heartbeat_period_ms}, "
            f"timeout {params.attempt_timeout_ms} ms")
