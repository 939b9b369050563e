"""The bake-off: guided search against uniform seeds, per broken model and per rare mutant (issue 30).

For each target (a broken model of broken_models/, or a one-rule mutant of mutants/catalog.py
applied to a private copy of the project, as the mutants probe does), and for each repetition
r = 1..R, two searches run in one process, one after the other, each until its first catch or
its cap of CPU-seconds:

- **uniform**: the swarm's seeds from r * 1,000,003 on, one after another, each run and judged as
  a campaign does (campaign.run.run_one);
- **guided**: guided/search.py with seed r.

A *catch* is a run with a violation no known finding explains (the campaign's verdict); a run in
which the model raised is an error, never a catch. CPU-seconds are the process's own
(`time.process_time`), not wall time. Per target: the median CPU-seconds to a first catch of each
(a search that reached its cap counts as the cap: a lower bound, marked), and the catch rate per
CPU-hour (catches over the CPU spent, caps included: the estimate for times cut off at a cap).
The summary: the median ratio guided/uniform, wins and losses, an exact sign test and a Wilcoxon
signed-rank test on the log ratios (normal approximation), over the rare targets (the uniform mix
catches them in under 5 % of seeds) and the common ones apart.

    python runner.py mutants --seeds 200 --report reports/mutants-200.json   # which mutants are rare
    python runner.py bakeoff --mutants-report reports/mutants-200.json --reps 5 --cap-s 60 --jobs 2

Must not know: which target is expected to win.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import time


RARE = 0.05  # a target the uniform mix catches in under this share of seeds


# --- one target, in its own process ---------------------------------------------------------------


def uniform(model_name: str, scenario: str, rep: int, cap_s: float) -> dict:
    from campaign.run import run_one

    t0 = time.process_time()
    seed, runs = rep * 1_000_003, 0
    while True:
        r = run_one(seed, model_name, scenario, None)
        runs += 1
        cpu = time.process_time() - t0
        if r.tool_failure is not None:
            return {"caught": False, "error": r.tool_failure[0], "cpu_s": round(cpu, 3), "runs": runs}
        if r.failures:
            return {"caught": True, "cpu_s": round(cpu, 3), "runs": runs, "seed": seed,
                    "invariants": sorted({f[0] for f in r.failures})}
        if cpu >= cap_s:
            return {"caught": False, "cpu_s": round(cpu, 3), "runs": runs}
        seed += 1


def guided(model_name: str, scenario: str, rep: int, cap_s: float) -> dict:
    from guided.search import Search

    from house.errors import ToolError

    from scenarios.spec import RunSpec

    s = Search(RunSpec(model_name, scenario), rep, budget_s=cap_s)
    t0 = time.process_time()
    try:
        out = s.run()
    except ToolError as e:
        return {"caught": False, "error": str(e), "cpu_s": round(time.process_time() - t0, 3), "runs": s.out.runs}
    if out.failure is not None:
        return {"caught": True, "cpu_s": out.failure_cpu_s, "runs": out.failure_run,
                "invariants": [out.failure["invariant"]], "corpus": len(out.corpus)}
    return {"caught": False, "cpu_s": out.cpu_s, "runs": out.runs, "corpus": len(out.corpus)}


def one_target(model_name: str, scenario: str, reps: int, cap_s: float) -> dict:
    out: dict = {"uniform": [], "guided": []}
    for rep in range(1, reps + 1):
        out["uniform"].append(uniform(model_name, scenario, rep, cap_s))
        out["guided"].append(guided(model_name, scenario, rep, cap_s))
    return out


# --- many targets, in lanes ----------------------------------------------------------------------


def _child(lane: str, model_name: str, scenario: str, reps: int, cap_s: float) -> dict:
    code = ("import json, sys; from nodelease.bakeoff import one_target; "
            f"print(json.dumps(one_target({model_name!r}, {scenario!r}, {reps}, {cap_s})))")
    p = subprocess.run([sys.executable, "-c", code], cwd=lane, capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=lane), timeout=reps * 2 * (cap_s * 3 + 60))
    if p.returncode != 0:
        tail = (p.stderr.strip().splitlines() or ["?"])[-1]
        return {"error": tail}
    return json.loads(p.stdout.strip().splitlines()[-1])


def read_mutants_report(path: str) -> dict:
    """A `mutants --report` JSON, checked for what `targets` reads (UsageError, one line, for a file that
    is not one: not JSON, a run's report, a mutant without its fields)."""
    from campaign.report import invoked_as, load_json
    from house.errors import UsageError

    rep = load_json(path, "mutants report")
    make = f"make one: {invoked_as()} mutants --seeds 200 --report {path}"
    if not isinstance(rep, dict) or not isinstance(rep.get("mutants"), list):
        raise UsageError(f"{path} is not a mutants report (it has no list of mutants; {make})")
    if not (isinstance(rep.get("seeds"), int) and not isinstance(rep["seeds"], bool) and rep["seeds"] >= 1):
        raise UsageError(f"the mutants report {path} is malformed: seeds must be a positive integer")
    for i, m in enumerate(rep["mutants"]):
        if not (isinstance(m, dict) and isinstance(m.get("id"), str) and isinstance(m.get("status"), str)
                and isinstance(m.get("rule"), str) and isinstance(m.get("failing_seeds"), int)
                and not isinstance(m.get("failing_seeds"), bool)):
            raise UsageError(f"the mutants report {path} is malformed: mutants[{i}] must hold id, rule, status "
                             f"and failing_seeds")
    return rep


def targets(mutants_report: dict | None) -> list[dict]:
    """Every broken model, and the catalogue mutants the uniform mix caught in under 5 % of seeds
    (read from a mutants report: `runner.py mutants --seeds N --report R`, `read_mutants_report`)."""
    from broken_models import entries

    out = [{"id": e.name, "kind": "broken model", "rule": e.rule, "rate": None} for e in entries() if e.kind != "correct"]
    if mutants_report:
        rep = mutants_report
        n = rep["seeds"]
        for m in rep["mutants"]:
            if m["status"] == "killed" and m["failing_seeds"] < RARE * n:
                out.append({"id": m["id"], "kind": "mutant", "rule": m["rule"], "rate": m["failing_seeds"] / n})
    return out


def run(console, chosen: list[dict], reps: int, cap_s: float, jobs: int, scenario: str = "swarm",
        rates: dict | None = None) -> list[dict]:
    from concurrent.futures import ThreadPoolExecutor

    from mutants.catalog import MUTANTS
    from mutants.probe import ROOT, _lane_copy

    by_id = {m["id"]: m for m in MUTANTS}
    lanes = [_lane_copy() for _ in range(min(jobs, len(chosen)))]
    free = list(lanes)
    results: list[dict] = []

    def work(t):
        lane = free.pop()
        try:
            if t["kind"] == "mutant":
                m = by_id[t["id"]]
                path = os.path.join(lane, m["file"])
                with open(path) as f:
                    original = f.read()
                with open(path, "w") as f:
                    f.write(original.replace(m["orig"], m["repl"], 1))
                try:
                    return dict(t, **_child(lane, "correct", scenario, reps, cap_s))
                finally:
                    with open(path, "w") as f:
                        f.write(original)
            return dict(t, **_child(ROOT, t["id"], scenario, reps, cap_s))
        finally:
            free.append(lane)

    import shutil

    t0 = time.time()
    try:
        with ThreadPoolExecutor(len(lanes)) as pool:
            for k, r in enumerate(pool.map(work, chosen), 1):
                results.append(r)
                console.print(f"[{k}/{len(chosen)}] {r['id']}: " + (row_text(r) if "error" not in r else r["error"])
                              + f"  ({time.time() - t0:.0f} s)", highlight=False)
    finally:
        for lane in lanes:
            shutil.rmtree(lane, ignore_errors=True)
    return results


# --- the figures --------------------------------------------------------------------------------


def _median(xs: list[dict]) -> float:
    return statistics.median(x["cpu_s"] for x in xs)


def stats(r: dict) -> dict:
    out = {}
    for method in ("uniform", "guided"):
        xs = r[method]
        caught = sum(1 for x in xs if x["caught"])
        cpu = sum(x["cpu_s"] for x in xs)
        out[method] = {"median_s": round(_median(xs), 3), "caught": caught, "reps": len(xs),
                       "all_caught": caught == len(xs), "per_cpu_hour": round(caught / cpu * 3600, 1) if cpu else None,
                       "median_runs": statistics.median(x["runs"] for x in xs)}
    u, g = out["uniform"]["median_s"], out["guided"]["median_s"]
    out["ratio"] = round(g / u, 3) if u > 0 else None
    return out


def row_text(r: dict) -> str:
    s = stats(r)
    u, g = s["uniform"], s["guided"]
    return (f"uniform {u['median_s']:.2f} s ({u['caught']}/{u['reps']}), guided {g['median_s']:.2f} s "
            f"({g['caught']}/{g['reps']}), ratio {s['ratio']}")


def wilcoxon(diffs: list[float]) -> tuple[float, float]:
    """Wilcoxon signed-rank on `diffs` (zeros dropped, ties ranked by their mean): (W+, two-sided p,
    normal approximation with continuity correction)."""
    d = [x for x in diffs if x != 0]
    n = len(d)
    if n == 0:
        return 0.0, 1.0
    order = sorted(range(n), key=lambda i: abs(d[i]))
    ranks = [0.0] * n
    i = 0
    while i < n:
        j = i
        while j + 1 < n and abs(d[order[j + 1]]) == abs(d[order[i]]):
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    w_plus = sum(r for r, x in zip(ranks, d) if x > 0)
    mean = n * (n + 1) / 4
    sd = math.sqrt(n * (n + 1) * (2 * n + 1) / 24)
    z = (abs(w_plus - mean) - 0.5) / sd if sd else 0.0
    p = math.erfc(max(z, 0.0) / math.sqrt(2))
    return w_plus, min(1.0, p)


def summary(rows: list[dict]) -> dict:
    from checkers.paired import sign_test_p

    out = {}
    for group in ("rare", "common"):
        rs = [r for r in rows if "error" not in r and group_of(r) == group]
        ratios = [stats(r)["ratio"] for r in rs if stats(r)["ratio"] is not None]
        wins = sum(1 for x in ratios if x < 1)
        losses = sum(1 for x in ratios if x > 1)
        _w, p = wilcoxon([math.log(x) for x in ratios if x > 0])
        out[group] = {"targets": len(rs), "median_ratio": round(statistics.median(ratios), 3) if ratios else None,
                      "guided_wins": wins, "uniform_wins": losses, "ties": len(ratios) - wins - losses,
                      "sign_test_p": round(sign_test_p(wins, losses), 4), "wilcoxon_p": round(p, 4),
                      "uniform_median_s": round(statistics.median(stats(r)["uniform"]["median_s"] for r in rs), 3)
                      if rs else None,
                      "guided_median_s": round(statistics.median(stats(r)["guided"]["median_s"] for r in rs), 3)
                      if rs else None}
    return out


def group_of(r: dict) -> str:
    """Rare: the uniform mix catches it in under 5 % of seeds (a mutant's measured rate; a broken
    model's: its uniform runs to a first catch, median over 20)."""
    if r.get("rate") is not None:
        return "rare" if r["rate"] < RARE else "common"
    return "rare" if stats(r)["uniform"]["median_runs"] > 1 / RARE else "common"


def markdown(rows: list[dict], reps: int, cap_s: float, command: str) -> str:
    lines = [f"Measured with `{command}`: {reps} repetitions per target, each search capped at {cap_s:g} "
             "CPU-seconds (a median at the cap is marked >=). Times are CPU-seconds to a first catch, medians over "
             "the repetitions; runs are the median number of runs; ratio is guided / uniform (below 1: guided "
             "faster).", ""]
    s = summary(rows)
    lines += ["| group | targets | median ratio | guided faster | uniform faster | ties | sign test p | "
              "Wilcoxon p | median s uniform | median s guided |", "|---|---|---|---|---|---|---|---|---|---|"]
    for g, x in s.items():
        lines.append(f"| {g} | {x['targets']} | {x['median_ratio']} | {x['guided_wins']} | {x['uniform_wins']} | "
                     f"{x['ties']} | {x['sign_test_p']} | {x['wilcoxon_p']} | {x['uniform_median_s']} | "
                     f"{x['guided_median_s']} |")
    lines += ["", "| target | kind | rule | group | uniform s (caught, runs) | guided s (caught, runs) | ratio | "
              "catches per CPU-hour uniform / guided |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| `{r['id']}` | {r['kind']} | {r['rule']} | - | error: {r['error']} | | | |")
            continue
        st = stats(r)

        def cell(m):
            x = st[m]
            mark = ">=" if x["caught"] * 2 <= x["reps"] else ""
            return f"{mark}{x['median_s']:.2f} ({x['caught']}/{x['reps']}, {x['median_runs']:g})"

        lines.append(f"| `{r['id']}` | {r['kind']} | {r['rule']} | {group_of(r)} | {cell('uniform')} | "
                     f"{cell('guided')} | {st['ratio']} | {st['uniform']['per_cpu_hour']} / "
                     f"{st['guided']['per_cpu_hour']} |")
    return "\n".join(lines) + "\n"
