"""What a seed draws: its world (swarm testing) and the named scenarios.

Each seed draws its own mix and rates of faults from the world's one seeded
RNG (TigerBeetle's VOPR, "swarm testing"): a fault is switched on for a seed
or not, and if on, at a rate of its own. A named scenario forces parts of the
draw; the draw itself always consumes the RNG the same way, so a scenario
changes only what it forces. Every drawn option lands in the history.
"""

from __future__ import annotations

from model.params import Params

SCENARIOS = {
    "swarm": "the default: every fault switched on or off per seed, at rates of its own",
    "calm": "no faults at all: a baseline",
    "twins": "a second process under an existing node id, always",
    "outages": "bucket outages for one node or all, always, some longer than ttl + grace",
    "lossy": "lost replies, late-applied writes and failed requests, always",
    "skew": "clocks exactly max_skew apart, with drift",
    "blip": "one global bucket blip and no other fault around it (INV-9's proviso)",
    "stops": "clean stops, drains and moves, always",
    "upgrade": "old per-actor-lease nodes run first, then stop; new nodes start (section 6)",
    # one mix per race a broken model needs, likely enough to happen in a 30 s real-S3 run
    "fence": "nodes crash and come back slowly, or are cut off past ttl + grace: peers fence them (BM-1)",
    "rewake": "short refused cut-offs while a hot actor hibernates and wakes: releases stay pending and a "
              "node re-acquires its own record (BM-2)",
    "resolver": "acquire writes lost, replies slow, clients retrying at once: an unresolved acquire meets "
                "a second acquisition at its generation (BM-3)",
}


def _pick(rng, options):
    return options[rng.randrange(len(options))]


DEFAULT_TAKEOVER_MS = 15_000  # ttl + grace at the defaults (T-1), the span the draw's times are written for


def draw(rng, scenario: str, params: Params, duration_ms: int | None = None, nodes: int | None = None,
         actors: int | None = None) -> dict:
    """Draw one seed's world. Returns plain data (ints, strings, lists, dicts).

    Times are written for the default timing and scale with ttl + grace (S), so that a
    world with the real-S3 world's short timing keeps the same shape. `duration_ms` fixes the
    run's length (the fault phase, then a quiet phase if it fits twice), `nodes` and `actors`
    fix those counts; each replaces its drawn value, the RNG consumed as without it."""
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r} (choices: {', '.join(SCENARIOS)})")
    p = params
    tg = p.ttl_ms + p.grace_ms
    nodes_pinned = nodes

    def S(ms: int) -> int:
        return ms * tg // DEFAULT_TAKEOVER_MS

    o: dict = {}
    o["nodes"] = rng.randint(2, 4)
    if nodes is not None:
        o["nodes"] = nodes
    o["fault_ms"] = rng.randint(S(45_000), S(100_000))
    # the quiet phase: long enough for every bound of the protocol to pass (INV-4, INV-7)
    o["quiet_ms"] = 4 * tg
    if duration_ms is not None:
        o["quiet_ms"] = o["quiet_ms"] if duration_ms >= 2 * o["quiet_ms"] else 0
        o["fault_ms"] = duration_ms - o["quiet_ms"]
    # the bucket
    o["versioning"] = _pick(rng, ("md5", "opaque"))
    o["absent_if_match"] = _pick(rng, (404, 412))
    o["p_conflict"] = _pick(rng, (0.0, 0.0, 0.3))
    o["p_alias"] = _pick(rng, (0.0, 0.5)) if o["versioning"] == "opaque" else 0.0
    # the network
    o["delay_ms_max"] = _pick(rng, (5, 20, 60, 120))  # each way; the tails come from slow replies and late writes
    o["upload_ms_max"] = _pick(rng, (0, 500, 3_000))  # a segment upload's extra time (not a fault: bandwidth)
    on = {k: rng.random() < 0.5 for k in ("fail_fast", "reply_lost", "late", "outages", "crashes", "twins",
                                           "request_lost", "slow_reply")}
    o["p_fail_fast"] = _pick(rng, (0.01, 0.05, 0.2)) if on["fail_fast"] else 0.0
    o["p_reply_lost"] = _pick(rng, (0.02, 0.1, 0.3)) if on["reply_lost"] else 0.0
    o["p_late"] = _pick(rng, (0.02, 0.1, 0.3)) if on["late"] else 0.0
    o["late_ms_max"] = _pick(rng, (S(1_000), S(5_000), S(15_000)))
    o["p_request_lost"] = _pick(rng, (0.01, 0.05, 0.15)) if on["request_lost"] else 0.0
    o["p_slow_reply"] = _pick(rng, (0.05, 0.2, 0.5)) if on["slow_reply"] else 0.0  # a reply up to a timeout late
    # a degraded bucket: writes applied late and replies slow together, as on a bad day
    o["degraded"] = rng.random() < 0.3
    if o["degraded"]:
        o["p_late"] = max(o["p_late"], 0.3)
        o["p_slow_reply"] = max(o["p_slow_reply"], 0.2)
    # processes
    o["restart_ms_max"] = max(200, _pick(rng, (S(200), S(2_000), S(10_000))))
    n_out = rng.randint(1, 4) if on["outages"] else 0
    n_crash = rng.randint(1, 4) if on["crashes"] else 0
    n_twin = rng.randint(1, 2) if on["twins"] else 0
    # clocks: all within max_skew of each other; half the seeds exactly at the bound
    o["skew_at_bound"] = rng.random() < 0.5
    o["drift_ppm_max"] = 0 if o["skew_at_bound"] else _pick(rng, (0, 0, 100, 500))

    if scenario == "calm":
        o.update(p_fail_fast=0.0, p_reply_lost=0.0, p_late=0.0, p_conflict=0.0, p_request_lost=0.0,
                 p_slow_reply=0.0, degraded=False)
        n_out = n_crash = n_twin = 0
    elif scenario == "twins":
        n_twin = max(n_twin, 1)
    elif scenario == "outages":
        n_out = max(n_out, 2)
    elif scenario == "lossy":
        o.update(p_fail_fast=max(o["p_fail_fast"], 0.05), p_reply_lost=max(o["p_reply_lost"], 0.1),
                 p_late=max(o["p_late"], 0.1), p_request_lost=max(o["p_request_lost"], 0.05))
    elif scenario == "skew":
        o.update(skew_at_bound=True, drift_ppm_max=0)

    # section 4 and the operator's mistakes
    nodes = [f"n{i}" for i in range(o["nodes"])]
    fault = o["fault_ms"]
    on_stops = rng.random() < 0.5 or scenario == "stops"
    o["stops"] = [[_pick(rng, nodes), rng.randint(0, fault), _pick(rng, (0, S(1_000), S(10_000), S(30_000)))]
                  for _ in range(rng.randint(1, 2) if on_stops else 0)]  # [node, at, restarted after (0: at once)]
    o["drains"] = [[_pick(rng, nodes), rng.randint(0, fault), rng.randint(S(2_000), S(20_000)), _pick(rng, ("resume", "stop"))]
                   for _ in range(rng.randint(1, 2) if on_stops else 0)]  # [node, at, then after, resume|stop]
    # an operator deletes nodes/<id> by mistake; in half of those seeds, thinking the machine
    # gone, starts a replacement process under that id soon after (on machine r0)
    o["deletes"] = [[_pick(rng, nodes), rng.randint(0, fault), rng.random() < 0.5]
                    for _ in range(1 if rng.random() < 0.25 else 0)]
    # Twins and mistaken deletes come together in some seeds: a twin whose start check straddles
    # a delete can hold the node lease beside the other process. That is finding F-1 about the
    # ADR (checkers/findings.py): the campaign counts it rather than losing the faults.
    o["quiet_crash"] = rng.random() < 0.6  # an owner dies early in the quiet phase: failover is measured (INV-7)
    o["quiet_stop"] = rng.random() < 0.2  # a node stops cleanly as the quiet phase begins and stays down
    # INV-9: a global blip, restored at once; in "blip" seeds with no other fault around it
    o["blip_alone"] = scenario == "blip" or rng.random() < 0.1
    blip_len = _pick(rng, (rng.randint(S(200), S(3_000)), rng.randint(S(3_000), p.ttl_ms), rng.randint(p.ttl_ms, 6 * p.ttl_ms)))
    o["blip"] = [rng.randint(tg + S(5_000), max(tg + S(5_000), fault - S(5_000))), blip_len,
                 _pick(rng, ("blackhole", "refuse"))] if (o["blip_alone"] or rng.random() < 0.2) else []
    if scenario == "calm":
        o.update(deletes=[], blip=[], quiet_crash=False)
    if scenario == "stops" and not o["stops"]:
        o["stops"] = [[nodes[0], fault // 2, S(1_000)]]
    if o["blip_alone"]:
        o.update(p_fail_fast=0.0, p_reply_lost=0.0, p_late=0.0, p_request_lost=0.0, p_slow_reply=0.0,
                 degraded=False, stops=[], drains=[], deletes=[], quiet_crash=False, quiet_stop=False)
        n_out = n_crash = n_twin = 0

    o["outages"] = []
    for _ in range(n_out):
        who = _pick(rng, ["*"] + nodes)
        length = _pick(rng, (rng.randint(S(300), S(3_000)), rng.randint(S(3_000), tg), rng.randint(tg, 3 * tg)))
        mode = _pick(rng, ("blackhole", "refuse"))
        o["outages"].append([who, rng.randint(0, fault), length, mode])
    o["crashes"] = [[_pick(rng, nodes), rng.randint(0, fault)] for _ in range(n_crash)]
    o["twins"] = []
    for k in range(n_twin):
        o["twins"].append([_pick(rng, nodes), rng.randint(0, fault), rng.randint(S(5_000), S(60_000))])

    # the workload: client requests for actors at random nodes, hibernation, moves, the operator
    o["actors"] = rng.randint(3, 10)
    if actors is not None:
        o["actors"] = actors
    o["request_gap_ms"] = _pick(rng, (S(300), S(800), S(2_000)))
    o["hibernate_gap_ms"] = _pick(rng, (S(1_000), S(2_500), S(6_000)))
    o["move_gap_ms"] = _pick(rng, (0, S(5_000), S(20_000)))
    o["p_client_retry"] = _pick(rng, (0.0, 0.5, 0.9))  # a client retries a failed request at the same node
    o["hot_share"] = _pick(rng, (0.0, 0.3, 0.7))  # the share of requests that go to one hot actor
    n_fence = rng.randint(0, 2) if rng.random() < 0.3 else 0
    if scenario == "calm" or o["blip_alone"]:
        n_fence = 0
    o["operator_fences"] = [[_pick(rng, nodes), rng.randint(0, fault)] for _ in range(n_fence)]

    if scenario in RACES:
        pinned = {k for k, v in (("nodes", nodes_pinned), ("actors", actors)) if v is not None}
        RACES[scenario](rng, o, S, nodes, tg, pinned)

    # section 6: an upgrade from per-actor leases, in some seeds of the swarm
    o["upgrade"] = _draw_upgrade(rng, o["nodes"], S) if (scenario == "upgrade" or (
        scenario == "swarm" and rng.random() < 0.15)) else None
    if o["upgrade"]:
        o["blip_alone"] = False  # old binaries around a blip are faults of their own (INV-9's proviso)

    machines = [f"m{i}" for i in range(o["nodes"])] + [f"t{k}" for k in range(len(o["twins"]))] + ["op", "r0"]
    if o["upgrade"]:
        machines += [f"om{i}" for i in range(o["nodes"])]
    o["clocks"] = _draw_clocks(rng, machines, p.max_skew_ms, o["skew_at_bound"], o["drift_ppm_max"],
                               fault + 10 * tg)
    up = o["upgrade"]
    if up and up["future_ms"]:
        # a retired node (machine omf) whose clock was far ahead: its last heartbeats are
        # dated in the future (UP-2); it serves nothing and is gone before the switch
        o["clocks"]["omf"] = [o["clocks"]["m0"][0] + up["future_ms"], 0]
    return o


# --- the races the broken models need, made likely (each forces its part of the draw) -----------


def _fence_race(rng, o, S, nodes, tg, pinned) -> None:
    """A node stops writing its lease while its peers watch it: crashed and kept down past
    ttl + grace (a quicker restart's first write would replace the object first) or cut off
    past ttl + grace. Peers fence it (FN-3), racing each other (FN-4) when there are three;
    an owner also dies early in the quiet phase (BM-1)."""
    fault = o["fault_ms"]
    _calm_but_the_race(o)
    if "nodes" not in pinned:
        o["nodes"] = 3
    nodes = [f"n{i}" for i in range(o["nodes"])]
    # two crashes on different nodes, after the leases were first written, far enough apart
    # that the others are up to fence each
    first = rng.randrange(len(nodes))
    o["crashes"] = [[nodes[first], 3 * tg // 2 + rng.randint(0, tg)],
                    [nodes[(first + 1) % len(nodes)], fault // 2 + rng.randint(0, tg)]]
    o["outages"] = [[_pick(rng, nodes), rng.randint(0, fault // 2), rng.randint(tg, 2 * tg), "blackhole"]]
    o["restart_ms_min"], o["restart_ms_max"] = 2 * tg, 3 * tg
    o["quiet_crash"] = True


def _rewake_race(rng, o, S, nodes, tg, pinned) -> None:
    """A hot actor hibernates and wakes on one node while that node is refused the bucket for
    less than its lease's span: the release fails and stays pending (OR-5), the next request
    re-acquires the record that still names this process (OR-3's + 1, BM-2)."""
    fault = o["fault_ms"]
    if "actors" not in pinned:
        o["actors"] = 2
    o.update(hot_share=0.7, request_gap_ms=S(300), hibernate_gap_ms=S(1_000), move_gap_ms=0,
             p_fail_fast=0.0, p_reply_lost=0.0, p_late=0.0, p_request_lost=0.0, p_slow_reply=0.0,
             degraded=False, crashes=[], twins=[], deletes=[], stops=[], drains=[], blip=[], blip_alone=False)
    k = rng.randint(6, 10)
    o["outages"] = [[nodes[i % len(nodes)], fault // 6 + i * (fault * 2 // 3) // k, rng.randint(S(2_000), S(6_000)),
                     "refuse"] for i in range(k)]


def _resolver_race(rng, o, S, nodes, tg, pinned) -> None:
    """Writes to ownership records are lost or answered slowly, and clients retry at once at the
    same node: an acquire's outcome is unknown (OR-7) while the same node's next acquisition
    writes the same generation, and the resolver reads between that write landing and its
    reply (BM-3). Only record writes are hit, so node leases, routing and the resolver's reads
    stay sound."""
    if "nodes" not in pinned:
        o["nodes"] = 2
    if "actors" not in pinned:
        o["actors"] = 2
    o.update(fault_target=["PUT", "owners/"], hot_share=0.7, request_gap_ms=S(150), p_client_retry=0.9,
             hibernate_gap_ms=S(2_500), move_gap_ms=0, p_request_lost=0.5, p_late=0.0, p_slow_reply=0.9,
             p_reply_lost=0.0, p_fail_fast=0.0, degraded=False)
    _calm_but_the_race(o)


def _calm_but_the_race(o) -> None:
    """No other fault: nothing else ends holds or leases while the race plays out."""
    o.update(crashes=[], outages=[], twins=[], deletes=[], stops=[], drains=[], operator_fences=[], blip=[],
             blip_alone=False, quiet_crash=False, quiet_stop=False)


RACES = {"fence": _fence_race, "rewake": _rewake_race, "resolver": _resolver_race}


def _draw_upgrade(rng, nodes: int, S) -> dict:
    """Old nodes run actors first; they stop (cleanly or not); new nodes start after a gap."""
    old_ms = rng.randint(S(25_000), S(50_000))
    gap = _pick(rng, (0, S(2_000), S(10_000), S(20_000)))  # the procedure says: once no old node is live
    return {
        "old_ms": old_ms,
        "new_at": old_ms + gap,
        "same_ids": rng.random() < 0.5,  # node ids reused across the switch
        "old_stop": [_pick(rng, ("clean", "crash")) for _ in range(nodes)],
        # an old node still running after the switch, stopping later; its heartbeat may stall
        # while its renewals go on (a stalled listing)
        "straggler": rng.randrange(nodes) if rng.random() < 0.3 else None,
        "straggle_ms": rng.randint(S(10_000), S(60_000)),
        "stall": rng.random() < 0.5,
        # an old binary started again after the switch, for a while
        "old_restart": [rng.randrange(nodes), rng.randint(S(5_000), S(30_000))] if rng.random() < 0.2 else None,
        "future_ms": _pick(rng, (0, 0, 0, rng.randint(S(20_000), S(120_000)))),
        "p_gc": _pick(rng, (0.0, 0.5)),  # the old GC deleted released leases/ of idle actors
    }


def _draw_clocks(rng, machines, max_skew_ms, at_bound, drift_ppm_max, horizon_ms):
    """Offsets and drifts such that any two clocks differ by at most max_skew over the run."""
    base = rng.randint(0, 1_000_000)  # local time is never true time
    margin = 2 * drift_ppm_max * horizon_ms // 1_000_000 + (2 if drift_ppm_max else 0)
    spread = max(0, max_skew_ms - margin)
    clocks = {}
    for m in machines:
        drift = rng.randint(-drift_ppm_max, drift_ppm_max) if drift_ppm_max else 0
        clocks[m] = [base + rng.randint(0, spread), drift]
    if at_bound and len(machines) >= 2:
        lo, hi = rng.sample(range(len(machines)), 2)
        clocks[machines[lo]] = [base, 0]
        clocks[machines[hi]] = [base + max_skew_ms, 0]
    return clocks
