#!/usr/bin/env python3
"""Run the node-lease model checker over many seeds, write a report, replay a seed.

    python runner.py --seeds 20000                 # the CI run
    python runner.py --model unconditional_fence   # a broken model: must fail
    python runner.py --broken --seeds 200          # every broken model must be caught
    python runner.py --replay reports/X.json --seed 7
    python runner.py --shrink reports/X.json       # shrink its first failing seed to a counterexample
    python runner.py --replay reports/X-shrunk.json --html x.html

    python runner.py --s3 URL --bucket NAME        # the same model against a real S3 endpoint

Exit status: 0 every seed passed (or, with --broken, every broken model was
caught and the correct model passed), 1 a violation, 2 bad usage or input,
3 the environment failed during the run (a real bucket stopped answering).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import compiled

compiled.install()  # before any module of the project: the hot ones load compiled while current

from reporting import (
    HERE,
    junit_xml,
    Progress,
    SeedResult,
    UsageError,
    build_report,
    default_report_path,
    git_commit,
    judge,
    print_summary,
    replay_command,
    timeline_text,
    write_report,
)

MAIN_MODEL = "correct"
DEFAULT_SCENARIO = "swarm"
EXIT_PASSED, EXIT_VIOLATION, EXIT_USAGE, EXIT_ENVIRONMENT = 0, 1, 2, 3


# --- what can be run ---------------------------------------------------------------


def model_names() -> list[str]:
    from broken_models import names

    return names()


def load_model(name: str):
    """The model object (with .step) registered under `name`."""
    from broken_models import load_model as load

    return load(name)


def check_scenario(name: str) -> str:
    from scenarios.swarm import SCENARIOS

    if name not in SCENARIOS:
        raise UsageError(f"unknown scenario {name!r} (choices: {', '.join(SCENARIOS)})")
    return name


def parse_params(pairs: list[str], base: dict | None = None):
    """--param KEY=VALUE pairs over the defaults (or `base`), validated (T-2, T-3, T-4)."""
    from model.params import Params, ParamsError

    d = dict(base) if base is not None else Params().to_dict()
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise UsageError(f"--param wants KEY=VALUE, got {pair!r}")
        try:
            d[key.strip()] = int(value)
        except ValueError:
            raise UsageError(f"--param {key}: {value!r} is not an integer number of ms") from None
    try:
        return Params.from_dict(d)
    except ParamsError as e:
        raise UsageError(f"invalid params: {e}") from None


# --- running seeds ---------------------------------------------------------------------


def parse_pins(pairs: list[str], base: dict | None = None) -> dict:
    """--param KEY=VALUE pairs as the values pinned for every seed (the rest is drawn per seed);
    refused at once if the pinned values alone break T-2..T-4."""
    from model.params import Params, ParamsError
    from scenarios.swarm import fit_params

    pins = dict(base or {})
    known = Params().to_dict()
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep:
            raise UsageError(f"--param wants KEY=VALUE, got {pair!r}")
        if key not in known:
            raise UsageError(f"--param: unknown parameter {key!r} (known: {', '.join(sorted(known))})")
        try:
            pins[key] = int(value)
        except ValueError:
            raise UsageError(f"--param {key}: {value!r} is not an integer number of ms") from None
    try:
        fit_params({**known, **pins}, pins)
    except ParamsError as e:
        raise UsageError(f"invalid params: {e}") from None
    return pins


def run_one(seed: int, model_name: str, scenario: str, params, keep_history: bool = False, strict: bool = False):
    """Run and judge one seed of the simulated world. Returns a SeedResult (and the history if asked).
    `strict`: known protocol findings fail it too."""
    import hashlib
    import traceback

    from scenarios.sim import run_seed

    model = load_model(model_name)
    history = None
    try:
        history = run_seed(seed, model, scenario, params, model_name)
        result = judge(seed, history, strict=strict)
    except Exception as e:  # a bug in the model or the world: report it as a failure of the seed
        tb = traceback.format_exc()
        result = SeedResult(seed, hashlib.sha256(tb.encode()).hexdigest(), {}, {},
                            [("EXCEPTION", f"{type(e).__name__}: {e}", tb)])
    return (result, history) if keep_history else result


_W: dict = {}


def _worker_init(model_name, scenario, params, strict=False) -> None:
    _W.update(model=model_name, scenario=scenario, params=params, strict=strict)


def _worker_chunk(seeds: list[int]) -> list[SeedResult]:
    return [run_one(s, _W["model"], _W["scenario"], _W["params"], strict=_W["strict"]) for s in seeds]


def run_seeds(model_name, scenario, params, start, count, workers, strict=False, chunk: int | None = None):
    """Yield SeedResults in seed order, in `workers` processes. The chunks are made as the pool takes
    them (a run bounded by time has no end to list)."""
    chunk = chunk or max(1, min(50, count // (workers * 32) or 1))
    end = start + count
    chunks = (list(range(i, min(i + chunk, end))) for i in range(start, end, chunk))
    if workers <= 1:
        _worker_init(model_name, scenario, params, strict)
        for c in chunks:
            yield from _worker_chunk(c)
        return
    import multiprocessing as mp

    ctx = mp.get_context("fork") if hasattr(os, "fork") else mp.get_context()
    with ctx.Pool(workers, initializer=_worker_init, initargs=(model_name, scenario, params, strict)) as pool:
        for results in pool.imap(_worker_chunk, chunks):
            yield from results


def _dask_chunk(seeds: list[int], model_name, scenario, params, strict) -> list[SeedResult]:
    """A chunk of seeds on a Dask worker (the project installed there, as here)."""
    return [run_one(s, model_name, scenario, params, strict=strict) for s in seeds]


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


def run_seeds_dask(address: str, model_name, scenario, params, start, count, strict=False):
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
            try:
                n = int(address[len("local:"):])
            except ValueError:
                n = 0
            if n < 1:
                raise UsageError(f"--dask local:W wants a number of workers, got {address!r}")
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
        futures = client.map(_dask_chunk, chunks, model_name=model_name, scenario=scenario, params=params,
                             strict=strict, pure=False)
        for fut in as_completed(futures):
            yield from fut.result()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def run_campaign(console, model_name, scenario, params, start, count, workers, report_path, label=None,
                 quiet=False, strict=False, budget_s: float | None = None, extra: dict | None = None,
                 dask: str | None = None):
    """Run seeds start..start+count-1 of the simulated world and build the report (not yet written).
    With `budget_s`, stop taking results once that many seconds have passed: the report covers the
    seeds start..start+k-1 that finished in order by then (its `time_budget` says so)."""
    prog = Progress(console, count if budget_s is None else budget_s, label or f"{model_name}/{scenario}",
                    unit="seeds" if budget_s is None else "s") if not quiet else None
    t0 = time.monotonic()
    results = []
    stopped = False
    try:
        # under a time budget, small chunks: the run stops close to the budget
        seeds = (run_seeds_dask(dask, model_name, scenario, params, start, count, strict) if dask else
                 run_seeds(model_name, scenario, params, start, count, workers, strict,
                           chunk=2 * workers if budget_s is not None else None))
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
    finally:
        if prog:
            prog.close()
    extra = dict(extra or {}, strict=strict)
    if dask:
        results.sort(key=lambda r: r.seed)  # a cluster finishes chunks in any order
        extra["dask"] = dask if dask.startswith("local:") else "a cluster"
    if budget_s is not None:
        extra["time_budget"] = {"budget_s": budget_s, "seeds_run": len(results), "stopped_by_budget": stopped}
    return build_report(results, world="sim", model=model_name, scenario=scenario, params=params, start=start,
                        count=len(results), elapsed_s=time.monotonic() - t0, report_path=report_path, workers=workers,
                        extra=extra)


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


# --- the real-S3 world ------------------------------------------------------------------------------


def run_s3(console, args) -> int:
    """`python runner.py --s3 URL --bucket NAME ...`: one run against a real bucket, a report, an exit status."""
    from scenarios import s3

    try:
        return _run_s3(console, args, s3)
    except s3.SetupError as e:
        raise UsageError(str(e)) from None


def _run_s3(console, args, s3) -> int:
    if not args.bucket:
        raise UsageError("--s3 needs --bucket NAME")
    duration_s = args.duration if args.duration is not None else 30.0
    if duration_s <= 0:
        raise UsageError(f"--duration must be positive, got {duration_s:g}")
    nodes, actors = args.nodes, args.actors  # None: as the scenario draws them
    params = parse_params(args.param, s3.S3_PARAMS.to_dict())
    model = load_model(args.model)
    scenario = check_scenario(args.scenario)
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "big")
    run_id = s3.new_run_id()
    prefix = s3.normalize_prefix(args.prefix) if args.prefix is not None else s3.new_prefix(run_id)
    if prefix == "/":
        raise UsageError("--prefix must not be empty: every key of a run lives under a prefix of its own")
    url = args.s3
    client = s3.make_client(url, args.region, args.addressing_style)
    bucket = s3.open_bucket(client, url, args.bucket, prefix, args.reuse_prefix)
    where = s3.redact_url(url)
    print(f"s3 world: {where} bucket {args.bucket} prefix {prefix}, run {run_id}, model {args.model}, "
          f"scenario {scenario}, {duration_s:g} s, seed {seed}", flush=True)
    prog = Progress(console, duration_s, f"{args.model}/s3", unit="s")

    def progress(world) -> None:
        prog.at(world.now / 1000, f"{world.bucket_requests} bucket requests, {world.acquisitions()} acquisitions")

    world = s3.S3World(bucket, model, params, args.model, int(duration_s * 1000), nodes, actors, seed, scenario,
                       progress=progress)
    t0 = time.monotonic()
    try:
        history = world.run()
    finally:
        prog.close()
    elapsed = time.monotonic() - t0
    result = judge(seed, history, world.env_failure, world.failure, strict=args.strict)
    path = args.report or os.path.join(HERE, "reports", f"{args.model}-s3-{run_id}.json")
    o = world.options
    block = {"endpoint": where, "bucket": args.bucket, "prefix": prefix, "run_id": run_id, "region": args.region,
             "addressing_style": args.addressing_style, "reuse_prefix": bool(args.reuse_prefix),
             "duration_s": round(world.duration_ms / 1000, 3), "nodes": o["nodes"], "actors": o["actors"],
             "keys_written": len(world.keys_written), "approximations": s3.APPROXIMATIONS}
    if args.cleanup:
        if world.env_failure is None:
            block["cleanup_deleted"] = s3.cleanup(bucket, world.keys_written)
        else:
            block["cleanup_skipped"] = "the endpoint had stopped answering"
    argv = [s3.redact_url(a) if a == args.s3 else a for a in sys.argv[1:]]
    report = build_report([result], world="s3", model=args.model, scenario=scenario, params=params, start=seed,
                          count=1, elapsed_s=elapsed, report_path=path, replayable=False,
                          extra={"s3": block, "options": o, "environment_failure": world.env_failure,
                                 "strict": bool(args.strict),
                                 "command": "python runner.py " + " ".join(argv)})
    write_report(path, report, timeline=timeline_text(history))
    print_summary(console, report, path)
    if not report["passed"]:
        return EXIT_VIOLATION
    if world.env_failure is not None:
        print(f"runner.py: environment failure: {world.env_failure}; liveness (INV-4, INV-7) not judged",
              file=sys.stderr)
        return EXIT_ENVIRONMENT
    return EXIT_PASSED


# --- replay --------------------------------------------------------------------------------


def load_json(path: str, what: str = "report"):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        raise UsageError(f"no {what} at {path}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"cannot read the {what} {path}: {e}") from None
    except json.JSONDecodeError as e:
        raise UsageError(f"the {what} {path} is not valid JSON (line {e.lineno}: {e.msg})") from None


def load_report(path: str, report=None) -> dict:
    if report is None:
        report = load_json(path)
    if not isinstance(report, dict):
        raise UsageError(f"the report {path} is not a report (expected a JSON object)")
    for key in ("model", "scenario", "params", "seeds"):
        if key not in report:
            raise UsageError(f"the report {path} has no {key!r} field: not a report of this tool")
    s = report["seeds"]
    if not (isinstance(s, dict) and isinstance(s.get("start"), int) and isinstance(s.get("count"), int)):
        raise UsageError(f"the report {path} has a malformed 'seeds' field")
    if not isinstance(report["params"], dict):
        raise UsageError(f"the report {path} has a malformed 'params' field")
    return report


def pick_seed(report: dict, path: str, seed: int | None, what: str = "--replay") -> int:
    """The seed asked for (in the report's range), or the report's first failing seed."""
    start, count = report["seeds"]["start"], report["seeds"]["count"]
    if seed is None:
        failing = report.get("failing_seeds") or []
        if not failing:
            raise UsageError(f"{what} needs --seed S (the report ran seeds {start}..{start + count - 1}"
                             f" and none failed)")
        seed = failing[0]
    if not (start <= seed < start + count):
        raise UsageError(f"seed {seed} is not in the report's range {start}..{start + count - 1}")
    return seed


def replay(console, path: str, seed: int | None, html: str | None = None) -> int:
    from counterexamples.shrink import is_plan

    doc = load_json(path)
    if is_plan(doc):
        return replay_plan(console, path, doc, html)
    report = load_report(path, doc)
    if report.get("world", "sim") != "sim":
        raise UsageError(f"the report {path} is of the {report['world']} world; only sim runs replay")
    start, count = report["seeds"]["start"], report["seeds"]["count"]
    seed = pick_seed(report, path, seed)
    model_name = report["model"]
    load_model(model_name)
    scenario = check_scenario(report["scenario"])
    params = parse_pins([], report["params"])
    result, history = run_one(seed, model_name, scenario, params, keep_history=True,
                              strict=bool(report.get("strict")))
    if history is not None:
        print(f"seed {seed}, model {model_name}, scenario {scenario}")
        print("drawn options: " + json.dumps(history.options, sort_keys=True))
        print(timeline_text(history), end="")
        print("rules hit: " + ", ".join(f"{k} {v}" for k, v in history.rules.items()))
    for inv, msg, explanation in result.failures:
        print()
        print(explanation)
    for fid, inv, msg, explanation in result.findings:
        print()
        print(f"known protocol finding {fid} (not a failure; --strict makes it one):")
        print(explanation)
    print()
    print(f"history sha256: {result.sha256}")
    expected = None
    hashes = report.get("seed_hashes")
    if isinstance(hashes, list) and len(hashes) == count:
        expected = hashes[seed - start]
    else:
        for f in report.get("failures", []):
            if f.get("seed") == seed:
                expected = f.get("history_sha256")
    if expected is None:
        print("the report holds no hash for this seed to compare with")
    elif expected == result.sha256:
        print("matches the report: the replay is byte-identical")
    else:
        print(f"DIFFERS from the report's {expected}: the code or the environment changed since the report")
    if html and history is not None:
        write_picture(html, history, None, strict=bool(report.get("strict")))
    if result.failures:
        print(f"{len(result.failures)} violation(s): " + ", ".join(sorted({f[0] for f in result.failures})))
        return 1
    print("no violation")
    return 0


# --- counterexamples: shrink a failing seed, replay it, draw it ------------------------------------


def draw_failures(report: dict, report_path: str, params, strict: bool = False) -> None:
    """One picture per failing invariant, of its first failing seed, beside the report
    (report["pictures"]: invariant -> path)."""
    from counterexamples.picture import write_html
    from counterexamples.shrink import violations

    pictures = {}
    stem = os.path.splitext(report_path)[0]
    for f in report["failures"]:
        inv = f["invariant"]
        if inv in pictures or inv == "EXCEPTION":
            continue
        _result, history = run_one(f["seed"], report["model"], report["scenario"], params, keep_history=True,
                                   strict=strict)
        if history is None:
            continue
        chosen = [v for v in violations(history, strict) if v.invariant == inv]
        path = f"{stem}-{inv}.html"
        write_html(path, history, chosen[0] if chosen else None)
        pictures[inv] = os.path.relpath(path)
    report["pictures"] = pictures


def write_picture(path: str, history, plan: dict | None, strict: bool = False, invariant: str | None = None) -> None:
    from counterexamples.picture import write_html
    from counterexamples.shrink import violations

    found = violations(history, strict)
    chosen = [v for v in found if v.invariant == invariant] or found
    write_html(path, history, chosen[0] if chosen else None, plan)
    print(f"picture: {os.path.relpath(path)}")


def replay_plan(console, path: str, doc: dict, html: str | None) -> int:
    """`--replay FILE` of a counterexample (a plan): its story, its timeline, its violation, the hash."""
    from counterexamples.shrink import check_plan, run_plan, violations
    from counterexamples.story import tell

    plan = check_plan(doc, path)
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
    sha = history.sha256()
    print()
    print(f"history sha256: {sha}")
    expected = plan.get("history_sha256")
    if expected is None:
        print("the counterexample holds no hash to compare with")
    elif expected == sha:
        print("matches the counterexample: the replay is byte-identical")
    else:
        print(f"DIFFERS from the counterexample's {expected}: the code changed since it was written")
    if html:
        write_picture(html, history, plan, bool(plan.get("strict")), plan.get("invariant"))
    if found:
        print(f"{len(found)} violation(s): " + ", ".join(sorted({v.invariant for v in found})))
        return EXIT_VIOLATION
    print("no violation")
    return EXIT_PASSED


def shrink_command(console, args) -> int:
    """`--shrink REPORT [--seed S]`: the seed's run as data, shrunk while the same invariant fails."""
    from rich.table import Table

    from counterexamples.shrink import Shrinker, record_seed, size, violations, write_plan
    from counterexamples.story import tell

    report = load_report(args.shrink)
    if report.get("world", "sim") != "sim":
        raise UsageError(f"the report {args.shrink} is of the {report['world']} world; only sim runs shrink")
    seed = pick_seed(report, args.shrink, args.seed, "--shrink")
    model_name = report["model"]
    load_model(model_name)
    scenario = check_scenario(report["scenario"])
    strict = bool(report.get("strict")) or args.strict  # --strict: a known finding's seed shrinks too
    plan, history = record_seed(seed, model_name, scenario, parse_pins([], report["params"]))
    found = violations(history, strict)
    if not found:
        raise UsageError(f"seed {seed} of {args.shrink} does not fail here: nothing to shrink")
    invariant = args.invariant or found[0].invariant
    if invariant not in {v.invariant for v in found}:
        raise UsageError(f"seed {seed} fails {', '.join(sorted({v.invariant for v in found}))}, not {invariant}")
    before = size(plan, history)
    print(f"shrinking seed {seed} of {os.path.relpath(args.shrink)}: model {model_name} fails {invariant}; "
          f"budget {args.shrink_budget:g} s", flush=True)
    last = [0.0]

    def say(line: str) -> None:  # progress, at most a line a second
        now = time.monotonic()
        if now - last[0] >= 1.0:
            last[0] = now
            print(line, flush=True)

    t0 = time.monotonic()
    shrinker = Shrinker(plan, invariant, args.shrink_budget, strict, say)
    best = shrinker.run()
    elapsed = time.monotonic() - t0
    after = size(best, shrinker.history)
    best.update(invariant=invariant, strict=strict, history_sha256=shrinker.history.sha256(),
                source={"report": os.path.relpath(args.shrink), "seed": seed, "git_commit": git_commit()},
                shrunk={"before": before, "after": after, "runs": shrinker.runs, "steps": shrinker.accepted,
                        "seconds": round(elapsed, 1), "budget_s": args.shrink_budget,
                        "stopped_by": "the budget" if shrinker.out_of_time() else "no smaller failing plan"})
    path = args.report or os.path.join(HERE, "reports", f"{model_name}-s{seed}-{invariant}-shrunk.json")
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
    print(f"replay: python runner.py --replay {os.path.relpath(path)}")
    return EXIT_VIOLATION


# --- CI: shards joined, JUnit ----------------------------------------------------------------------


def merge_command(console, argv: list[str]) -> int:
    """`python runner.py merge REPORT... [--report PATH] [--junit PATH]`: shard reports joined."""
    from reporting import merge_reports

    p = _Parser(prog="runner.py merge", description="join the reports of --shard K/N runs into one")
    p.add_argument("reports", nargs="+", metavar="REPORT")
    p.add_argument("--report", help="where to write the joined report (default: reports/<model>-<scenario>-s<start>-n<count>.json)")
    p.add_argument("--junit", metavar="PATH", help="also write JUnit XML")
    args = p.parse_args(argv)
    reports = [load_report(path) for path in args.reports]
    starts = [r["seeds"]["start"] for r in reports]
    first = reports[starts.index(min(starts))]
    total = sum(r["seeds"]["count"] for r in reports)
    path = args.report or default_report_path(first["model"], first["scenario"], min(starts), total)
    report = merge_reports(reports, path)
    write_report(path, report)
    print_summary(console, report, path)
    print(f"merged {len(reports)} reports: seeds {min(starts)}..{min(starts) + total - 1}")
    if args.junit:
        write_junit(args.junit, junit_xml(report))
    return 0 if report["passed"] else 1


def write_junit(path: str, xml: str) -> None:
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "w") as f:
            f.write(xml)
    except OSError as e:
        raise UsageError(f"cannot write {path}: {e.strerror}") from None
    print(f"junit: {os.path.relpath(path)}")


# --- broken models -------------------------------------------------------------------------


def run_broken(console, args, params) -> int:
    """Run every broken model over the same seeds, and the correct model as the control."""
    from rich.table import Table

    from broken_models import entries, load

    rows = []
    all_caught = True
    kinds = {e.name: e.kind for e in entries()}
    names = list(kinds)
    SURVIVORS = [n for n, k in kinds.items() if k == "survivor"]
    per_model = {}
    for name in names:
        path = default_report_path(name, args.scenario, args.start, args.seeds)
        rep = run_campaign(console, name, args.scenario, params, args.start, args.seeds, args.workers, path)
        if rep["failures"]:
            draw_failures(rep, path, params)
        write_report(path, rep)
        per_model[name] = rep
        if name == MAIN_MODEL:
            rule, catches = "-", "-"
        else:
            mod = load(name)
            rule, catches = mod.RULE, mod.CATCHES
        failing = rep["failing_seeds"]
        invs = sorted({f["invariant"] for f in rep["failures"]})
        caught = bool(failing)
        if name == MAIN_MODEL:
            ok = not failing
        elif name in SURVIVORS:
            ok = True  # documented survivors fail nothing
        else:
            ok = caught
        all_caught &= ok
        rows.append({"model": name, "survivor": name in SURVIVORS, "rule_broken": rule, "must_catch": catches, "invariants_violated": invs,
                     "first_failing_seed": failing[0] if failing else None, "failing_seeds": len(failing),
                     "seeds_run": rep["counts"]["seeds_run"], "ok": ok, "report": os.path.relpath(path),
                     "replay": replay_command(path, failing[0]) if failing else None})
    t = Table(title=f"broken models, seeds {args.start}..{args.start + args.seeds - 1}, scenario {args.scenario}")
    for col in ("model", "rule broken", "invariant violated", "first failing seed", "failing / run", "verdict"):
        t.add_column(col)
    for r in rows:
        if r["model"] == MAIN_MODEL:
            verdict = "[green]passes (control)" if r["ok"] else "[red]FAILS (the correct model!)"
        elif r["survivor"]:
            verdict = "caught" if r["failing_seeds"] else "survives (documented)"
        else:
            verdict = "[green]caught" if r["ok"] else "[red]NOT CAUGHT"
        t.add_row(r["model"], r["rule_broken"], ", ".join(r["invariants_violated"]) or "-",
                  "-" if r["first_failing_seed"] is None else str(r["first_failing_seed"]),
                  f"{r['failing_seeds']} / {r['seeds_run']}", verdict)
    console.print(t)
    path = args.report or os.path.join(os.path.dirname(os.path.abspath(__file__)), "reports",
                                       f"broken-{args.scenario}-s{args.start}-n{args.seeds}.json")
    report = {"world": "sim", "kind": "broken", "scenario": args.scenario, "params": params,
              "seeds": {"start": args.start, "count": args.seeds}, "passed": all_caught, "models": rows,
              "git_commit": git_commit(), "command": "python runner.py " + " ".join(sys.argv[1:])}
    text = "\n".join(
        f"{r['model']:<22} breaks {r['rule_broken']:<6} caught by {','.join(r['invariants_violated']) or '-':<16} "
        f"first seed {r['first_failing_seed']}  {r['failing_seeds']}/{r['seeds_run']}  {'ok' if r['ok'] else 'NOT OK'}"
        for r in rows) + "\n"
    write_report(path, report, text=text)
    console.print(f"report: {os.path.relpath(path)}", highlight=False)
    if args.junit:
        write_junit(args.junit, junit_xml(report))
    if not all_caught:
        console.print("[red]not every broken model was caught, or the correct model failed[/red]")
    return 0 if all_caught else 1


# --- the benchmark ------------------------------------------------------------------------------


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


def run_bench(console, args, params) -> int:
    """Seeds/s with 1 and 2 workers, per-seed cost in raw SimPy events, memory per worker."""
    import resource

    from rich.table import Table

    n = args.seeds
    raw_s = min(raw_simpy_event_s() for _ in range(3))
    figures = {}
    for workers in (1, 2):
        report = run_campaign(console, MAIN_MODEL, args.scenario, params, args.start, n, workers,
                              "bench", quiet=True)
        figures[workers] = report
    one, two = figures[1], figures[2]
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
    }
    t = Table(title=f"benchmark: {n} seeds of {args.scenario}, every checker on")
    t.add_column("measure")
    t.add_column("value", justify="right")
    for k, v in out.items():
        t.add_row(k, str(v))
    console.print(t)
    path = args.report or os.path.join(os.path.dirname(os.path.abspath(__file__)), "reports", "bench.json")
    write_report(path, out, text="\n".join(f"{k}: {v}" for k, v in out.items()) + "\n")
    print(f"report: {os.path.relpath(path)}")
    return 0 if out["same_digest_1_and_2_workers"] else 1


# --- the command line -------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2, no usage dump
        raise UsageError(message)


def _positive(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {v}")
    return v


def _natural(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, got {v}")
    return v


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="runner.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=_positive, help="how many seeds (default 1000)")
    p.add_argument("--start", type=_natural, default=0, help="first seed (default 0)")
    p.add_argument("--workers", type=_positive, default=os.cpu_count() or 1,
                   help="worker processes (default: all cores)")
    p.add_argument("--model", default=MAIN_MODEL, help="correct (default) or a broken model's name")
    p.add_argument("--scenario", default=DEFAULT_SCENARIO, help="the fault mix (default: swarm)")
    p.add_argument("--param", action="append", default=[], metavar="KEY=MS",
                   help="override a timing parameter, e.g. --param ttl_ms=12000 (repeatable)")
    p.add_argument("--report", help="where to write the JSON report (default: reports/<model>-<scenario>-s<start>-n<count>.json)")
    p.add_argument("--replay", metavar="REPORT", help="re-run one seed of REPORT and print its timeline")
    p.add_argument("--seed", type=_natural,
                   help="with --replay or --shrink: the seed (default: the report's first failing seed)")
    p.add_argument("--shrink", metavar="REPORT",
                   help="shrink a failing seed of REPORT to a small counterexample (written to --report, or reports/)")
    p.add_argument("--shrink-budget", type=float, default=120.0, metavar="S",
                   help="with --shrink: stop after S seconds, keeping the smallest so far (default 120)")
    p.add_argument("--invariant", metavar="INV",
                   help="with --shrink: the invariant to keep failing (default: the seed's first violation)")
    p.add_argument("--html", metavar="PATH", help="with --replay or --shrink: also draw the run as one HTML file")
    ci = p.add_argument_group("CI: slices, budgets, JUnit (join slices with: python runner.py merge REPORT...)")
    ci.add_argument("--shard", metavar="K/N", help="run only the K-th of N contiguous slices of the seeds")
    ci.add_argument("--time-budget", type=float, metavar="S",
                    help="run seeds in order until S seconds have passed (--seeds: at most that many)")
    ci.add_argument("--dask", metavar="ADDRESS", help="run the campaign on a Dask cluster: a scheduler's "
                    "address, or local:W for W local worker processes (pip install -e '.[dask]')")
    ci.add_argument("--junit", metavar="PATH", help="also write JUnit XML: a test case per invariant "
                                                    "(per model with --broken)")
    p.add_argument("--broken", action="store_true", help="run every broken model; exit 0 only if each is caught")
    p.add_argument("--strict", action="store_true",
                   help="known protocol findings (checkers/findings.py) fail the run too, not only counted")
    p.add_argument("--list", action="store_true", help="list the models and scenarios, then exit")
    p.add_argument("--bench", action="store_true",
                   help="benchmark: seeds/s with 1 and 2 workers, cost per seed, memory (use with --seeds)")
    s3 = p.add_argument_group("the real-S3 world (scenarios/s3.py)")
    s3.add_argument("--s3", metavar="URL", help="run against the S3 endpoint URL instead of simulating")
    s3.add_argument("--bucket", metavar="NAME", help="with --s3: the bucket (it must exist)")
    s3.add_argument("--prefix", metavar="P", help="with --s3: the run's key prefix (default: a fresh one)")
    s3.add_argument("--duration", type=float, metavar="S", help="with --s3: seconds to run (default 30)")
    s3.add_argument("--nodes", type=_positive, metavar="N",
                    help="with --s3: node ids (default: as the scenario draws); with --explore: nodes (default 2)")
    s3.add_argument("--actors", type=_positive, metavar="K",
                    help="with --s3: actors (default: as the scenario draws); with --explore: actors (default 1)")
    s3.add_argument("--reuse-prefix", action="store_true", help="with --s3: run in a prefix that holds objects")
    s3.add_argument("--cleanup", action="store_true", help="with --s3: delete the keys this run wrote")
    s3.add_argument("--region", metavar="R", help="with --s3: the region (default: the AWS config's, or us-east-1)")
    s3.add_argument("--addressing-style", choices=("path", "virtual"), help="with --s3: path or virtual-host URLs")
    from explore.cli import add_arguments

    add_arguments(p)
    return p


def main(argv: list[str] | None = None) -> int:
    from rich.console import Console

    console = Console() if sys.stdout.isatty() else Console(width=160)
    try:
        argv = sys.argv[1:] if argv is None else argv
        if argv[:1] == ["merge"]:
            return merge_command(console, argv[1:])
        args = build_parser().parse_args(argv)
        if args.time_budget is not None and args.time_budget <= 0:
            raise UsageError(f"--time-budget must be positive, got {args.time_budget:g}")
        if (args.shard or args.time_budget) and (args.broken or args.bench or args.s3 or args.replay or args.shrink):
            raise UsageError("--shard and --time-budget go with a campaign (not --broken, --bench, --s3, "
                             "--replay or --shrink)")
        if args.dask and (args.time_budget or args.broken or args.bench or args.s3 or args.replay or args.shrink):
            raise UsageError("--dask goes with a campaign (not --time-budget, --broken, --bench, --s3, --replay "
                             "or --shrink)")
        if args.seeds is None and not args.time_budget:
            args.seeds = 1000
        if args.s3:
            return run_s3(console, args)
        if args.explore:
            if args.replay or args.shrink or args.broken or args.bench or args.shard or args.dask or args.time_budget:
                raise UsageError("--explore goes alone (not with --replay, --shrink, --broken, --bench, --shard, "
                                 "--dask or --time-budget)")
            from explore.cli import explore_command

            return explore_command(console, args, parse_pins(args.param), load_model)
        if args.list:
            from broken_models import entries
            from scenarios.swarm import SCENARIOS

            print("models:")
            for e in entries():
                if e.kind == "correct":
                    print(f"  {e.name:<28} {e.summary}")
                elif e.kind == "broken":
                    print(f"  {e.name:<28} breaks {e.rule}, must be caught by {e.catches}")
                else:
                    print(f"  {e.name:<28} breaks {e.rule}; survives this world (see its docstring)")
            print("scenarios:")
            for name, what in SCENARIOS.items():
                print(f"  {name:<22} {what}")
            return 0
        if args.replay and args.shrink:
            raise UsageError("--replay and --shrink go one at a time")
        if args.shrink:
            if args.shrink_budget <= 0:
                raise UsageError(f"--shrink-budget must be positive, got {args.shrink_budget:g}")
            return shrink_command(console, args)
        if args.replay:
            return replay(console, args.replay, args.seed, args.html)
        if args.seed is not None:
            raise UsageError("--seed goes with --replay or --shrink; to run one seed use --start S --seeds 1")
        if args.html or args.invariant:
            raise UsageError("--html and --invariant go with --replay or --shrink")
        check_scenario(args.scenario)
        params = parse_pins(args.param)  # the values pinned for every seed; the rest is drawn per seed
        if args.broken:
            return run_broken(console, args, params)
        if args.bench:
            return run_bench(console, args, params)
        load_model(args.model)
        seeds = args.seeds if args.seeds is not None else (10 ** 9 if args.time_budget else 1000)
        start, count, shard = parse_shard(args.shard, args.start, seeds)
        if shard and args.time_budget:
            raise UsageError("--shard and --time-budget go one at a time (a shard must run all its seeds)")
        path = args.report or default_report_path(args.model, args.scenario, start, count)
        if args.time_budget and not args.report:
            path = os.path.join(HERE, "reports", f"{args.model}-{args.scenario}-s{start}-t{args.time_budget:g}s.json")
        report = run_campaign(console, args.model, args.scenario, params, start, count, args.workers, path,
                              strict=args.strict, budget_s=args.time_budget, extra={"shard": shard} if shard else None,
                              dask=args.dask)
        if report["failures"]:
            draw_failures(report, path, params, args.strict)
        write_report(path, report)
        print_summary(console, report, path)
        if args.time_budget:
            print(f"time budget {args.time_budget:g} s: {report['seeds']['count']} seeds run "
                  f"({report['seeds']['start']}..{report['seeds']['start'] + report['seeds']['count'] - 1})")
        if args.junit:
            write_junit(args.junit, junit_xml(report))
        return 0 if report["passed"] else 1
    except UsageError as e:
        print(f"runner.py: error: {' '.join(str(e).split())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("runner.py: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
