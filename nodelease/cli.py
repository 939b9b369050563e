"""The command line: `python runner.py SUBCOMMAND ...` in a checkout, `nodelease-check SUBCOMMAND ...`
once installed. One subparser per subcommand, each with its own options and --help:

    run       seeds of the simulated world judged, a report (the default: `runner.py --seeds 20000`)
    replay    one seed of a report, or a counterexample, run again and shown
    shrink    a failing seed shrunk to a counterexample
    explore   every run of a small configuration (exhaustive mode)
    broken    every broken model, each caught by the invariant it declares
    bench     the benchmark
    merge     shard reports joined into the unsharded run's
    diff      two campaign reports compared: what got worse (failures, coverage, margins, findings, cost)
    guided    a guided search over plans (guided/): a corpus kept for what it newly reaches, mutated
    bakeoff   the guided search against uniform seeds, per broken model and rare mutant
    s3        one run against a real S3 endpoint
    list      the models and scenarios
    mutants   the checkers measured against one-rule mutants (mutants/)
    compile   the hot modules compiled (campaign/compiled.py)
    docs      the generated tables of README.md and docs/ rewritten (nodelease/docs.py)
    amendments  every variant of amendments/ judged against its recorded verdict (nodelease/amendments.py)
    check-trace  the traces of a real implementation judged by the same checkers (traces/command.py)
    cost      the requests' cost: the listing over cluster sizes against the ADR's formula, the amendments' column

The old mode flags still work, translated before parsing (`--broken` is `broken`, `--replay R` is
`replay R`, ...; see MODE_FLAGS); two modes at once are refused. An option a subcommand does not
take is refused, naming the subcommands that do. Every refusal is one line on stderr and exit 2;
every exit status is named in house.errors.Exit.

This module owns the parser, the translation of the old flags and the turning of errors into one
line and an exit status; what each subcommand does lives in its own module, which must not know
the parser.
"""

from __future__ import annotations

from campaign import compiled

compiled.install()  # before any hot module is imported: they load compiled while their copy is current

import argparse  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import traceback  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass  # noqa: E402

from campaign import diff  # noqa: E402
from campaign import run as campaign  # noqa: E402
from campaign.outputs import FORCE_HELP  # noqa: E402
from campaign.report import program  # noqa: E402
from house import inputs, signals  # noqa: E402
from house.errors import SIGNAL_STATUS, Exit, ToolError, UsageError, signal_name  # noqa: E402

from . import amendments, bench, broken, cost, exhaustive, guided, listing, replay, s3  # noqa: E402


# --- option types and the options several subcommands share -------------------------------------------


_positive = inputs.count(1)  # (every number an option reads goes through house/inputs.py: one reading)
_natural = inputs.count(0)
_seconds = inputs.seconds()  # a budget or a duration: finite and positive


def _model(p, what: str = "the model") -> None:
    p.add_argument("--model", default=campaign.MAIN_MODEL,
                   help=f"{what}: correct (default) or a broken model's name (list models)")


def _scenario(p) -> None:
    p.add_argument("--scenario", default=campaign.DEFAULT_SCENARIO, help="the fault mix (default: swarm; list scenarios)")


def _param(p) -> None:
    p.add_argument("--param", action="append", default=[], metavar="KEY=MS",
                   help="pin a timing parameter, e.g. --param ttl_ms=12000 (repeatable; validated by T-2..T-4)")


def _seeds(p, default: int | None, what: str = "how many seeds") -> None:
    p.add_argument("--seeds", type=_positive, default=default,
                   help=f"{what} (default {default if default is not None else 1000})")
    p.add_argument("--start", type=_natural, default=0, help="first seed (default 0)")


class _AllCores(int):
    """--workers not given: every core (an int; its type tells a default from a choice)."""


def _workers(p) -> None:
    p.add_argument("--workers", type=inputs.workers(), default=_AllCores(os.cpu_count() or 1),
                   help=f"worker processes (default: all cores; at most {inputs.WORKERS_PER_CORE} per core)")



def _report(p, default: str) -> None:
    p.add_argument("--report", metavar="PATH", help=f"where to write the JSON report (default: {default})")
    _force(p)


def _force(p) -> None:
    p.add_argument("--force", action="store_true", help=FORCE_HELP)


def _strict(p) -> None:
    p.add_argument("--strict", action="store_true",
                   help="known protocol findings (checkers/findings.py) fail the run too, not only counted")


def _junit(p, what: str) -> None:
    p.add_argument("--junit", metavar="PATH", help=f"also write JUnit XML: {what}")


# --- each subcommand's options ---------------------------------------------------------------------


def _run_options(p) -> None:
    _seeds(p, None, "how many seeds (with --time-budget: at most that many)")
    _workers(p)
    _model(p)
    _scenario(p)
    _param(p)
    _report(p, "reports/<model>-<scenario>-s<start>-n<count>[-<pins>][-strict].json under the working directory")
    _strict(p)
    ci = p.add_argument_group("CI: slices, budgets, a cluster, JUnit (join slices with: merge REPORT...)")
    ci.add_argument("--shard", metavar="K/N", help="run only the K-th of N contiguous slices of the seeds")
    ci.add_argument("--time-budget", type=_seconds, metavar="S",
                    help="run seeds in order until S seconds have passed (--seeds: at most that many)")
    ci.add_argument("--dask", metavar="ADDRESS", help="run on a Dask cluster: a scheduler's address, or local:W "
                                                      "for W local worker processes (pip install -e '.[dask]')")
    _junit(ci, "a test case per invariant")
    p.add_argument("--resume", metavar="REPORT", help="continue the campaign of a partial report (one a signal "
                                                      "stopped) to the report an uninterrupted run writes")


def _replay_options(p) -> None:
    p.add_argument("report_or_plan", metavar="REPORT|PLAN", help="a run's report, or a counterexample (shrink, explore)")
    p.add_argument("--seed", type=_natural, help="the report's seed to run (default: its first failing seed); with "
                                                 "--continue, the seed the rest of the run is drawn from (default: "
                                                 "the plan's)")
    p.add_argument("--html", metavar="PATH", help="also draw the run as one HTML file")
    p.add_argument("--continue", dest="cont", action="store_true",
                   help="a counterexample the code no longer replays: replay it until the first decision the code no "
                        "longer asks for or asks anew, draw the rest, say where it diverged, write the run as a plan")
    p.add_argument("--with-new-kinds", action="store_true",
                   help="a report's seed with the fault kinds added to the tool since the report was written drawn "
                        "too (default: held off, so that the seed replays as the run the report recorded)")
    _report(p, "with --continue: reports/<plan>-continued.json under the working directory")


def _shrink_options(p) -> None:
    p.add_argument("report_path", metavar="REPORT|PLAN", help="a run's report, or a counterexample (guided, shrink)")
    p.add_argument("--seed", type=_natural, help="the seed to shrink (default: the report's first failing seed)")
    p.add_argument("--invariant", metavar="INV", help="the invariant to keep failing (default: the seed's first)")
    p.add_argument("--budget-s", "--shrink-budget", dest="budget_s", type=_seconds, default=120.0, metavar="S",
                   help="stop after S seconds, keeping the smallest counterexample so far (default 120)")
    p.add_argument("--html", metavar="PATH", help="also draw the counterexample as one HTML file")
    _strict(p)
    _report(p, "reports/<model>-<scenario>-s<seed>[-<pins>]-<invariant>-shrunk.json under the working directory")


# the explorer's budgets of injections per run: (option, default, what)
_INJECTIONS = (("requests", 1, "client requests"), ("hibernations", 0, "hibernations"),
               ("crashes", 0, "process crashes"), ("fences", 0, "operator `cluster fence`s"),
               ("outages", 0, "outages of one node (ttl + grace + a quantum)"),
               ("twins", 0, "twins (a second process under a node's id, 2 (ttl + grace) long)"),
               ("stops", 0, "clean stops of a node (its supervisor restarts it a quantum later)"),
               ("drains", 0, "drains of a node, each followed by a clean stop ttl + grace + a quantum later"),
               ("deletes", 0, "mistaken deletes of a node's nodes/ record"))


def _explore_options(p) -> None:
    _model(p, "the model explored")
    _param(p)
    p.add_argument("--nodes", type=_positive, default=2, metavar="N", help="nodes explored (default 2)")
    p.add_argument("--actors", type=_positive, default=1, metavar="K", help="actors explored (default 1)")
    _workers(p)
    _strict(p)
    _report(p, "reports/explore-<model>-<N>n<K>a[-<pins>]-<digest of the other bounds>.json under the "
               "working directory; a counterexample beside it")
    g = p.add_argument_group("bounds: every run within them, breadth-first")
    g.add_argument("--horizon-s", type=_seconds, default=20.0, metavar="S", help="simulated seconds per run (default 20)")
    g.add_argument("--quantum-ms", type=_positive, default=500, metavar="MS",
                   help="the time quantum: delays and injections fall on its multiples (default 500)")
    g.add_argument("--delays", metavar="MS,...", default="1", help="a request's and a reply's delays to explore "
                   "(default 1; e.g. 1,500,1000: each multiplies the states)")
    g.add_argument("--events", metavar="MS,...", help="how long a served request's event may run, each a "
                   "branch; `straggler`: until its process sends its `released` write, the worst instant for a "
                   "clean stop (CS-1) (e.g. 0,straggler); default: every event ends at once")
    g.add_argument("--focus", action="append", metavar="'OP PREFIX'", help="only requests starting so "
                   "(e.g. 'PUT owners/') get delays and faults; the rest are answered in 1 ms (repeatable)")
    g.add_argument("--faults", type=_natural, default=1, metavar="N", help="requests lost, writes applied late, "
                   "replies lost, per run (default 1)")
    for name, default, what in _INJECTIONS:
        g.add_argument(f"--{name}", type=_natural, default=default, metavar="N", help=f"{what} per run (default {default})")
    g.add_argument("--offsets", metavar="A,B;C,D", help="clock offsets per node to explore, ms, e.g. "
                   "--offsets=-1000,1000 (default: every combination of -max_skew, 0, +max_skew); with "
                   "--upgrade the old nodes' after the new ones'")
    u = p.add_argument_group("an upgrade (section 6): an old per-actor-lease node per node first")
    u.add_argument("--upgrade", action="store_true", help="an old binary per node (model/old_lease.py) starts "
                   "first and is asked for each actor half a quantum in; it stops, and the new nodes start after it")
    u.add_argument("--old-stop-s", type=_seconds, default=2.0, metavar="S",
                   help="when the old binaries stop (default 2)")
    u.add_argument("--old-stops", default="clean,crash", metavar="HOW,...",
                   help="how they stop, each an exploration: clean, crash (default clean,crash)")
    u.add_argument("--gaps-ms", default="0", metavar="MS,...", help="how long after they stop the new nodes "
                   "start, each an exploration (default 0)")
    u.add_argument("--same-ids", action="store_true", help="the new nodes take the old ones' ids")
    u.add_argument("--gc", action="store_true", help="the old garbage collection runs at the switch: each "
                   "released lease of an idle actor deleted or kept, a branch")
    g.add_argument("--from-s", type=inputs.amount(0), default=0.0, metavar="S", help="no choice before S seconds "
                   "(requests answered in 1 ms, nothing injected): skips the start's interleavings (default 0)")
    g.add_argument("--budget-s", "--explore-budget", dest="budget_s", type=_seconds, metavar="S",
                   help="stop cleanly after S seconds")
    g.add_argument("--max-states", type=_positive, metavar="N", help="stop cleanly after N distinct states")


def _broken_options(p) -> None:
    p.add_argument("models", nargs="*", metavar="MODEL", help="only these broken models (default: every one); "
                                                              "the correct model always runs, as the control")
    _seeds(p, 1000, "seeds per model")
    _workers(p)
    _scenario(p)
    _param(p)
    _report(p, "reports/broken-<scenario>-s<start>-n<count>[-<pins>].json under the working directory; each "
               "model's campaign report beside it")
    _junit(p, "a test case per model")


def _bench_options(p) -> None:
    _seeds(p, 1000, "seeds per run (one run with 1 worker, one with 2)")
    _scenario(p)
    _param(p)
    _report(p, "reports/bench-<scenario>-s<start>-n<count>[-<pins>].json under the working directory")


def _merge_options(p) -> None:
    p.add_argument("reports", nargs="+", metavar="REPORT", help="the reports of `run --shard K/N`, in any order")
    _report(p, "reports/<model>-<scenario>-s<start>-n<count>[-<pins>][-strict].json under the working directory")
    _junit(p, "a test case per invariant")


def _s3_options(p) -> None:
    p.add_argument("url", metavar="URL", help="the S3 endpoint (http:// or https://)")
    p.add_argument("--bucket", metavar="NAME", help="the bucket (it must exist)")
    p.add_argument("--prefix", metavar="P", help="the run's key prefix (default: a fresh one)")
    p.add_argument("--duration", type=_seconds, default=30.0, metavar="S", help="seconds to run (default 30)")
    p.add_argument("--nodes", type=_positive, metavar="N", help="node ids (default: as the scenario draws them)")
    p.add_argument("--actors", type=_positive, metavar="K", help="actors (default: as the scenario draws them)")
    p.add_argument("--reuse-prefix", action="store_true", help="run in a prefix that holds objects")
    p.add_argument("--cleanup", action="store_true", help="delete the keys this run wrote")
    p.add_argument("--region", metavar="R", help="the region (default: the AWS config's, or us-east-1)")
    p.add_argument("--addressing-style", choices=("path", "virtual"), help="path or virtual-host URLs")
    _model(p)
    _scenario(p)
    _param(p)
    p.add_argument("--seed", type=_natural, help="the fault plan's seed (default: a fresh one)")
    _report(p, "reports/<model>-s3-<run id>.json under the working directory")
    _strict(p)


def _list_options(p) -> None:
    p.add_argument("sections", nargs="*", metavar="SECTION", help=f"only these ({', '.join(listing.SECTIONS)}; "
                                                                   f"default: all)")


def _mutants_options(p) -> None:
    p.add_argument("ids", nargs="*", metavar="MUTANT", help="mutant ids (default: the whole catalogue)")
    p.add_argument("--seeds", type=_positive, default=300, help="seeds per mutant (default 300)")
    _scenario(p)
    p.add_argument("--jobs", type=inputs.workers(), default=1, help="mutants run at once, each in its own copy (default 1)")
    p.add_argument("--report", metavar="PATH", help="write the results as JSON here")
    _force(p)
    p.add_argument("--list", action="store_true", help="list the catalogue and exit")


def _mutants(console, args) -> int:
    from campaign.outputs import Outputs
    from mutants.probe import probe

    campaign.check_scenario(args.scenario)
    if args.report:
        out = Outputs(args.force)
        out.add(args.report, "the mutants report")
        out.check()
    return probe(console, args.ids, args.seeds, args.scenario, args.jobs, args.report, args.list)


def _compile_options(p) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("--check", action="store_true", help="only say which hot modules are stale (exit 1 if any)")
    g.add_argument("--clean", action="store_true", help="remove every compiled module (.compiled/)")


def _docs_options(p) -> None:
    from . import docs

    docs.options(p)


def _docs(console, args) -> int:
    from . import docs

    return docs.command(console, args)


def _check_trace_options(p) -> None:
    from traces import command

    command.options(p)


def _check_trace(console, args) -> int:
    from traces import command

    return command.command(console, args)


# --- the subcommands -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Subcommand:
    name: str
    summary: str  # one line, in the list of subcommands and atop its --help
    options: Callable  # (parser) -> None: adds its options
    command: Callable  # (console, args) -> exit status
    mode_flag: str | None = None  # the old flag that meant it, translated before parsing
    flag_value: str | None = None  # what that flag took, which becomes the subcommand's first argument


SUBCOMMANDS = (
    Subcommand("run", "run seeds of the simulated world and write a report (the default subcommand)",
               _run_options, campaign.command),
    Subcommand("replay", "run one seed of a report, or a counterexample, again: its timeline, hash-checked",
               _replay_options, replay.replay, "--replay", "REPORT"),
    Subcommand("shrink", "shrink a failing seed of a report to a small counterexample",
               _shrink_options, replay.shrink, "--shrink", "REPORT"),
    Subcommand("explore", "explore every run of a small configuration (exhaustive mode)",
               _explore_options, exhaustive.command, "--explore"),
    Subcommand("broken", "run every broken model: each must be caught by the invariant it declares",
               _broken_options, broken.command, "--broken"),
    Subcommand("bench", "benchmark: seeds/s with 1 and 2 workers, a seed's cost, memory",
               _bench_options, bench.command, "--bench"),
    Subcommand("merge", "join the reports of `run --shard K/N` into the unsharded run's",
               _merge_options, campaign.merge_command),
    Subcommand("diff", "compare two campaign reports: failures new and gone, coverage, margins, findings, cost "
                       "(exit 1 when something got worse)", diff.options, diff.command),
    Subcommand("guided", "search for a violation by mutating plans that reach something new (guided/)",
               guided.options, guided.command),
    Subcommand("bakeoff", "measure the guided search against uniform seeds, per broken model and rare mutant",
               guided.bakeoff_options, guided.bakeoff_command),
    Subcommand("s3", "run a model against a real S3 endpoint instead of simulating",
               _s3_options, s3.command, "--s3", "URL"),
    Subcommand("list", "list the models and scenarios", _list_options, listing.command, "--list"),
    Subcommand("mutants", "measure the checkers against one-rule mutants of the model",
               _mutants_options, _mutants),
    Subcommand("compile", "compile the hot modules with Cython (what setup.py does)",
               _compile_options, compiled.command),
    Subcommand("docs", "rewrite the generated tables of README.md and docs/ from the registries",
               _docs_options, _docs),
    Subcommand("amendments", "judge every variant of amendments/ (ADR amendments, open questions): exit 1 "
                             "if a verdict changed from the recorded one", amendments.options, amendments.command),
    Subcommand("cost", "what the protocol's requests cost: the listing swept over cluster sizes against the ADR's "
                       "N x (1 + N) and dollars, or the amendments' cost column (--amendments)",
               cost.options, cost.command),
    Subcommand("check-trace", "judge the traces of a real implementation (one NDJSON file per process, "
                              "docs/traces.md) with the same checkers, its clocks skewed up to max_skew",
               _check_trace_options, _check_trace),
)
BY_NAME = {s.name: s for s in SUBCOMMANDS}
MODE_FLAGS = {s.mode_flag: s for s in SUBCOMMANDS if s.mode_flag}
# hints for an option given to the wrong subcommand, where the option's owners alone do not say it
HINTS = {("run", "--seed"): "to run one seed: --start S --seeds 1"}


class _Done(Exception):
    """argparse wants to end the run (after --help): with this status."""

    def __init__(self, status: int) -> None:
        self.status = status


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2, no usage dump
        raise UsageError(message)

    def exit(self, status: int = 0, message: str | None = None):
        if message:
            print(message, file=sys.stderr, end="")
        raise _Done(status)


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The parser, and each subcommand's own."""
    p = _Parser(prog=program(), allow_abbrev=False,
                description="A deterministic simulation model checker for ADR 0020 (one lease per node).",
                epilog=f"{program()} SUBCOMMAND --help says more; with no subcommand, `run` is meant.")
    subs = p.add_subparsers(dest="command", metavar="SUBCOMMAND", required=True,
                            parser_class=_Parser)
    parsers = {}
    for s in SUBCOMMANDS:
        # (allow_abbrev off: `run --seed 7` must not be read as --seeds 7)
        sp = subs.add_parser(s.name, help=s.summary, description=s.summary, allow_abbrev=False)
        s.options(sp)
        parsers[s.name] = sp
    return p, parsers


def translate(argv: list[str]) -> list[str]:
    """The old mode flags as their subcommands (`--s3 URL --bucket B` is `s3 URL --bucket B`), and no
    subcommand as `run`. Two modes at once are refused. After a subcommand nothing is translated
    (`mutants --list` is mutants' own option)."""
    if argv[:1] and (argv[0] in BY_NAME or argv[0] in ("-h", "--help")):
        return argv
    if argv[:1] and not argv[0].startswith("-"):
        raise UsageError(f"unknown subcommand {argv[0]!r} (choices: {', '.join(BY_NAME)})")
    modes = [(i, MODE_FLAGS[t.partition("=")[0]]) for i, t in enumerate(argv) if t.partition("=")[0] in MODE_FLAGS]
    if not modes:
        return ["run", *argv]
    (i, sub), others = modes[0], [s for _i, s in modes if s is not modes[0][1]]
    if others:
        raise UsageError(f"{sub.mode_flag} and {others[0].mode_flag} go one at a time: each is a subcommand of "
                         f"its own ({sub.name}, {others[0].name})")
    drop = {k for k, _s in modes}
    first = []
    if sub.flag_value:
        flag, eq, value = argv[i].partition("=")
        if eq:
            first = [value]
        elif i + 1 < len(argv) and not argv[i + 1].startswith("-"):
            first = [argv[i + 1]]
            drop.add(i + 1)
        else:
            raise UsageError(f"{flag} wants {sub.flag_value}")
    return [sub.name, *first, *(t for k, t in enumerate(argv) if k not in drop)]


# options that do nothing unless another is given, or that another makes pointless: (subcommand, option) ->
# (the other option, whether it must be given (True) or not (False)). Given anyway, each is refused, never
# silently ignored (issue 50).
NEEDS = {
    **{("explore", o): ("--upgrade", True) for o in ("--old-stop-s", "--old-stops", "--gaps-ms", "--same-ids", "--gc")},
    ("amendments", "--rebase-seeds"): ("--rebase", True),
    **{("mutants", o): ("--list", False) for o in ("--seeds", "--jobs", "--report", "--scenario", "--force")},
}


def parse(argv: list[str]) -> argparse.Namespace:
    parser, parsers = build_parser()
    translated = translate(argv)
    args, extras = parser.parse_known_args(translated)
    if extras:
        raise UsageError(_refusal(args.command, extras, parsers))
    _needs(args.command, translated, parsers[args.command])
    return args


def _given(argv: list[str], parser) -> set[str]:
    """The options given on the command line, each by its first spelling (`--budget-s` for
    `--explore-budget`)."""
    given = set()
    for token in argv:
        if token == "--":
            break
        action = parser._option_string_actions.get(token.partition("=")[0])
        if action is not None:
            given.add(action.option_strings[0])
    return given


def _needs(command: str, argv: list[str], parser) -> None:
    """An option given where it has no effect (NEEDS) is refused in one line, naming what it needs."""
    spelled = _given(argv, parser)
    for (sub, option), (other, must) in NEEDS.items():
        if sub != command or option not in spelled:
            continue
        if must and other not in spelled:
            raise UsageError(f"{option} has no effect without {other}")
        if not must and other in spelled:
            raise UsageError(f"{option} has no effect with {other}")


def _refusal(command: str, extras: list[str], parsers: dict) -> str:
    """Why `command` refuses `extras`: an option it does not take (and who does), or a stray argument."""
    token = next((x for x in extras if x.startswith("-")), extras[0])
    flag = token.partition("=")[0]
    if not flag.startswith("-"):
        return f"{command} takes no argument {token!r}"
    if flag in MODE_FLAGS:
        return f"{command} and {flag} go one at a time: each is a subcommand of its own"
    owners = [name for name, sp in parsers.items() if flag in sp._option_string_actions and name != command]
    hint = HINTS.get((command, flag))
    return (f"{command} takes no {flag}" + (f" (it goes with {', '.join(owners)})" if owners else "")
            + (f"; {hint}" if hint else ""))


def main(argv: list[str] | None = None) -> int:
    """Run the command line; the exit status (house.errors.Exit: 130 on SIGINT, 143 on SIGTERM). Called
    without `argv` it is the process's entry point: from its return to the process's exit, signals are
    only counted (the exit cannot print a traceback); with `argv` (in-process, by a test) the signal
    handlers are restored as they were."""
    guard = signals.Guard()
    try:
        try:
            guard.install()  # first: SIGINT, SIGTERM raise Interrupted once, then only count
            status = _main(argv, guard)
            guard.first = guard.first or "done"  # (a plain store, no call: from here no signal raises)
            return status
        except KeyboardInterrupt as e:  # the first signal, landing between the handlers of _main
            return _interrupted(e, guard)
    finally:
        if argv is None:
            guard.quiet()
        else:
            guard.restore()


def _interrupted(e: BaseException, guard) -> int:
    """A signal where no work was there to save (run saves its own: Stopped): one line, its status."""
    name = signal_name(e)
    print(f"{program()}: interrupted by {name}: no verdict{guard.later()}", file=sys.stderr)
    return int(SIGNAL_STATUS.get(name, Exit.INTERRUPTED))


def _main(argv: list[str] | None, guard) -> int:
    from rich.console import Console

    console = Console() if sys.stdout.isatty() else Console(width=160)
    try:
        args = parse(sys.argv[1:] if argv is None else list(argv))
        return int(BY_NAME[args.command].command(console, args))
    except _Done as done:
        return done.status
    except ToolError as e:
        print(f"{program()}: {e.what}: {' '.join(str(e).split())}" + (guard.later() if guard.first else ""),
              file=sys.stderr)
        return int(e.status)
    except KeyboardInterrupt as e:  # a signal where no work was there to save (run saves its own: Stopped)
        return _interrupted(e, guard)
    except MemoryError:  # the machine's memory ran out: the environment failed, the run has no verdict
        print(f"{program()}: environment failure: out of memory: no verdict (explore fewer nodes, or with "
              f"--budget-s or --max-states; run with fewer --workers)", file=sys.stderr)
        return int(Exit.ENVIRONMENT)
    except BrokenPipeError:  # stdout closed by its reader (`list | head`): stop quietly
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # (so that the exit's flush is quiet)
        except (OSError, ValueError):
            pass
        return int(Exit.PIPE_CLOSED)
    except Exception as e:  # a bug of the tool outside any seed's run: one line; the traceback on asking
        return _failure(e)


def _failure(e: BaseException) -> int:
    if os.environ.get("NODELEASE_TRACEBACK"):
        traceback.print_exc()
    where = traceback.extract_tb(e.__traceback__)[-1]
    print(f"{program()}: tool failure: {type(e).__name__}: {' '.join(str(e).split())} (at "
          f"{os.path.relpath(where.filename)}:{where.lineno}; NODELEASE_TRACEBACK=1 shows the traceback)",
          file=sys.stderr)
    return int(Exit.TOOL)
