"""Necessary: without a finding's cause, the violation it excuses goes away (issue 44, part 2).

A known finding (checkers/findings.py) excuses a violation only when its chain holds on world facts and
covers every event the violation names (sufficient). That alone cannot tell a real bug that happens to sit
inside the chain's window and scope from the finding itself. So, for a seed whose history has findings, the
seed is recorded as a plan (scenarios/plan.py: every decision as data, with the instant it was made) and
replayed with the chain's cause removed, the way the shrinker removes a fault: a scheduled entry (the
mistaken delete, the twin, the blip) set to None, a drawn fate (the lost write, the late first write, the
held-back heartbeat) taken out of the table, so that it takes its calm default and nothing else moves. If
the same violation (its invariant, the processes and actors its events name) still occurs in that run,
unexplained there, it was not the finding's: it is reported as a violation, naming both runs.

What it proves: a violation the finding excused needs the finding's cause; the bug it would hide, if any,
shows without it. Where it cannot help: a bug that shows only with that same fault (it vanishes with the
cause, as the finding does), which is why the chain must still hold on its own; a cause the plan does not
hold as an entry (a history built by a script, a fault some other kind played out); a run the world cannot
replay without it. Those keep the chain's verdict alone. Only seeds with findings pay: a recording run, then
one replay per distinct cause.
"""

from __future__ import annotations

import copy

from checkers.findings import Cause, Chain, classify, event_actors
from history import History, Violation
from scenarios import faults
from scenarios.plan import FORMAT, Choices, is_fault


class _Timed(Choices):
    """A Choices that notes when (true time) each decision was made: recording (no table), or reading a plan's."""

    def __init__(self, table: dict | None = None, workload: list | None = None) -> None:
        super().__init__(table, workload)
        self.times: dict[str, int] = {}
        self.clock = lambda: 0

    def pick(self, site: str, who: str, draw, *args):
        base = f"{site} {who}"
        self.times[f"{base} #{self._seen[base]}"] = self.clock()
        return super().pick(site, who, draw, *args)


def record(history: History, plan: dict | None = None) -> tuple[dict, dict[str, int]] | None:
    """The plan of the run `history` is (the seed's, recorded with its options and parameters given; or the
    `plan` it was replayed from) and when each decision was made; None when the run so made is not that
    history (a scripted world's, a real bucket's)."""
    from broken_models import load_model
    from model.params import Params
    from scenarios.sim import SimWorld

    from .shrink import plan_options

    try:
        choices = _Timed() if plan is None else _Timed(plan["choices"], plan["workload"])
        options = copy.deepcopy(history.options) if plan is None else plan_options(plan)
        world = SimWorld(history.seed, load_model(history.model), history.scenario, Params(**history.params),
                         history.model, options=options, choices=choices)
        choices.clock = lambda: world.now
        again = world.run()
    except Exception:  # noqa: BLE001 - not a world this tool can run again: no replay, the chain decides alone
        return None
    if again.sha256() != history.sha256():
        return None
    if plan is None:
        plan = {"format": FORMAT, "model": history.model, "scenario": history.scenario, "seed": history.seed,
                "params": dict(history.params), "options": copy.deepcopy(history.options),
                "choices": choices.table, "workload": choices.workload}
    return plan, choices.times


def without(plan: dict, times: dict[str, int], causes: tuple[Cause, ...]) -> tuple[dict, list[str]] | None:
    """The plan less the entries that are `causes`, and those entries in words (None: none of them is an
    entry of the plan)."""
    cand = copy.deepcopy(plan)
    o = cand["options"]
    removed: list[str] = []
    drop: set[str] = set()
    for c in causes:
        if c.kind:
            removed += _without_scheduled(o, c)
            continue
        key_of = c.request.split(" ", 1)[1] if " " in c.request else c.request
        for k, v in plan["choices"].items():
            site, rest = k.split(" ", 1)
            who = rest.rsplit(" #", 1)[0]
            if not is_fault(k, v) or not c.from_ms <= times.get(k, -1) <= c.to_ms:
                continue
            if site in ("send", "reply") and who == f"{c.machine} {c.request}" or site == "conflict" and who == key_of:
                drop.add(k)
                removed.append(f"`{k}`")
        if not drop and c.request.startswith("PUT owners/"):
            removed += _without_drain_loss(o, c)
    if not removed:
        return None
    cand["choices"] = {k: v for k, v in plan["choices"].items() if k not in drop}
    return cand, removed


def _without_scheduled(o: dict, c: Cause) -> list[str]:
    """Take the scheduled entry that is cause `c` out of options `o` (as the shrinker does: set to None, or a
    flag to its off value): the twin on `c.machine` (twin k runs on machine t<k>), else the latest entry naming
    `c.node` at or before `c.to_ms`; what was taken, in words."""
    kind = faults.KINDS.get(c.kind)
    if kind is None:
        return []
    base = o["upgrade"]["new_at"] if o.get("upgrade") and c.kind != "upgrade" else 0
    found: list[tuple[int, tuple]] = []  # (its instant, the atom)
    for atom in kind.atoms(o):
        name, i = atom
        if i is None:
            found.append((0, atom))  # a flag: the fault whole (the blip)
            continue
        entry = o[name][i]
        if c.kind == "twins" and c.machine.startswith("t"):
            if f"t{i}" == c.machine:
                found.append((0, atom))
            continue
        field = kind.node_field.get(name)
        if c.node and field is not None and entry[field] != c.node:
            continue
        at = kind.at_field.get(name)
        instant = base + entry[at] if at is not None and at >= 0 else 0
        if instant <= c.to_ms:
            found.append((instant, atom))
    if not found:
        return []
    _at, (name, i) = max(found, key=lambda x: x[0])
    kind.remove(o, (name, i))
    return [f"`{name}`" + ("" if i is None else f" entry {i}")]


def _without_drain_loss(o: dict, c: Cause) -> list[str]:
    """A record write lost just before a drain is no drawn fate but a drain's own flag (scenarios/faults/
    drains.py: its last field): the drain of c's node nearest the loss keeps its place, without the loss (the
    shrinker would drop the drain whole, and the drain with it)."""
    base = o["upgrade"]["new_at"] if o.get("upgrade") else 0
    armed = [(base + e[1], i) for i, e in enumerate(o.get("drains") or ())
             if e and e[0] == c.node and len(e) > 4 and e[4]]
    if not armed:
        return []
    _at, i = min(armed, key=lambda x: abs(x[0] - c.to_ms))
    o["drains"][i] = o["drains"][i][:4] + [False]
    return [f"`drains` entry {i}'s lost write"]


def _signature(history: History, v: Violation) -> tuple:
    """What makes a violation the same one in another run of the same seed: its invariant, the processes
    (node and instance) and the actors its events name."""
    labels, actors = set(), set()
    for i in v.events:
        if 0 <= i < len(history.events):
            e = history.events[i]
            if e.proc >= 0:
                labels.add(history.processes[e.proc].label)
            actors |= event_actors(e)
    return v.invariant, frozenset(labels), frozenset(actors)


def check(history: History, chains: list[tuple[Violation, Chain]],
          plan: dict | None = None) -> list[tuple[Violation, Violation]]:
    """The excused violations (each with its chain) that still occur, unexplained, once the chain's cause is
    removed from the seed's plan (or `plan`, the one the history was replayed from): (the violation, the
    violation to report instead, naming both runs)."""
    from checkers import check_all
    from .shrink import run_plan

    if not chains:
        return []
    recorded = record(history, plan)
    if recorded is None:
        return []
    plan, times = recorded
    out = []
    by_cause: dict[tuple, list[tuple[Violation, Chain]]] = {}
    for v, c in chains:
        by_cause.setdefault(c.cause, []).append((v, c))
    for cause, pairs in by_cause.items():
        cut = without(plan, times, cause)
        if cut is None:
            continue  # nothing of the cause is a plan entry: the chain decides alone
        cand, removed = cut
        try:
            again = run_plan(cand)
            left, _found = classify(again, check_all(again))
        except Exception:  # noqa: BLE001 - a run the world cannot make without it: the chain decides alone
            continue
        still = {_signature(again, x) for x in left}
        for v, c in pairs:
            if _signature(history, v) in still:
                what = "; ".join(x.what for x in cause)
                out.append((v, Violation(
                    v.invariant,
                    f"{v.message} [not {c.finding}'s: without its cause ({what}) the same violation still occurs, "
                    f"unexplained. The run: seed {history.seed}; the run without its cause: seed {history.seed}'s "
                    f"plan less {', '.join(removed)} (necessity replay, issue 44)]", v.events)))
    return out
