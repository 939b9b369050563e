"""`diff OLD NEW`: two campaign reports compared, so that CI can hold a margin or a coverage share as
well as a verdict.

What is compared, OLD against NEW (both reports of `run` or `merge`, of the same seeds, scenario,
world and pinned timing; the models may differ, which is how a broken model is set against the
correct one):

- failures: the (seed, invariant) pairs that fail in NEW and not in OLD (new), and the reverse
  (gone); seeds whose run raised (tool failures), the same way;
- coverage: each point's share of the seeds that reached it, with its 95 % Clopper-Pearson interval
  (checkers/confidence.py); a point whose share moved by more than `--coverage-tol` percentage points is
  listed; one that fell that far and beyond chance (NEW's interval wholly below OLD's), or that OLD reached
  and NEW never does, is worse;
- margins (checkers/margins.py): each timing rule's least slack over the seeds; one that went negative (a
  rule broken: no chance about it), or one OLD measured and NEW no longer does, is worse; a minimum that
  shrank by more than `--margin-tol-ms` is worse when it shrank beyond chance: more of NEW's seeds fall
  below OLD's least value than two samples of one distribution would put there (the precedence test,
  p < 0.05; the seeds counted from NEW's histogram, so a lower bound: the test errs towards chance);
- findings: the seeds of each known finding (checkers/findings.py), compared seed by seed (the seeds only
  NEW shows it in against those only OLD does, a sign test: checkers/paired.py); a finding NEW shows more
  often beyond chance is worse (a bug that hides as a finding shows so); one NEW shows less often is
  "fewer" only by the same test, the other way round (`fewer_beyond_chance`; else "fewer, within chance":
  issue 44); reports without the seed lists compare counts, and any rise is worse;
- failover (INV-7): its p50 and p99, each with its 95 % order-statistic interval; slower beyond chance
  (NEW's interval wholly above OLD's) is worse;
- cost: seeds per second; reported, and worse only past `--cost-tol` percent (wall time on a shared
  machine is no verdict unless asked for).

Each row says which test decided it (`test`), and each line of what got worse names it. A new failure
is worse with no test at all: a violation is a fact, not an estimate.

Exit 0 when nothing got worse beyond the tolerances, 1 when something did, 2 on bad input (one line,
never a traceback): a file that is not a campaign's report, or reports of different seeds,
scenarios, worlds or timing, unless `--allow-different` (then each difference is a warning at the
top of the output). A table per part (rich) for people, or `--json` for machines.

This module reads reports (campaign/report.py's fields) and prints; it runs nothing.
"""

from __future__ import annotations

import json
import os

from house import inputs
from house.errors import Exit, UsageError

COVERAGE_TOL_PP = 1.0  # percentage points of the seeds a coverage point's share may fall
MARGIN_TOL_MS = 0  # ms a margin's minimum may shrink: the same seeds of the same world give the same minima
SHOWN = 10  # failures listed per side in the table (the JSON lists them all)
SIGNIFICANCE = 0.05  # a margin's shrink beyond chance: the precedence test's p below this

# which test decided a row (each row's `test`, each worse line's "(test: ...)")
NO_TEST = "none: a new violation is worse, no chance involved"
COVERAGE_APART = "Clopper-Pearson 95 % intervals apart"
COVERAGE_CHANCE = "within chance: 95 % intervals overlap"
COVERAGE_LOST = "reached in OLD, never in NEW: worse whatever its share"
MARGIN_GONE = "measured in OLD, never in NEW: worse whatever its share"
MARGIN_NEGATIVE = "negative: a rule broken, worse whatever the tolerance"
FINDING_SIGN = "sign test over the seeds only one report shows it in (p < 0.05)"
FINDING_COUNT = "count (a report lists no seeds): any rise"
FAILOVER_APART = "order-statistic 95 % intervals apart (NEW's wholly above OLD's)"
FAILOVER_CHANCE = "within chance: 95 % intervals overlap, or one has no end"


def options(p) -> None:
    p.add_argument("old", metavar="OLD", help="the report to compare against (a `run` or `merge` report, JSON)")
    p.add_argument("new", metavar="NEW", help="the report compared")
    p.add_argument("--coverage-tol", type=inputs.amount(0), default=COVERAGE_TOL_PP, metavar="PP",
                   help=f"a coverage point's share of the seeds may fall this many percentage points (default "
                        f"{COVERAGE_TOL_PP:g}); a larger fall is worse only beyond chance (their Clopper-Pearson "
                        f"intervals apart); "
                        f"a point OLD reached and NEW never does is worse whatever this says")
    p.add_argument("--margin-tol-ms", type=inputs.count(0), default=MARGIN_TOL_MS, metavar="MS",
                   help=f"a margin's minimum may shrink this many ms (default {MARGIN_TOL_MS}); a larger shrink is "
                        f"worse only beyond chance (precedence test, p < 0.05); one that goes negative is worse "
                        f"whatever this says")
    p.add_argument("--cost-tol", type=inputs.amount(0), metavar="PCT",
                   help="seeds/s may fall this many percent (default: cost is reported, never worse)")
    p.add_argument("--allow-different", action="store_true",
                   help="compare reports of different seeds, scenarios, worlds or timing (each difference a warning)")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON instead of tables")


# --- reading the two reports ---------------------------------------------------------------------------


def _load(path: str) -> dict:
    """A campaign's report, checked for the fields diff reads (UsageError, one line, otherwise)."""
    from .report import load_report
    from .validate import check_margins

    r = load_report(path)
    if r.get("kind") == "broken":
        raise UsageError(f"{path} is a `broken` report: diff compares campaign reports (of `run` or `merge`)")
    for key, kind in (("failures", list), ("coverage", dict), ("protocol_findings", dict), ("counts", dict)):
        if not isinstance(r.get(key), kind):
            raise UsageError(f"the report {path} is malformed: {key} must be "
                             f"{'a list' if kind is list else 'an object'} (diff reads it)")
    if not all(isinstance(v, int) for v in r["coverage"].values()):
        raise UsageError(f"the report {path} is malformed: coverage must map each point to a number of seeds")
    for fid, entry in r["protocol_findings"].items():
        if not isinstance(entry, dict) or not isinstance(entry.get("seeds"), int):
            raise UsageError(f"the report {path} is malformed: protocol_findings.{fid}.seeds must be an integer")
    if "margins" in r:
        check_margins(r["margins"], path)
    return r


def _differences(old: dict, new: dict) -> list[str]:
    """What makes the two reports campaigns of different runs (their models aside)."""
    out = []
    so, sn = old["seeds"], new["seeds"]
    if (so["start"], so["count"]) != (sn["start"], sn["count"]):
        out.append(f"seeds differ: OLD {_range(old)}, NEW {_range(new)}")
    for key in ("scenario", "world", "params", "strict"):
        a, b = old.get(key, "sim" if key == "world" else None), new.get(key, "sim" if key == "world" else None)
        if key == "strict":
            a, b = bool(a), bool(b)
        if a != b:
            out.append(f"{key} differs: OLD {a!r}, NEW {b!r}")
    for which, r in (("OLD", old), ("NEW", new)):
        if r.get("partial"):
            out.append(f"{which} is partial (a signal stopped its run after {r['seeds']['count']} seeds)")
        if "margins" not in r:
            out.append(f"{which} has no margins (written before margins were reported): none compared")
    return out


def _range(r: dict) -> str:
    s = r["seeds"]
    return f"{s['start']}..{s['start'] + s['count'] - 1}" if s["count"] else "no seeds"


# --- the comparison --------------------------------------------------------------------------------------


def compare(old: dict, new: dict, coverage_tol: float = COVERAGE_TOL_PP, margin_tol_ms: int = MARGIN_TOL_MS,
            cost_tol: float | None = None, warnings: list[str] | None = None) -> dict:
    """The comparison of two reports, as diff's JSON prints it: each part, and `worse` (one line per
    change beyond its tolerance; empty: nothing got worse)."""
    from checkers.confidence import apart, clopper_pearson, precedence_p  # (the command line imports no checker)
    from checkers.paired import finding_seeds, findings_paired, less_often, more_often
    from history.record import hash_version

    worse: list[str] = []
    warnings = list(warnings or [])
    versions = (hash_version(old), hash_version(new))
    if versions[0] != versions[1]:
        warnings.append(f"the reports' history hashes are of two encodings (hash_version {versions[0]} and "
                        f"{versions[1]}): their digests differ whether the runs do or not")
    out: dict = {"tolerances": {"coverage_pp": coverage_tol, "margin_ms": margin_tol_ms, "cost_pct": cost_tol},
                 "warnings": warnings,
                 "same_histories": bool(old.get("history_digest")) and old.get("history_digest") == new.get(
                     "history_digest"),
                 # the test each part's rows are decided by (each row says which one decided it)
                 "tests": {"failures": NO_TEST, "coverage": COVERAGE_APART + f", past {coverage_tol:g} pp",
                           "margins": f"precedence (p < {SIGNIFICANCE:g}), past {margin_tol_ms} ms",
                           "findings": FINDING_SIGN, "cost": "the tolerance alone"}}

    # failures, by (seed, invariant)
    def pairs(r):
        seen = {}
        for f in r["failures"]:
            seen.setdefault((f["seed"], f["invariant"]), f)
        return seen

    fo, fn = pairs(old), pairs(new)
    added = [fn[k] for k in sorted(set(fn) - set(fo))]
    gone = [fo[k] for k in sorted(set(fo) - set(fn))]
    out["failures"] = {"new": [_failure(f) for f in added], "gone": [_failure(f) for f in gone]}
    by_inv: dict[str, set] = {}
    for f in added:
        by_inv.setdefault(f["invariant"], set()).add(f["seed"])
    for inv, seeds in sorted(by_inv.items()):
        worse.append(f"{inv} fails in {len(seeds)} seeds it did not (first {min(seeds)}; test: {NO_TEST})")
    to = {f["seed"] for f in old.get("tool_failures") or []}
    tn = {f["seed"] for f in new.get("tool_failures") or []}
    out["tool_failures"] = {"new": sorted(tn - to), "gone": sorted(to - tn)}
    if tn - to:
        worse.append(f"the tool failed in {len(tn - to)} seeds it did not (first {min(tn - to)})")

    # coverage: each point's share of the seeds
    no, nn = max(old["counts"].get("seeds_run", old["seeds"]["count"]), 1), \
        max(new["counts"].get("seeds_run", new["seeds"]["count"]), 1)
    rows = []
    for point in list(old["coverage"]) + [p for p in new["coverage"] if p not in old["coverage"]]:
        a, b = old["coverage"].get(point), new["coverage"].get(point)
        pa, pb = (None if a is None else 100 * a / no), (None if b is None else 100 * b / nn)
        moved = None if pa is None or pb is None else pb - pa
        lost = bool(a) and b == 0
        side = 0 if a is None or b is None else apart(min(a, no), no, min(b, nn), nn)
        bad = lost or (moved is not None and moved < -coverage_tol and side < 0)
        test = (COVERAGE_LOST if lost else COVERAGE_APART if side else COVERAGE_CHANCE) if moved is not None \
            else "only one report has the point"
        if bad or (moved is not None and abs(moved) > coverage_tol) or (a is None) != (b is None):
            rows.append({"point": point, "old_seeds": a, "new_seeds": b, "old_pct": _round(pa), "new_pct": _round(pb),
                         "moved_pp": _round(moved), "old_ci95_pct": _ci_pct(a, no, clopper_pearson),
                         "new_ci95_pct": _ci_pct(b, nn, clopper_pearson), "beyond_chance": bool(side) or lost,
                         "test": test, "worse": bad})
        if lost:
            worse.append(f"coverage point {point!r}: reached in {a} seeds, now never (test: {COVERAGE_LOST})")
        elif bad:
            lo_o, hi_o = _ci_pct(a, no, clopper_pearson)
            lo_n, hi_n = _ci_pct(b, nn, clopper_pearson)
            worse.append(f"coverage point {point!r}: {pa:.1f} % of the seeds (95 % {lo_o:.1f} .. {hi_o:.1f}) -> "
                         f"{pb:.1f} % ({lo_n:.1f} .. {hi_n:.1f}), {moved:+.1f} pp, tolerance {coverage_tol:g} "
                         f"(test: {COVERAGE_APART})")
    out["coverage"] = rows

    # margins: each one's minimum
    mo, mn = old.get("margins") or {}, new.get("margins") or {}
    rows = []
    compared = "margins" in old and "margins" in new
    for name in list(mo) + [n for n in mn if n not in mo]:
        a, b = mo.get(name) or {}, mn.get(name) or {}
        va, vb = (a.get("min") if a.get("seeds") else None), (b.get("min") if b.get("seeds") else None)
        change = None if va is None or vb is None else vb - va
        bad = False
        why = ""
        test = None
        below = p = None
        if compared and va is not None and vb is None:
            bad, why, test = True, f"measured in {a['seeds']} seeds, now in none", MARGIN_GONE
        elif change is not None and vb < 0 <= va:
            bad, test = True, MARGIN_NEGATIVE
            why = (f"min {va} ms (seed {a['seed']}) -> {vb} ms (seed {b['seed']}): shrank {-change} ms, now negative "
                   f"(broken)")
        elif change is not None and change < -margin_tol_ms:
            below = _below(b, va)
            p = precedence_p(below, a["seeds"], b["seeds"])
            bad = p < SIGNIFICANCE
            test = (f"precedence: {below} of NEW's {b['seeds']} seeds below OLD's least of {a['seeds']}, p {p:.3g} "
                    f"({'beyond' if bad else 'within'} chance)")
            why = f"min {va} ms (seed {a['seed']}) -> {vb} ms (seed {b['seed']}): shrank {-change} ms, tolerance " \
                  f"{margin_tol_ms} ms"
        if why and b.get("replay"):
            why += f"; replay: {b['replay']}"
        rows.append({"margin": name, "invariant": (b or a).get("invariant"), "old_min": va, "new_min": vb,
                     "change_ms": change, "old_seed": a.get("seed"), "new_seed": b.get("seed"),
                     "old_seeds": a.get("seeds", 0), "new_seeds": b.get("seeds", 0), "new_replay": b.get("replay"),
                     "new_below_old_min": below, "p": None if p is None else round(p, 4), "test": test, "worse": bad})
        if bad:
            worse.append(f"margin {name} ({(b or a).get('invariant')}): {why} (test: {test})")
    out["margins"] = rows

    # findings: the seeds of each, paired seed by seed where both reports list them (checkers/paired.py): a
    # finding that shows in NEW's seeds more often than in OLD's beyond chance is worse (a real bug taken for
    # the finding would show so); without the seed lists, any rise is
    po, pn = old["protocol_findings"], new["protocol_findings"]
    so, sn = finding_seeds(old), finding_seeds(new)
    rows = []
    for fid in sorted(set(po) | set(pn), key=lambda f: (len(f), f)):
        a, b = (po.get(fid) or {}).get("seeds", 0), (pn.get(fid) or {}).get("seeds", 0)
        paired = fid in so or fid in sn
        d = findings_paired(sn, so).get(fid) if paired else None
        bad = more_often(d) if d is not None else b > a
        # a fall is held to the same test as a rise (issue 44): fewer beyond chance, or within it
        fewer = d is not None and less_often(d)
        test = FINDING_SIGN if d is not None else FINDING_COUNT
        rows.append({"finding": fid, "old_seeds": a, "new_seeds": b, "new_only": d and d["variant_only"],
                     "old_only": d and d["correct_only"], "p": d and d["p"], "test": test, "worse": bad,
                     "fewer_beyond_chance": fewer})
        if bad:
            worse.append(f"finding {fid}: {a} seeds -> {b}" + (
                f" ({d['variant_only']} seeds only NEW shows it, {d['correct_only']} only OLD: sign test p {d['p']:g})"
                if d is not None else "") + f" (test: {test})")
    out["findings"] = rows

    # failover (INV-7): its p50 and p99, each with its 95 % order-statistic interval (report.py's
    # distribution): slower beyond chance when NEW's interval lies wholly above OLD's
    fo, fn = old.get("failover_ms") or {}, new.get("failover_ms") or {}
    rows = []
    for q in ("p50", "p99"):
        a, b = fo.get(q), fn.get(q)
        ia, ib = fo.get(f"{q}_ci95") or [None, None], fn.get(f"{q}_ci95") or [None, None]
        apart_ = a is not None and b is not None and ia[1] is not None and ib[0] is not None and ib[0] > ia[1]
        rows.append({"quantile": q, "old_ms": a, "new_ms": b, "old_ci95": ia, "new_ci95": ib,
                     "test": FAILOVER_APART if apart_ else FAILOVER_CHANCE, "worse": apart_})
        if apart_:
            worse.append(f"failover {q}: {a} ms {_ms_iv(ia)} -> {b} ms {_ms_iv(ib)}, slower beyond chance "
                         f"(test: {FAILOVER_APART})")
    out["failover"] = rows

    # cost: seeds per second
    ca, cb = old.get("seeds_per_s"), new.get("seeds_per_s")
    pct = None if not ca or cb is None else 100 * (cb - ca) / ca
    bad = cost_tol is not None and pct is not None and pct < -cost_tol
    out["cost"] = {"old_seeds_per_s": ca, "new_seeds_per_s": cb, "change_pct": _round(pct),
                   "old_workers": old.get("workers"), "new_workers": new.get("workers"), "worse": bad}
    if bad:
        worse.append(f"cost: {ca} -> {cb} seeds/s ({pct:+.1f} %, tolerance {cost_tol:g} %; test: the tolerance "
                     f"alone, wall time has no interval here)")
    out["worse"] = worse
    out["status"] = int(Exit.VIOLATION if worse else Exit.PASSED)
    return out


def _ms_iv(iv) -> str:
    return f"({'-' if iv[0] is None else iv[0]} .. {'-' if iv[1] is None else iv[1]})"


def _below(b: dict, value: int) -> int:
    """How many of NEW's seeds had a margin below `value`, at least: those in histogram buckets wholly below it
    (report.py's fixed buckets), and the seed of NEW's minimum if that is."""
    from .report import MARGIN_BUCKETS

    hist = b.get("histogram") or {}
    n = sum(hist.get(label, 0) for edge, label in MARGIN_BUCKETS if edge is not None and edge <= value)
    return max(n, 1 if b.get("min") is not None and b["min"] < value else 0)


def _ci_pct(k, n: int, clopper_pearson) -> list | None:
    """A share's 95 % interval in percent (None when the report has no such point)."""
    if k is None or n <= 0:
        return None
    lo, hi = clopper_pearson(min(k, n), n)
    return [round(100 * lo, 2), round(100 * hi, 2)]


def _failure(f: dict) -> dict:
    return {"seed": f["seed"], "invariant": f["invariant"], "message": f.get("message", ""), "replay": f.get("replay")}


def _round(v):
    return None if v is None else round(v, 2)


# --- the subcommand --------------------------------------------------------------------------------------


def command(console, args) -> int:
    """`diff OLD NEW`: exit 0 (nothing worse beyond the tolerances), 1 (something worse) or 2 (bad input)."""
    if args.coverage_tol < 0 or args.margin_tol_ms < 0 or (args.cost_tol is not None and args.cost_tol < 0):
        raise UsageError("diff's tolerances must be at least 0")
    old, new = _load(args.old), _load(args.new)
    warnings = _differences(old, new)
    refused = [w for w in warnings if not w.startswith(("OLD has no margins", "NEW has no margins"))]
    if refused and not args.allow_different:
        raise UsageError(f"{args.old} and {args.new} are not reports of the same campaign: {refused[0]}"
                         + (f" (and {len(refused) - 1} more)" if len(refused) > 1 else "")
                         + "; --allow-different compares them anyway")
    result = compare(old, new, args.coverage_tol, args.margin_tol_ms, args.cost_tol, warnings)
    result["old"] = _about(args.old, old)
    result["new"] = _about(args.new, new)
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        show(console, result)
    return result["status"]


def _about(path: str, r: dict) -> dict:
    return {"path": os.path.relpath(path), "model": r["model"], "scenario": r["scenario"], "seeds": r["seeds"],
            "history_digest": r.get("history_digest"), "passed": r.get("passed")}


def show(console, d: dict) -> None:
    """The comparison as tables, then one line: what got worse, or that nothing did."""
    from rich.table import Table

    o, n = d["old"], d["new"]
    for side, r in (("OLD", o), ("NEW", n)):
        s = r["seeds"]
        console.print(f"{side} {r['path']}: model {r['model']}, scenario {r['scenario']}, seeds "
                      f"{s['start']}..{s['start'] + s['count'] - 1}, {'passed' if r['passed'] else 'failed'}",
                      highlight=False)
    console.print("histories: " + ("the same (one digest)" if d["same_histories"] else "differ"), highlight=False)
    for w in d["warnings"]:
        console.print(f"[yellow]WARNING[/yellow] {w}", highlight=False)
    t = d["tolerances"]

    f = d["failures"]
    if f["new"] or f["gone"] or d["tool_failures"]["new"] or d["tool_failures"]["gone"]:
        ft = Table(title="failures (seed, invariant)", show_header=True)
        for col in ("", "seed", "invariant", "message"):
            ft.add_column(col)
        for label, rows, colour in (("new", f["new"], "red"), ("gone", f["gone"], "green")):
            for x in rows[:SHOWN]:
                ft.add_row(f"[{colour}]{label}", str(x["seed"]), x["invariant"], x["message"][:100])
            if len(rows) > SHOWN:
                ft.add_row(label, "...", f"{len(rows) - SHOWN} more", "")
        for label, seeds in (("tool failed, new", d["tool_failures"]["new"]),
                             ("tool failed, gone", d["tool_failures"]["gone"])):
            if seeds:
                ft.add_row(label, ", ".join(map(str, seeds[:SHOWN])) + (", ..." if len(seeds) > SHOWN else ""), "", "")
        console.print(ft)
    else:
        console.print("failures: the same", highlight=False)
    if f["new"]:
        console.print(f"failures: test: {d['tests']['failures']}", highlight=False)

    if d["coverage"]:
        ct = Table(title=f"coverage points whose share moved more than {t['coverage_pp']:g} pp", show_header=True)
        for col, j in (("point", "left"), ("OLD seeds", "right"), ("NEW seeds", "right"), ("OLD % (95 %)", "right"),
                       ("NEW % (95 %)", "right"), ("moved pp", "right"), ("test", "left"), ("", "left")):
            ct.add_column(col, justify=j)
        for x in d["coverage"]:
            ct.add_row(x["point"], _s(x["old_seeds"]), _s(x["new_seeds"]),
                       _s(x["old_pct"]) + _iv(x.get("old_ci95_pct")), _s(x["new_pct"]) + _iv(x.get("new_ci95_pct")),
                       _s(x["moved_pp"]), x.get("test") or "", "[red]worse" if x["worse"] else "")
        console.print(ct)
    else:
        console.print(f"coverage: no point's share moved more than {t['coverage_pp']:g} pp", highlight=False)

    if d["margins"]:
        mt = Table(title=f"margins: least slack over the seeds, ms (tolerance {t['margin_ms']} ms)", show_header=True)
        for col, j in (("margin", "left"), ("invariant", "left"), ("OLD min", "right"), ("NEW min", "right"),
                       ("change", "right"), ("NEW seed", "right"), ("OLD seeds", "right"), ("NEW seeds", "right"),
                       ("test", "left"), ("", "left")):
            mt.add_column(col, justify=j)
        for x in d["margins"]:
            mt.add_row(x["margin"], x["invariant"] or "", _s(x["old_min"]), _s(x["new_min"]),
                       _s(x["change_ms"], signed=True), _s(x["new_seed"]), str(x["old_seeds"]), str(x["new_seeds"]),
                       x.get("test") or "", "[red]worse" if x["worse"] else "")
        console.print(mt)

    if d["findings"]:
        kt = Table(title="known findings (seeds)", show_header=True)
        for col, j in (("finding", "left"), ("OLD", "right"), ("NEW", "right"), ("only OLD", "right"),
                       ("only NEW", "right"), ("sign test p", "right"), ("test", "left"), ("", "left")):
            kt.add_column(col, justify=j)
        for x in d["findings"]:
            kt.add_row(x["finding"], str(x["old_seeds"]), str(x["new_seeds"]), _s(x["old_only"]), _s(x["new_only"]),
                       "-" if x["p"] is None else f"{x['p']:g}", x.get("test") or "",
                       "[red]worse" if x["worse"] else "[green]fewer" if x.get("fewer_beyond_chance")
                       else "fewer, within chance" if x["new_seeds"] < x["old_seeds"] else "")
        console.print(kt)

    for x in d.get("failover") or ():
        if x["old_ms"] is not None or x["new_ms"] is not None:
            console.print(f"failover {x['quantile']}: {_s(x['old_ms'])} ms {_ms_iv(x['old_ci95'])} -> {_s(x['new_ms'])} "
                          f"ms {_ms_iv(x['new_ci95'])} ({x['test']})" + (" [red]worse" if x["worse"] else ""),
                          highlight=False)

    c = d["cost"]
    console.print(f"cost: {c['old_seeds_per_s']} -> {c['new_seeds_per_s']} seeds/s"
                  + (f" ({c['change_pct']:+.1f} %)" if c["change_pct"] is not None else "")
                  + (f", {c['old_workers']} and {c['new_workers']} workers" if c["old_workers"] != c["new_workers"]
                     else "")
                  + ("" if t["cost_pct"] is not None else " (reported only: --cost-tol makes it count)")
                  + (" [red]worse" if c["worse"] else ""), highlight=False)
    if d["worse"]:
        console.print(f"[red]diff: WORSE[/red], {len(d['worse'])} beyond the tolerances:", highlight=False)
        for w in d["worse"]:
            console.print(f"  - {w}", highlight=False)
    else:
        console.print("[green]diff: nothing got worse[/green] beyond the tolerances", highlight=False)


def _iv(iv) -> str:
    """ ' (12.3 .. 15.0)': a share's 95 % interval in percent, for the table."""
    return "" if not iv else f" ({iv[0]:.1f} .. {iv[1]:.1f})"


def _s(v, signed: bool = False) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:+.1f}" if signed else f"{v:.1f}"
    return f"{v:+d}" if signed else str(v)
