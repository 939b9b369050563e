"""Running seeds of the simulated world: one seed judged, many in worker processes or on a Dask
cluster, a slice of them (`--shard K/N`) or as many as a time budget allows; and `run`, the
subcommand that makes a campaign's report of them.

A seed is run and judged here (`run_one`), in whichever process runs it; the report is built in
the process that asked (campaign/report.py). This module knows how seeds are spread over
processes and how a campaign's options read; it must not know the parser (nodelease/cli.py)
nor print anything but progress and the summary.
"""

from __future__ import annotations

import os
import time

from typing import TYPE_CHECKING

from house.errors import EnvironmentFailure, Exit, Stopped, ToolFailure, UsageError, signal_name
from house.pool import run_tasks
from .report import (
    Progress,
    invoked_as,
    pins_suffix,
    settle,
    summary_text,
    build_report,
    default_report_path,
    exit_status,
    junit_xml,
    print_summary,
    reports_path,
    write_junit,
)

if TYPE_CHECKING:  # (hot modules: imported when a run needs them, after the compiled modules' finder is in)
    from checkers.result import SeedResult
    from scenarios.spec import RunSpec

MAIN_MODEL = "correct"
DEFAULT_SCENARIO = "swarm"


# --- what can be run ---------------------------------------------------------------------------


def load_model(name: str):
    """The model object (with .step) registered under `name` (UsageError if there is none)."""
    from broken_models import load_model as load

    return load(name)


def check_scenario(name: str) -> str:
    from scenarios.swarm import SCENARIOS

    if name not in SCENARIOS:
        raise UsageError(f"unknown scenario {name!r} (choices: {', '.join(SCENARIOS)})")
    return name


def _pairs(pairs: list[str]) -> list[tuple[str, int]]:
    out = []
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise UsageError(f"--param wants KEY=VALUE, got {pair!r}")
        try:
            out.append((key.strip(), int(value)))
        except ValueError:
            raise UsageError(f"--param {key}: {value!r} is not an integer number of ms") from None
    return out


def parse_params(pairs: list[str], base: dict | None = None):
    """--param KEY=VALUE pairs over the defaults (or `base`: the real-S3 world's timing), the values
    not pinned fitted around them as the simulation fits them, validated (NL-4, T-2..T-4 and what
    the world's draws need: campaign/validate.py). A whole configuration (Params)."""
    from model.params import Params

    from .validate import check_s3

    return check_s3(dict(_pairs(pairs)), dict(base) if base is not None else Params().to_dict())


def parse_pins(pairs: list[str], base: dict | None = None, scenario: str = "swarm", start: int = 0,
               count: int = 2_000) -> dict:
    """--param KEY=VALUE pairs as the values pinned for every seed (the rest is drawn per seed);
    refused at once, in one line naming what the user set, if a seed start..start+count-1 would
    draw a configuration that breaks NL-4, T-2..T-4 or the world's draws (campaign/validate.py)."""
    from .validate import check_sim

    pins = dict(base or {})
    pins.update(_pairs(pairs))
    check_sim(pins, scenario, start, count)
    return pins


def parse_shard(text: str | None, start: int, count: int) -> tuple[int, int, dict | None]:
    """`--shard K/N`: the K-th of N contiguous slices of seeds start..start+count-1 -> (its start, its
    count, the report's `shard` block)."""
    if text is None:
        return start, count, None
    k, sep, n = text.partition("/")
    try:
        k, n = int(k), int(n)
    except ValueError:
        k = n = 0
    if not sep or not 1 <= k <= n:
        raise UsageError(f"--shard wants K/N with 1 <= K <= N, got {text!r}")
    if n > count:
        raise UsageError(f"--shard {text}: {n} shards of {count} seeds leave some empty")
    lo, hi = start + (k - 1) * count // n, start + k * count // n
    return lo, hi - lo, {"k": k, "n": n, "of": {"start": start, "count": count}}


# --- one seed ---------------------------------------------------------------------------------------


def resolve(model_name: str, scenario: str, pairs: list[str] | None = None, strict: bool = False, start: int = 0,
            count: int = 2_000, base: dict | None = None) -> RunSpec:
    """The command's run spec, resolved once: the model and the scenario looked up (UsageError if unknown), the
    --param pairs checked for the seeds to run (parse_pins). Everything below takes the spec whole."""
    check_scenario(scenario)
    load_model(model_name)
    pins = parse_pins(pairs or [], base, scenario, start, count)
    from scenarios.spec import RunSpec

    return RunSpec.of(model_name, scenario, pins, strict)


def _spec(spec_or_model, scenario, params, strict) -> RunSpec:
    """A spec, given one, or made of the four values it holds (the older signature, kept for callers that
    hold them: tests, kits)."""
    from scenarios.spec import RunSpec

    if isinstance(spec_or_model, RunSpec):
        return spec_or_model
    return RunSpec.of(spec_or_model, scenario or DEFAULT_SCENARIO, params, strict)


def run_one(seed: int, spec, scenario: str | None = None, params=None, keep_history: bool = False,
            strict: bool = False):
    """Run and judge one seed of the simulated world under `spec` (a RunSpec; or a model name, scenario and
    params, the older signature). Returns a SeedResult (and the history if asked: None if the model or the
    world raised). A strict spec: known protocol findings fail it too."""
    from checkers.result import crashed, judge
    from counterexamples import necessity

    spec = _spec(spec, scenario, params, strict)
    history = world = None
    try:
        world = spec.world(seed)
        history = world.run()
    except Exception as e:  # a bug in the model or the world: the seed's tool failure, not a verdict
        result = crashed(seed, e)
    else:
        # a finding's violation only where its cause is necessary: replayed without it (issue 44)
        result = judge(seed, history, strict=spec.strict, necessity=necessity.check)
        # what the checkers computed once refers back to the history (facts, the cost checks' run): dropped, so
        # that the history goes with its last reference instead of waiting for the cyclic collector
        history.cache.clear()
    finally:
        if world is not None:
            world.close()  # (and the world's own cycles: a worker's peak memory grew with the seeds waiting for it)
    return (result, history) if keep_history else result


# --- many seeds -----------------------------------------------------------------------------------------

_W: dict = {}


# The cyclic collector in a process that runs seeds: a seed makes about a million short-lived containers
# (states, events, tuples) and keeps its history whole until judged, so at CPython's default thresholds
# (700, 10, 10) the collector scans the same young history again and again, and every full pass walks the
# imported modules too. Measured (cachegrind, seeds 0..7 of the swarm, compiled): 529.9 M instructions a
# seed at the defaults; gc.freeze() alone 528.6 M; with gen-0 at 10,000 519.1 M; at 50,000 (20, 20) 511.5 M
# (-3.5 %); at 200,000 510.0 M. The same thresholds the explorer's searches use (explore/search.py).
GC_THRESHOLDS = (50_000, 20, 20)


def _worker_init(spec, scenario=None, params=None, strict=False) -> None:
    import gc

    _W["spec"] = _spec(spec, scenario, params, strict)
    gc.freeze()  # what is imported by now lives as long as the process: never scanned again
    gc.set_threshold(*GC_THRESHOLDS)


def _worker_chunk(seeds: list[int]) -> list[SeedResult]:
    return [run_one(s, _W["spec"]) for s in seeds]


def _chunk(seeds: list[int]) -> list[SeedResult]:
    return _worker_chunk(seeds)  # (looked up when called: a test replaces it in the workers)


def _seeds_held(chunks: list) -> str:
    return "seeds " + ", ".join(f"{c[0]}..{c[-1]}" if len(c) > 1 else f"{c[0]}" for c in chunks)


def run_seeds(spec: RunSpec, start: int, count: int, workers: int, chunk: int | None = None):
    """Yield SeedResults in seed order, in `workers` processes of the one worker pool (house/pool.py: each
    worker owns a pipe, a worker that dies holding seeds is the tool's failure at once, naming them). The
    chunks are made as they are handed out (a run bounded by time has no end to list)."""
    chunk = chunk or max(1, min(50, count // (workers * 32) or 1))
    end = start + count
    chunks = (list(range(i, min(i + chunk, end))) for i in range(start, end, chunk))
    for results in run_tasks(chunks, _chunk, workers, init=_worker_init, init_args=(spec,), describe=_seeds_held,
                             what="the campaign", hint="rerun, or `run --resume` a report saved before"):
        yield from results


def _dask_chunk(seeds: list[int], spec: RunSpec) -> list[SeedResult]:
    """A chunk of seeds on a Dask worker (the project installed there, as here)."""
    from . import compiled

    compiled.install()  # a worker imports this module alone, not the command line that installs it
    return [run_one(s, spec) for s in seeds]


def _reachable(address: str) -> None:
    """A scheduler's tcp://host:port answers a connection at once, or the run stops here (one line)."""
    import socket
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(address if "://" in address else "tcp://" + address)
        host, port = parts.hostname, parts.port or 8786
    except ValueError:
        raise UsageError(f"--dask {address}: not an address (tcp://HOST:PORT or local:W)") from None
    if parts.scheme not in ("tcp", "tls") or not host:
        raise UsageError(f"--dask {address}: not an address (tcp://HOST:PORT or local:W)")
    try:
        socket.create_connection((host, port), timeout=5).close()
    except OSError as e:
        raise UsageError(f"--dask {address}: cannot reach the scheduler ({e.strerror or e})") from None


def dask_workers(address: str) -> int | None:
    """The W of `--dask local:W` (worker processes this run starts: house.inputs' cap), None for a
    scheduler's address."""
    from house.inputs import worker_count

    if not address.startswith("local:"):
        return None
    return worker_count(address[len("local:"):], f"--dask {address}: local:W")


def run_seeds_dask(address: str, spec: RunSpec, start, count):
    """Yield SeedResults as their chunks finish, on a Dask cluster: `local:W` starts W worker processes
    on 127.0.0.1 for this run; anything else is a scheduler's address. A chunk whose worker is lost
    is run again elsewhere (Dask's scheduler does that); the results, sorted, are the same."""
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise UsageError("--dask needs Dask: pip install -e '.[dask]'") from None
    cluster = None
    try:
        if address.startswith("local:"):
            n = dask_workers(address)
            cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1",
                                   dashboard_address=None)
            client = Client(cluster)
        else:
            _reachable(address)
            client = Client(address, timeout=10)
    except OSError as e:
        raise UsageError(f"--dask {address}: cannot reach the scheduler ({e})") from None
    try:
        workers = max(1, len(client.scheduler_info().get("workers", {})))
        chunk = max(1, min(25, count // (workers * 8) or 1))
        chunks = [list(range(i, min(i + chunk, start + count))) for i in range(start, start + count, chunk)]
        futures = client.map(_dask_chunk, chunks, spec=spec, pure=False)
        for fut in as_completed(futures):
            yield from fut.result()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def run_campaign(console, spec: RunSpec, start, count, workers, report_path, label=None, quiet=False,
                 budget_s: float | None = None, extra: dict | None = None, dask: str | None = None,
                 keep_partial: bool = False):
    """Run seeds start..start+count-1 of the simulated world under `spec` and build the report (not yet written).
    With `budget_s`, stop taking results once that many seconds have passed: the report covers the
    seeds start..start+k-1 that finished in order by then (its `time_budget` says so). Stopped by a
    signal (SIGINT, SIGTERM: a KeyboardInterrupt), the workers are stopped; with `keep_partial`, the
    report of the seeds finished in order is returned, marked `partial` (its range, the signal),
    else the interrupt goes on."""
    prog = Progress(console, count if budget_s is None else budget_s, label or f"{spec.model}/{spec.scenario}",
                    unit="seeds" if budget_s is None else "s") if not quiet else None
    t0 = time.monotonic()
    results = []
    stopped = False
    interrupted = None
    try:
        # under a time budget, small chunks: the run stops close to the budget
        seeds = (run_seeds_dask(dask, spec, start, count) if dask else
                 run_seeds(spec, start, count, workers, chunk=2 * workers if budget_s is not None else None))
        for r in seeds:
            results.append(r)
            if prog and budget_s is None:
                prog.advance(1 if r.failures else 0)
            elif prog:
                prog.at(time.monotonic() - t0, f"{len(results)} seeds, "
                                               f"{sum(1 for x in results if x.failures)} violating")
            if budget_s is not None and time.monotonic() - t0 >= budget_s:
                stopped = len(results) < count
                break
    except KeyboardInterrupt as e:  # (the workers are killed on the way out of run_seeds)
        if not keep_partial:
            raise
        interrupted = signal_name(e)
    finally:
        if prog:
            prog.close()
    extra = dict(extra or {}, strict=spec.strict)
    if spec.kinds_off:  # (the kinds its seeds knew: a resumed report's rest, as the report's tool ran it)
        extra["fault_kinds"] = spec.fault_kinds()
    if dask:
        results.sort(key=lambda r: r.seed)  # a cluster finishes chunks in any order
        extra["dask"] = dask if dask.startswith("local:") else "a cluster"
    if interrupted is not None:
        # only the seeds finished in order from the first: a resume runs the rest
        done = next((i for i, r in enumerate(results) if r.seed != start + i), len(results))
        results = results[:done]
        extra["partial"] = {"signal": interrupted, "of": {"start": start, "count": count},
                            # (a time-budgeted run ends when its time does: there is no rest to resume)
                            "resume": (f"{invoked_as()} run --resume {os.path.relpath(report_path)}"
                                       if budget_s is None else None)}
    if budget_s is not None:
        extra["time_budget"] = {"budget_s": budget_s, "seeds_run": len(results), "stopped_by_budget": stopped}
    return build_report(results, world="sim", model=spec.model, scenario=spec.scenario, params=spec.world_params,
                        start=start,
                        count=len(results), elapsed_s=time.monotonic() - t0, report_path=report_path, workers=workers,
                        extra=extra)


def draw_failures(report: dict, report_path: str, spec: RunSpec) -> None:
    """One picture per failing invariant, of its first failing seed, beside the report
    (report["pictures"]: invariant -> path). A picture that cannot be written is a warning: the
    verdict is the report's, already written."""
    from counterexamples.picture import write_html
    from counterexamples.shrink import violations

    from .outputs import secondary

    pictures = {}
    stem = os.path.splitext(report_path)[0]
    for f in report["failures"]:
        inv = f["invariant"]
        if inv in pictures:
            continue
        _result, history = run_one(f["seed"], spec, keep_history=True)
        if history is None:
            continue
        chosen = [v for v in violations(history, spec.strict) if v.invariant == inv]
        path = f"{stem}-{inv}.html"
        pictures[inv] = os.path.relpath(path) if secondary(write_html, path, history, chosen[0] if chosen else None) \
            else None
    report["pictures"] = {inv: p for inv, p in pictures.items() if p is not None}


def campaign_outputs(path: str, junit: str | None = None, force: bool = False, outputs=None):
    """Register a campaign's outputs (campaign/outputs.py): its report, the summary and a picture per
    invariant beside it, its JUnit file."""
    from checkers import CHECKERS

    from .outputs import Outputs

    out = outputs if outputs is not None else Outputs(force)
    out.report(path, pictures=list(CHECKERS))
    if junit:
        out.add(junit, "the JUnit XML")
    return out


def save_campaign(report: dict, path: str, spec: RunSpec | None, text: str | None = None,
                  pictures: bool = True) -> bool:
    """A settled campaign's report written: the JSON first (the verdict), then its pictures and its
    summary, each a warning if it cannot be written. If the JSON itself cannot be written, the verdict is
    printed whole instead, and a run that passed ends as an environment failure (nothing records its
    pass); a failing one keeps its status with a warning. Whether the JSON was written."""
    from .outputs import secondary, warn, write_json, write_text

    if report["failures"] and pictures:
        report["pictures"] = {}  # (drawn after the verdict is saved: the report is written again with them)
    try:
        write_json(path, report)
    except UsageError as e:
        print(summary_text(report), end="", flush=True)
        if report.get("passed"):
            raise EnvironmentFailure(f"{e}: the run passed, but no report records it (its summary is above)") \
                from None
        warn(f"{e}: the verdict is in the summary above")
        return False
    if report["failures"] and pictures and spec is not None:
        draw_failures(report, path, spec)
        if report["pictures"]:
            secondary(write_json, path, report, "the report (with its pictures)")
    secondary(write_text, os.path.splitext(path)[0] + ".txt", summary_text(report) if text is None else text,
              "the summary")
    return True


def tool_failure(report: dict) -> ToolFailure:
    """What ends a run whose report holds tool failures (exit 4, one line on stderr)."""
    tool = report["tool_failures"]
    first = tool[0]
    return ToolFailure(f"{len(tool)} seeds raised (first, seed {first['seed']}: {first['message']})"
                       + (f"; replay: {first['replay']}" if first.get("replay") else ""))


# --- `run`: a campaign -------------------------------------------------------------------------------


def _status(report: dict, junit: str | None) -> int:
    """The exit status a run or a merge ends with (its JUnit file written first, when asked); a report
    of tool failures raises them instead."""
    if junit:
        write_junit(junit, junit_xml(report))
    status = exit_status(report)
    if status == Exit.TOOL:
        raise tool_failure(report)
    return status


def command(console, args) -> int:
    """`run`: seeds in, a report out (written under reports/ of the working directory unless
    --report), an exit status (house.errors.Exit). Stopped by SIGINT or SIGTERM, the report of
    the seeds finished is written, marked partial; `run --resume REPORT` continues it."""
    if getattr(args, "resume", None):
        return resume(console, args)
    if args.dask and args.time_budget:
        raise UsageError("--dask and --time-budget go one at a time")
    if args.dask and type(args.workers) is int:  # given (the default is nodelease.cli._AllCores)
        raise UsageError("--workers and --dask go one at a time: the cluster's workers run the seeds "
                         "(local:W starts W of them)")
    if args.shard and args.time_budget:
        raise UsageError("--shard and --time-budget go one at a time (a shard must run all its seeds)")
    seeds = args.seeds if args.seeds is not None else (10 ** 9 if args.time_budget else 1000)
    start, count, shard = parse_shard(args.shard, args.start, seeds)
    # the run spec, resolved once: the model, the scenario, the values pinned for every seed (the rest is drawn
    # per seed, checked for the seeds to run) and strictness
    spec = resolve(args.model, args.scenario, args.param, args.strict, start, count)
    if args.dask:
        dask_workers(args.dask)
    pins = dict(spec.pins)
    path = args.report or default_report_path(args.model, args.scenario, start, count, pins, args.strict)
    if args.time_budget and not args.report:
        path = reports_path(f"{args.model}-{args.scenario}-s{start}-t{args.time_budget:g}s{pins_suffix(pins)}"
                            f"{'-strict' if args.strict else ''}.json")
    campaign_outputs(path, args.junit, args.force).check()
    report = run_campaign(console, spec, start, count, args.workers, path,
                          budget_s=args.time_budget, extra={"shard": shard} if shard else None,
                          dask=args.dask, keep_partial=True)
    return _finish(console, report, path, spec, args)


def _finish(console, report: dict, path: str, spec: RunSpec, args) -> int:
    """A campaign's report settled and written (the JSON first, then its pictures and its summary),
    summed up, its exit status; a partial one (a signal stopped the run) written at once and ended with
    the signal's status."""
    settle(report)
    partial = report.get("partial")
    if partial:
        s, of = report["seeds"], partial["of"]
        of_text = f"{of['count']} seeds" if not args.time_budget else f"a {args.time_budget:g} s budget"
        head = f"{partial['signal']} after {s['count']} seeds of {of_text}: "
        try:
            _save_partial(path, report)
        except UsageError as e:
            raise Stopped(head + f"no partial report could be written ({e}); nothing of the run is saved",
                          partial["signal"]) from None
        raise Stopped(head + f"the report of seeds {s['start']}..{s['start'] + s['count'] - 1} is "
                      f"{os.path.relpath(path)} (partial)"
                      + (f"; continue with: {partial['resume']}" if partial.get("resume") else ""),
                      partial["signal"])
    if save_campaign(report, path, spec):
        print_summary(console, report, path)
    if args.time_budget:
        print(f"time budget {args.time_budget:g} s: {report['seeds']['count']} seeds run "
              f"({report['seeds']['start']}..{report['seeds']['start'] + report['seeds']['count'] - 1})")
    return _status(report, args.junit)


def _save_partial(path: str, report: dict) -> None:
    """The partial report written, JSON first (a second signal is held by the command line's guard,
    house/signals.py; here, for a caller without it, signals are held off while it writes)."""
    import signal

    from house.signals import STOPPING, Guard

    from .outputs import secondary, write_json, write_text

    held = {}
    try:
        for sig in STOPPING:
            if not isinstance(getattr(signal.getsignal(sig), "__self__", None), Guard):
                held[sig] = signal.signal(sig, signal.SIG_IGN)
    except ValueError:  # not the main thread: nothing to hold off
        pass
    try:
        write_json(path, report)
        secondary(write_text, os.path.splitext(path)[0] + ".txt", summary_text(report), "the summary")
    finally:
        for sig, handler in held.items():
            signal.signal(sig, handler)


# the options a resumed campaign takes from its report (giving one is refused: it would be ignored)
_RESUME_FIXED = (("seeds", None), ("start", 0), ("model", MAIN_MODEL), ("scenario", DEFAULT_SCENARIO),
                 ("param", []), ("shard", None), ("time_budget", None), ("dask", None), ("strict", False))


def resume(console, args) -> int:
    """`run --resume REPORT`: the seeds a partial report (a run stopped by a signal) did not run,
    run now and joined to it: the whole campaign's report, with the digest an uninterrupted run gives."""
    from dataclasses import replace

    from .report import kinds_added, load_report, merge_reports

    given = [name for name, default in _RESUME_FIXED if getattr(args, name, default) != default]
    if given:
        flag = "--" + given[0].replace("_", "-")
        raise UsageError(f"--resume continues the report's campaign as it was: it takes no {flag} (the report "
                         f"says the model, scenario, params and seeds)")
    before = load_report(args.resume, merging=True)
    partial = before.get("partial")
    if not partial:
        raise UsageError(f"the report {args.resume} is not partial (no signal stopped its run): nothing to resume")
    of = partial.get("of") or {}
    if not (isinstance(of.get("start"), int) and isinstance(of.get("count"), int)):
        raise UsageError(f"the report {args.resume} is malformed: partial.of must hold start and count")
    if before.get("time_budget"):
        raise UsageError(f"the report {args.resume} is of a --time-budget run, which ends when its time does: "
                         f"there is no rest to resume (run it again)")
    from history.record import HASH_VERSION, hash_version

    if hash_version(before) != HASH_VERSION:
        raise UsageError(f"the report {args.resume} holds history hashes of an older encoding (hash_version "
                         f"{hash_version(before)}): the rest's would not join them; run the campaign again")
    if before.get("world", "sim") != "sim" or before.get("kind"):
        raise UsageError(f"the report {args.resume} is not a campaign's of the simulated world: only `run` resumes")
    s = before["seeds"]
    if s["start"] != of["start"] or not 0 <= s["count"] <= of["count"]:
        raise UsageError(f"the report {args.resume} is malformed: its seeds are not the start of partial.of")
    start, count = s["start"] + s["count"], of["count"] - s["count"]
    spec = resolve(before["model"], before["scenario"], [], bool(before.get("strict")), start, count, before["params"])
    # the rest drawn as the report's tool drew its seeds: the fault kinds added since held off
    spec = replace(spec, kinds_off=kinds_added(before))
    path = args.report or args.resume
    campaign_outputs(path, args.junit, args.force).check()
    shard = before.get("shard")
    print(f"resuming {os.path.relpath(args.resume)}: seeds {start}..{start + count - 1} of "
          f"{of['start']}..{of['start'] + of['count'] - 1} ({s['count']} already run)", flush=True)
    rest = run_campaign(console, spec, start, count, args.workers, path,
                        keep_partial=True)
    stopped = rest.get("partial")
    done = {k: v for k, v in before.items() if k not in ("partial", "shard")}
    rest = {k: v for k, v in rest.items() if k not in ("partial", "shard")}
    report = merge_reports([done, rest], path) if rest["seeds"]["count"] else dict(done)
    report.pop("merged_from", None)
    if shard:
        report["shard"] = shard
    report["resumed"] = {"from": os.path.relpath(args.resume), "seeds_before": s["count"]}
    if stopped:
        report["partial"] = dict(stopped, of=of, resume=f"{invoked_as()} run --resume {os.path.relpath(path)}")
    from types import SimpleNamespace  # what _finish reads: no time budget, strict as the report says

    return _finish(console, report, path, spec, SimpleNamespace(time_budget=None, junit=args.junit))


# --- `merge`: shard reports joined -------------------------------------------------------------------


def merge_command(console, args) -> int:
    """`merge REPORT... [--report PATH] [--junit PATH]`: the reports of `run --shard K/N` joined into
    the unsharded run's, which exits as that run would."""
    from .report import load_report, merge_reports

    reports = [load_report(path, merging=True) for path in args.reports]
    for path, r in zip(args.reports, reports):
        if r.get("partial"):
            raise UsageError(f"the report {path} is partial (a signal stopped its run): finish it first with "
                             f"{invoked_as()} run --resume {os.path.relpath(path)}")
    starts = [r["seeds"]["start"] for r in reports]
    first = reports[starts.index(min(starts))]
    total = sum(r["seeds"]["count"] for r in reports)
    path = args.report or default_report_path(first["model"], first["scenario"], min(starts), total,
                                              first["params"], bool(first.get("strict")))
    campaign_outputs(path, args.junit, args.force).check()
    report = merge_reports(reports, path)
    settle(report)
    if save_campaign(report, path, None, pictures=False):
        print_summary(console, report, path)
    print(f"merged {len(reports)} reports: seeds {min(starts)}..{min(starts) + total - 1}")
    return _status(report, args.junit)
