"""`bench`: seeds/s with 1 and 2 workers, a seed's cost in raw SimPy events (so the figure holds on a
noisy machine), memory per worker, and whether both runs gave the same digest.

This module knows what the benchmark measures; it must not know the parser (nodelease/cli.py).
"""

from __future__ import annotations

import os
import time

from campaign import compiled
from campaign.outputs import Outputs
from campaign.report import command_line, git_commit, pins_suffix, reports_path, write_report
from campaign.run import MAIN_MODEL, resolve, run_campaign, tool_failure
from house.errors import Exit


def raw_simpy_event_s(events: int = 200_000) -> float:
    """Seconds one bare SimPy event costs here: scheduled, popped, one no-op callback."""
    import simpy

    env = simpy.Environment()

    def noop(_ev):
        pass

    t0 = time.perf_counter()
    for i in range(events):
        ev = simpy.Event(env)
        ev._ok = True
        ev._value = None
        ev.callbacks.append(noop)
        env.schedule(ev, delay=i % 1000)
    env.run()
    return (time.perf_counter() - t0) / events


def command(console, args) -> int:
    """`bench [--seeds N]`: the figures as a table and reports/bench.json; exit 1 if the digests differ."""
    import resource

    from rich.table import Table

    spec = resolve(MAIN_MODEL, args.scenario, args.param)
    path = args.report or reports_path(f"bench-{args.scenario}-s{args.start}-n{args.seeds}"
                                       f"{pins_suffix(dict(spec.pins))}.json")
    outputs = Outputs(args.force)
    outputs.report(path, "the benchmark's report")
    outputs.check()
    n = args.seeds
    raw_s = min(raw_simpy_event_s() for _ in range(3))
    figures = {}
    for workers in (1, 2):
        figures[workers] = run_campaign(console, spec, args.start, n, workers,
                                        "bench", quiet=True)
    one, two = figures[1], figures[2]
    if one["tool_failures"]:  # a seed that raised measures nothing
        raise tool_failure(one)
    c = one["counts"]
    per_seed_s = one["elapsed_s"] / n
    peak_self_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    peak_child_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    out = {
        "seeds": n, "scenario": args.scenario,
        "seeds_per_s_1_worker": round(n / one["elapsed_s"], 1),
        "seeds_per_s_2_workers": round(n / two["elapsed_s"], 1),
        "speedup_1_to_2": round(one["elapsed_s"] / two["elapsed_s"], 2),
        "kernel_events_per_seed": round(c["kernel_events"] / n),
        "history_events_per_seed": round(c["events"] / n),
        "acquisitions_per_seed": round(c["acquisitions"] / n, 1),
        "bucket_requests_per_seed": round(c["bucket_requests"] / n),
        "raw_simpy_event_us": round(raw_s * 1e6, 3),
        "seed_cost_raw_simpy_events": round(per_seed_s / raw_s),
        "peak_mb_1_worker_process": round(peak_self_mb, 1),
        "peak_mb_per_pool_worker": round(peak_child_mb, 1),
        "projected_20000_seeds_s_2_workers": round(20000 * two["elapsed_s"] / n, 1),
        "same_digest_1_and_2_workers": one["history_digest"] == two["history_digest"],
        "compiled": compiled.status(),
        "git_commit": git_commit(),
        "command": command_line(),
    }
    same = out["same_digest_1_and_2_workers"]
    out.update(passed=same, exit_status=int(Exit.PASSED if same else Exit.VIOLATION),
               why_not_passed=None if same else "the digests of 1 and 2 workers differ")
    t = Table(title=f"benchmark: {n} seeds of {args.scenario}, every checker on")
    t.add_column("measure")
    t.add_column("value", justify="right")
    for k, v in out.items():
        t.add_row(k, str(v))
    console.print(t)
    write_report(path, out, text="\n".join(f"{k}: {v}" for k, v in out.items()) + "\n")
    print(f"report: {os.path.relpath(path)}")
    return Exit(out["exit_status"])
