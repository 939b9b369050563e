"""`cost`: what the protocol's requests cost, measured (issue 48, parts 3 and 4).

    python runner.py cost --nodes 3,5,10,20 [--seeds 5] [--scenario calm] [--model M]
    python runner.py cost --amendments [NAME ...] [--nodes 3,20] [--seeds 5] [--scenario swarm]

The first sweeps the cluster's size: each size runs `--seeds` seeds of the scenario (calm by default, at the
ADR's timing: ttl 10 s, a lease period of 3 s), counts the heartbeat listing's LISTs and GETs a lease period
in the quiet phase from the request ledger (checkers/ledger.py), fits them against the ADR's formula
N x (1 + N), and prints the ADR's own figures beside: about $0.50 a day at three nodes, about $8 at twenty,
listing alone, at AWS S3 Standard list prices (campaign/price_tables/).

The second is the amendments' cost column: each variant of amendments/ (default: every one) against the
correct model on the same seeds (the swarm by default, where dead nodes leave objects that stop changing),
at each size: the listing's GETs a period and every request a period of the cluster, and what the difference
costs or saves a day at S3 Standard (the listing's LISTs and GETs priced), at the ADR's cadence (28,800
periods a day). It reads the verdicts
amendments/verdicts.json records and judges nothing: `runner.py amendments` owns the verdicts.

Must not know the parser (nodelease/cli.py).
"""

from __future__ import annotations

import json

from campaign import cost
from campaign import prices
from house.errors import Exit, UsageError

ADR_PERIOD_MS = 3_000  # the ADR's lease period (ttl 10 s / 3, the heartbeat's 3 s)


def options(p) -> None:
    from house import inputs

    p.add_argument("--nodes", default=None, metavar="N,N,...",
                   help="cluster sizes (default 3,5,10,20; with --amendments 3,20)")
    p.add_argument("--seeds", type=inputs.count(1), default=5, help="seeds per size (default 5)")
    p.add_argument("--start", type=inputs.count(0), default=0, help="the first seed (default 0)")
    p.add_argument("--scenario", default=None,
                   help="the scenario (default calm; with --amendments swarm)")
    p.add_argument("--model", default="correct", help="the model swept (default correct)")
    p.add_argument("--amendments", nargs="*", metavar="NAME", default=None,
                   help="the amendments' cost column instead: these variants (none named: every one)")
    p.add_argument("--json", metavar="PATH", help="write the measurements as JSON here")


def _sizes(text: str | None, default: tuple[int, ...]) -> list[int]:
    if text is None:
        return list(default)
    try:
        sizes = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UsageError(f"--nodes takes sizes separated by commas, like 3,5,10,20 (got {text!r})") from None
    if not sizes or any(n < 1 or n > 64 for n in sizes):
        raise UsageError(f"--nodes takes sizes from 1 to 64 (got {text!r})")
    return sizes


def command(console, args) -> int:
    from scenarios.presets import PRESETS

    scenario = args.scenario or ("swarm" if args.amendments is not None else "calm")
    if scenario not in PRESETS:
        raise UsageError(f"unknown scenario {scenario!r} (choices: {', '.join(PRESETS)})")
    if args.amendments is not None:
        out = amendments_column(args.amendments, _sizes(args.nodes, (3, 20)), args.seeds, args.start, scenario)
    else:
        from broken_models import load_model

        load_model(args.model)  # (an unknown name: one line, exit 2)
        out = sweep_table(_sizes(args.nodes, (3, 5, 10, 20)), args.seeds, args.start, scenario, args.model)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1, sort_keys=True)
            f.write("\n")
    return Exit.PASSED


def sweep_table(sizes: list[int], seeds: int, start: int, scenario: str, model: str) -> dict:
    """The sweep printed: the listing's requests a period against N x (1 + N), the fit, the ADR's figures."""
    pins = None if scenario == "calm" else {}  # calm: the ADR's timing; another scenario draws its own
    rows = cost.sweep(sizes, seeds, model, scenario, start, pins=pins)
    period = rows[0]["period_ms"] if rows else ADR_PERIOD_MS
    print(f"the heartbeat listing of a cluster, per lease period ({model}, {scenario}, seeds {start}.."
          f"{start + seeds - 1} per size, quiet phase; lease period {period} ms):")
    head = (f"{'nodes':>5}  {'LIST':>7}  {'GET':>8}  {'listing':>8}  {'N x N':>6}  {'ADR N(1+N)':>10}  "
            f"{'lease PUTs':>10}  {'every req.':>10}  {'S3 $/day':>8}  {'ADR $/day':>9}  ADR's own figures")
    print(head)
    for r in rows:
        n = r["nodes"]
        listing = r["lists"] + r["gets"]
        usd = cost.per_day_usd(r["lists"], r["gets"], ADR_PERIOD_MS)
        adr_usd = cost.per_day_usd(n, n * n, ADR_PERIOD_MS)
        own = cost.ADR_LISTING.get(n)
        said = (f"{own[0]} a period, about {own[1]:,} GETs and {own[2]:,} LISTs a day, about ${own[3]:.2f} a day"
                if own else "")
        r.update(listing=round(listing, 2), usd_per_day_s3=round(usd, 3), adr_formula_usd_per_day_s3=round(adr_usd, 3))
        print(f"{n:>5}  {r['lists']:>7.2f}  {r['gets']:>8.2f}  {listing:>8.2f}  {n * n:>6}  {n * (1 + n):>10}  "
              f"{r['lease_writes']:>10.2f}  {r['requests']:>10.1f}  {usd:>8.3f}  {adr_usd:>9.3f}  {said}")
    a, b = cost.fit(rows)
    print(f"fit of the listing's requests a period: R(N) = {a:.3f} N + {b:.3f} N^2 (the ADR's N x (1 + N): 1 N + "
          f"1 N^2; N LISTs and a GET of every object but its own, N x N: 0 N + 1 N^2)")
    print(f"(dollars at {prices.load(cost.TABLES[0]).title}, read {prices.load(cost.TABLES[0]).read_on}, "
          f"the listing alone, {prices.DAY_MS // ADR_PERIOD_MS:,} periods a day; the model reads every object but "
          f"its own: docs/protocol.md, 'Where this page departs from the ADR')")
    return {"kind": "cost sweep", "model": model, "scenario": scenario, "seeds": {"start": start, "count": seeds},
            "rows": rows, "fit": {"a": round(a, 4), "b": round(b, 4)}, "adr": cost.ADR_LISTING}


def amendments_column(names: list[str], sizes: list[int], seeds: int, start: int, scenario: str) -> dict:
    """Each variant's cost beside the correct model's, on the same seeds, at each size (judges nothing)."""
    from amendments import variants

    known = {v.name: v for v in variants()}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UsageError(f"unknown variant {unknown[0]!r} (known: {', '.join(known)})")
    chosen = names or list(known)
    recorded = _recorded()
    base = {n: cost.sweep([n], seeds, "correct", scenario, start, phase=None, pins={})[0] for n in sizes}
    print(f"the amendments' cost column ({scenario}, seeds {start}..{start + seeds - 1} per size, the whole run; "
          f"a day: {prices.DAY_MS // ADR_PERIOD_MS:,} lease periods at the ADR's cadence, "
          f"{prices.load(cost.TABLES[0]).title}):")
    print(f"{'variant':<38} {'nodes':>5}  {'listing GETs/period':>19}  {'requests/period':>15}  "
          f"{'listing $/day':>13}  verdict recorded")
    out = {"kind": "amendments cost", "scenario": scenario, "seeds": {"start": start, "count": seeds},
           "correct": base, "variants": {}}
    for n in sizes:
        b = base[n]
        print(f"{'correct':<38} {n:>5}  {b['gets']:>19.2f}  {b['requests']:>15.1f}  {_usd(b):>13.3f}")
    for name in chosen:
        rows = {}
        for n in sizes:
            r = cost.sweep([n], seeds, name, scenario, start, phase=None, pins={})[0]
            b = base[n]
            d_get, d_req, d_usd = r["gets"] - b["gets"], r["requests"] - b["requests"], _usd(r) - _usd(b)
            rows[n] = dict(r, gets_change=round(d_get, 3), requests_change=round(d_req, 2),
                           usd_per_day_change=round(d_usd, 4), says=_says(d_get, d_req, d_usd))
            print(f"{name:<38} {n:>5}  {r['gets']:>10.2f} ({d_get:+6.2f})  {r['requests']:>6.1f} ({d_req:+6.1f})  "
                  f"{d_usd:>+13.3f}  {recorded.get(name, '-')}: {rows[n]['says']}")
        out["variants"][name] = {"verdict_recorded": recorded.get(name), "sizes": rows}
    return out


def _usd(r: dict) -> float:
    """The cluster's listing, its LISTs and GETs a period, priced for a day at the ADR's cadence."""
    return cost.per_day_usd(r["lists"], r["gets"], ADR_PERIOD_MS)


def _says(d_get: float, d_req: float, d_usd: float) -> str:
    """What a variant costs or saves: 'saves N GETs a period (-$x a day)', and its every request's change."""
    if abs(d_req) < 0.05 and abs(d_get) < 0.05:
        return "costs nothing measurable"
    listing = (f"{'saves' if d_get < 0 else 'costs'} {abs(d_get):.2f} listing GETs a period "
               f"({'-' if d_usd < 0 else '+'}${abs(d_usd):.3f} a day)") if abs(d_get) >= 0.05 else "the listing unchanged"
    return f"{listing}; every request {d_req:+.2f} a period"


def _recorded() -> dict[str, str]:
    """variant -> its recorded verdict at the most seeds (amendments/verdicts.json), as its table shows it."""
    import os

    import amendments

    path = os.path.join(os.path.dirname(amendments.__file__), "verdicts.json")
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}
    out = {}
    for name, entry in data.items():
        by_seeds = entry.get("verdicts") if isinstance(entry, dict) else None
        if by_seeds:
            out[name] = f"{by_seeds[max(by_seeds, key=int)]}"
    return out
