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
    "deadline": "deadline races, always: the owner on the slowest clock cut off right after an acknowledged "
                "lease write, the taker on the fastest asked for its actors from the first instant it may free them",
    "fence": "nodes crash and come back slowly, or are cut off past ttl + grace: peers fence them (BM-1)",
    "rewake": "short refused cut-offs while a hot actor hibernates and wakes: releases stay pending and a "
              "node re-acquires its own record (BM-2)",
    "resolver": "acquire writes lost, replies slow, clients retrying at once: an unresolved acquire meets "
                "a second acquisition at its generation (BM-3)",
}


def _pick(rng, options):
    return options[rng.randrange(len(options))]


DEFAULT_TAKEOVER_MS = 15_000  # ttl + grace at the defaults (T-1), the span the draw's times are written for

# --- the configuration: each seed draws its own timing, often exactly on a bound ---------------------

CONFIG_FAMILIES = {
    "default": "T-1's defaults: ttl 10 s, grace 5 s, safety 2 s, max_skew 1 s, heartbeat 3 s, attempt 2 s",
    "bounds": "ttl from 6 to 20 s, with T-2 (grace + safety = 2 max_skew), T-3 (P = ttl / 3) and T-4 "
              "(A = (ttl - safety) / 3) each exactly at equality in most seeds",
    "scaled": "the real-S3 world's short timing (ttl 2 s), some of it on the bounds",
    "large": "long timing (ttl 30 s), some of it on the bounds",
}
PARAM_NAMES = ("ttl_ms", "grace_ms", "safety_ms", "max_skew_ms", "heartbeat_period_ms", "attempt_timeout_ms")


def draw_params(rng, pinned: dict | None = None, scenario: str = "swarm") -> tuple[Params, str]:
    """One seed's valid configuration (T-2..T-4 hold) and its family. Pinned values (--param) hold
    for every seed; the rest is drawn, then moved only as far as the bounds demand. The
    `deadline` scenario always sits on T-2's bound, where a deadline race has no margin."""
    family = _pick(rng, ("default", "bounds", "bounds", "bounds", "scaled", "large"))
    if scenario == "deadline" and family == "default":
        family = "bounds"
    if family == "default":
        d = Params().to_dict()
    else:
        ttl = {"bounds": rng.randint(6, 20) * 1_000, "scaled": 2_000, "large": 30_000}[family]
        safety = ttl * _pick(rng, (10, 20, 25)) // 100 // 2 * 2
        if rng.random() < 0.7 or scenario == "deadline":
            # T-2 at equality: grace + safety = 2 max_skew, with the margin split either way
            grace = ttl * _pick(rng, (0, 10, 25, 50)) // 100 // 2 * 2
            skew = (grace + safety) // 2
        else:
            skew = ttl * _pick(rng, (5, 10, 20)) // 100
            grace = max(0, 2 * skew - safety) + ttl // _pick(rng, (4, 2))
        d = {"ttl_ms": ttl, "safety_ms": safety, "max_skew_ms": skew,
             "grace_ms": grace,
             # T-3: P = min(heartbeat, ttl / 3), at ttl / 3 in most seeds
             "heartbeat_period_ms": ttl // 3 if rng.random() < 0.6 else ttl // _pick(rng, (4, 5)),
             # T-4: A <= (ttl - safety) / 3, at the limit in most seeds
             "attempt_timeout_ms": (ttl - safety) // 3 if rng.random() < 0.6 else (ttl - safety) // _pick(rng, (4, 6))}
    for k, v in (pinned or {}).items():
        d[k] = v
    return fit_params(d, pinned or {}), family


def fit_params(d: dict, pinned: dict) -> Params:
    """Move the values not pinned just enough for T-2..T-4 to hold; raise ParamsError when the
    pinned ones alone break a bound."""
    from model.params import validate

    d = dict(d)
    if "ttl_ms" not in pinned:  # room for what is pinned: T-3, T-4 and NL-4 bound ttl from below
        need = d["ttl_ms"]
        if "heartbeat_period_ms" in pinned:
            need = max(need, 3 * d["heartbeat_period_ms"])
        if "safety_ms" in pinned:
            need = max(need, d["safety_ms"] + 3 * max(1, d["attempt_timeout_ms"]))
        if "attempt_timeout_ms" in pinned:
            need = max(need, 3 * d["attempt_timeout_ms"] + d["safety_ms"])
        d["ttl_ms"] = need
    if d["safety_ms"] >= d["ttl_ms"] and "safety_ms" not in pinned:
        d["safety_ms"] = d["ttl_ms"] // 5
    if d["grace_ms"] + d["safety_ms"] < 2 * d["max_skew_ms"]:
        if "grace_ms" not in pinned:
            d["grace_ms"] = 2 * d["max_skew_ms"] - d["safety_ms"]
        elif "max_skew_ms" not in pinned:
            d["max_skew_ms"] = (d["grace_ms"] + d["safety_ms"]) // 2
        elif "safety_ms" not in pinned:
            d["safety_ms"] = 2 * d["max_skew_ms"] - d["grace_ms"]
    if 3 * d["heartbeat_period_ms"] > d["ttl_ms"] and "heartbeat_period_ms" not in pinned:
        d["heartbeat_period_ms"] = d["ttl_ms"] // 3
    if 3 * d["attempt_timeout_ms"] > d["ttl_ms"] - d["safety_ms"] and "attempt_timeout_ms" not in pinned:
        d["attempt_timeout_ms"] = (d["ttl_ms"] - d["safety_ms"]) // 3
    return validate(Params(**d))


def on_bounds(p: Params) -> list[str]:
    """Which of T-2, T-3, T-4 the configuration sits on, exactly."""
    out = []
    if p.grace_ms + p.safety_ms == 2 * p.max_skew_ms:
        out.append("T-2")
    if p.heartbeat_period_ms * 3 >= p.ttl_ms - 2:  # ttl / 3, rounded down
        out.append("T-3")
    if p.attempt_timeout_ms == (p.ttl_ms - p.safety_ms) // 3:
        out.append("T-4")
    return out


LIVENESS_FLOOR_MS = 10_000  # the model's own back-offs and bounds (8 s at most) do not scale with the timing


def draw(rng, scenario: str, params: Params, duration_ms: int | None = None, nodes: int | None = None,
         actors: int | None = None, liveness_floor_ms: int = LIVENESS_FLOOR_MS) -> dict:
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
    # its span: ttl + grace, never under the floor (the real-S3 world, short of time, sets none)
    o["liveness_ms"] = max(tg, liveness_floor_ms)
    o["quiet_ms"] = 4 * o["liveness_ms"]
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
    # slow replies: up to an attempt timeout late, or half of them just under it, or well past it
    o["slow_tail"] = _pick(rng, ("within", "edge", "past"))
    o["read_replies_lost"] = rng.random() < 0.3  # lost replies hit reads too
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
    # clocks: each within max_skew of true time; in most seeds two node machines at the two ends
    o["clock_mode"] = _pick(rng, ("spread", "opposite", "opposite", "sweep"))

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
        o.update(clock_mode="opposite")

    # section 4 and the operator's mistakes
    nodes = [f"n{i}" for i in range(o["nodes"])]
    fault = o["fault_ms"]
    on_stops = rng.random() < 0.5 or scenario == "stops"
    o["stops"] = [[_pick(rng, nodes), rng.randint(0, fault), _pick(rng, (0, S(1_000), S(10_000), S(30_000)))]
                  for _ in range(rng.randint(1, 2) if on_stops else 0)]  # [node, at, restarted after (0: at once)]
    # [node, at, then after, resume|stop, an acquisition's write lost just before it (F-2)]; some
    # drains last long enough to be judged (INV-11)
    o["drains"] = []
    o["drains_with_holds"] = True  # the world asks the node for every actor before each drain (core.schedule)
    # ... and tells it to drain once it holds one, its actors kept busy to the drain's bound (INV-11 judges
    # a drain that must release holds itself, CS-3)
    o["drains_wait_for_holds"] = True
    o["forget_gone"] = True  # the quiet phase's operator asks `cluster forget` of the nodes it knows gone
    for _ in range(rng.randint(1, 2) if on_stops else 0):
        node, at = _pick(rng, nodes), rng.randint(0, fault)
        after = _pick(rng, (rng.randint(S(2_000), S(20_000)), rng.randint(2 * tg, 4 * tg)))
        o["drains"].append([node, at, min(after, fault - at + 1), _pick(rng, ("resume", "stop")), rng.random() < 0.5])
    # an operator deletes nodes/<id> by mistake; in half of those seeds, thinking the machine
    # gone, starts a replacement process under that id soon after (on machine r0)
    # [node, at, a replacement started, takeover attempts and an operator fence soon after]
    o["deletes"] = [[_pick(rng, nodes), rng.randint(0, fault), rng.random() < 0.5, rng.random() < 0.7]
                    for _ in range(1 if rng.random() < 0.35 else 0)]
    # Twins and mistaken deletes come together in some seeds: a twin whose start check straddles
    # a delete can hold the node lease beside the other process. That is finding F-1 about the
    # ADR (checkers/findings.py): the campaign counts it rather than losing the faults.
    o["quiet_crash"] = rng.random() < 0.6  # an owner dies early in the quiet phase: failover is measured (INV-7)
    o["quiet_stop"] = rng.random() < 0.2  # a node stops cleanly as the quiet phase begins and stays down
    # INV-9: a global blip, restored at once; in "blip" seeds with no other fault around it
    o["blip_alone"] = scenario == "blip" or rng.random() < 0.2
    # half the blips outlast some node's lease (ttl or more): who lapses and who does not is
    # where FN-2's restarted watch matters (the nodes' cadences are spread, see `starts`)
    blip_len = _pick(rng, (rng.randint(S(200), S(3_000)), rng.randint(S(3_000), p.ttl_ms),
                           rng.randint(p.ttl_ms, 6 * p.ttl_ms), rng.randint(p.ttl_ms, 2 * p.ttl_ms)))
    o["blip"] = [rng.randint(tg + S(5_000), max(tg + S(5_000), fault - S(5_000))), blip_len,
                 _pick(rng, ("blackhole", "blackhole", "refuse"))] if (o["blip_alone"] or rng.random() < 0.2) else []
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

    # deadline races (T-2, T-5): the owner on the slowest clock cut off right after an acknowledged
    # write, the taker on the fastest asked for its actors from the earliest instant it may free them
    o["deadline_races"] = sorted(rng.randint(2 * tg, max(2 * tg, fault - 2 * tg)) for _ in range(
        rng.randint(1, 2) if rng.random() < 0.4 or scenario == "deadline" else 0))
    if o["blip_alone"]:
        o["deadline_races"] = []
    if o["deadline_races"] and o["clock_mode"] == "spread":
        o["clock_mode"] = "opposite"
    # half the races cut off only the owner's lease writes, and ask it for free actors as its lease
    # runs out: acquisitions straddle its deadline (OR-2), and its acts near it reach the bucket
    o["lapse_acquires"] = bool(o["deadline_races"]) and rng.random() < 0.5
    # a machine gone for good: never restarted, not even in the quiet phase (peers must fence it)
    o["crash_for_good"] = ([[_pick(rng, nodes), rng.randint(tg, max(tg, fault - tg))]]
                           if rng.random() < 0.2 and not o["blip_alone"] else [])
    # a crowd: many actors on one node released into a refusing bucket (BD-2, BD-3), and most
    # nodes of a large cluster gone at once, fenced by the one left (BD-1)
    o["mass"] = []
    if scenario == "swarm" and rng.random() < 0.03 and nodes_pinned is None:
        o["nodes"] = 10
        nodes = [f"n{i}" for i in range(10)]
        if actors is None:
            o["actors"] = 40
        o["mass"] = [["n0", rng.randint(tg, max(tg, fault // 3))]]
        # (early enough that the one left is back, done watching and fencing them before the quiet
        # phase: its faults, slow replies to fence writes among them, stop there)
        gone_at = rng.randint(fault // 3, max(fault // 3, fault - 3 * tg))
        o["crash_for_good"] = [[n, gone_at] for n in nodes[1:]]
        # the one left is cut off meanwhile: back, it watches them all afresh (FN-2) and finds every
        # one of them lapsed at once, more than it may fence at once
        o.update(deletes=[], stops=[], drains=[], operator_fences=[], crashes=[], twins=[],
                 outages=[["n0", gone_at + tg // 2, tg, "blackhole"]], blip=[], blip_alone=False,
                 deadline_races=[], quiet_stop=False, request_gap_ms=0, hibernate_gap_ms=0, move_gap_ms=0)
        # the replies to node-lease writes come slowly (faults hit those alone): the fences it sends at
        # once are in flight together, and BD-1's bound binds on the writes too
        # and its reads are quick (5 ms each way): it reads the peers one after another, so the fences it
        # decides fall within a few round trips of each other, all inside one attempt timeout
        o.update(fault_target=["PUT", "nodes/"], p_slow_reply=0.9, delay_ms_max=5)
    if scenario in RACES:
        pinned = {k for k, v in (("nodes", nodes_pinned), ("actors", actors)) if v is not None}
        RACES[scenario](rng, o, S, nodes, tg, pinned)
        if o["deadline_races"] and o["clock_mode"] == "spread":  # a race needs its slow and fast clocks
            o["clock_mode"] = "opposite"
    # stretches in which writes land and their replies are lost
    o["reply_drops"] = ([[rng.randint(0, fault), rng.randint(S(2_000), S(10_000))]] if rng.random() < 0.2
                        and not o["blip_alone"] else [])
    # record storms (OR-7..OR-9; BM-3's race, in the swarm): a stretch in which half the record writes
    # are lost and most of the rest answered slowly, while clients retry at once at the same node: an
    # acquire's outcome is unknown while the same node's next acquisition writes the same generation
    o["record_storms"] = ([[rng.randint(0, fault), rng.randint(S(5_000), S(15_000))]] if rng.random() < 0.25
                          and not o["blip_alone"] else [])
    if o["record_storms"]:
        o["p_client_retry"] = 0.9
    # events take time (CS-1): a served request's event runs up to event_ms_max, a few much
    # longer; events served just before a clean stop outlast its bounded wait (stragglers)
    o["event_ms_max"] = _pick(rng, (0, S(50), S(500)))
    o["p_long_event"] = _pick(rng, (0.0, 0.02, 0.1))
    o["long_event_ms"] = [S(1_000), 10_000]
    o["stragglers"] = [k for k in range(len(o["stops"])) if rng.random() < (0.9 if scenario == "stops" else 0.6)]
    # NL-9's margin: half the twins win, their original's own lease writes lost through the twin's start
    # check; back, the original's write fails its condition and its re-read meets the twin's object
    o["twin_silences"] = [k for k in range(len(o["twins"])) if rng.random() < 0.5]
    # CS-2's margin: some clean stops' `released` writes are lost, their retries too, past A + 1 s
    o["stop_silences"] = [k for k in range(len(o["stops"])) if rng.random() < 0.3]
    # the nodes start spread over two lease periods: their cadences are not in lockstep
    o["starts"] = [rng.randint(0, 2 * p.period_ms) for _ in range(o["nodes"])]

    # section 6: an upgrade from per-actor leases, in some seeds of the swarm
    o["upgrade"] = _draw_upgrade(rng, o["nodes"], S, scenario == "upgrade") if (scenario == "upgrade" or (
        scenario == "swarm" and rng.random() < 0.15)) else None
    if o["upgrade"]:
        o["blip_alone"] = False  # old binaries around a blip are faults of their own (INV-9's proviso)

    machines = [f"m{i}" for i in range(o["nodes"])] + [f"t{k}" for k in range(len(o["twins"]))] + ["op", "r0"]
    if o["upgrade"]:
        machines += [f"om{i}" for i in range(o["nodes"])]
    horizon = fault + o["quiet_ms"] + (o["upgrade"]["new_at"] if o["upgrade"] else 0) + 2 * tg
    o["clocks"], o["slow_fast"], o["clock_base"] = _draw_clocks(rng, machines, [f"m{i}" for i in range(o["nodes"])], p.max_skew_ms,
                                               o["clock_mode"], horizon)
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
             blip_alone=False, quiet_crash=False, quiet_stop=False, crash_for_good=[], mass=[])


def _deadline_race(rng, o, S, nodes, tg, pinned) -> None:
    """Deadline races alone (they are drawn above for this scenario): the owner on the slowest clock
    cut off right after an acknowledged write, the taker on the fastest asked for its actors from
    the first instant it may free them; nothing else disturbs either (T-2, T-5)."""
    _calm_but_the_race(o)
    o.update(p_fail_fast=0.0, p_request_lost=0.0, p_late=0.0, p_reply_lost=0.0, p_slow_reply=0.0, degraded=False,
             hot_share=0.7, hibernate_gap_ms=S(6_000), move_gap_ms=0)
    fault = o["fault_ms"]
    o["deadline_races"] = [fault * (k + 1) // 4 for k in range(3)]


RACES = {"fence": _fence_race, "rewake": _rewake_race, "resolver": _resolver_race, "deadline": _deadline_race}


def _draw_upgrade(rng, nodes: int, S, focused: bool = False) -> dict:
    """Old nodes run actors first; they stop (cleanly or not); new nodes start after a gap.
    `focused` (the upgrade scenario): old binaries beside new ones (a straggler, a restart) are
    likelier, so old binaries meet new markers (UP-3, UP-4) in most seeds."""
    old_ms = rng.randint(S(25_000), S(50_000))
    gap = _pick(rng, (0, S(2_000), S(10_000), S(20_000)))  # the procedure says: once no old node is live
    up = {
        "old_ms": old_ms,
        "new_at": old_ms + gap,
        "same_ids": rng.random() < 0.5,  # node ids reused across the switch
        "old_stop": [_pick(rng, ("clean", "crash")) for _ in range(nodes)],
        # an old node still running after the switch, stopping later; its heartbeat may stall
        # while its renewals go on (a stalled listing)
        "straggler": rng.randrange(nodes) if rng.random() < (0.6 if focused else 0.3) else None,
        "straggle_ms": rng.randint(S(10_000), S(60_000)),
        "stall": rng.random() < 0.5,
        # an old binary started again after the switch, for a while
        "old_restart": ([rng.randrange(nodes), rng.randint(S(5_000), S(30_000))]
                        if rng.random() < (0.5 if focused else 0.2) else None),
        "future_ms": _pick(rng, (0, 0, 0, rng.randint(S(20_000), S(120_000)))),
        "p_gc": _pick(rng, (0.0, 0.5)),  # the old GC deleted released leases/ of idle actors
    }
    up["forgets"] = _draw_forgets(rng, nodes, up["same_ids"], bool(up["future_ms"]), S, focused)
    # UP-2's margin: as the new nodes start (or while a straggler still beats), half their `nodes/`
    # reads are lost for a stretch, so that a guard round meets a failed read of a heartbeat that
    # is still fresh (a failed read proves nothing: the guard must hold)
    up["guard_storm"] = ([rng.randint(0, S(1_000) if up["straggler"] is None or rng.random() < 0.5
                                      else up["straggle_ms"]), rng.randint(S(6_000), S(20_000))]
                         if rng.random() < (0.7 if focused else 0.6) else None)
    return up


def _draw_forgets(rng, nodes: int, same_ids: bool, future: bool, S, focused: bool) -> list:
    """`cluster forget` (FN-8) after the switch: [node, ms after new_at, then fence it (FN-7)]. The
    node is mostly an old id (its heartbeat stale or still fresh by UP-2's test: forget must refuse
    a fresh one), the retired one, or a new node's (a format-3 object: refused). Forget then fence
    is F-6's remedy for an old heartbeat left over a new node's id."""
    if rng.random() >= (0.7 if focused else 0.5):
        return []
    old = [f"n{i}" if same_ids else f"o{i}" for i in range(nodes)] + (["retired"] if future else [])
    new = [f"n{i}" for i in range(nodes)]
    # half of them soon after the switch, while an old heartbeat may still be fresh
    return [[_pick(rng, new if rng.random() < 0.2 else old),
             rng.randint(0, S(5_000) if rng.random() < 0.5 else S(40_000)), rng.random() < 0.5]
            for _ in range(rng.randint(1, 2))]


def _draw_clocks(rng, machines, node_machines, max_skew_ms, mode, horizon_ms):
    """Offsets (and drifts) that keep every clock within max_skew of true time over the run, so two
    clocks may be 2 * max_skew apart: the gap T-2 pays for. `mode`: "spread" (anywhere in the band),
    "opposite" (two node machines at its two ends, the slow and the fast one, either way round),
    "sweep" (one node machine's clock crosses the whole band during the run, another stays at an
    end). Returns (clocks, [slow machine, fast machine] or None, the base: true time's reading)."""
    base = rng.randint(0, 1_000_000)  # local time is never true time
    S = max_skew_ms
    clocks = {m: [base + rng.randint(-S, S), 0] for m in machines}
    pair = None
    if mode in ("opposite", "sweep") and len(node_machines) >= 2:
        slow, fast = rng.sample(node_machines, 2)
        pair = [slow, fast]
        clocks[slow] = [base - S, 0]
        clocks[fast] = [base + S, 0]
        if mode == "sweep":
            # one clock runs fast enough to cross the band over the run: from one end to the other
            m = _pick(rng, pair)
            rate = (2 * S - 4) * 1_000_000 // max(horizon_ms, 1)
            clocks[m] = [base - S + 2, rate] if m == slow else [base + S - 2, -rate]
    return clocks, pair, base
