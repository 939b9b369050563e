"""`check-trace DIR`: traces of a real implementation judged by the same checkers (issue 49).

Loads every trace of DIR (traces/load.py), rebuilds the bucket's facts, judges the extreme admissible
placements (traces/judge.py) and says, per invariant, violated, possibly violated (the placements and
the interval of true time) or held; then replays each process's inputs through the model
(traces/conform.py) and names the first effect the implementation did not produce. Exit 0: nothing
violated; 1: an invariant violated in every placement (with --strict: also one possibly violated, or a
divergence from the model); 2: bad input (a trace the schema refuses, a missing directory, an output
file that exists already: nothing is overwritten).
"""

from __future__ import annotations

import json
import os
import time

from house.errors import Exit, UsageError

from . import conform
from .judge import TraceVerdict, judge
from .load import TraceSet, load


def options(p) -> None:
    p.add_argument("directory", metavar="DIR", help="a directory of traces, one NDJSON file per process "
                                                   "(docs/traces.md)")
    p.add_argument("--access-log", metavar="FILE", default=None,
                   help="the S3 server's access log (the simple format of docs/traces.md): adds the writes whose "
                        "answers were lost and that no later request showed")
    p.add_argument("--faults", metavar="FILE", default=None,
                   help="the faults the environment made (docs/traces.md, the faults log): the processes' pauses, "
                        "which the checkers excuse as they excuse the simulated worlds' (a paused process sends nothing)")
    p.add_argument("--max-skew-ms", type=_ms, default=None, metavar="MS",
                   help="the clock bound to judge with (default: the traces' own max_skew_ms)")
    p.add_argument("--strict", action="store_true",
                   help="fail (exit 1) on a possibly violated invariant and on a divergence from the model too")
    p.add_argument("--no-conform", action="store_true", help="skip the conformance replay through the model")
    p.add_argument("--report", metavar="FILE", default=None, help="write the verdicts as JSON (never overwritten)")
    p.add_argument("--html", metavar="FILE", default=None,
                   help="draw the first violation (or possible one) as an HTML page, with its intervals (never overwritten)")


def _ms(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise UsageError(f"--max-skew-ms wants a whole number of ms, got {text!r}") from None
    if v < 0:
        raise UsageError(f"--max-skew-ms must not be negative, got {v}")
    return v


def _fresh(path: str | None, what: str) -> None:
    if path is not None and os.path.exists(path):
        raise UsageError(f"{what} {path} exists already: choose another name (nothing is overwritten)")


def command(console, args) -> int:
    _fresh(args.report, "--report")
    _fresh(args.html, "--html")
    t0 = time.perf_counter()
    ts = load(args.directory, args.access_log, args.faults)
    if args.max_skew_ms is not None:
        from dataclasses import replace

        from model.params import ParamsError, validate

        try:
            ts.params = validate(replace(ts.params, max_skew_ms=args.max_skew_ms))
        except ParamsError as e:
            raise UsageError(f"--max-skew-ms {args.max_skew_ms}: {e}") from None
    v = judge(ts)
    t_judge = time.perf_counter() - t0
    divergences = [] if args.no_conform else conform.replay_all(ts, v.bucket, v.placements[0])
    seconds = time.perf_counter() - t0
    _print(console, ts, v, divergences, seconds, t_judge)
    failed = v.failed(args.strict) or args.strict and any(d.divergence for d in divergences)
    if args.report:
        _write(args.report, json.dumps(_json(ts, v, divergences, seconds), indent=1) + "\n")
        console.print(f"report: {args.report}")
    if args.html:
        _picture(args.html, v)
        console.print(f"picture: {args.html}")
    if failed:
        console.print(f"repro: python runner.py check-trace {args.directory}"
                      + (f" --access-log {args.access_log}" if args.access_log else "")
                      + (f" --faults {args.faults}" if args.faults else "")
                      + (" --strict" if args.strict else ""))
    return int(Exit.VIOLATION if failed else Exit.PASSED)


def _write(path: str, text: str) -> None:
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "x", encoding="utf-8") as f:
            f.write(text)
    except FileExistsError:
        raise UsageError(f"{path} exists already: choose another name (nothing is overwritten)") from None
    except OSError as e:
        raise UsageError(f"cannot write {path}: {e.strerror}") from None


def _where(ts: TraceSet, ref) -> str:
    p, line = ref
    name = os.path.basename(ts.procs[p].path)
    return f"{name}:{line}" if line is not None else f"{name}:end"


def _span(ts: TraceSet, lo: int, hi: int) -> str:
    return f"[{lo / 1000:.3f} s, {hi / 1000:.3f} s]"


def _print(console, ts: TraceSet, v: TraceVerdict, divergences, seconds: float, t_judge: float) -> None:
    out = console.print
    who = ", ".join(f"{pt.node_id}/{pt.instance} on {pt.machine}" for pt in ts.procs)
    out(f"check-trace {ts.directory}: {len(ts.procs)} processes ({who}); {ts.lines:,} lines; "
        f"max_skew {ts.params.max_skew_ms} ms", markup=False, highlight=False)
    b = v.bucket
    versions = sum(1 for c in b.chains.values() for x in c if x.write is not None)
    lost = sum(1 for c in b.chains.values() for x in c if x.write is not None and x.write.status != "ok")
    out(f"bucket: {versions} writes took effect ({lost} of them with no answer to their writer, shown by later "
        f"requests{' or the access log' if ts.access else ''}); {len(b.not_landed)} did not, as far as the "
        f"traces show; ETags {'are' if b.md5_etags else 'are not'} the bodies' MD5", markup=False, highlight=False)
    for note in b.notes:
        out(f"  note: {note}", markup=False, highlight=False)
    if ts.faults_log is not None:
        paused = [f"{pt.node_id}/{pt.instance} {x.to_mono_ms - x.from_mono_ms} ms" for pt in ts.procs for x in pt.pauses]
        out(f"faults log: {len(paused)} pauses ({', '.join(paused) or 'none'})", markup=False, highlight=False)
    names = sorted({pl.name for pl in v.placements})
    out(f"placements judged: {len(v.placements)} ({'; '.join(names)}; each with writes at their earliest and "
        f"latest)" + (f"; not admissible: {'; '.join(v.skipped)}" if v.skipped else ""), markup=False,
        highlight=False)
    out("verdicts:", markup=False)
    for inv, st in v.status.items():
        out(f"  {inv:<9} {st}", markup=False, highlight=False)
        if st.startswith(("violated", "possibly", "explained")):
            for s in [s for s in v.seen if s.invariant == inv][:5]:
                every = len(s.placements) == len(v.placements)
                out(f"      {s.message}", markup=False, highlight=False)
                out(f"      lines {', '.join(_where(ts, r) for r in s.refs[:6])}; "
                    f"{'in every placement' if every else f'in {len(s.placements)} of {len(v.placements)} placements'}"
                    f"; its events in true time {_span(ts, s.lo_ms, s.hi_ms)}"
                    + (f" (for instance: {s.placements[0]})" if not every else ""), markup=False, highlight=False)
    if divergences:
        out("conformance replay (each process's inputs through model.step):", markup=False)
        for d in divergences:
            out(f"  {d.label}: {d.summary()}", markup=False, highlight=False)
    per_k = seconds / max(ts.lines, 1) * 1000
    out(f"checked in {seconds:.2f} s ({t_judge:.2f} s judging {len(v.placements)} placements): "
        f"{per_k * 1000:.0f} ms per 1,000 trace lines", markup=False, highlight=False)


def _json(ts: TraceSet, v: TraceVerdict, divergences, seconds: float) -> dict:
    return {
        "directory": ts.directory,
        "processes": [{"file": os.path.basename(pt.path), "node_id": pt.node_id, "instance": pt.instance,
                       "machine": pt.machine, "lines": 1 + len(pt.lines),
                       "pauses_mono_ms": [[x.from_mono_ms, x.to_mono_ms] for x in pt.pauses]} for pt in ts.procs],
        "params": ts.params.to_dict(),
        "placements": [pl.describe() for pl in v.placements],
        "not_admissible": v.skipped,
        "verdicts": v.status,
        "violations": [{"invariant": s.invariant, "message": s.message, "lines": [_where(ts, r) for r in s.refs],
                        "placements": s.placements, "in_every_placement": len(s.placements) == len(v.placements),
                        "true_time_ms": [s.lo_ms, s.hi_ms], "finding": s.finding} for s in v.seen],
        "conformance": [d.to_json() for d in divergences],
        "seconds": round(seconds, 3),
        "lines": ts.lines,
    }


def _picture(path: str, v: TraceVerdict) -> None:
    import html

    from counterexamples.picture import render
    from history import Violation

    order = {"violated": 0, "possibly violated": 1}
    seen = sorted(v.seen, key=lambda s: (order.get(v.status.get(s.invariant, ""), 2), s.invariant))
    if seen:
        s = seen[0]
        page = render(s.history, Violation(s.invariant, s.message, s.events))
    else:
        page = render(v.histories[0], None)
    rows = "".join(
        f"<tr><td>{html.escape(x.invariant)}</td><td>{html.escape(v.status.get(x.invariant, ''))}</td>"
        f"<td>[{x.lo_ms / 1000:.3f} s, {x.hi_ms / 1000:.3f} s]</td><td>{len(x.placements)} of {len(v.placements)}</td>"
        f"<td>{html.escape(x.message)}</td></tr>" for x in seen)
    box = ("<section style='font:13px sans-serif;margin:8px'><h3>Verdicts over the admissible placements</h3>"
           "<p>Each clock is within max_skew of true time: the traces were judged at their extreme admissible "
           "timings. The drawing below is the first placement that shows the first violation; the table gives, "
           "for each violation, the interval of true time its events span over the placements that show it.</p>"
           "<table border=1 cellpadding=3 style='border-collapse:collapse'><tr><th>invariant</th><th>verdict</th>"
           "<th>true time</th><th>placements</th><th>what</th></tr>" + rows + "</table></section>")
    page = page.replace("<body>", "<body>" + box, 1)
    _write(path, page)
