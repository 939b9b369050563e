"""The ledger summed over a campaign's seeds, and what it costs (issue 48, parts 1 and 3).

Each seed's result carries its request ledger (checkers/ledger.py `summary`: requests by operation, key class,
outcome, phase and cause, and the node-time of each phase). A report sums them (`ledger_block`) and prices
them (`cost_block`): requests and dollars per node-day in the quiet phase, where no fault excuses a request,
at each price table (campaign/prices.py), and the extra the faults cost, by cause: the fault phase's rate
per node-day less the quiet phase's. A figure resting on an unconfirmed billing rule says so.

Must not know: how a ledger is counted (checkers/ledger.py), any report's layout but its `ledger` and `cost`.
"""

from __future__ import annotations

from collections import Counter

from . import prices

TABLES = ("aws-s3-standard-us-east-1", "cloudflare-r2-standard")
SEP = " | "


def ledger_block(ledgers) -> dict | None:
    """The seeds' ledgers summed: {"requests": {key: n}, "node_ms": {phase: ms}, "seeds": n}; None if no seed
    kept one."""
    requests: Counter = Counter()
    node_ms: Counter = Counter()
    seeds = 0
    for led in ledgers:
        if not led:
            continue
        seeds += 1
        requests.update(led["requests"])
        node_ms.update(led["node_ms"])
    if not seeds:
        return None
    return {"seeds": seeds, "requests": dict(sorted(requests.items())), "node_ms": dict(sorted(node_ms.items()))}


def join(blocks) -> dict | None:
    """Shard reports' ledger blocks joined (as one run's): each block already sums its shard's seeds."""
    blocks = [b for b in blocks if b]
    joined = ledger_block(blocks)
    if joined is not None:
        joined["seeds"] = sum(b["seeds"] for b in blocks)
    return joined


def _split(key: str) -> tuple[str, ...]:
    return tuple(key.split(SEP))


def _billing_status(outcome: str) -> str:
    what = outcome.split(",")[0]
    return "never_arrived" if what in ("lost", "unanswered") else what


def per_day(block: dict, phase: str, by: str | None = None) -> dict:
    """The phase's requests per node-day: {(op, status): n} (or, with `by` "cause", {cause: {(op, status): n}})."""
    ms = block["node_ms"].get(phase, 0)
    if not ms:
        return {}
    scale = prices.DAY_MS / ms
    out: dict = {}
    for key, n in block["requests"].items():
        op, _kc, outcome, ph, cause = _split(key)
        if ph != phase:
            continue
        k = (op, _billing_status(outcome))
        d = out.setdefault(cause, {}) if by == "cause" else out
        d[k] = d.get(k, 0) + n * scale
    return out


def _bill(counts: dict, table) -> prices.Bill:
    return prices.bill({k: int(round(v)) for k, v in counts.items()}, table)


def cost_block(block: dict | None) -> dict | None:
    """Requests and dollars per node-day in the quiet phase, at each table, and the faults' extra by cause."""
    if not block or not block["node_ms"].get("quiet"):
        return None
    tables = [prices.load(t) for t in TABLES]
    quiet = per_day(block, "quiet")
    out: dict = {"node_days": {ph: round(ms / prices.DAY_MS, 4) for ph, ms in block["node_ms"].items()},
                 "quiet": {"requests_per_node_day": round(sum(quiet.values()), 1),
                           "by_operation": {f"{op} {st}": round(n, 1) for (op, st), n in sorted(quiet.items())}},
                 "usd_per_node_day": {}, "unconfirmed": {}, "fault_extra_usd_per_node_day": {}}
    q_cause = per_day(block, "quiet", "cause")
    f_cause = per_day(block, "fault", "cause")
    for t in tables:
        b = _bill(quiet, t)
        out["usd_per_node_day"][t.id] = round(b.usd, 4)
        if b.unconfirmed:
            out["unconfirmed"][t.id] = b.unconfirmed
        if f_cause:
            extra = {}
            for cause in sorted(set(q_cause) | set(f_cause)):
                d = _bill(f_cause.get(cause, {}), t).usd - _bill(q_cause.get(cause, {}), t).usd
                extra[cause] = round(d, 4)
            out["fault_extra_usd_per_node_day"][t.id] = extra
    return out


def by_phase_cause(block: dict) -> dict[tuple[str, str], int]:
    """(phase, cause) -> requests."""
    out: Counter = Counter()
    for key, n in block["requests"].items():
        _op, _kc, _oc, ph, cause = _split(key)
        out[(ph, cause)] += n
    return dict(out)


def figure_rows(report: dict) -> list[tuple[str, str]]:
    """The summary's rows (label, text): the quiet phase's requests and dollars per node-day, the faults' extra
    by cause, and where a figure rests on an unconfirmed billing rule."""
    c = report.get("cost")
    if not c:
        return []
    s3, r2 = TABLES
    q = c["quiet"]
    rows = [("cost, quiet phase", f"{q['requests_per_node_day']:,.0f} requests per node-day: "
                                  f"${c['usd_per_node_day'][s3]:.3f} on S3 Standard, ${c['usd_per_node_day'][r2]:.3f} "
                                  f"on R2, list prices ({c['node_days'].get('quiet', 0):.3f} node-days)")]
    extra = c["fault_extra_usd_per_node_day"].get(s3) or {}
    top = sorted(((v, k) for k, v in extra.items() if abs(v) >= 0.0005), reverse=True)[:6]
    if top:
        rows.append(("cost, faults' extra", "per node-day on S3, by cause: " + ", ".join(f"{k} {v:+.3f}" for v, k in top)))
    if c.get("unconfirmed"):
        rows.append(("cost, unconfirmed", "; ".join(f"{t}: {len(v)} lines rest on unconfirmed billing rules"
                                                     for t, v in c["unconfirmed"].items()) + " (named in the report)"))
    return rows


def junit_properties(report: dict) -> list[tuple[str, object]]:
    """The ledger by phase and cause, and the quiet phase's cost, as JUnit properties."""
    props: list[tuple[str, object]] = []
    block = report.get("ledger")
    if block:
        for (ph, cause), n in sorted(by_phase_cause(block).items()):
            props.append((f"ledger.{ph}.{cause.replace(' ', '_')}", n))
    c = report.get("cost")
    if c:
        props.append(("cost.quiet.requests_per_node_day", c["quiet"]["requests_per_node_day"]))
        for t, usd in c["usd_per_node_day"].items():
            props.append((f"cost.quiet.usd_per_node_day.{t}", usd))
    return props


# --- the sweep over cluster sizes (`runner.py cost --nodes 3,5,10,20`) ----------------------------------

# the ADR's own figures for the heartbeat listing alone ("Cost, after"): nodes -> (requests a period, GETs a
# day, LISTs a day, dollars a day at AWS S3 Standard list prices)
ADR_LISTING = {3: (12, 260_000, 86_000, 0.50), 20: (420, 12_000_000, 580_000, 8.0)}


def run_one(seed: int, model_name: str, scenario: str, nodes: int, pins: dict | None = None):
    """One seed of `scenario` with `nodes` nodes (the rest drawn as the seed draws it; `pins`: timing values
    fixed, {} for the ADR's defaults where the scenario draws none): its history."""
    from broken_models import load_model
    from model.params import Params
    from scenarios.sim import SimWorld
    from scenarios.streams import Streams
    from scenarios.swarm import draw, draw_params

    rngs = Streams(seed)
    if pins is None:
        params, config = Params(), "given"
    else:
        params, config = draw_params(rngs, pins, scenario)
    options = draw(rngs, scenario, params, nodes=nodes)
    options.setdefault("config", config)
    return SimWorld(seed, load_model(model_name), scenario, params, model_name, options=options).run()


def listing_rates(history, phase: str | None = "quiet") -> dict:
    """Per node and lease period of `phase` (None: the whole run): the listing's LISTs and GETs, the lease
    writes, and every request; with the node-periods they are counted over."""
    from checkers import ledger

    p = history.params
    period = min(p["heartbeat_period_ms"], p["ttl_ms"] // 3)
    nm = ledger.node_ms(history)
    ms = sum(nm.values()) if phase is None else nm.get(phase, 0)
    counts = Counter()
    for r in ledger.rows(history):
        if phase is not None and r.phase != phase:
            continue
        counts["requests"] += 1
        if r.cause == "listing":
            counts["listing " + r.sent.op] += 1
        if r.sent.purpose == "lease_write":
            counts["lease writes"] += 1
    return {"node_periods": ms / period, "counts": dict(counts), "period_ms": period}


def sweep(nodes: list[int], seeds: int, model_name: str = "correct", scenario: str = "calm", start: int = 0,
          phase: str | None = "quiet", pins: dict | None = None) -> list[dict]:
    """Requests per period of the whole cluster at each size, measured over `seeds` seeds: the listing's
    LISTs and GETs (the ADR's N x (1 + N)), the lease writes, every request."""
    out = []
    for n in nodes:
        periods = 0.0
        counts: Counter = Counter()
        period_ms = None
        for seed in range(start, start + seeds):
            m = listing_rates(run_one(seed, model_name, scenario, n, pins), phase)
            periods += m["node_periods"]
            counts.update(m["counts"])
            period_ms = m["period_ms"]
        per = {k: v / periods * n for k, v in counts.items()} if periods else {}  # the cluster's, a period
        out.append({"nodes": n, "seeds": seeds, "node_periods": round(periods, 1), "period_ms": period_ms,
                    "lists": per.get("listing LIST", 0.0), "gets": per.get("listing GET", 0.0),
                    "lease_writes": per.get("lease writes", 0.0), "requests": per.get("requests", 0.0)})
    return out


def fit(rows: list[dict]) -> tuple[float, float]:
    """Least squares of the listing's requests a period R(N) = a N + b N^2 over the sizes measured: the ADR's
    N x (1 + N) is a = b = 1; N LISTs and N x (N - 1) GETs (every object but its own) is a = 0, b = 1."""
    sxx = sxy = syy = s1 = s2 = 0.0
    for r in rows:
        n = float(r["nodes"])
        y = r["lists"] + r["gets"]
        x1, x2 = n, n * n
        sxx += x1 * x1
        sxy += x1 * x2
        syy += x2 * x2
        s1 += x1 * y
        s2 += x2 * y
    det = sxx * syy - sxy * sxy
    if not det:
        n = float(rows[0]["nodes"])
        return 0.0, (rows[0]["lists"] + rows[0]["gets"]) / (n * n)
    return (s1 * syy - s2 * sxy) / det, (sxx * s2 - sxy * s1) / det


def per_day_usd(lists: float, gets: float, period_ms: int, table_id: str = TABLES[0]) -> float:
    """A cluster's listing, `lists` LISTs and `gets` GETs a period, priced for a day (list prices, all 2xx)."""
    periods = prices.DAY_MS / period_ms
    return prices.bill({("LIST", "2xx"): int(round(lists * periods)), ("GET", "2xx"): int(round(gets * periods))},
                       prices.load(table_id)).usd
