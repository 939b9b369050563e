"""The named scenarios, as data: what each one forces of the swarm's draw.

A seed of any scenario draws its world as the swarm does (swarm.py), from the same streams; a
preset only forces parts of that draw (a preset's race draws from a stream of its own, "draw/focus"):

- `force`: fault kind -> what the kind makes of it (each kind's draw reads `ctx.force(id)`): a
  minimum count (`outages`, `twins`), a minimum rate (`fail_fast`, `reply_lost`, `late`,
  `request_lost`), or a word the kind knows ("always": stops, deadline races; "alone": the blip;
  "focused": the upgrade);
- `options`: options set once the base draw made them (skew's opposite clocks);
- `off`: kinds turned off once the whole seed is drawn (`calm`: every fault kind);
- `focus`: a race a broken model needs, made likely: a function that rewrites the drawn options
  (most of them: every other fault off, the race's own faults on);
- `mix`: whether it draws the rare whole-cluster kinds (a crowd, an upgrade) at their swarm
  rates; `covers_all`: whether its long campaigns must reach every coverage point;
- `config`: how the timing is drawn ("on T-2": always exactly on T-2's bound).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .faults import KINDS


@dataclass(frozen=True)
class Preset:
    name: str
    doc: str
    force: dict = field(default_factory=dict)
    options: dict = field(default_factory=dict)
    off: tuple[str, ...] = ()
    focus: Callable | None = None
    mix: bool = False
    covers_all: bool = False
    config: str | None = None


# --- the races the broken models need, made likely (each rewrites its part of the draw) -------------


def _fence_race(ctx) -> None:
    """A node stops writing its lease while its peers watch it: crashed and kept down past
    ttl + grace (a quicker restart's first write would replace the object first) or cut off
    past ttl + grace. Peers fence it (FN-3), racing each other (FN-4) when there are three;
    an owner also dies early in the quiet phase (BM-1)."""
    rng, tg, o = ctx.rng, ctx.tg, ctx.o
    fault = o["fault_ms"]
    _calm_but_the_race(ctx)
    if ctx.pinned.get("nodes") is None:
        o["nodes"] = 3
    nodes = ctx.nodes()
    # two crashes on different nodes, after the leases were first written, far enough apart
    # that the others are up to fence each
    first = rng.randrange(len(nodes))
    o["crashes"] = [[nodes[first], 3 * tg // 2 + rng.randint(0, tg)],
                    [nodes[(first + 1) % len(nodes)], fault // 2 + rng.randint(0, tg)]]
    o["outages"] = [[ctx.choice(nodes), rng.randint(0, fault // 2), rng.randint(tg, 2 * tg), "blackhole"]]
    o["restart_ms_min"], o["restart_ms_max"] = 2 * tg, 3 * tg
    o["quiet_crash"] = True


def _rewake_race(ctx) -> None:
    """A hot actor hibernates and wakes on one node while that node is refused the bucket for
    less than its lease's span: the release fails and stays pending (OR-5), the next request
    re-acquires the record that still names this process (OR-3's + 1, BM-2)."""
    rng, S, o = ctx.rng, ctx.S, ctx.o
    fault = o["fault_ms"]
    nodes = ctx.nodes()
    if ctx.pinned.get("actors") is None:
        o["actors"] = 2
    ctx.turn_off("fail_fast", "reply_lost", "late", "request_lost", "slow_reply", "degraded", "crashes", "twins",
                 "deletes", "stops", "drains", "blip")
    o.update(hot_share=0.7, request_gap_ms=S(300), hibernate_gap_ms=S(1_000), move_gap_ms=0)
    k = rng.randint(6, 10)
    o["outages"] = [[nodes[i % len(nodes)], fault // 6 + i * (fault * 2 // 3) // k, rng.randint(S(2_000), S(6_000)),
                     "refuse"] for i in range(k)]


def _resolver_race(ctx) -> None:
    """Writes to ownership records are lost or answered slowly, and clients retry at once at the
    same node: an acquire's outcome is unknown (OR-7) while the same node's next acquisition
    writes the same generation, and the resolver reads between that write landing and its
    reply (BM-3). Only record writes are hit, so node leases, routing and the resolver's reads
    stay sound."""
    S, o = ctx.S, ctx.o
    if ctx.pinned.get("nodes") is None:
        o["nodes"] = 2
    if ctx.pinned.get("actors") is None:
        o["actors"] = 2
    o.update(fault_target=["PUT", "owners/"], hot_share=0.7, request_gap_ms=S(150), p_client_retry=0.9,
             hibernate_gap_ms=S(2_500), move_gap_ms=0, p_request_lost=0.5, p_late=0.0, p_slow_reply=0.9,
             p_reply_lost=0.0, p_fail_fast=0.0, degraded=False)
    _calm_but_the_race(ctx)


def _deadline_race(ctx) -> None:
    """Deadline races alone (they are drawn for this scenario): the owner on the slowest clock
    cut off right after an acknowledged write, the taker on the fastest asked for its actors from
    the first instant it may free them; nothing else disturbs either (T-2, T-5)."""
    S, o = ctx.S, ctx.o
    _calm_but_the_race(ctx)
    ctx.turn_off("fail_fast", "request_lost", "late", "reply_lost", "slow_reply", "degraded")
    o.update(hot_share=0.7, hibernate_gap_ms=S(6_000), move_gap_ms=0)
    fault = o["fault_ms"]
    o["deadline_races"] = [fault * (k + 1) // 4 for k in range(3)]


# the faults that would end holds or leases while a race plays out
_NOT_IN_A_RACE = ("crashes", "outages", "twins", "deletes", "stops", "drains", "operator_fences", "blip",
                  "quiet_crash", "quiet_stop", "crash_for_good", "mass")


def _calm_but_the_race(ctx) -> None:
    """No other fault: nothing else ends holds or leases while the race plays out."""
    ctx.turn_off(*_NOT_IN_A_RACE)


EVERY_FAULT = tuple(KINDS)

PRESETS: dict[str, Preset] = {p.name: p for p in (
    Preset("swarm", "the default: every fault switched on or off per seed, at rates of its own",
           mix=True, covers_all=True),
    Preset("calm", "every fault off (each fault kind's options at their off values): a baseline",
           off=EVERY_FAULT),
    Preset("twins", "a second process under an existing node id, always", force={"twins": 1}),
    Preset("outages", "bucket outages for one node or all, always, some longer than ttl + grace",
           force={"outages": 2}),
    Preset("lossy", "lost replies, late-applied writes and failed requests, always",
           force={"fail_fast": 0.05, "reply_lost": 0.1, "late": 0.1, "request_lost": 0.05}),
    Preset("skew", "clocks exactly max_skew apart, with drift", options={"clock_mode": "opposite"}),
    Preset("blip", "one global bucket blip and no other fault around it (INV-9's proviso)",
           force={"blip": "alone"}),
    Preset("stops", "clean stops, drains and moves, always", force={"stops": "always"}),
    Preset("upgrade", "old per-actor-lease nodes run first, then stop; new nodes start (section 6)",
           force={"upgrade": "focused"}),
    # one mix per race a broken model needs, likely enough to happen in a 30 s real-S3 run
    Preset("deadline", "deadline races, always: the owner on the slowest clock cut off right after an acknowledged "
                       "lease write, the taker on the fastest asked for its actors from the first instant it may free them",
           force={"deadline_races": "always"}, focus=_deadline_race, config="on T-2"),
    Preset("fence", "nodes crash and come back slowly, or are cut off past ttl + grace: peers fence them (BM-1)",
           focus=_fence_race),
    Preset("rewake", "short refused cut-offs while a hot actor hibernates and wakes: releases stay pending and a "
                     "node re-acquires its own record (BM-2)", focus=_rewake_race),
    Preset("resolver", "acquire writes lost, replies slow, clients retrying at once: an unresolved acquire meets "
                       "a second acquisition at its generation (BM-3)", focus=_resolver_race),
)}

SCENARIOS: dict[str, str] = {name: p.doc for name, p in PRESETS.items()}  # name -> one line, for people
