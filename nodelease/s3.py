"""`s3 URL --bucket NAME`: one run of a model against a real S3 endpoint (scenarios/s3.py), judged by
the same checkers, with a report and an exit status.

This module turns the subcommand's options into a real-S3 world and its history into a report;
it must not know the parser (nodelease/cli.py), and it holds no protocol or world logic.
"""

from __future__ import annotations

import os
import sys
import time

from campaign.outputs import Outputs
from campaign.run import check_scenario, load_model, parse_params, tool_failure
from house.errors import EnvironmentFailure, Exit, Stopped, UsageError, signal_name
from campaign.report import Progress, build_report, invoked_as, print_summary, reports_path, settle, stalls_text, \
    timeline_text, write_report


def command(console, args) -> int:
    """One run against a real bucket: a report under reports/ (or --report), an exit status."""
    from scenarios import s3

    try:
        return _run(console, args, s3)
    except s3.SetupError as e:
        raise UsageError(str(e)) from None


def _run(console, args, s3) -> int:
    if not args.bucket:
        raise UsageError("s3 needs --bucket NAME")
    params = parse_params(args.param, s3.S3_PARAMS.to_dict())
    model = load_model(args.model)
    scenario = check_scenario(args.scenario)
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "big")
    run_id = s3.new_run_id()
    prefix = s3.normalize_prefix(args.prefix) if args.prefix is not None else s3.new_prefix(run_id)
    if prefix == "/":
        raise UsageError("--prefix must not be empty: every key of a run lives under a prefix of its own")
    url = args.url
    path = args.report or reports_path(f"{args.model}-s3-{run_id}.json")
    outputs = Outputs(args.force)
    outputs.report(path, timeline=True)
    outputs.check()  # before the run (and before --cleanup deletes its keys)
    client = s3.make_client(url, args.region, args.addressing_style, params)
    bucket = s3.open_bucket(client, url, args.bucket, prefix, args.reuse_prefix)
    where = s3.redact_url(url)
    done: dict = {"world": None, "deleted": None, "report": None, "progress": None}  # for the line a signal ends it with
    t0 = time.monotonic()
    try:  # from here on, a signal at any instant says where the run's keys are
        print(f"s3 world: {where} bucket {args.bucket} prefix {prefix}, run {run_id}, model {args.model}, "
              f"scenario {scenario}, {args.duration:g} s, seed {seed}", flush=True)
        prog = done["progress"] = Progress(console, args.duration, f"{args.model}/s3", unit="s")

        def progress(world) -> None:
            prog.at(world.now / 1000, f"{world.bucket_requests} bucket requests, {world.acquisitions()} acquisitions")

        # --nodes and --actors: None leaves them to the scenario's draw
        world = done["world"] = s3.S3World(bucket, model, params, args.model, int(args.duration * 1000), args.nodes,
                                           args.actors, seed, scenario, progress=progress)
        return _judged(console, args, s3, world, bucket, params, seed, run_id, prefix, where, path, scenario, t0,
                       done, prog)
    except KeyboardInterrupt as e:
        if done["progress"] is not None:
            done["progress"].close()
        raise Stopped(f"{signal_name(e)} after {time.monotonic() - t0:.1f} s of the s3 run: "
                      + (f"its report is {os.path.relpath(done['report'])}; " if done["report"] else
                         "no verdict, no report (a run cut short judges nothing); ")
                      + _keys_left(done["world"], done["deleted"], prefix, args.bucket), signal_name(e)) from None


def _not_judged(seed: int, history, why: str):
    """The result of a run whose history does not stand for its timing: every invariant not judged, for `why`."""
    from checkers import INVARIANTS
    from checkers.result import SeedResult

    counts = dict(history.counts, events=len(history.events), acquisitions=len(history.of_kind("hold_began")))
    return SeedResult(seed, history.sha256(), counts, history.rules, not_judged={inv.id: why for inv in INVARIANTS})


def _keys_left(world, deleted: int | None, prefix: str, bucket: str) -> str:
    """Where a run's keys are: how many it wrote, how many its --cleanup deleted, under which prefix."""
    n = len(world.keys_written) if world is not None else 0
    if deleted:
        return f"{n - deleted} of the {n} keys it wrote are left under the prefix {prefix} of bucket {bucket}"
    return f"the {n} keys it wrote are left under the prefix {prefix} of bucket {bucket}"


def _judged(console, args, s3, world, bucket, params, seed, run_id, prefix, where, path, scenario, t0,
            done, prog) -> int:
    """The run, judged and reported (`done` notes what is done, for the line a signal ends it with)."""
    try:
        history = world.run()
    finally:
        prog.close()
    elapsed = time.monotonic() - t0
    from checkers.result import judge

    # no pass without work (issue 50): a bucket that refused every request (or every write) gave the run nothing
    # to judge; the environment failed as surely as one that stopped answering
    env_failure = world.env_failure or world.answered_nothing()
    if world.lag_failure is not None:  # the loop ran too late for the history's timing to stand: no verdict
        result = _not_judged(seed, history, world.lag_failure)
    else:
        result = judge(seed, history, env_failure, world.failure, strict=args.strict, not_calm=world.not_calm)
    o = world.options
    block = {"endpoint": where, "bucket": args.bucket, "prefix": prefix, "run_id": run_id, "region": args.region,
             "addressing_style": args.addressing_style, "reuse_prefix": bool(args.reuse_prefix),
             "duration_s": round(world.duration_ms / 1000, 3), "nodes": o["nodes"], "actors": o["actors"],
             "keys_written": len(world.keys_written), "approximations": s3.APPROXIMATIONS,
             "client_timeouts_s": dict(zip(("connect", "read"), s3.client_timeouts(params))),
             "stall_bound_s": world.failure_limit_ms / 1000, "stalls": world.stalls,
             "loop_lag_ms": world.timer_lag_ms, "loop_lag_bound_ms": world.lag_bound_ms,
             "answers": world.answers_text(),
             **({"quiet_not_calm": world.not_calm} if world.not_calm else {})}
    if args.cleanup:
        if env_failure is None:
            block["cleanup_deleted"] = done["deleted"] = s3.cleanup(bucket, world.keys_written)
        else:
            block["cleanup_skipped"] = "the endpoint had stopped answering" if world.env_failure else env_failure
    argv = [s3.redact_url(a) if a == args.url else a for a in sys.argv[1:]]  # never a password in a report
    report = build_report([result], world="s3", model=args.model, scenario=scenario, params=params, start=seed,
                          count=1, elapsed_s=elapsed, report_path=path, replayable=False,
                          extra={"s3": block, "options": o, "environment_failure": env_failure,
                                 "strict": bool(args.strict), "command": " ".join([invoked_as(), *argv])})
    if not env_failure and not report["counts"].get("acquisitions"):
        report["environment_failure"] = env_failure = (
            f"no acquisition was judged in {elapsed:.1f} s (the bucket's answers: {world.answers_text()}; a node's "
            f"first lease waits at least ttl + grace, {(params.ttl_ms + params.grace_ms) / 1000:g} s: run longer)")
    status = settle(report)
    write_report(path, report, timeline=timeline_text(history))
    done["report"] = path
    print_summary(console, report, path)
    if world.stalls:
        print(f"endpoint stalls: {stalls_text(block)}")
    if status == Exit.TOOL:
        raise tool_failure(report)
    if status == Exit.ENVIRONMENT:
        unjudged = ("; no verdict (nothing judged)" if world.lag_failure else
                    "; no verdict (liveness, INV-4 and INV-7, not judged)" if world.env_failure else "; no verdict")
        raise EnvironmentFailure(f"{env_failure}{unjudged}"
                                 + ("; --cleanup skipped" if args.cleanup and "cleanup_skipped" in block else "")
                                 + f"; {_keys_left(world, done['deleted'], prefix, args.bucket)}"
                                 + f"; report: {os.path.relpath(path)}")
    return status
