"""Mutations native to plans: what the guided search (guided/search.py) does to a run it keeps.

A plan (scenarios/plan.py) names every decision of a run by what it decides, so a mutant of a
plan is another plan: some decisions taken out (the world draws them afresh, scenarios.plan.
Branching), a scheduled fault moved or stretched, a clock moved within its band. Each operator
takes the parent (its plan and when each of its decisions was made) and the search's RNG, and
returns a `Candidate`: the plan to run, the instant from which the workload is redrawn (None: kept
whole), and what it did, in words a report can count. An operator that finds nothing to change in
this parent returns None.

The operators:

- `redraw`: one to eight recorded decisions taken out (a request's or a reply's fate, an event's
  length, a restart's delay, ...), drawn again;
- `reseed`: every decision made after an instant taken out, the workload redrawn from it ("reseed
  after t": the run is kept up to a moment where something rare happened and branches from there,
  without snapshots: p1 x p2 becomes p1 + p2);
- `shift`: a scheduled fault's instant moved (by up to one takeover span, T-5's `ttl + grace`),
  or its length stretched or shrunk (the fault kinds say where: `at_field`, `durations`);
- `clock`: one machine's clock offset moved within the band T-2 assumes (`max_skew` of true time),
  to an end of it half the time (the margins live there).

Must not know: any protocol rule, or which checker a run is meant to fail.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from scenarios import faults


@dataclass
class Candidate:
    plan: dict  # params, options, choices, workload: what the run reads (scenarios.plan.Branching)
    until_ms: int | None  # the workload is redrawn from this instant (None: the plan's kept whole)
    op: str  # the operator's name
    what: str  # what it changed, one line


def redraw(parent, rng) -> Candidate | None:
    keys = list(parent.plan["choices"])
    if not keys:
        return None
    # half the time only decisions that can be faults (fates, conflicts): most decisions are delays
    fates = [k for k in keys if k.startswith(("send ", "reply ", "conflict "))]
    pool = fates if fates and rng.random() < 0.5 else keys
    chosen = rng.sample(pool, min(len(pool), rng.randint(1, 8)))
    drop = set(chosen)  # (membership only: the table keeps its own order)
    plan = dict(parent.plan, choices={k: v for k, v in parent.plan["choices"].items() if k not in drop})
    return Candidate(plan, None, "redraw", f"{len(chosen)} decision(s) drawn again, first {chosen[0]!r}")


def reseed(parent, rng, instants: list[tuple[str, int]]) -> Candidate | None:
    """`instants`: (label, t) of the parent's rare moments, rarest first (the search says which)."""
    end = parent.end_ms
    if instants and rng.random() < 0.75:
        label, t = instants[rng.randrange(min(len(instants), 4))]
    else:
        label, t = "anywhere", rng.randint(0, max(1, end))
    times = parent.times
    choices = {k: v for k, v in parent.plan["choices"].items() if times.get(k, end) <= t}
    plan = dict(parent.plan, choices=choices)
    return Candidate(plan, t + 1, "reseed", f"reseeded after {t} ms ({label})")


def shift(parent, rng) -> Candidate | None:
    o = parent.plan["options"]
    tg = parent.plan["params"]["ttl_ms"] + parent.plan["params"]["grace_ms"]
    sites = []  # (option, index, field, what): an instant to move or a length to stretch
    for kind in faults.KINDS.values():
        for name, field in kind.at_field.items():
            sites += [(name, i, field, "at") for i, x in enumerate(o.get(name) or ()) if x is not None]
        for name, field in kind.durations.items():
            sites += [(name, i, field, "length") for i, x in enumerate(o.get(name) or ()) if x is not None]
    if not sites:
        return None
    name, i, field, what = sites[rng.randrange(len(sites))]
    options = copy.deepcopy(o)
    entry = options[name][i]
    old = entry if field == -1 else entry[field]
    if what == "at":
        new = min(max(0, old + rng.randint(-tg, tg)), o["fault_ms"])
    else:
        new = max(1, old * rng.choice((1, 1, 3, 4)) // rng.choice((2, 2, 1)))
    if field == -1:
        options[name][i] = new
    else:
        entry[field] = new
    plan = dict(parent.plan, options=options)
    return Candidate(plan, None, "shift", f"{name}[{i}] {what} {old} -> {new} ms")


def clock(parent, rng) -> Candidate | None:
    o = parent.plan["options"]
    base = o.get("clock_base")
    if base is None:
        return None
    S = parent.plan["params"]["max_skew_ms"]
    # drifting clocks are left alone (their band is the whole run's); the retired upgrade machine is future-dated
    machines = [m for m, (_off, drift) in o["clocks"].items() if drift == 0 and m != "omf"]
    if not machines:
        return None
    m = machines[rng.randrange(len(machines))]
    off = base + (rng.choice((-S, S)) if rng.random() < 0.5 else rng.randint(-S, S))
    options = copy.deepcopy(o)
    old = options["clocks"][m][0]
    options["clocks"][m][0] = off
    plan = dict(parent.plan, options=options)
    return Candidate(plan, None, "clock", f"clock {m} {old - base:+d} -> {off - base:+d} ms of true time")


OPERATORS = ("redraw", "reseed", "shift", "clock")
