"""P-1's measurements: the watch's body reads per node and period, counted from run histories, and
campaigns with the bucket's token discipline pinned (not a variant: the leading underscore keeps
it out of the registry, amendments.names()).

The world records each request a process sends (`sent`: op, key) in the quiet phase's last
liveness span (scenarios/core.py, `settle_from_ms`), where the faults are over: a calm stretch in
every run, swarm's too. In that span, per node process (machines m...):

- a LIST of `nodes/` is one period of that node's listing (FN-3);
- a GET of `nodes/<another id>` is a read of a peer's body: the listing's, or the rare fresh
  read before a fence (FN-3), which the history does not tell apart.

The ADR counts N x (1 + N) requests a period for N nodes (a LIST and a GET per node, each node);
the model reads no GET of its own object, so the correct model's figure is N x (1 + (N - 1)).

    python tests/kits/measure_etag.py requests --scenario calm --seeds 200
    python tests/kits/measure_etag.py run --versioning opaque --p-alias 0.5 --model p1_etag_gated_listing \
        --seeds 2000 --report /tmp/etag-opaque.json

`run` is `runner.py run` with the world's draw of the bucket's discipline (scenarios/swarm.py,
`_bucket` and `_aliases`) forced once both are drawn: the RNG is consumed as without the pin, so a
seed's world differs from the unpinned one in its tokens only (then in what they change).
`--param` takes integers only, and no scenario pins the discipline.
"""

from __future__ import annotations

import argparse
import sys

NODES = "nodes/"


def listing_requests(history) -> dict:
    """The watch's requests in the history's settled span: per node process, its LISTs of nodes/
    (periods) and its GETs of a peer's nodes/<id>. Returns totals and the per-period figures."""
    settle = history.end_ms - history.options.get("liveness_ms", history.params["ttl_ms"] + history.params["grace_ms"])
    lists: dict[int, int] = {}
    gets: dict[int, int] = {}
    for i in history.of_kind("sent"):
        t, p, _kind, f = history.events[i]
        if t < settle or p < 0 or not history.processes[p].machine.startswith("m"):
            continue
        if f.op == "LIST" and f.key == NODES:
            lists[p] = lists.get(p, 0) + 1
        elif f.op == "GET" and f.key.startswith(NODES) and f.key != NODES + history.processes[p].node_id:
            gets[p] = gets.get(p, 0) + 1
    procs = sorted(set(lists) | set(gets))
    node_ids = sorted({history.processes[p].node_id for p in procs})
    n_lists, n_gets = sum(lists.values()), sum(gets.values())
    return {"nodes": len(node_ids), "lists": n_lists, "peer_gets": n_gets,
            "gets_per_node_period": n_gets / n_lists if n_lists else 0.0}


def pin_discipline(versioning: str, p_alias: float) -> None:
    """Force the bucket's token discipline in every seed drawn from now on in this process (the draw's
    own stages run first, each on its stream, so every draw is what it is without the pin)."""
    from scenarios import swarm

    if versioning not in ("md5", "opaque"):
        raise SystemExit(f"--versioning must be md5 or opaque, got {versioning!r}")
    if versioning == "md5" and p_alias:
        raise SystemExit("--p-alias needs --versioning opaque (an MD5 ETag is the same on a read and a write)")

    def pinned(stage):
        def run(ctx):
            stage(ctx)
            ctx.o["versioning"] = versioning
            ctx.o["p_alias"] = p_alias
        run.__name__ = getattr(stage, "__name__", "stage")
        return run

    # after the alias stage, whose draw depends on the versioning drawn (it draws only under opaque):
    # both draw as they would, then both values are replaced
    for i, (part, stage) in enumerate(swarm.STAGES):
        if stage is swarm._aliases:
            swarm.STAGES[i] = (part, pinned(stage))


def measure(model_name: str, scenario: str, start: int, count: int) -> dict:
    """Seeds start..start+count-1 of `scenario` for the model: the watch's requests summed."""
    from broken_models import load_model
    from campaign.run import parse_pins
    from scenarios.sim import run_seed

    model = load_model(model_name)
    tot = {"seeds": 0, "lists": 0, "peer_gets": 0, "node_seconds": 0}
    by_n: dict[int, list[int]] = {}
    for s in range(start, start + count):
        h = run_seed(s, model, scenario, parse_pins([], scenario=scenario, start=s, count=1), model_name)
        r = listing_requests(h)
        tot["seeds"] += 1
        tot["lists"] += r["lists"]
        tot["peer_gets"] += r["peer_gets"]
        row = by_n.setdefault(r["nodes"], [0, 0, 0])
        row[0] += 1
        row[1] += r["lists"]
        row[2] += r["peer_gets"]
    tot["gets_per_node_period"] = tot["peer_gets"] / tot["lists"] if tot["lists"] else 0.0
    tot["by_nodes"] = {n: {"seeds": v[0], "lists": v[1], "peer_gets": v[2],
                           "gets_per_node_period": v[2] / v[1] if v[1] else 0.0} for n, v in sorted(by_n.items())}
    return tot


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python tests/kits/measure_etag.py")
    sub = ap.add_subparsers(dest="cmd", required=True)
    rq = sub.add_parser("requests", help="the watch's requests per node and period, correct model vs P-1")
    rq.add_argument("--scenario", default="calm")
    rq.add_argument("--seeds", type=int, default=100)
    rq.add_argument("--start", type=int, default=0)
    rq.add_argument("--models", default="correct,p1_etag_gated_listing")
    rq.add_argument("--versioning", choices=("md5", "opaque"))
    rq.add_argument("--p-alias", type=float, default=0.0)
    rn = sub.add_parser("run", help="runner.py run with the bucket's token discipline pinned")
    rn.add_argument("--versioning", choices=("md5", "opaque"), required=True)
    rn.add_argument("--p-alias", type=float, default=0.0)
    args, rest = ap.parse_known_args(argv)
    from campaign import compiled

    compiled.install()  # as the command line does, before any hot module is imported
    if args.versioning:
        pin_discipline(args.versioning, args.p_alias)
    if args.cmd == "run":
        from nodelease.cli import main as runner

        return runner(["run", "--workers", "1", *rest])
    if rest:
        ap.error(f"unknown arguments: {' '.join(rest)}")
    pin = f", versioning {args.versioning} p_alias {args.p_alias}" if args.versioning else ""
    print(f"{args.scenario}, seeds {args.start}..{args.start + args.seeds - 1}{pin}: the settled span's "
          "requests of the watch per node and period (ADR: 1 LIST + N GETs a node)")
    print("| model | nodes N | seeds | LISTs (node-periods) | peer GETs | GETs per node-period | "
          "requests per period (cluster) | ADR N x (1 + N) |")
    print("|---|---|---|---|---|---|---|---|")
    for name in args.models.split(","):
        m = measure(name, args.scenario, args.start, args.seeds)
        for n, row in m["by_nodes"].items():
            g = row["gets_per_node_period"]
            print(f"| {name} | {n} | {row['seeds']} | {row['lists']} | {row['peer_gets']} | {g:.3f} | "
                  f"{n * (1 + g):.2f} | {n * (1 + n)} |")
        print(f"| {name} | all | {m['seeds']} | {m['lists']} | {m['peer_gets']} | {m['gets_per_node_period']:.3f} | | |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
