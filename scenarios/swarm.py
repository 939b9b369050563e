"""What a seed draws: its configuration and its world (swarm testing).

Each seed draws its own mix and rates of faults (TigerBeetle's VOPR, "swarm testing"): a fault is
switched on for a seed or not, and if on, at a rate of its own. The draw is data: DRAW_ORDER names
the stages, each the world's own (the cluster, the bucket, the workload, the clocks: the functions
below) or a fault kind's (scenarios/faults/); a named scenario (scenarios/presets.py) forces parts
of it. Every drawn option lands in the history.

Each part draws from a stream of its own (streams.py): the timing from "draw/params", each of the
world's stages from "draw/<stage>", each fault kind's stages from "draw/<kind id>" (a preset's race
from "draw/focus"). So a kind added, removed or drawing differently moves no other part of the draw
(issue 38: the clocks, the timing, the workload and every other kind stay put); the order of the
stages says only what a stage may read of the others'.
"""

from __future__ import annotations

from model.params import Params

from .faults import KINDS
from .presets import PRESETS, SCENARIOS
from .streams import Streams

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


def streams_of(seed) -> Streams:
    """A seed's streams (a seed, or the world's own Streams, passed through)."""
    return seed if isinstance(seed, Streams) else Streams(seed)


def draw_params(seed, pinned: dict | None = None, scenario: str = "swarm") -> tuple[Params, str]:
    """One seed's valid configuration (T-2..T-4 hold) and its family, from its stream "draw/params"
    (`seed`: the seed, or its Streams). Pinned values (--param) hold for every seed; the rest is
    drawn, then moved only as far as the bounds demand. A scenario whose preset says "on T-2"
    (`deadline`) always sits on T-2's bound, where a deadline race has no margin."""
    rng = streams_of(seed)["draw/params"]
    on_t2 = PRESETS[scenario].config == "on T-2" if scenario in PRESETS else False
    family = _pick(rng, ("default", "bounds", "bounds", "bounds", "scaled", "large"))
    if on_t2 and family == "default":
        family = "bounds"
    if family == "default":
        d = Params().to_dict()
    else:
        ttl = {"bounds": rng.randint(6, 20) * 1_000, "scaled": 2_000, "large": 30_000}[family]
        safety = ttl * _pick(rng, (10, 20, 25)) // 100 // 2 * 2
        if rng.random() < 0.7 or on_t2:
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
    _fit_t6(d, pinned)
    return validate(Params(**d))


def _fit_t6(d: dict, pinned: dict) -> None:
    """T-6: P + A <= ttl - safety. A drawn configuration meets it (safety at most a quarter of ttl, P and A at
    most a third of ttl and of ttl - safety); one with ttl pinned may not (the large family's safety of 7.5 s
    under a ttl of 10 s, Q-8): lower what is not pinned, safety first (then T-2 asks more grace, or less skew),
    then the attempt timeout, then the heartbeat period."""
    def period() -> int:
        return min(d["heartbeat_period_ms"], d["ttl_ms"] // 3)

    if period() + d["attempt_timeout_ms"] <= d["ttl_ms"] - d["safety_ms"]:
        return
    if "safety_ms" not in pinned:
        d["safety_ms"] = max(0, d["ttl_ms"] - period() - d["attempt_timeout_ms"])
        if d["grace_ms"] + d["safety_ms"] < 2 * d["max_skew_ms"]:
            if "grace_ms" not in pinned:
                d["grace_ms"] = 2 * d["max_skew_ms"] - d["safety_ms"]
            elif "max_skew_ms" not in pinned:
                d["max_skew_ms"] = (d["grace_ms"] + d["safety_ms"]) // 2
    span = d["ttl_ms"] - d["safety_ms"]
    if period() + d["attempt_timeout_ms"] > span and "attempt_timeout_ms" not in pinned:
        d["attempt_timeout_ms"] = max(1, min(span // 3, span - period()))
    if period() + d["attempt_timeout_ms"] > span and "heartbeat_period_ms" not in pinned:
        d["heartbeat_period_ms"] = max(1, span - d["attempt_timeout_ms"])


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


class DrawContext:
    """What a seed's draw stages share: the options drawn so far, the configuration, the preset and
    what it forces, and the switches and counts a kind drew in one stage for another. `rng` is the
    stream of the stage drawing now (its part's: `draw` sets it before each stage)."""

    def __init__(self, streams: Streams, o: dict, params: Params, preset, pinned: dict) -> None:
        self.streams = streams
        self.rng = None
        self.o = o
        self.p = params
        self.tg = params.ttl_ms + params.grace_ms
        self.preset = preset
        self.pinned = pinned  # "nodes", "actors": the values the caller fixed (None: drawn)
        self.on: dict[str, bool] = {}  # a kind's switch, drawn in one stage, read in later ones
        self.counts: dict[str, int] = {}  # a kind's count of entries, likewise

    def S(self, ms: int) -> int:
        """A time written for the default timing, scaled with ttl + grace."""
        return ms * self.tg // DEFAULT_TAKEOVER_MS

    def choice(self, options):
        """One of `options`, drawn from the stage's stream (rng.randrange over them)."""
        return options[self.rng.randrange(len(options))]

    def nodes(self) -> list[str]:
        return [f"n{i}" for i in range(self.o["nodes"])]

    def stream(self, part: str):
        """The draw's stream of `part` (a preset's race draws from "draw/focus")."""
        return self.streams["draw/" + part]

    def force(self, kind_id: str):
        """What the preset forces of this kind (None: nothing)."""
        return self.preset.force.get(kind_id)

    def at_least(self, kind_id: str, value):
        """`value`, raised to the preset's minimum for this kind if it names one."""
        floor = self.force(kind_id)
        return value if floor is None else max(value, floor)

    @property
    def alone(self) -> bool:
        """A global blip with no other fault around it (INV-9's proviso): faults drawn now stay off."""
        return bool(self.o.get("blip_alone"))

    def turn_off(self, *kind_ids: str) -> None:
        for k in kind_ids:
            KINDS[k].turn_off(self.o)


# --- the world's own stages of the draw (the faults' are their kinds') ---------------------------------


def _cluster(ctx) -> None:
    rng, o, S = ctx.rng, ctx.o, ctx.S
    o["nodes"] = rng.randint(2, 4)
    if ctx.pinned.get("nodes") is not None:
        o["nodes"] = ctx.pinned["nodes"]
    o["fault_ms"] = rng.randint(S(45_000), S(100_000))
    # the quiet phase: long enough for every bound of the protocol to pass (INV-4, INV-7)
    # its span: ttl + grace, never under the floor (the real-S3 world, short of time, sets none)
    o["liveness_ms"] = max(ctx.tg, ctx.liveness_floor_ms)
    o["quiet_ms"] = 4 * o["liveness_ms"]
    if ctx.duration_ms is not None:
        o["quiet_ms"] = o["quiet_ms"] if ctx.duration_ms >= 2 * o["quiet_ms"] else 0
        o["fault_ms"] = ctx.duration_ms - o["quiet_ms"]
    o["forget_gone"] = True  # the quiet phase's operator asks `cluster forget` of the nodes it knows gone


def _bucket(ctx) -> None:
    ctx.o["versioning"] = ctx.choice(("md5", "opaque"))
    ctx.o["absent_if_match"] = ctx.choice((404, 412))


# The store a seed's bucket answers as (issue 47 part 4), drawn from its own stream ("draw/store"), so
# that no other part's draw moves: "aws" answers a conditional write 409 ConditionalRequestConflict only
# while another conditional write to the same key is in flight (AWS's documentation of conditional writes:
# "a conflicting operation"), "r2" never (Cloudflare R2 documents no 409 for conditional writes). Plans
# written before it have none: the world reads them as "aws" (STORES[0]), the answers they were drawn with.
STORES = ("aws", "r2")


def _store(ctx) -> None:
    ctx.o["store"] = ctx.choice(STORES)


def _aliases(ctx) -> None:
    """An R2-like bucket's read token may differ from its write token (a behaviour, not a fault)."""
    ctx.o["p_alias"] = ctx.choice((0.0, 0.5)) if ctx.o["versioning"] == "opaque" else 0.0


def _network(ctx) -> None:
    ctx.o["delay_ms_max"] = ctx.choice((5, 20, 60, 120))  # each way; the tails come from slow replies and late writes
    ctx.o["upload_ms_max"] = ctx.choice((0, 500, 3_000))  # a segment upload's extra time (not a fault: bandwidth)


def _restarts(ctx) -> None:
    S = ctx.S
    ctx.o["restart_ms_max"] = max(200, ctx.choice((S(200), S(2_000), S(10_000))))  # the supervisor's delay


def _clock_mode(ctx) -> None:
    # clocks: each within max_skew of true time; in most seeds two node machines at the two ends
    ctx.o["clock_mode"] = ctx.choice(("spread", "opposite", "opposite", "sweep"))
    ctx.o.update(ctx.preset.options)


def _workload(ctx) -> None:
    """Client requests for actors at random nodes, hibernation, moves."""
    rng, S, o = ctx.rng, ctx.S, ctx.o
    o["actors"] = rng.randint(3, 10)
    if ctx.pinned.get("actors") is not None:
        o["actors"] = ctx.pinned["actors"]
    o["request_gap_ms"] = ctx.choice((S(300), S(800), S(2_000)))
    o["hibernate_gap_ms"] = ctx.choice((S(1_000), S(2_500), S(6_000)))
    o["move_gap_ms"] = ctx.choice((0, S(5_000), S(20_000)))
    o["p_client_retry"] = ctx.choice((0.0, 0.5, 0.9))  # a client retries a failed request at the same node
    o["hot_share"] = ctx.choice((0.0, 0.3, 0.7))  # the share of requests that go to one hot actor


def _focus(ctx) -> None:
    """The preset's race, made likely (presets.py)."""
    if ctx.preset.focus is not None:
        ctx.preset.focus(ctx)
        if ctx.o["deadline_races"] and ctx.o["clock_mode"] == "spread":  # a race needs its slow and fast clocks
            ctx.o["clock_mode"] = "opposite"


def _events(ctx) -> None:
    """Events take time (CS-1): a served request's event runs up to event_ms_max, a few much longer."""
    S, o = ctx.S, ctx.o
    o["event_ms_max"] = ctx.choice((0, S(50), S(500)))
    o["p_long_event"] = ctx.choice((0.0, 0.02, 0.1))
    o["long_event_ms"] = [S(1_000), 10_000]


def _starts(ctx) -> None:
    """The nodes start spread over two lease periods: their cadences are not in lockstep."""
    ctx.o["starts"] = [ctx.rng.randint(0, 2 * ctx.p.period_ms) for _ in range(ctx.o["nodes"])]


def _clocks(ctx) -> None:
    o = ctx.o
    machines = ([f"m{i}" for i in range(o["nodes"])] + [f"t{k}" for k in range(len(o["twins"]))] + ["op", "r0"]
                + ([f"om{i}" for i in range(o["nodes"])] if o["upgrade"] else []))
    horizon = o["fault_ms"] + o["quiet_ms"] + (o["upgrade"]["new_at"] if o["upgrade"] else 0) + 2 * ctx.tg
    o["clocks"], o["slow_fast"], o["clock_base"] = _draw_clocks(
        ctx.rng, machines, [f"m{i}" for i in range(o["nodes"])], ctx.p.max_skew_ms, o["clock_mode"], horizon)
    # T-1 at its bound for every process (issue 39, part 1): in a share of seeds every machine's clock
    # (the old binaries', the operator's, the twins', the replacement's, not only two node machines)
    # sits at one end of the max_skew band, so that any two may be 2 * max_skew apart (T-2's budget,
    # UP-2's age test, UP-3's old-lease grace, FN-7's fence over an absent object). Drawn after every
    # other draw of this stage's stream: a seed that leaves it off keeps its clocks.
    o["clock_bound"] = _at_bound(ctx.rng, o["clocks"], o["clock_base"], ctx.p.max_skew_ms)


def _preset_off(ctx) -> None:
    """What the preset turns off, once the seed is drawn (`calm`: every fault kind)."""
    ctx.turn_off(*ctx.preset.off)


BASE = {"cluster": _cluster, "bucket": _bucket, "store": _store, "aliases": _aliases, "network": _network, "restarts": _restarts,
        "clock_mode": _clock_mode, "workload": _workload, "focus": _focus, "events": _events, "starts": _starts,
        "clocks": _clocks, "preset_off": _preset_off}

# The order of the draw's stages: "@name" is the world's own (BASE), "kind.stage" a fault kind's
# `draw_<stage>`. Each draws from its part's stream ("draw/<name>", "draw/<kind>"), so the order says
# only what a stage can read of the others' (a kind's rate reads its switch, the clocks read the twins'
# count, the focus rewrites what the kinds drew); a kind not named here draws its `draw_main` after
# them, before the clocks.
DRAW_ORDER = (
    "@cluster", "@bucket", "@store", "conflict.rate", "@aliases", "@network",
    # each fault on or off for the seed (one draw each, in this order), then its rate if on
    "fail_fast.switch", "reply_lost.switch", "late.switch", "outages.switch", "crashes.switch", "twins.switch",
    "request_lost.switch", "slow_reply.switch",
    "fail_fast.rate", "reply_lost.rate", "late.rate", "request_lost.rate", "slow_reply.rate", "reply_lost.reads",
    "degraded.main", "@restarts", "outages.count", "crashes.count", "twins.count", "@clock_mode",
    # section 4, the operator's mistakes, the quiet phase's own faults, the blip
    "stops.main", "drains.main", "deletes.main", "quiet_crash.main", "quiet_stop.main", "blip.main",
    "stops.minimum", "blip.alone",
    "outages.entries", "crashes.entries", "twins.entries",
    "@workload", "operator_fences.main", "deadline_races.main", "crash_for_good.main", "mass.main", "@focus",
    "reply_drops.main", "record_storms.main", "@events", "stops.stragglers", "twins.silences", "stops.silences",
    "@starts", "upgrade.main",
    "@clocks", "upgrade.clock", "@preset_off",
    # drawn last, so that it moves nothing else: a drain told during an outage (INV-11, CONV-1)
    "drains.outage",
    # then the upgrade's races around the switch (in upgrade seeds only: no other seed draws more)
    "upgrade.races",
    # and a twin meeting an open entry, with its machine's clock (drawn last: it moves no other draw)
    "twin_entries.main",
)


def _stages() -> list:
    """(the stage's part, its function), in the draw's order."""
    named = {s.split(".")[0] for s in DRAW_ORDER if not str.startswith(s, "@")}
    late = [f"{k}.main" for k in KINDS if k not in named]
    order = list(DRAW_ORDER)
    at = order.index("@clocks")
    order[at:at] = late
    out = []
    for s in order:
        if str.startswith(s, "@"):
            out.append(("draw/" + s[1:], BASE[s[1:]]))
        else:
            kind, stage = s.split(".")
            out.append(("draw/" + kind, getattr(KINDS[kind], "draw_" + stage)))
    return out


STAGES = _stages()


def draw(seed, scenario: str, params: Params, duration_ms: int | None = None, nodes: int | None = None,
         actors: int | None = None, liveness_floor_ms: int = LIVENESS_FLOOR_MS, kinds_off: tuple = ()) -> dict:
    """Draw one seed's world (`seed`: the seed, or its Streams), each stage from its part's stream.
    Returns plain data (ints, strings, lists, dicts).

    Times are written for the default timing and scale with ttl + grace (S), so that a
    world with the real-S3 world's short timing keeps the same shape. `duration_ms` fixes the
    run's length (the fault phase, then a quiet phase if it fits twice), `nodes` and `actors`
    fix those counts; each replaces its drawn value, the stream consumed as without it. The kinds of
    `kinds_off` draw nothing and stay off (their options at their off values): the seed's world as a tool
    without them drew it, every other part's stream untouched (a report's seeds replayed after kinds were added)."""
    if scenario not in PRESETS:
        raise ValueError(f"unknown scenario {scenario!r} (choices: {', '.join(PRESETS)})")
    o: dict = {}
    streams = streams_of(seed)
    ctx = DrawContext(streams, o, params, PRESETS[scenario], {"nodes": nodes, "actors": actors})
    ctx.duration_ms = duration_ms
    ctx.liveness_floor_ms = liveness_floor_ms
    held = {"draw/" + k: k for k in kinds_off}
    for part, stage in STAGES:
        if part in held:  # (off where its draw would be: a later stage reads it as a tool without it had it)
            ctx.turn_off(held[part])
            continue
        ctx.rng = streams[part]
        stage(ctx)
    ctx.turn_off(*kinds_off)  # (and after: a preset's focus may have switched it on)
    return o


CLOCK_BOUND_SHARE = 0.3  # the share of seeds with every clock at an end of the band (T-1)


def _at_bound(rng, clocks: dict, base: int, max_skew_ms: int) -> bool:
    """In CLOCK_BOUND_SHARE of seeds, every clock without drift moved to one end of the band (T-1: within
    max_skew of true time, `base`), each end drawn per machine, in the order of `clocks`; a clock at an end
    already (the slow and fast pair) stays, and without both ends in use the first two moved take them (so
    the band's whole width, 2 * max_skew, is always in use). A sweeping clock (with drift) keeps its
    course. Returns whether it did."""
    if rng.random() >= CLOCK_BOUND_SHARE:
        return False
    S = max_skew_ms
    ends = {clocks[m][0] - base for m in clocks if clocks[m][1] == 0 and abs(clocks[m][0] - base) == S}
    k = 0 if len(ends) < 2 else 2  # (the slow and fast pair, when drawn, keep their ends and give both)
    for m in clocks:
        off, drift = clocks[m]
        if drift == 0 and abs(off - base) != S:
            end = (-S, S)[k] if k < 2 else _pick(rng, (-S, S))
            clocks[m] = [base + end, 0]
            k += 1
    return True


def _draw_clocks(rng, machines, node_machines, max_skew_ms, mode, horizon_ms):
    """Offsets (and drifts) that keep every clock within max_skew of true time over the run, so two
    clocks may be 2 * max_skew apart: the gap T-2 pays for. `mode`: "spread" (anywhere in the band),
    "opposite" (two node machines at its two ends, the slow and the fast one, either way round),
    "sweep" (one node machine's clock crosses the whole band during the run, another stays at an
    end). The node machines draw first, then the operator's and an upgrade's old machines, the twins'
    last, so that a twin more or less moves no other machine's clock. Returns (clocks, in the order of
    `machines`, [slow machine, fast machine] or None, the base: true time's reading)."""
    base = rng.randint(0, 1_000_000)  # local time is never true time
    S = max_skew_ms
    clocks = {m: [base + rng.randint(-S, S), 0] for m in node_machines}
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
    for m in sorted((m for m in machines if m not in clocks), key=lambda m: str.startswith(m, "t")):  # the twins last
        clocks[m] = [base + rng.randint(-S, S), 0]
    return {m: clocks[m] for m in machines}, pair, base


__all__ = ["SCENARIOS", "PRESETS", "draw", "draw_params", "fit_params", "on_bounds", "PARAM_NAMES", "DRAW_ORDER"]
