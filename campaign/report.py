"""What a run tells its user: progress while it runs, then one report (JSON for machines, a
summary for people, a table on the console), the same for both worlds.

A run is a list of judged seeds (`SeedResult`): many from the simulated world, one from a
real-S3 run. `build_report` turns them into the report; `summary_text` and `print_summary`
read only the report, so what a person sees is what the JSON says, and `exit_status` is the
one reading of a report as an exit status. A seed's verdict is a list of violations; an
exception in a model, a world or a checker is not a verdict but a tool failure, kept apart
(`tool_failures`) and never counted as a violation.

Reports land under the working directory's reports/ (never beside this file: the tool runs
from a checkout or from an install alike). This module knows the report's fields and how to
print them; it must not know the command line's options (nodelease/cli.py) or how seeds run.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time

from typing import TYPE_CHECKING

from house.errors import Exit, UsageError
from . import cost

if TYPE_CHECKING:
    from checkers.result import SeedResult


# --- one seed, judged: checkers/result.py ------------------------------------------------


def __getattr__(name: str):
    """`SeedResult`, `judge` and `crashed`: the one result type and how a seed is judged (checkers/result.py),
    imported when first asked for (checkers/ is hot: compiled, and imported only after the command line
    installed the compiled modules' finder)."""
    if name in ("SeedResult", "judge", "crashed"):
        import checkers.result

        return getattr(checkers.result, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def digest(hashes: list[str]) -> str:
    """sha256 of the newline-joined per-seed history sha256 hex digests, in seed order."""
    return hashlib.sha256("\n".join(hashes).encode()).hexdigest()


# --- progress ---------------------------------------------------------------------------


class Progress:
    """A rich progress bar on a terminal; a line every 10 % (or 15 s) elsewhere. It counts seeds
    (`advance`, one per judged seed) or the seconds of a real-time run (`at`)."""

    def __init__(self, console, total: float, label: str, unit: str = "seeds") -> None:
        self.console = console
        self.total = total
        self.label = label
        self.unit = unit
        self.done = 0.0
        self.violations = 0
        self.t0 = time.monotonic()
        self._last_line = self.t0
        self._next_pct = 10
        self._bar = None
        if console.is_terminal:
            from rich.progress import BarColumn, Progress as RP, TextColumn, TimeElapsedColumn

            self._bar = RP(TextColumn("{task.description}"), BarColumn(),
                           TextColumn("{task.completed:.0f}/{task.total:.0f} " + unit),
                           TextColumn("{task.fields[figures]}"), TimeElapsedColumn(), console=console,
                           transient=False)
            self._task = self._bar.add_task(label, total=total, figures="")
            self._bar.start()

    def advance(self, violations: int) -> None:
        """One more seed judged (`violations`: 1 if it failed)."""
        self.violations += violations
        rate = (self.done + 1) / max(time.monotonic() - self.t0, 1e-9)
        v = f"{self.violations} violating" if self.violations else "no violations"
        show = self._bar is None or (self.done + 1) % 10 == 0 or self.done + 1 == self.total or violations
        self.at(self.done + 1, f"{rate:.0f} seeds/s, {v}" if show else None)

    def at(self, done: float, figures: str | None) -> None:
        """`done` units so far; `figures`: what to show beside the bar (None: keep the last)."""
        self.done = done
        now = time.monotonic()
        if self._bar is not None:
            if figures is not None:
                self._bar.update(self._task, completed=min(done, self.total), figures=figures)
            return
        pct = 100 * done // max(self.total, 1e-9)
        if figures is not None and (pct >= self._next_pct or now - self._last_line > 15 or done >= self.total):
            self._next_pct = pct - pct % 10 + 10
            self._last_line = now
            print(f"{self.label}: {done:.0f}/{self.total:.0f} {self.unit}, {figures}", flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()


# --- the report ----------------------------------------------------------------------------


def compiled_status() -> str:
    """How many hot modules this process runs compiled (campaign/compiled.py): speed figures depend on it."""
    from . import compiled

    return compiled.status()


def git_commit() -> str | None:
    """The commit of the checkout this code runs from; None for an install (or no git): the
    directory holding the packages must be the top of a work tree, not merely inside one."""
    from .compiled import ROOT

    try:
        out = subprocess.run(["git", "rev-parse", "--show-toplevel", "HEAD"], cwd=ROOT, capture_output=True,
                             text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = out.stdout.split()
    if out.returncode != 0 or len(lines) != 2 or os.path.realpath(lines[0]) != os.path.realpath(ROOT):
        return None
    return lines[1]


def program() -> str:
    """The tool's name as its user called it: the console script, or the checkout's runner.py."""
    return "nodelease-check" if os.path.basename(sys.argv[0]) == "nodelease-check" else "runner.py"


def invoked_as() -> str:
    """How a person runs this tool again, for the commands a report prints."""
    return "nodelease-check" if program() == "nodelease-check" else "python runner.py"


def command_line() -> str:
    """This run's own command, for the report."""
    return " ".join([invoked_as(), *sys.argv[1:]])


def invariants_checked() -> list[str]:
    from checkers import CHECKERS

    return list(CHECKERS)


def reports_path(name: str) -> str:
    """Where a report named `name` lands unless --report says otherwise: reports/ of the
    working directory."""
    return os.path.join(os.path.abspath("reports"), name)


def default_report_path(model_name: str, scenario: str, start: int, count: int, pins: dict | None = None,
                        strict: bool = False, folder: str | None = None) -> str:
    """A campaign's report name: what distinguishes the run (model, scenario, seeds, the pinned timing,
    --strict), so that two runs that differ never share a report; under reports/ of the working directory,
    or `folder`."""
    name = f"{model_name}-{scenario}-s{start}-n{count}{pins_suffix(pins)}{'-strict' if strict else ''}.json"
    return os.path.join(folder, name) if folder is not None else reports_path(name)


def pins_suffix(pins: dict | None) -> str:
    """The pinned timing in a file name: `-ttl_ms=12000-grace_ms=500` (sorted), empty with none."""
    return "".join(f"-{k}={v}" for k, v in sorted((pins or {}).items()))


def shrink_command(report_path: str, seed: int, invariant: str) -> str:
    return f"{invoked_as()} shrink {os.path.relpath(report_path)} --seed {seed} --invariant {invariant}"


def replay_command(report_path: str, seed: int | None = None) -> str:
    return f"{invoked_as()} replay {os.path.relpath(report_path)}" + ("" if seed is None else f" --seed {seed}")


def write_report(path: str, report: dict, text: str | None = None, timeline: str | None = None) -> None:
    """The JSON report at `path` first, whole or not at all (UsageError if it cannot be written: the one
    output a verdict needs); then beside it a summary (.txt: `text`, or the run's summary) and a timeline
    (.timeline.txt) if given, each a warning if it cannot be written (campaign/outputs.py)."""
    from .outputs import secondary, write_json, write_text

    write_json(path, report)
    stem = os.path.splitext(path)[0]
    secondary(write_text, stem + ".txt", summary_text(report) if text is None else text, "the summary")
    if timeline is not None:
        secondary(write_text, stem + ".timeline.txt", timeline, "the timeline")


def write_junit(path: str, xml: str) -> None:
    """The JUnit XML (after the report: a warning if it cannot be written)."""
    from .outputs import secondary, write_text

    if secondary(write_text, path, xml, "the JUnit XML"):
        print(f"junit: {os.path.relpath(path)}")


def load_json(path: str, what: str = "report"):
    """A JSON file the user named, read strictly (campaign/outputs.py: one line and exit 2 for anything
    that is not a JSON document of a sane depth)."""
    from .outputs import load_json_file

    return load_json_file(path, what)


def fault_kinds() -> list[str]:
    """The fault kinds this tool knows, in their order (scenarios/faults/)."""
    from scenarios.faults import KINDS

    return list(KINDS)


def kinds_added(report: dict) -> tuple[str, ...]:
    """The fault kinds this tool has that the report's did not (`fault_kinds`: the kinds it knew; a report
    without the list, written before issue 46, names none): what its seeds' replays hold off."""
    from scenarios.faults import KINDS

    known = report.get("fault_kinds") or None
    return () if known is None else tuple(k for k in KINDS if k not in known)


def load_report(path: str, report=None, merging: bool = False) -> dict:
    """A report read back (from `path`, or already read), checked against its schema first
    (campaign/validate.py): a malformed one is one line and exit 2, never a traceback."""
    from .validate import check_report

    if report is None:
        report = load_json(path)
    return check_report(report, path, merging)


def timeline_text(history) -> str:
    """A history for a person: who ran where, then every event."""
    lines = ["times: true time, s since the run began; a value marked @local is on that process's own clock "
             "(ms), every other time field is true time (ms)"]
    for i, p in enumerate(history.processes):
        lines.append(f"process {i}: {p.label} on {p.machine} (clock offset {p.offset_ms} ms, drift {p.drift_ppm} ppm)")
    lines.append(history.timeline())
    return "\n".join(lines) + "\n"


def build_report(results: list[SeedResult], *, world: str, model: str, scenario: str, params, start: int,
                 count: int, elapsed_s: float, report_path: str | None, workers: int | None = None,
                 replayable: bool = True, extra: dict | None = None) -> dict:
    """The report of a run: every seed's result summed, its violations and its tool failures (apart)
    with how to replay them."""
    from history.record import HASH_VERSION

    hashes: list[str] = []
    totals: dict[str, int] = {}
    rules: dict[str, int] = {}
    failures: list[dict] = []
    tool_failures: list[dict] = []
    failing_seeds: list[int] = []
    failover: list[int] = []
    skipped: dict[str, str] = {}
    findings: dict[str, dict] = {}
    families: dict[str, int] = {}
    bounds: dict[str, int] = {}
    from checkers.coverage import POINTS, missed

    covered = {k: 0 for k in POINTS}
    margins: list[int] = []
    slack = MarginSums(report_path if replayable else None)
    for r in results:
        for k in r.coverage:
            covered[k] = covered.get(k, 0) + 1
        margins.extend(r.margins)
        slack.add(r.seed, r.margin_ms, r.margin_findings)
        if r.config:
            families[r.config[0]] = families.get(r.config[0], 0) + 1
            for b in r.config[1].split("+"):
                if b != "-":
                    bounds[b] = bounds.get(b, 0) + 1
        for fid, inv, msg, explanation in r.findings:
            entry = findings.setdefault(fid, {"seeds": [], "invariants": [], "first": None})
            if r.seed not in entry["seeds"]:
                entry["seeds"].append(r.seed)
            if inv not in entry["invariants"]:
                entry["invariants"].append(inv)
            if entry["first"] is None:
                entry["first"] = {"seed": r.seed, "invariant": inv, "message": msg, "explanation": explanation,
                                  "replay": replay_command(report_path, r.seed) if replayable and report_path else None}
        hashes.append(r.sha256)
        failover.extend(r.failover_ms)
        skipped.update(r.not_judged)
        for k, v in r.counts.items():
            totals[k] = totals.get(k, 0) + v
        for k, v in r.rules.items():
            rules[k] = rules.get(k, 0) + v
        if r.tool_failure is not None:
            message, tb = r.tool_failure
            tool_failures.append({"seed": r.seed, "message": message, "history_sha256": r.sha256,
                                  "replay": replay_command(report_path, r.seed) if replayable and report_path else None,
                                  "traceback": tb})
        if r.failures:
            failing_seeds.append(r.seed)
            for inv, msg, explanation in r.failures:
                failures.append({"seed": r.seed, "invariant": inv, "message": msg, "history_sha256": r.sha256,
                                 "replay": replay_command(report_path, r.seed) if replayable and report_path else None,
                                 "shrink": shrink_command(report_path, r.seed, inv) if replayable and report_path
                                 else None,
                                 "explanation": explanation})
    # a swarm campaign long enough must reach every coverage point (checkers/coverage.py)
    covered_missed = missed(covered, scenario, len(results))
    totals["seeds_run"] = len(hashes)
    totals.setdefault("acquisitions", 0)
    totals["failing_seeds"] = len(failing_seeds)
    totals["tool_failing_seeds"] = len(tool_failures)
    report = {
        "world": world,
        "model": model,
        "scenario": scenario,
        "params": params.to_dict() if hasattr(params, "to_dict") else dict(params),
        "configurations": {"families": dict(sorted(families.items())), "on_bounds": dict(sorted(bounds.items()))},
        "seed_params": [r.config for r in results],
        "seeds": {"start": start, "count": count},
        "passed": not failures and not covered_missed and not tool_failures,
        "counts": dict(sorted(totals.items())),
        "rules_hit": dict(sorted(rules.items(), key=lambda kv: _rule_order(kv[0]))),
        "invariants_checked": [inv for inv in invariants_checked() if inv not in skipped],
        "not_judged": dict(sorted(skipped.items())),
        "failover_ms": distribution(failover),
        "protocol_findings": _findings_block(findings),
        # how many violations each finding's classifier took for its finding (a real bug meeting a
        # finding's cause would hide here: the count makes it visible)
        "absorbed": _absorbed(r.findings for r in results),
        "coverage": covered,
        "coverage_missed": covered_missed,
        "takeover_margin_ms": _margins(margins),
        "margins": slack.block(),
        "failures": failures,
        "failing_seeds": failing_seeds,
        "tool_failures": tool_failures,
        "history_digest": digest(hashes),
        "seed_hashes": hashes,
        # the encoding the hashes are of (history/record.py, HASH_VERSION): a replay computes its seed's that way
        "hash_version": HASH_VERSION,
        # the fault kinds the tool knew (a replay after a kind was added says "the same run, the options grew")
        "fault_kinds": fault_kinds(),
        # what `merge` needs to join shard reports exactly (distributions, the seeds of each finding)
        "raw": {"failover_ms": failover, "takeover_margin_ms": margins,
                "finding_seeds": {fid: entry["seeds"] for fid, entry in findings.items()}},
        "elapsed_s": round(elapsed_s, 3),
        "seeds_per_s": round(len(hashes) / elapsed_s, 1) if elapsed_s > 0 else None,
        "workers": workers,
        "compiled": compiled_status(),
        "git_commit": git_commit(),
        "command": command_line(),
    }
    _add_cost(report, cost.ledger_block(r.ledger for r in results))
    report.update(extra or {})
    if world != "s3":  # a real-S3 run is one run: no chance over seeds to bound
        report["confidence"] = confidence_block(report)
    return report


def _add_cost(report: dict, block: dict | None) -> None:
    """The request ledger summed and priced (campaign/cost.py), when the seeds kept one."""
    if block is not None:
        report["ledger"] = block
        report["cost"] = cost.cost_block(block)


def junit_xml(report: dict) -> str:
    """JUnit XML for CI: a campaign is a suite with one test case per invariant (failed by its first
    violation, with the explanation and the replay command; skipped where not judged), one for the
    coverage points and one for the tool itself (an error: its first exception); a `broken` run is
    a case per model (an error where the model's run raised)."""
    from xml.sax.saxutils import escape, quoteattr

    cases = []
    if report.get("kind") == "broken":
        name = f"nodelease broken models ({report['scenario']}, seeds {report['seeds']['start']}.."
        name += f"{report['seeds']['start'] + report['seeds']['count'] - 1})"
        for r in report["models"]:
            what = "the control" if r["model"] == "correct" else f"breaks {r['rule_broken']}, must be caught by {r['must_catch']}"
            body = ""
            if r["tool_failing_seeds"]:
                msg = f"{r['model']}: the tool failed in {r['tool_failing_seeds']} of {r['seeds_run']} seeds"
                body = f"<error message={quoteattr(msg)}>{escape(msg + chr(10) + (r.get('tool_replay') or ''))}</error>"
            elif not r["ok"]:
                msg = ("the correct model failed: " + ", ".join(r["invariants_violated"])) if r["model"] == "correct" \
                    else f"{r['model']}: {r['verdict']} in {r['seeds_run']} seeds"
                body = f"<failure message={quoteattr(msg)}>{escape(msg + chr(10) + (r.get('replay') or ''))}</failure>"
            cases.append((f"broken.{r['model']}", what, body))
    else:
        name = f"nodelease {report['model']}/{report['scenario']} seeds {report['seeds']['start']}.." \
               f"{report['seeds']['start'] + report['seeds']['count'] - 1}"
        first: dict = {}
        for f in report["failures"]:
            first.setdefault(f["invariant"], f)
        for inv in list(report["invariants_checked"]) + sorted(report["not_judged"]):
            f = first.get(inv)
            if f is not None:
                text = f["explanation"] + ("\n\nreplay: " + f["replay"] if f.get("replay") else "") + \
                    ("\nshrink: " + f["shrink"] if f.get("shrink") else "")
                body = (f"<failure message={quoteattr('seed ' + str(f['seed']) + ': ' + f['message'])} "
                        f"type={quoteattr(inv)}>{escape(text)}</failure>")
            elif inv in report["not_judged"]:
                body = f"<skipped message={quoteattr(report['not_judged'][inv])}/>"
            else:
                body = ""
            cases.append((f"invariants.{inv}", inv, body))
        missed = report.get("coverage_missed") or []
        body = (f"<failure message={quoteattr('coverage points not reached: ' + ', '.join(missed))}/>"
                if missed else "")
        cases.append(("coverage.points", "every coverage point reached", body))
        tool = report.get("tool_failures") or []
        body = ""
        if tool:
            t = tool[0]
            text = t["traceback"] + ("\nreplay: " + t["replay"] if t.get("replay") else "")
            msg = f"{len(tool)} seeds raised; seed {t['seed']}: {t['message']}"
            body = f'<error message={quoteattr(msg)} type="tool failure">{escape(text)}</error>'
        cases.append(("tool.failures", "no exception in a model, a world or a checker", body))
    failures = sum(1 for _c, _n, b in cases if b.startswith("<failure"))
    errors = sum(1 for _c, _n, b in cases if b.startswith("<error"))
    skipped = sum(1 for _c, _n, b in cases if b.startswith("<skipped"))
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             f'<testsuites name="nodelease-check" tests="{len(cases)}" failures="{failures}" errors="{errors}">',
             f'<testsuite name={quoteattr(name)} tests="{len(cases)}" failures="{failures}" errors="{errors}" '
             f'skipped="{skipped}" time="{report.get("elapsed_s") or 0}">']
    # the margins as properties of the suite, for CI to plot or hold (`runner.py diff` holds them)
    props = []
    for mname, m in (report.get("margins") or {}).items():
        props += [(f"margin.{mname}.seeds", m["seeds"])]
        if m["seeds"]:
            props += [(f"margin.{mname}.min_ms", m["min"]), (f"margin.{mname}.seed", m["seed"])]
            props += [(f"margin.{mname}.replay", m["replay"])] if m.get("replay") else []
    props += confidence_properties(report)
    props += cost.junit_properties(report)
    if props:
        lines.append("<properties>")
        lines += [f'<property name={quoteattr(k)} value={quoteattr(str(v))}/>' for k, v in props]
        lines.append("</properties>")
    for classname, case, body in cases:
        lines.append(f'<testcase classname={quoteattr(classname)} name={quoteattr(case)}>{body}</testcase>')
    lines += ["</testsuite>", "</testsuites>"]
    return "\n".join(lines) + "\n"


def confidence_properties(report: dict) -> list[tuple[str, object]]:
    """Every figure that varies by seed with its 95 % bounds, as JUnit properties (checkers/confidence.py): the
    violations per seed, each failing invariant's, the failover's p50 and p99, each coverage point's share and
    each known finding's; for a `broken` report, each model's catch rate."""
    props: list[tuple[str, object]] = []

    def add_share(prefix: str, sh: dict, count: str = "seeds") -> None:
        props.append((f"{prefix}.{count}", sh["k"]))
        if sh.get("interval") is not None:
            props.extend([(f"{prefix}.share", sh["share"]), (f"{prefix}.ci95_low", sh["interval"][0]),
                          (f"{prefix}.ci95_high", sh["interval"][1])])
        if "upper_one_sided" in sh:
            props.append((f"{prefix}.upper95_one_sided", sh["upper_one_sided"]))

    if report.get("kind") == "broken":
        from checkers.confidence import share

        for r in report["models"]:
            if r["model"] != "correct" and r.get("seeds_run"):
                add_share(f"broken.{r['model']}", share(r["caught_seeds"], r["seeds_run"]), "caught_seeds")
        return props
    conf = report.get("confidence")
    if not conf:
        return props
    props.append(("confidence.level", conf["level"]))
    add_share("violations", conf["violations"], "failing_seeds")
    for inv, sh in conf["invariants"].items():
        add_share(f"invariant.{inv}", sh, "failing_seeds")
    f = report.get("failover_ms") or {}
    if f.get("count"):
        props.append(("failover.count", f["count"]))
        for q in ("p50", "p99"):
            props.append((f"failover.{q}_ms", f[q]))
            for side, v in zip(("low", "high"), f.get(f"{q}_ci95") or ()):
                if v is not None:
                    props.append((f"failover.{q}_ci95_{side}_ms", v))
    for point, sh in conf["coverage"].items():
        add_share(f"coverage.{point}", sh)
    for fid, sh in conf["findings"].items():
        add_share(f"finding.{fid}", sh)
    return props


def merge_reports(reports: list[dict], report_path: str) -> dict:
    """Shard reports of one campaign (`--shard K/N`), joined into the report of the unsharded run:
    the same digest, counts, failures, coverage and distributions. Raises UsageError if they are
    not the slices of one campaign."""
    from checkers.coverage import missed as missed_points
    from history.record import hash_version

    if not reports:
        raise UsageError("merge needs at least one report")
    parts = sorted(reports, key=lambda r: r["seeds"]["start"])
    first = parts[0]
    for r in parts:
        if hash_version(r) != hash_version(first):
            raise UsageError(f"the reports' history hashes are of different encodings (hash_version "
                             f"{hash_version(first)} and {hash_version(r)}): one was written by an "
                             f"older tool; run its seeds again with this one")
        for key in ("world", "model", "scenario", "params", "strict"):
            if r.get(key) != first.get(key):
                raise UsageError(f"the reports are of different campaigns ({key}: {first.get(key)!r} and "
                                 f"{r.get(key)!r})")
        if "raw" not in r or "tool_failures" not in r or r.get("kind") == "broken":
            raise UsageError("merge joins the reports of --shard runs of one model (a report without 'raw' "
                             "was written by an older version, or is not a campaign's)")
    end = first["seeds"]["start"]
    for r in parts:
        if r["seeds"]["start"] != end:
            raise UsageError(f"the shards do not join: seeds {end}.. are missing or run twice "
                             f"(a report starts at {r['seeds']['start']})")
        end += r["seeds"]["count"]
    shard = first.get("shard") or {}
    whole = shard.get("of")
    if whole and (whole["start"] != first["seeds"]["start"] or whole["start"] + whole["count"] != end):
        raise UsageError(f"the shards cover seeds {first['seeds']['start']}..{end - 1}, the campaign "
                         f"{whole['start']}..{whole['start'] + whole['count'] - 1}: a shard is missing")

    def summed(key: str) -> dict:
        out: dict = {}
        for r in parts:
            for k, v in r[key].items():
                out[k] = out.get(k, 0) + v
        return out

    hashes = [h for r in parts for h in r["seed_hashes"]]
    failover = [v for r in parts for v in r["raw"]["failover_ms"]]
    margins = [v for r in parts for v in r["raw"]["takeover_margin_ms"]]
    slack = MarginSums(report_path)
    for r in parts:
        slack.join(r.get("margins") or {})
    failures = []
    for r in parts:
        for f in r["failures"]:
            f = dict(f)
            if f.get("replay"):
                f["replay"] = replay_command(report_path, f["seed"])
            if f.get("shrink"):
                f["shrink"] = shrink_command(report_path, f["seed"], f["invariant"])
            failures.append(f)
    tool_failures = []
    for r in parts:
        for f in r["tool_failures"]:
            tool_failures.append(dict(f, replay=replay_command(report_path, f["seed"])) if f.get("replay") else f)
    finding_seeds: dict = {}
    found: dict = {}
    for r in parts:
        for fid, block in r["protocol_findings"].items():
            finding_seeds.setdefault(fid, []).extend(r["raw"]["finding_seeds"].get(fid, []))
            if fid not in found and (block.get("first") or {}).get("replay"):
                block = dict(block, first=dict(block["first"], replay=replay_command(report_path, block["first"]["seed"])))
            entry = found.setdefault(fid, dict(block, invariants=[]))
            entry["invariants"] += [i for i in block["invariants"] if i not in entry["invariants"]]
    for fid, entry in found.items():
        entry["seeds"] = len(finding_seeds[fid])
    coverage = summed("coverage")
    seeds_run = len(hashes)
    missed = missed_points(coverage, first["scenario"], seeds_run)
    families, bounds = {}, {}
    for r in parts:
        for k, v in r["configurations"]["families"].items():
            families[k] = families.get(k, 0) + v
        for k, v in r["configurations"]["on_bounds"].items():
            bounds[k] = bounds.get(k, 0) + v
    not_judged = {}
    for r in parts:
        not_judged.update(r["not_judged"])
    start = first["seeds"]["start"]
    elapsed = sum(r["elapsed_s"] for r in parts)
    report = dict(first)
    report.pop("shard", None)
    report.update({
        "seeds": {"start": start, "count": seeds_run},
        "configurations": {"families": dict(sorted(families.items())), "on_bounds": dict(sorted(bounds.items()))},
        "seed_params": [p for r in parts for p in r["seed_params"]],
        "passed": not failures and not missed and not tool_failures,
        "counts": dict(sorted(summed("counts").items())),
        "rules_hit": dict(sorted(summed("rules_hit").items(), key=lambda kv: _rule_order(kv[0]))),
        "invariants_checked": [inv for inv in invariants_checked() if inv not in not_judged],
        "not_judged": dict(sorted(not_judged.items())),
        "failover_ms": distribution(failover),
        "protocol_findings": {fid: found[fid] for fid in sorted(found, key=lambda f: int(f.split("-")[1]))},
        "absorbed": {fid: sum((r.get("absorbed") or {}).get(fid, 0) for r in parts) for fid in _absorbed(())},
        "coverage": coverage,
        "coverage_missed": missed,
        "takeover_margin_ms": _margins(margins),
        "margins": slack.block(),
        "failures": failures,
        "failing_seeds": [s for r in parts for s in r["failing_seeds"]],
        "tool_failures": tool_failures,
        "history_digest": digest(hashes),
        "seed_hashes": hashes,
        # (the shards' own, if they agree; [] says nothing is known of them)
        "fault_kinds": (parts[0].get("fault_kinds") or []) if all(
            r.get("fault_kinds") == parts[0].get("fault_kinds") for r in parts) else [],
        "raw": {"failover_ms": failover, "takeover_margin_ms": margins, "finding_seeds": finding_seeds},
        "elapsed_s": round(elapsed, 3),
        "seeds_per_s": round(seeds_run / elapsed, 1) if elapsed > 0 else None,
        "merged_from": [{"seeds": r["seeds"], "shard": r.get("shard"), "git_commit": r.get("git_commit")}
                        for r in parts],
        "command": command_line(),
    })
    report.pop("pictures", None)
    report.pop("ledger", None)
    report.pop("cost", None)
    _add_cost(report, cost.join(r.get("ledger") for r in parts))
    report["confidence"] = confidence_block(report)
    return report


def _absorbed(per_seed) -> dict[str, int]:
    """finding id -> the violations its classifier explained, over the seeds (every finding listed)."""
    from checkers.findings import FINDINGS

    out = {f.id: 0 for f in FINDINGS}
    for found in per_seed:
        for fid, *_rest in found:
            out[fid] = out.get(fid, 0) + 1
    return out


def _findings_block(found: dict[str, dict]) -> dict:
    """finding id -> how many seeds showed it, under which invariants, the first, and what it is."""
    from checkers.findings import FINDINGS

    out = {}
    for f in FINDINGS:
        entry = found.get(f.id)
        if entry is not None:
            out[f.id] = {"title": f.title, "seeds": len(entry["seeds"]), "invariants": entry["invariants"],
                         "first": entry["first"], "reproduction": f.reproduction}
    return out


def _margins(values: list[int]) -> dict:
    """Deadline races: how close the takeovers came to the owners' last valid instants."""
    d = distribution(values)
    d["min"] = min(values) if values else None
    buckets = {"< 0 (owner lease still valid)": 0, "0 .. 0.25 s": 0, "0.25 .. 1 s": 0, "1 .. 3 s": 0, ">= 3 s": 0}
    for v in values:
        k = ("< 0 (owner lease still valid)" if v < 0 else "0 .. 0.25 s" if v < 250 else "0.25 .. 1 s" if v < 1_000
             else "1 .. 3 s" if v < 3_000 else ">= 3 s")
        buckets[k] += 1
    d["histogram"] = buckets
    return d


# the histogram of a margin's per-seed values: fixed buckets, so that shard reports add up (merge)
MARGIN_BUCKETS = ((0, "< 0 (broken)"), (10, "0 .. 10 ms"), (100, "10 .. 100 ms"), (1_000, "0.1 .. 1 s"),
                  (10_000, "1 .. 10 s"), (None, ">= 10 s"))


def margin_bucket(value: int) -> str:
    """The histogram bucket of a margin's value (ms)."""
    return next(label for edge, label in MARGIN_BUCKETS if edge is None or value < edge)


class MarginSums:
    """Every margin summed over seeds (checkers/margins.py: each seed's least slack to a timing rule's
    bound): how many seeds had its situation, the least value and the first seed reaching it (with the
    command that replays it), and a histogram of fixed buckets. Built from seeds (`add`, in seed order) or
    from the blocks of shard reports (`join`, in seed order): the same block either way."""

    def __init__(self, report_path: str | None) -> None:
        from checkers.margins import MARGINS

        self.report_path = report_path
        self.sums: dict[str, dict] = {name: self._empty(name) for name in MARGINS}

    def _empty(self, name: str) -> dict:
        from checkers import registry

        m = next((m for m in registry.margins() if m.name == name), None)
        return {"invariant": m.invariant if m else None, "rules": list(m.rules) if m else [],
                "unit": m.unit if m else "ms", "seeds": 0, "min": None, "seed": None, "replay": None,
                "histogram": {label: 0 for _edge, label in MARGIN_BUCKETS}, "explained": {}}

    def add(self, seed: int, values: dict, explained: dict | None = None) -> None:
        for name, v in values.items():
            entry = self.sums.get(name) or self.sums.setdefault(name, self._empty(name))
            entry["seeds"] += 1
            entry["histogram"][margin_bucket(v)] += 1
            if entry["min"] is None or v < entry["min"]:
                entry["min"], entry["seed"] = v, seed
        for name, (_v, fid) in (explained or {}).items():
            entry = self.sums.get(name) or self.sums.setdefault(name, self._empty(name))
            entry["explained"][fid] = entry["explained"].get(fid, 0) + 1

    def join(self, block: dict) -> None:
        for name, other in block.items():
            entry = self.sums.get(name) or self.sums.setdefault(name, self._empty(name))
            entry["seeds"] += other["seeds"]
            for label, n in other["histogram"].items():
                entry["histogram"][label] = entry["histogram"].get(label, 0) + n
            for fid, n in (other.get("explained") or {}).items():
                entry["explained"][fid] = entry["explained"].get(fid, 0) + n
            if other["min"] is not None and (entry["min"] is None or other["min"] < entry["min"]):
                entry["min"], entry["seed"] = other["min"], other["seed"]

    def block(self) -> dict:
        """name -> its sums, in MARGINS order (each with the replay command of its seed)."""
        for entry in self.sums.values():
            entry["replay"] = (replay_command(self.report_path, entry["seed"])
                               if self.report_path and entry["seed"] is not None else None)
        return self.sums


def distribution(values: list[int]) -> dict:
    """count, p50, p99, max (nearest-rank percentiles) of a list of ms, and each percentile's 95 % interval
    (`p50_ci95`, `p99_ci95`: two order statistics, their ranks from the binomial, checkers/confidence.py; a
    side the values cannot bound is None)."""
    if not values:
        return {"count": 0, "p50": None, "p99": None, "max": None, "p50_ci95": None, "p99_ci95": None}
    from checkers.confidence import quantile_ranks

    v = sorted(values)

    def rank(q: float) -> int:
        return v[max(0, -(-len(v) * q // 100) - 1)]

    def interval(q: float) -> list:
        low, high = quantile_ranks(len(v), q)
        return [None if low is None else v[low - 1], None if high is None else v[high - 1]]

    return {"count": len(v), "p50": rank(50), "p99": rank(99), "max": v[-1], "p50_ci95": interval(0.5),
            "p99_ci95": interval(0.99)}


def confidence_block(report: dict) -> dict:
    """How sure each figure of a campaign that varies by seed is, at 95 % (checkers/confidence.py): the
    per-seed chance of a violation (0 in n: the one-sided bound 1 - 0.05^(1/n), about 3/n; k in n: the
    Clopper-Pearson interval), each failing invariant's, each coverage point's share and each known finding's,
    over the seeds judged (those that raised are not). Over the seed distribution this campaign's scenario
    draws, not over real deployments (docs/guide.md)."""
    from checkers.confidence import LEVEL, share

    c = report["counts"]
    n = c.get("seeds_run", 0) - c.get("tool_failing_seeds", 0)
    raised = {t["seed"] for t in report.get("tool_failures") or []}
    by_inv: dict[str, set] = {}
    for f in report["failures"]:
        if f["seed"] not in raised:
            by_inv.setdefault(f["invariant"], set()).add(f["seed"])
    failing = len(set(report.get("failing_seeds") or ()) - raised)
    return {"level": LEVEL, "seeds": n,
            "over": "the seeds this campaign drew from its scenario's distribution; not real deployments",
            "violations": share(failing, n),
            "invariants": {inv: share(len(seeds), n) for inv, seeds in sorted(by_inv.items())},
            "coverage": {k: share(v, n) for k, v in (report.get("coverage") or {}).items()},
            "findings": {fid: share(e["seeds"], n) for fid, e in (report.get("protocol_findings") or {}).items()}}


def rate_text(x: float) -> str:
    """A chance per seed for a person: a percentage, or in powers of ten when small (1.5e-04)."""
    return f"{100 * x:.3g} %" if x >= 1e-3 else f"{x:.2g}"


def share_text(s: dict) -> str:
    """k of n with its 95 % interval (a share block of checkers.confidence.share), for a person."""
    if not s or s.get("interval") is None:
        return "no seed judged"
    lo, hi = s["interval"]
    return f"{rate_text(s['share'])} of {s['n']} seeds, 95 % interval {rate_text(lo)} .. {rate_text(hi)}"


def violations_text(conf: dict) -> str:
    """The per-seed chance of a violation, as a bound (0 in n) or an interval, and what it is over."""
    v = conf["violations"]
    if v["n"] <= 0:
        return "no seed judged"
    if v["k"] == 0:
        return (f"0 in {v['n']} seeds: under {rate_text(v['upper_one_sided'])} per seed at 95 % (one-sided; "
                f"3/n = {rate_text(v['rule_of_three'])}), over this scenario's seed draw")
    lo, hi = v["interval"]
    return (f"{v['k']} in {v['n']} seeds: {rate_text(v['share'])} per seed, 95 % interval {rate_text(lo)} .. "
            f"{rate_text(hi)}")


def _rule_order(rule: str):
    prefix, _, n = rule.partition("-")
    return (prefix, int(n) if n.isdigit() else 0)


# --- for people ---------------------------------------------------------------------------------


def _what_ran(report: dict) -> str:
    if report["world"] == "s3":
        s = report["s3"]
        return (f"model {report['model']}, scenario {report['scenario']}, world s3 ({s['endpoint']}, bucket "
                f"{s['bucket']}, prefix {s['prefix']}, run {s['run_id']})")
    first = report["seeds"]["start"]
    return (f"model {report['model']}, scenario {report['scenario']}, seeds {first}.."
            f"{first + report['seeds']['count'] - 1}")


def assess(report: dict) -> tuple[Exit, str | None]:
    """The exit status a run's report ends it with, and why it did not pass (None when it did): the one
    reading of a report as a verdict. A signal outranks all (the run has no verdict); a tool failure
    outranks a violation (seeds that raised were not judged, so the run has no verdict to trust; its
    violations are still in the report and its summary, listed apart); a violation outranks the
    environment; and a run that judged no acquisition did no work to pass on (issue 50)."""
    from house.errors import SIGNAL_STATUS

    partial = report.get("partial")
    if partial:
        name = partial.get("signal", "SIGINT")
        of = (partial.get("of") or {}).get("count")
        return (SIGNAL_STATUS.get(name, Exit.INTERRUPTED),
                f"interrupted by {name} after {report['seeds']['count']} seeds" + (f" of {of}" if of else "")
                + ": no verdict")
    tool = report.get("tool_failures") or []
    if tool:
        return Exit.TOOL, (f"the tool failed in {len(tool)} seeds (an exception in a model, a world or a "
                           f"checker): no verdict")
    failures = report.get("failures") or []
    if failures:
        invariants = sorted({f["invariant"] for f in failures})
        return Exit.VIOLATION, (f"{len({f['seed'] for f in failures})} violating seeds "
                                f"({', '.join(invariants)})")
    missed = report.get("coverage_missed") or []
    if missed:
        return Exit.VIOLATION, f"coverage: {len(missed)} points never reached ({', '.join(missed)})"
    if report.get("environment_failure"):
        return Exit.ENVIRONMENT, f"the environment failed: {report['environment_failure']}"
    counts = report.get("counts") or {}
    if not counts.get("acquisitions"):
        n = counts.get("seeds_run", 0)
        return Exit.ENVIRONMENT, (f"no work: no acquisition was judged in {n} seed{'s' if n != 1 else ''} "
                                  f"(a pass needs something judged)")
    return Exit.PASSED, None


def settle(report: dict) -> Exit:
    """The report's verdict written into it: `passed` (true only with exit status 0), `exit_status`, and
    `why_not_passed` (null when it passed). Returns the status."""
    status, why = assess(report)
    report["passed"] = status == Exit.PASSED
    report["exit_status"] = int(status)
    report["why_not_passed"] = why
    return status


def exit_status(report: dict) -> Exit:
    """The exit status a run's report ends it with (`assess`)."""
    return assess(report)[0]


def verdict(report: dict) -> str:
    """PASSED, FAILED (n violating seeds), TOOL FAILED, ENVIRONMENT FAILED or INTERRUPTED: one word for
    the run."""
    status, _why = assess(report)
    partial = report.get("partial")
    if partial:
        of = partial["of"]
        return (f"INTERRUPTED by {partial['signal']} ({report['seeds']['count']} of {of['count']} seeds run; "
                f"{report['counts'].get('failing_seeds', 0)} violating so far)")
    if status == Exit.TOOL:
        violating = report["counts"].get("failing_seeds", 0)
        return (f"TOOL FAILED ({len(report['tool_failures'])} seeds raised"
                + (f"; {violating} violating seeds)" if violating else ")"))
    if status == Exit.VIOLATION and not report["failures"]:
        return f"FAILED (coverage: {len(report['coverage_missed'])} points never reached)"
    if status == Exit.VIOLATION:
        return f"FAILED ({report['counts'].get('failing_seeds', 0)} violating seeds)"
    if status == Exit.ENVIRONMENT:
        return "ENVIRONMENT FAILED" if report.get("environment_failure") else "NO WORK JUDGED"
    return "PASSED"


def _figures(report: dict) -> list[tuple[str, str]]:
    """(measure, value) rows shared by the summary and the console table."""
    c = report["counts"]
    n = max(c.get("seeds_run", 0), 1)
    rows = []
    if report["world"] == "s3":
        s = report["s3"]
        rows += [("endpoint", f"{s['endpoint']} bucket {s['bucket']}"), ("prefix", s["prefix"]),
                 ("run", f"{s['run_id']}, fault plan seed {report['seeds']['start']}"),
                 ("elapsed", f"{report['elapsed_s']} s of {s['duration_s']} s"),
                 ("nodes, actors", f"{s['nodes']}, {s['actors']}"),
                 ("processes", str(c.get("processes", 0))),
                 ("bucket requests", str(c.get("bucket_requests", 0))),
                 ("acquisitions", str(c.get("acquisitions", 0))),
                 ("client requests", str(c.get("client_requests", 0))),
                 ("history events", str(c.get("events", 0)))]
        odd = {k[len("outcome "):]: v for k, v in c.items() if k.startswith("outcome ")}
        rows.append(("unexpected outcomes", ", ".join(f"{k} {v}" for k, v in odd.items()) if odd else "none"))
        if "cleanup_deleted" in s:
            rows.append(("cleanup", f"{s['cleanup_deleted']} keys deleted"))
        if "stalls" in s:
            rows.append(("endpoint stalls", stalls_text(s)))
    else:
        rows += [("seeds", f"{c.get('seeds_run', 0)} ({report['seeds']['start']}.."
                           f"{report['seeds']['start'] + report['seeds']['count'] - 1})"),
                 ("elapsed", f"{report['elapsed_s']} s"),
                 ("seeds/s", f"{report['seeds_per_s']} ({report['workers']} workers; {report.get('compiled', '?')})"),
                 ("history events / seed", f"{c.get('events', 0) / n:.0f}"),
                 ("kernel events / seed", f"{c.get('kernel_events', 0) / n:.0f}"),
                 ("bucket requests / seed", f"{c.get('bucket_requests', 0) / n:.0f}"),
                 ("acquisitions / seed", f"{c.get('acquisitions', 0) / n:.1f}")]
    partial = report.get("partial")
    if partial:
        of = partial["of"]
        rows.append(("PARTIAL", f"stopped by {partial['signal']}: seeds {report['seeds']['start']}.."
                                f"{report['seeds']['start'] + report['seeds']['count'] - 1} of {of['start']}.."
                                f"{of['start'] + of['count'] - 1} run" + (f"; resume: {partial['resume']}" if partial.get("resume") else "")))
    conf = report.get("configurations") or {}
    if conf.get("families"):
        rows.append(("configurations", ", ".join(f"{k} {v}" for k, v in conf["families"].items())
                     + "; exactly on " + (", ".join(f"{k} {v}" for k, v in conf["on_bounds"].items()) or "no bound")))
    if report.get("params"):
        rows.append(("timing" if report["world"] == "s3" else "pinned",
                     ", ".join(f"{k}={v}" for k, v in report["params"].items())))
    rows.append(("invariants checked", ", ".join(report["invariants_checked"])))
    for inv, why in report.get("not_judged", {}).items():
        rows.append((f"{inv} not judged", why))
    rows.append(("failover (INV-7)", _failover_text(report.get("failover_ms") or {})))
    rows += cost.figure_rows(report)
    conf = report.get("confidence") or {}
    if conf.get("violations"):
        rows.append(("violations per seed", violations_text(conf)))
    rows.append(("acts judged / seed", f"{c.get('acts', 0) / n:.0f} (requests served, writes acknowledged)"))
    # every known finding, with what its classifier absorbed: a real bug taken for a finding would show here
    found = report.get("protocol_findings") or {}
    absorbed = report.get("absorbed") or {}
    for fid in sorted(set(absorbed) | set(found), key=lambda f: (len(f), f)):
        entry = found.get(fid)
        if entry is None:
            rows.append((f"finding {fid}", "none absorbed"))
            continue
        among = (conf.get("findings") or {}).get(fid)
        rows.append((f"finding {fid}", f"{absorbed.get(fid, 0)} violations absorbed in {entry['seeds']} seeds "
                                         + (f"({share_text(among)}) " if among else "")
                                         + f"({', '.join(entry['invariants'])}), first seed {entry['first']['seed']}: "
                                         f"{entry['title']}"))
    rows.append(("blip runs judged (INV-9)", str(c.get("blip_runs_judged", 0))))
    rows.append(("convergence judged (CONV-1)", f"{c.get('convergence_judged', 0)} blockers (processes that must "
                                                "settle, requests that must be answered)"))
    m = report.get("takeover_margin_ms") or {}
    if m.get("count"):
        rows.append(("deadline races", f"{m['count']} takeovers, margin min {m['min']} ms, p50 {m['p50']} ms; "
                     + ", ".join(f"{k}: {v}" for k, v in m["histogram"].items())))
    cov = report.get("coverage") or {}
    if cov:
        hit = sum(1 for v in cov.values() if v)
        missed = report.get("coverage_missed") or []
        rows.append(("coverage", f"{hit} of {len(cov)} points reached"
                     + (f"; NEVER: {', '.join(missed)}" if missed else "")))
    if report.get("environment_failure"):
        rows.append(("environment", report["environment_failure"]))
    if report.get("why_not_passed"):
        rows.append(("why not passed", report["why_not_passed"]))
    rows.append(("violating seeds", str(c.get("failing_seeds", 0))))
    if report.get("tool_failures"):
        rows.append(("TOOL FAILURES", f"{len(report['tool_failures'])} seeds raised (not judged; exit 4)"))
    return rows


def stalls_text(s3: dict) -> str:
    """The stalls of a real-S3 run's endpoint, for a person (report["s3"]["stalls"])."""
    stalls = s3.get("stalls") or []
    bound = f"the bound, ttl + grace, is {s3['stall_bound_s']:g} s"
    if not stalls:
        return f"none ({bound})"
    return (f"{len(stalls)}: " + "; ".join(f"{x['span_s']:.1f} s from {x['from_s']:.1f} s, {x['requests_held']} "
                                          f"requests held" + (" (in the quiet phase)" if x["in_quiet_phase"] else "")
                                          for x in stalls[:5])
            + ("; ..." if len(stalls) > 5 else "") + f" ({bound})")


def summary_text(report: dict) -> str:
    """The report for a person: what ran, what held, what failed and how to replay it."""
    lines = [f"{_what_ran(report)}: {verdict(report)}"]
    lines += [f"  {k}: {v}" for k, v in _figures(report)]
    lines.append("  rules hit: " + ", ".join(f"{k} {v}" for k, v in report["rules_hit"].items()))
    if report.get("coverage"):
        from checkers.coverage import POINTS

        lines.append("  coverage (seeds reaching each point; its share with a 95 % interval):")
        shares = (report.get("confidence") or {}).get("coverage") or {}
        for k, v in report["coverage"].items():
            lines.append(f"    {v:>7}  {k}: {POINTS.get(k, '')}" + (f" [{share_text(shares[k])}]" if k in shares else ""))
    margins = report.get("margins") or {}
    if margins:
        lines.append("  margins (each timing rule's least slack to its bound over the seeds, ms; negative: broken):")
        for name, m in margins.items():
            lines.append(f"    {name} ({m['invariant']}; {', '.join(m['rules'])}): " + _margin_text(m))
            if m.get("replay"):
                lines.append(f"      its seed: {m['replay']}")
    lines.append(f"  history digest: {report['history_digest']}")
    by_inv: dict[str, list[int]] = {}
    for f in report["failures"]:
        by_inv.setdefault(f["invariant"], []).append(f["seed"])
    per_inv = (report.get("confidence") or {}).get("invariants") or {}
    for inv, seeds in by_inv.items():
        lines.append(f"  {inv}: {len(set(seeds))} seeds, first {min(seeds)}"
                     + (f" ({share_text(per_inv[inv])})" if inv in per_inv else ""))
    if report["failures"]:
        first = report["failures"][0]
        lines += ["", f"first failure, seed {first['seed']}:", first["explanation"]]
        if first["replay"]:
            lines += ["", f"replay: {first['replay']}"]
            lines += [f"shrink: {first['shrink']}"] if first.get("shrink") else []
        for inv, picture in (report.get("pictures") or {}).items():
            lines.append(f"picture of {inv}: {picture}")
    tool = report.get("tool_failures") or []
    if tool:
        first = tool[0]
        lines += ["", f"tool failures (an exception in a model, a world or a checker: a bug of the tool, not a "
                      f"verdict): {len(tool)} seeds, " + ", ".join(str(t["seed"]) for t in tool[:20])
                  + (", ..." if len(tool) > 20 else ""),
                  f"first, seed {first['seed']}:", first["traceback"].rstrip()]
        if first["replay"]:
            lines += ["", f"replay: {first['replay']}"]
    return "\n".join(lines) + "\n"


def _margin_text(m: dict) -> str:
    """One margin's sums for a person: its minimum and seed, the seeds measured, the histogram."""
    if not m["seeds"]:
        return "no seed had its situation" + _explained_text(m)
    hist = ", ".join(f"{k} {v}" for k, v in m["histogram"].items() if v)
    return f"min {m['min']} ms (seed {m['seed']}), {m['seeds']} seeds measured; {hist}" + _explained_text(m)


def _explained_text(m: dict) -> str:
    """The seeds a known finding explains, set apart from a margin's sums."""
    ex = m.get("explained") or {}
    return (f" (and {sum(ex.values())} seeds broken as known findings explain, not counted: "
            + ", ".join(f"{k} {v}" for k, v in sorted(ex.items())) + ")") if ex else ""


def _failover_text(d: dict) -> str:
    if not d.get("count"):
        return "no failover measured"
    return (f"{d['count']} measured, p50 {d['p50'] / 1000:.1f} s{_ci_s(d.get('p50_ci95'))}, p99 "
            f"{d['p99'] / 1000:.1f} s{_ci_s(d.get('p99_ci95'))}, max {d['max'] / 1000:.1f} s")


def _ci_s(iv) -> str:
    """ ' (95 % 16.9 .. 17.5 s)': an order-statistic interval in ms, for a person ('?' for a side the values
    cannot bound); empty for a report written before intervals were."""
    if not iv:
        return ""
    lo, hi = ("?" if x is None else f"{x / 1000:.1f}" for x in iv)
    return f" (95 % {lo} .. {hi} s)"


def print_summary(console, report: dict, report_path: str) -> None:
    from rich.table import Table

    where = report["world"] if report["world"] == "s3" else report["scenario"]
    t = Table(title=f"{report['model']} / {where}", show_header=True)
    t.add_column("measure")
    t.add_column("value", justify="right")
    for k, v in _figures(report):
        t.add_row(k, v)
    v = verdict(report)
    t.add_row("result", f"[green]{v}" if v == "PASSED" else f"[red]{v}")
    console.print(t)
    # a guided search's report numbers its runs where a campaign's names seeds (nodelease/guided.py)
    unit = "run" if report.get("guided") else "seed"
    margins = {k: m for k, m in (report.get("margins") or {}).items() if m["seeds"]}
    if margins:
        mt = Table(title="margins: each timing rule's least slack to its bound (negative: broken)", show_header=True)
        for col, justify in (("margin", "left"), ("invariant", "left"), ("min ms", "right"), (unit, "right"),
                             (unit + "s", "right"), (f"histogram of the {unit}s' values", "left")):
            mt.add_column(col, justify=justify)
        for name, m in margins.items():
            hist = ", ".join(f"{k} {v}" for k, v in m["histogram"].items() if v)
            ex = m.get("explained") or {}
            hist += ("; known findings: " + ", ".join(f"{k} {v}" for k, v in sorted(ex.items()))) if ex else ""
            mt.add_row(name, m["invariant"], f"[red]{m['min']}" if m["min"] < 0 else str(m["min"]), str(m["seed"]),
                       str(m["seeds"]), hist)
        console.print(mt)
        if unit == "seed" and any(m.get("replay") for m in margins.values()):
            console.print(f"  a margin's seed: {replay_command(report_path, None)} --seed SEED", highlight=False)
    seen = set()
    for f in report["failures"]:
        if f["invariant"] in seen:
            continue
        seen.add(f["invariant"])
        console.print(f"[red]{f['invariant']}[/red] {unit} {f['seed']}: {f['message']}", highlight=False)
        if f["replay"]:
            console.print(f"  replay: {f['replay']}", highlight=False)
        if f.get("shrink"):
            console.print(f"  shrink: {f['shrink']}", highlight=False)
        picture = (report.get("pictures") or {}).get(f["invariant"])
        if picture:
            console.print(f"  picture: {picture}", highlight=False)
    tool = report.get("tool_failures") or []
    if tool:
        first = tool[0]
        console.print(f"[red]TOOL FAILURE[/red] in {len(tool)} {unit}s (a bug of the tool, not a verdict); first, "
                      f"{unit} {first['seed']}: {first['message']}", highlight=False)
        if first["replay"]:
            console.print(f"  replay: {first['replay']}", highlight=False)
    console.print(f"history digest {report['history_digest']}", highlight=False)
    stem = os.path.splitext(report_path)[0]
    also = f"summary: {os.path.relpath(stem + '.txt')}"
    if os.path.exists(stem + ".timeline.txt"):
        also += f", timeline: {os.path.relpath(stem + '.timeline.txt')}"
    print(f"report: {os.path.relpath(report_path)} ({also})")
