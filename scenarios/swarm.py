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
}


def _pick(rng, options):
    return options[rng.randrange(len(options))]


def draw(rng, scenario: str, params: Params) -> dict:
    """Draw one seed's world. Returns plain data (ints, strings, lists, dicts)."""
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r} (choices: {', '.join(SCENARIOS)})")
    p = params
    o: dict = {}
    o["nodes"] = rng.randint(2, 4)
    o["fault_ms"] = rng.randint(45_000, 100_000)
    # the quiet phase: long enough for every bound of the protocol to pass (INV-4, INV-7)
    o["quiet_ms"] = 4 * (p.ttl_ms + p.grace_ms)
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
    o["late_ms_max"] = _pick(rng, (1_000, 5_000, 15_000))
    o["p_request_lost"] = _pick(rng, (0.01, 0.05, 0.15)) if on["request_lost"] else 0.0
    o["p_slow_reply"] = _pick(rng, (0.05, 0.2, 0.5)) if on["slow_reply"] else 0.0  # a reply up to a timeout late
    # a degraded bucket: writes applied late and replies slow together, as on a bad day
    o["degraded"] = rng.random() < 0.3
    if o["degraded"]:
        o["p_late"] = max(o["p_late"], 0.3)
        o["p_slow_reply"] = max(o["p_slow_reply"], 0.2)
    # processes
    o["restart_ms_max"] = _pick(rng, (200, 2_000, 10_000))
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
    o["stops"] = [[_pick(rng, nodes), rng.randint(0, fault), _pick(rng, (0, 1_000, 10_000, 30_000))]
                  for _ in range(rng.randint(1, 2) if on_stops else 0)]  # [node, at, restarted after (0: at once)]
    o["drains"] = [[_pick(rng, nodes), rng.randint(0, fault), rng.randint(2_000, 20_000), _pick(rng, ("resume", "stop"))]
                   for _ in range(rng.randint(1, 2) if on_stops else 0)]  # [node, at, then after, resume|stop]
    # an operator deletes nodes/<id> by mistake; in half of those seeds, thinking the machine
    # gone, starts a replacement process under that id soon after (on machine r0)
    o["deletes"] = [[_pick(rng, nodes), rng.randint(0, fault), rng.random() < 0.5]
                    for _ in range(1 if rng.random() < 0.25 else 0)]
    if n_twin:
        # Out of the protocol's fault model: a twin whose start check straddles a mistaken delete
        # can miss the other process's object (written and deleted between two of its reads) and
        # create its own while the other is still valid: two processes hold one node lease (the
        # checker found this: LEASE-1 and INV-1). The ADR's own case, a replacement started after
        # the delete, is kept (the third field).
        o["deletes"] = []
    o["quiet_crash"] = rng.random() < 0.6  # an owner dies early in the quiet phase: failover is measured (INV-7)
    o["quiet_stop"] = rng.random() < 0.2  # a node stops cleanly as the quiet phase begins and stays down
    # INV-9: a global blip, restored at once; in "blip" seeds with no other fault around it
    o["blip_alone"] = scenario == "blip" or rng.random() < 0.1
    blip_len = _pick(rng, (rng.randint(200, 3_000), rng.randint(3_000, p.ttl_ms), rng.randint(p.ttl_ms, 6 * p.ttl_ms)))
    o["blip"] = [rng.randint(p.ttl_ms + p.grace_ms + 5_000, max(p.ttl_ms + p.grace_ms + 5_000, fault - 5_000)), blip_len,
                 _pick(rng, ("blackhole", "refuse"))] if (o["blip_alone"] or rng.random() < 0.2) else []
    if scenario == "calm":
        o.update(deletes=[], blip=[], quiet_crash=False)
    if scenario == "stops" and not o["stops"]:
        o["stops"] = [[nodes[0], fault // 2, 1_000]]
    if o["blip_alone"]:
        o.update(p_fail_fast=0.0, p_reply_lost=0.0, p_late=0.0, p_request_lost=0.0, p_slow_reply=0.0,
                 degraded=False, stops=[], drains=[], deletes=[], quiet_crash=False, quiet_stop=False)
        n_out = n_crash = n_twin = 0

    o["outages"] = []
    for _ in range(n_out):
        who = _pick(rng, ["*"] + nodes)
        length = _pick(rng, (rng.randint(300, 3_000), rng.randint(3_000, p.ttl_ms + p.grace_ms),
                             rng.randint(p.ttl_ms + p.grace_ms, 3 * (p.ttl_ms + p.grace_ms))))
        mode = _pick(rng, ("blackhole", "refuse"))
        o["outages"].append([who, rng.randint(0, fault), length, mode])
    o["crashes"] = [[_pick(rng, nodes), rng.randint(0, fault)] for _ in range(n_crash)]
    o["twins"] = []
    for k in range(n_twin):
        o["twins"].append([_pick(rng, nodes), rng.randint(0, fault), rng.randint(5_000, 60_000)])

    # the workload: client requests for actors at random nodes, hibernation, moves, the operator
    o["actors"] = rng.randint(3, 10)
    o["request_gap_ms"] = _pick(rng, (300, 800, 2_000))
    o["hibernate_gap_ms"] = _pick(rng, (1_000, 2_500, 6_000))
    o["move_gap_ms"] = _pick(rng, (0, 5_000, 20_000))
    o["p_client_retry"] = _pick(rng, (0.0, 0.5, 0.9))  # a client retries a failed request at the same node
    o["hot_share"] = _pick(rng, (0.0, 0.3, 0.7))  # the share of requests that go to one hot actor
    n_fence = rng.randint(0, 2) if rng.random() < 0.3 else 0
    if scenario == "calm" or o["blip_alone"]:
        n_fence = 0
    o["operator_fences"] = [[_pick(rng, nodes), rng.randint(0, fault)] for _ in range(n_fence)]

    # section 6: an upgrade from per-actor leases, in some seeds of the swarm
    o["upgrade"] = _draw_upgrade(rng, o["nodes"], p) if (scenario == "upgrade" or (
        scenario == "swarm" and rng.random() < 0.15)) else None
    if o["upgrade"]:
        o["blip_alone"] = False  # old binaries around a blip are faults of their own (INV-9's proviso)

    machines = [f"m{i}" for i in range(o["nodes"])] + [f"t{k}" for k in range(len(o["twins"]))] + ["op", "r0"]
    if o["upgrade"]:
        machines += [f"om{i}" for i in range(o["nodes"])]
    o["clocks"] = _draw_clocks(rng, machines, p.max_skew_ms, o["skew_at_bound"], o["drift_ppm_max"],
                               fault + 10 * (p.ttl_ms + p.grace_ms))
    up = o["upgrade"]
    if up and up["future_ms"]:
        # a retired node (machine omf) whose clock was far ahead: its last heartbeats are
        # dated in the future (UP-2); it serves nothing and is gone before the switch
        o["clocks"]["omf"] = [o["clocks"]["m0"][0] + up["future_ms"], 0]
    return o


def _draw_upgrade(rng, nodes: int, p: Params) -> dict:
    """Old nodes run actors first; they stop (cleanly or not); new nodes start after a gap."""
    old_ms = rng.randint(25_000, 50_000)
    gap = _pick(rng, (0, 2_000, 10_000, 20_000))  # the procedure says: once no old node is live
    return {
        "old_ms": old_ms,
        "new_at": old_ms + gap,
        "same_ids": rng.random() < 0.5,  # node ids reused across the switch
        "old_stop": [_pick(rng, ("clean", "crash")) for _ in range(nodes)],
        # an old node still running after the switch, stopping later; its heartbeat may stall
        # while its renewals go on (a stalled listing)
        "straggler": rng.randrange(nodes) if rng.random() < 0.3 else None,
        "straggle_ms": rng.randint(10_000, 60_000),
        "stall": rng.random() < 0.5,
        # an old binary started again after the switch, for a while
        "old_restart": [rng.randrange(nodes), rng.randint(5_000, 30_000)] if rng.random() < 0.2 else None,
        "future_ms": _pick(rng, (0, 0, 0, rng.randint(20_000, 120_000))),
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
