"""Coverage you can see: the situations a campaign must reach, found in each history.

A green sweep is worth the bugs it could have found; these name the situations the protocol's
margins and races live in (the ADR's arguments rely on each), so that every report counts how
many seeds reached each, and a campaign of 2,000 seeds or more that never reaches one fails:
a world change cannot silently lose a race. Each is read from the world's facts (the
configuration, the clocks, the faults, the applied and refused writes), or from the model's
rule marks where only the model knows (the bounds of BD-1..BD-3).

Also the deadline races' margins: for each owner the world cut off right after an acknowledged
write, how long after its last valid instant its actors were taken over (`takeover_margins`).
"""

from __future__ import annotations

from model.params import Params

from .facts import Facts, facts, sent_ms
from history import History

POINTS: dict[str, str] = {
    "clocks 2 max_skew apart": "two node processes ran on clocks 2 * max_skew apart (T-2's whole budget)",
    "config on T-2": "grace + safety = 2 * max_skew exactly",
    "config on T-3": "the lease period P = ttl / 3 exactly",
    "config on T-4": "the attempt timeout at (ttl - safety) / 3 exactly",
    "config scaled": "the real-S3 world's short timing (ttl 2 s)",
    "config large": "long timing (ttl 30 s)",
    "takeover at the deadline": "an owner cut off right after an acknowledged write was taken over within "
                                "2 * max_skew of its last valid instant",
    "write applied after its timeout": "a write took effect after its sender gave up on it",
    "reply just under its timeout": "a reply came in the last tenth of its attempt timeout",
    "reply past its timeout": "a reply was held past its request's attempt timeout (the timeout answered)",
    "read reply lost": "the reply to a read was lost",
    "blip with cadences apart": "a global blip, judged by INV-9, while the nodes' lease writes were not in lockstep",
    "fence after own lapse": "a process fenced a peer after its own lease had lapsed and come back (FN-2's restart)",
    "machine gone, fenced": "a machine gone for good was fenced and its actors taken over",
    "delete then takeover attempt": "an acquisition read a record naming a node whose nodes/ object was deleted",
    "two fencers raced": "a fence met another fence that landed first (FN-4)",
    "fence met a late heartbeat": "a lease write sent before a fence of it landed met that fence",
    "twin won": "a twin held the node lease (its live write took effect) while the other process ran",
    "move handed over": "an actor moved took a new owner on the move's target node",
    "bound BD-1": "a node had more fences to run than it may run at once",
    "bound BD-2": "a node had more pending entries than it may work at once",
    "bound BD-3": "a pass over pending entries stopped after refusals in a row",
    "straggler at a clean stop": "an event outlasted a clean stop's bounded wait, the world ending it just after "
                                 "the `released` write was sent (CS-1)",
    "drain judged": "a drain with no fault around it, judged by INV-11",
    "drain released busy holds": "a judged drain of a node that records named at the drain, each released by "
    "the node itself before it reported drained (CS-3: nothing else ended them)",
    "drain after a lost acquire": "a node was drained after one of its acquisitions' record writes was lost",
    "owner died in the quiet phase": "a failover was measured (INV-7)",
    "upgrade": "old per-actor-lease binaries and new nodes in one run (section 6)",
    "old binary met a marker": "an old binary, running beside new nodes, read a new node's leases/ marker "
                               "and refused it (UP-3, UP-4)",
    "forget deleted a retired heartbeat": "`cluster forget` deleted an old-format heartbeat stale by UP-2's test (FN-8)",
    "forget met a fresh heartbeat": "`cluster forget` was asked while the node's old-format heartbeat in the "
                                    "bucket was fresh by UP-2's test, and refused (FN-8)",
    "guard read lost on a fresh heartbeat": "a new node's read of an old-format heartbeat still fresh by UP-2's "
    "test was lost or failed (the start guard must hold on a read that proves nothing)",
    "forget met a format-3 object": "`cluster forget` was asked of a node whose object is in format 3 (a node "
                                    "gone for good, or retired), and refused (FN-8)",
}

MIN_SEEDS = 2_000  # a campaign this long must reach every point
REQUIRED_IN = ("swarm",)  # the scenarios that draw every kind of fault; a focused scenario (stops, blip, ...)
# cannot reach the points of the others, so its campaigns count the points without failing on them


def required(scenario: str, seeds: int) -> bool:
    """Whether a campaign of `seeds` seeds of `scenario` must reach every point."""
    return scenario in REQUIRED_IN and seeds >= MIN_SEEDS


def reached(history: History, fx: Facts | None = None) -> list[str]:
    """The coverage points this history reaches, in POINTS order."""
    fx = facts(history) if fx is None else fx
    p = Params(**history.params)
    o = history.options
    events = history.events
    procs = history.processes
    got: set[str] = set()

    family = o.get("config")
    if family in ("scaled", "large"):
        got.add("config " + family)
    if p.grace_ms + p.safety_ms == 2 * p.max_skew_ms:
        got.add("config on T-2")
    if 3 * p.heartbeat_period_ms >= p.ttl_ms - 2:
        got.add("config on T-3")
    if p.attempt_timeout_ms == (p.ttl_ms - p.safety_ms) // 3:
        got.add("config on T-4")
    offsets = sorted({pr.offset_ms for k, pr in enumerate(procs) if pr.machine.startswith("m") and k in fx.live_writes})
    if offsets and offsets[-1] - offsets[0] >= 2 * p.max_skew_ms:
        got.add("clocks 2 max_skew apart")
    if any(m <= 2 * p.max_skew_ms for m in takeover_margins(history, fx)):
        got.add("takeover at the deadline")
    if o.get("upgrade"):
        got.add("upgrade")
    rules = history.rules
    if rules.get("UP-4"):
        got.add("old binary met a marker")
    for bd in ("BD-1", "BD-2", "BD-3"):
        if rules.get(bd):
            got.add("bound " + bd)

    deleted: dict[str, int] = {}
    moved: dict[str, str] = {}  # actor -> the node a move sent it to
    lapsed: set[int] = set()
    for i in history.of_kind("fault", "fault_delete", "moved", "refused", "lease_ran_out", "apply", "told"):
        t, q, kind, f = events[i]
        if kind == "fault":
            what = f[0]
            if what == "straggler":
                got.add("straggler at a clean stop")
            elif what in ("late", "held_back"):
                got.add("write applied after its timeout")
            elif what == "reply_lost" and f[1].startswith("GET "):
                got.add("read reply lost")
            elif what == "slow_reply":
                ms = f[2]
                a = p.attempt_timeout_ms
                if a - a // 10 <= ms < a:
                    got.add("reply just under its timeout")
                elif ms >= a:
                    got.add("reply past its timeout")
        elif kind == "fault_delete" and f[0].startswith("nodes/"):
            deleted[f[0][len("nodes/"):]] = t
        elif kind == "moved":
            moved[f[0]] = f[1]
        elif kind == "refused" and f[0].startswith("nodes/"):
            met = f[3].split(" ")
            mine = f[4] if len(f) > 4 and isinstance(f[4], int) else t
            if met[0] == "fenced" and q >= 0:
                if procs[q].node_id != f[0][len("nodes/"):]:
                    got.add("two fencers raced")
                elif len(met) == 3 and met[1] == procs[q].instance:
                    landed = next((tt for tt, _qq, k, ff in events[:i] if k == "apply" and ff[0] == f[0]
                                   and ff[6] == f[3]), None)
                    if landed is not None and mine < landed:
                        got.add("fence met a late heartbeat")
        elif kind == "lease_ran_out":
            lapsed.add(q)
        elif kind == "apply" and q >= 0:
            key = f[0]
            if key.startswith("nodes/") and f[6].startswith("fenced ") and q in lapsed:
                got.add("fence after own lapse")
            if key.startswith("owners/") and f[6].startswith("held "):
                actor = key[len("owners/"):]
                prev = f[7].split(" ")
                if prev[0] == "held" and prev[1] in deleted and t >= deleted[prev[1]]:
                    got.add("delete then takeover attempt")
                if moved.get(actor) == procs[q].node_id and prev[0] in ("nobody", "held"):
                    got.add("move handed over")
        elif kind == "told" and f[0] == "drain":
            if _drain_judged(history, fx, i):
                got.add("drain judged")
                if _drain_released(history, i):
                    got.add("drain released busy holds")
            since = t - fx.params.ttl_ms - fx.params.grace_ms
            if any(e[1] == q and e[2] == "fault" and e[3][0] == "request_lost"
                   and e[3][1].startswith("PUT owners/") and since <= e[0] < t for e in events[max(0, i - 400):i]):
                got.add("drain after a lost acquire")
    got.update(_old_heartbeats(history, p))
    if _twin_won(history, fx):
        got.add("twin won")
    if _gone_fenced(history, fx):
        got.add("machine gone, fenced")
    if _blip_apart(history, fx):
        got.add("blip with cadences apart")
    from .failover import measure

    if measure(history, fx):
        got.add("owner died in the quiet phase")
    return [k for k in POINTS if k in got]


def takeover_margins(history: History, fx: Facts | None = None) -> list[int]:
    """For each deadline race (an owner the world cut off right after an acknowledged write), the
    first takeover of one of its actors minus the owner's last valid instant (ms; negative: a
    takeover while the owner was still valid)."""
    fx = facts(history) if fx is None else fx
    cached = history.cache.get("takeover_margins")
    if cached is not None:
        return cached
    out = []
    procs = history.processes
    events = history.events
    for i in history.of_kind("fault"):
        t, _q, _kind, f = events[i]
        if f[0] != "deadline_race":
            continue
        machine = f[1]
        owner = next((k for k, pr in enumerate(procs) if pr.machine == machine and fx.lease_valid_at(k, t - 1)),
                     None)
        if owner is None:
            continue
        end = fx.lease_valid_at(owner, t - 1)[1]
        label = f"held {procs[owner].node_id} {procs[owner].instance} "
        firsts = [h.start_ms for h in fx.holds if h.start_ms > t and h.proc != owner
                  and history.events[h.opened][3][7].startswith(label)]
        if firsts:
            out.append(min(firsts) - end)
    history.cache["takeover_margins"] = out
    return out


def _old_heartbeats(history: History, p: Params) -> list[str]:
    """The points about old-format heartbeats, read from the bucket's applied writes: FN-8's two
    outcomes (the delete of one, and a refusal while the one the bucket held was fresh: written
    less than UP-2's span before the operator's clock read at the refusal), and a new node's read
    of one that was fresh by its own clock, lost or failed (UP-2's guard must hold)."""
    out = []
    events = history.events
    procs = history.processes
    span = 3 * p.heartbeat_period_ms + p.ttl_ms + p.grace_ms
    new = {k for k, pr in enumerate(procs) if pr.machine[0] in "mt"}  # new nodes' processes (and their twins)
    old: dict[str, int | None] = {}  # nodes/ key -> written_at of the old heartbeat it holds (None: none)
    fmt3: set[str] = set()  # nodes/ keys holding a format-3 object (live, fenced, released)
    for i in history.of_kind("apply", "fault_delete", "fault_put", "operator_done", "fault"):
        t, q, kind, f = events[i]
        if kind == "fault":
            if (q in new and f[0] in ("request_lost", "fail_fast", "reply_lost")
                    and f[1].startswith("GET nodes/")):
                written_at = old.get(f[1][4:])
                if written_at is not None and procs[q].clock.local(t) - written_at < span:
                    out.append("guard read lost on a fresh heartbeat")
        elif kind == "fault_put":
            old[f[0]] = f[2] if len(f) > 2 else None  # the world wrote an old heartbeat dated f[2], or another body
            fmt3.discard(f[0])
        elif kind == "operator_done":
            written_at = old.get("nodes/" + f[1]) if f[0] == "cluster_forget" else None
            if written_at is not None and f[2].startswith("refused") and procs[q].clock.local(t) - written_at < span:
                out.append("forget met a fresh heartbeat")
            if f[0] == "cluster_forget" and f[2].startswith("refused") and "nodes/" + f[1] in fmt3:
                out.append("forget met a format-3 object")
        elif f[0].startswith("nodes/"):
            if kind == "apply" and f[1] == "DELETE" and q >= 0 and f[7].startswith("node "):
                out.append("forget deleted a retired heartbeat")
            old[f[0]] = (procs[q].clock.local(sent_ms(events[i])) if kind == "apply" and q >= 0
                         and f[6].startswith("node ") else None)
            if kind == "apply" and f[6].startswith(("live ", "fenced ", "released ")):
                fmt3.add(f[0])
            else:
                fmt3.discard(f[0])
    return out


def _drain_judged(history: History, fx: Facts, i: int) -> bool:
    from .drain_ends import _faulted, bound_ms

    t, p = history.events[i][0], history.events[i][1]
    until = t + bound_ms(fx)
    if until > history.end_ms:
        return False
    for tt, q, kind, f in history.events[i + 1:]:
        if tt > until:
            break
        if q == p and kind == "drained":
            break
        if q == p and (kind in ("exit", "crash") or kind == "told" and f[0] in ("resume", "stop")):
            return False
    return not _faulted(history.events, p, history.processes[p].machine, t - fx.params.attempt_timeout_ms, until)


def _drain_released(history: History, i: int) -> bool:
    """At the drain (event i, `told drain`), applied records named the process (world facts), and the
    process itself wrote each of them `nobody` before it reported drained."""
    events = history.events
    t, p = events[i][0], events[i][1]
    procs = history.processes
    mine = "held %s %s " % (procs[p].node_id, procs[p].instance)
    named: dict[str, str] = {}
    for k in history.of_kind("apply"):
        if events[k][0] > t:
            break
        f = events[k][3]
        if f[0].startswith("owners/"):
            named[f[0]] = f[6]
    held = {key for key, state in named.items() if state.startswith(mine)}
    if not held:
        return False
    for tt, q, kind, f in events[i + 1:]:
        if q == p and kind == "drained":
            return not held
        if kind == "apply" and f[0] in held:
            if q != p or not f[6].startswith("nobody "):
                return False  # ended by another writer: not the drain's release
            held.discard(f[0])
    return False


def _twin_won(history: History, fx: Facts) -> bool:
    procs = history.processes
    for k, pr in enumerate(procs):
        if pr.machine.startswith("t") and fx.lease.get(k):
            start = fx.lease[k][0][0]
            if any(o != k and procs[o].node_id == pr.node_id and procs[o].machine.startswith("m")
                   and fx.ended.get(o, (history.end_ms + 1,))[0] > start and fx.live_writes.get(o)
                   and fx.live_writes[o][0].applied_ms < start for o in range(len(procs))):
                return True
    return False


def _gone_fenced(history: History, fx: Facts) -> bool:
    events = history.events
    gone = {events[i][3][1] for i in history.of_kind("fault") if events[i][3][0] == "gone_for_good"}
    if not gone:
        return False
    nodes = {"n" + m[1:] for m in gone}
    applied = [events[i][3] for i in history.of_kind("apply")]
    fenced = {f[0][len("nodes/"):] for f in applied if f[0].startswith("nodes/") and f[6].startswith("fenced ")}
    taken = {f[7].split(" ")[1] for f in applied
             if f[0].startswith("owners/") and f[6].startswith("held ") and f[7].startswith("held ")}
    return bool(nodes & fenced & taken)


def _blip_apart(history: History, fx: Facts) -> bool:
    from .blip import judged

    if not judged(history):
        return False
    start = history.options["blip"][0] + (history.options["upgrade"]["new_at"] if history.options.get("upgrade") else 0)
    period = fx.params.period_ms
    phases = []
    for k, ws in fx.live_writes.items():
        before = [w.sent_ms for w in ws if w.sent_ms < start]
        if before:
            phases.append(before[-1] % period)
    if len(phases) < 2:
        return False
    phases.sort()
    gaps = [b - a for a, b in zip(phases, phases[1:])] + [phases[0] + period - phases[-1]]
    return period - max(gaps) >= period // 4  # the writes spread over a quarter period or more
