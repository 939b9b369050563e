"""Every coverage point recounted from a replayed seed's history (issue 44, part 6).

For each point, tests/checkers/data/coverage_seeds.json names seeds of `swarm` that reach it (found by
tests/checkers/coverage_seeds.py). Each is replayed; the point must be reached there (checkers/coverage.py's
`reached`), and the point's recount of its own (RECOUNT, one per point: written from the raw events and the
processes' clocks, never calling the checker's predicates; a few constants and formulas shared, the BD caps,
UP-2's stale span) must say so too, and agree with the checker on every seed of the pool, reaching or not. Every point must not count on the same seeds run calm (every fault
off), but the configuration's, which a hand-made change of the configuration must turn off; the points issue 44
found counted on something else than the world's facts have hand-made histories that must not count.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache

import pytest

import checkers  # noqa: F401  (every point declared)
from checkers.coverage import POINTS, awaited, reached
from history.schema import event

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "coverage_seeds.json")
with open(DATA) as _f:
    SEEDS: dict[str, list[int]] = json.load(_f)["points"]
POOL = sorted({s for v in SEEDS.values() for s in v})


@lru_cache(maxsize=None)
def history_of(seed: int, scenario: str = "swarm"):
    from broken_models import load_model
    from campaign.run import parse_pins
    from scenarios.sim import run_seed

    return run_seed(seed, load_model("correct"), scenario, parse_pins([], scenario=scenario, start=seed, count=1),
                    "correct")


@lru_cache(maxsize=None)
def reached_of(seed: int, scenario: str = "swarm") -> frozenset:
    return frozenset(reached(history_of(seed, scenario)))


# --- the recounts: from raw events, on the world's facts ------------------------------------------------


def _of(h, *kinds):
    return [(i, e) for i, e in enumerate(h.events) if e.kind in kinds]


def _params(h):
    from model.params import Params

    return Params(**h.params)


def _faults(h, what):
    return [(i, e) for i, e in _of(h, "fault") if e.fields.what == what]


def _life(h):
    """proc -> (started, ended or the run's end), true time."""
    out = {}
    for _i, e in _of(h, "start"):
        out.setdefault(e.proc, [e.t_ms, h.end_ms])
    for _i, e in _of(h, "crash", "exit"):
        if e.proc in out and out[e.proc][1] == h.end_ms:
            out[e.proc][1] = e.t_ms
    return out


def _own_live(h):
    """The processes with an applied live write of their own node lease."""
    procs = h.processes
    return {e.proc for _i, e in _of(h, "apply") if e.proc >= 0 and e.fields.op == "PUT"
            and e.fields.key == f"nodes/{procs[e.proc].node_id}" and e.fields.state.startswith("live ")}


def r_clocks_apart(h):
    p, procs, life, live = _params(h), h.processes, _life(h), _own_live(h)
    nodes = [q for q in sorted(life) if procs[q].machine.startswith("m") and q in live]
    times = sorted({e.t_ms for e in h.events})
    for a_ in range(len(nodes)):
        for b_ in range(a_ + 1, len(nodes)):
            a, b = nodes[a_], nodes[b_]
            lo, hi = max(life[a][0], life[b][0]), min(life[a][1], life[b][1])
            if lo > hi:
                continue
            ca, cb = procs[a].clock, procs[b].clock
            for t in [lo, hi] + [t for t in times if lo <= t <= hi] + \
                    [t + d for pr in (procs[a], procs[b]) for t, _x in pr.steps for d in (-1, 0) if lo <= t + d <= hi]:
                if abs(ca.local(t) - cb.local(t)) >= 2 * p.max_skew_ms:
                    return True
    return False


def r_every_clock(h):
    p, procs = _params(h), h.processes
    nodes = [pr.offset_ms for pr in procs if pr.machine[0] == "m" and not pr.drift_ppm]
    return any(abs(pr.offset_ms - o) >= 2 * p.max_skew_ms for pr in procs for o in nodes
               if pr.machine[0] != "m" and pr.machine != "omf" and not pr.drift_ppm)


def r_acquisition_lost(h, whats=("request_lost", "fail_fast")):
    """(t, proc, key) of every acquisition's record write that never reached the bucket: the struck write's body
    names its sender."""
    procs = h.processes
    out = []
    for _i, e in _of(h, "fault"):
        f = e.fields
        if f.what in whats and e.proc >= 0 and f.target.startswith("PUT owners/") and \
                (f.state or "").split(" ")[:3] == ["held", procs[e.proc].node_id, procs[e.proc].instance]:
            out.append((e.t_ms, e.proc, f.target[4:]))
    return out


def r_unresolved_unchanged(h):
    p = _params(h)
    tg = p.ttl_ms + p.grace_ms
    for t, _q, key in r_acquisition_lost(h):
        later = [e.t_ms for _i, e in _of(h, "apply", "fault_delete", "fault_put") if e.fields.key == key and e.t_ms > t]
        if t + tg <= h.end_ms and (not later or later[0] > t + tg):
            return True
    return False


def r_drain_after_lost_acquire(h):
    p = _params(h)
    tg = p.ttl_ms + p.grace_ms
    lost = r_acquisition_lost(h, ("request_lost",))
    for _i, e in _of(h, "told"):
        if e.fields.command == "drain" and any(q == e.proc and e.t_ms - tg <= t < e.t_ms for t, q, _k in lost):
            return True
    return False


def _lease_windows(h):
    """proc -> its node lease's windows (true time, merged): each applied live write of its own node lease valid
    from its landing to its send on the sender's clock + ttl - safety, cut at the process's end."""
    p, procs, life = _params(h), h.processes, _life(h)
    raw = {}
    for _i, e in _of(h, "apply"):
        f = e.fields
        if e.proc >= 0 and f.key == f"nodes/{procs[e.proc].node_id}" and f.state.startswith("live "):
            clock = procs[e.proc].clock
            until_local = clock.local(f.sent_ms) + p.ttl_ms - p.safety_ms
            lo, hi = f.sent_ms, f.sent_ms + 10 * p.ttl_ms  # the first true instant its clock reads until_local
            while lo < hi:
                mid = (lo + hi) // 2
                if clock.local(mid) >= until_local:
                    hi = mid
                else:
                    lo = mid + 1
            until = min(lo, life.get(e.proc, [0, h.end_ms])[1])
            if until > e.t_ms:  # (a live write landing late, after its process ended, opens no window: seed 117
                raw.setdefault(e.proc, []).append([e.t_ms, until])  # since issue 47 part 4 had one end before it began)
    out = {}
    for q, ws in raw.items():
        merged = []
        for s_, u in sorted(ws):
            if merged and s_ <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], u)
            else:
                merged.append([s_, u])
        out[q] = merged
    return out


def r_fence_after_own_lapse(h):
    """A fence that took effect, sent while its sender's node lease was valid again after having run out: the
    sender's lease as the world's applied live writes make it."""
    procs, windows = h.processes, _lease_windows(h)
    for _i, e in _of(h, "apply"):
        f = e.fields
        if e.proc >= 0 and f.key.startswith("nodes/") and f.state.startswith("fenced ") \
                and f.key != f"nodes/{procs[e.proc].node_id}" \
                and any(k and s_ <= f.sent_ms < u for k, (s_, u) in enumerate(windows.get(e.proc, []))):
            return True
    return False


def r_pending_across_lapse(h):
    """A release of p (its body `nobody <g>`) struck by a fault while its record named p; later a write of p on
    that record, sent in a lease window of p that began after the fault, landed `nobody` or was refused."""
    procs, windows = h.processes, _lease_windows(h)
    named, failed = {}, {}
    for e in h.events:
        f = e.fields
        if e.kind == "fault":
            if e.proc >= 0 and f.target.startswith("PUT owners/") and (f.state or "").startswith("nobody ") \
                    and named.get(f.target[4:], "").split(" ")[1:3] == [procs[e.proc].node_id, procs[e.proc].instance]:
                failed.setdefault((e.proc, f.target[4:]), e.t_ms)
        elif e.kind in ("apply", "refused") and f.key.startswith("owners/"):
            since = failed.get((e.proc, f.key))
            if since is not None and since < e.t_ms and (e.kind == "refused" or f.state.startswith("nobody")):
                ws = windows.get(e.proc, [])
                k = next((k for k, (a, b) in enumerate(ws) if a <= e.t_ms < b), None)
                if k is None:
                    k = max((k for k, (a, _b) in enumerate(ws) if a <= e.t_ms), default=None)
                if k and ws[k][0] > since and ws[k - 1][1] >= since:
                    return True
            if e.kind == "apply":
                named[f.key] = f.state
    return False


def r_release_retried(h):
    failed = set()
    for _i, e in _of(h, "record_reply"):
        f = e.fields
        if f.op == "PUT" and f.key.startswith("owners/") and (f.state or "").startswith("nobody "):
            if f.status == "ok" and (e.proc, f.key, f.state) in failed:
                return True
            if f.status != "ok":
                failed.add((e.proc, f.key, f.state))
    return False


def r_resolver_released(h):
    unknown = {(e.proc, e.fields.key, e.fields.state) for _i, e in _of(h, "record_reply") if e.fields.op == "PUT"
               and (e.fields.state or "").startswith("held ") and e.fields.status != "ok"}
    landed = set()
    for _i, e in _of(h, "apply"):
        f = e.fields
        if (e.proc, f.key, f.state) in unknown:
            landed.add((e.proc, f.key, "nobody " + f.state.split(" ")[3]))
        elif (e.proc, f.key, f.state) in landed:
            return True
    return False


def r_old_beat_at_horizon(h):
    if not h.options.get("upgrade"):
        return False
    p, procs = _params(h), h.processes
    last = {}
    for _i, e in _of(h, "apply"):
        f = e.fields
        if e.proc >= 0 and procs[e.proc].machine.startswith("om") and f.op == "PUT" and f.key.startswith("nodes/") \
                and f.state.startswith("node "):
            local = procs[e.proc].clock.local(f.sent_ms)
            if e.proc in last and local - last[e.proc] >= 3 * p.heartbeat_period_ms - p.heartbeat_period_ms // 4:
                return True
            last[e.proc] = local
    return False


def r_forget_deleted(h):
    for i, e in _of(h, "operator"):
        if e.fields.command == "cluster_forget":
            nxt = next((j for j, x in _of(h, "operator") if j > i and x.proc == e.proc), len(h.events))
            if any(x.kind == "apply" and x.proc == e.proc and x.fields.op == "DELETE"
                   and x.fields.key == "nodes/" + e.fields.node and x.fields.prev_state.startswith("node ")
                   for x in h.events[i:nxt]):
                return True
    return False


def _new(pr):
    return pr.machine[:1] in ("m", "t", "r")


def _up(h):
    return bool(h.options.get("upgrade"))


def r_upgrade_fault(h, whats, op, prefix):
    procs = h.processes
    return _up(h) and any(e.fields.what in whats and e.proc >= 0 and _new(procs[e.proc])
                          and e.fields.target.startswith(f"{op} {prefix}") for _i, e in _of(h, "fault"))


def r_marker_late(h):
    procs = h.processes
    late = {(e.proc, e.fields.target[4:], e.t_ms) for _i, e in _faults(h, "late") if e.proc >= 0
            and _new(procs[e.proc]) and e.fields.target.startswith("PUT leases/")}
    return _up(h) and any((e.proc, e.fields.key, e.fields.sent_ms) in late for _i, e in _of(h, "apply")
                          if e.fields.state.startswith("marker "))


def r_marker_conflict(h):
    procs = h.processes
    return _up(h) and any(_new(procs[e.proc]) and e.fields.key.startswith("leases/") for _i, e in _of(h, "conflicted")
                          if e.proc >= 0)


def r_seed_list_failed(h):
    if not _up(h):
        return False
    procs, first = h.processes, {}
    for i, e in _of(h, "apply"):
        if e.fields.key.startswith("owners/"):
            first.setdefault(e.fields.key[7:], i)
    return any(e.fields.what in ("request_lost", "fail_fast", "reply_lost") and e.proc >= 0 and _new(procs[e.proc])
               and e.fields.target.startswith("LIST wal/")
               and i < first.get(e.fields.target[9:].rstrip("/"), len(h.events)) for i, e in _of(h, "fault"))


def _switch_windows(h):
    procs, first_start, first_live = h.processes, {}, {}
    for _i, e in _of(h, "start"):
        if _new(procs[e.proc]):
            first_start.setdefault(procs[e.proc].node_id, e.t_ms)
    for _i, e in _of(h, "apply"):
        if e.proc >= 0 and _new(procs[e.proc]) and e.fields.key == f"nodes/{procs[e.proc].node_id}" \
                and e.fields.state.startswith("live "):
            first_live.setdefault(procs[e.proc].node_id, e.t_ms)
    return {n: (s_, first_live.get(n, h.end_ms if h.end_ms is not None else 1 << 62)) for n, s_ in first_start.items()}


def r_twin_at_switch(h):
    if not _up(h):
        return False
    procs, w, life = h.processes, _switch_windows(h), _life(h)
    return any((procs[q].machine.startswith("t") or procs[q].machine == "r0") and procs[q].node_id in w
               and life[q][0] < w[procs[q].node_id][1] and life[q][1] > w[procs[q].node_id][0] for q in life)


def r_old_at_switch(h):
    if not _up(h):
        return False
    procs, spans, seen = h.processes, list(_switch_windows(h).values()), set()
    for _i, e in _of(h, "start"):
        m = procs[e.proc].machine
        if m.startswith("om") and m != "omf":
            if m in seen and any(a <= e.t_ms < b for a, b in spans):
                return True
            seen.add(m)
    return False


def r_write_applied_late(h):
    """A write held back past its timeout (`late`), then applied: the apply of that process, request and send."""
    late = [(e.proc, e.fields.target, e.t_ms) for _i, e in _faults(h, "late") + _faults(h, "held_back")]
    return any((e.proc, e.fields.op + " " + e.fields.key, e.fields.sent_ms) in late
               for _i, e in _of(h, "apply") if e.proc >= 0)


def _round_trips(h):
    return [(e.t_ms - e.fields.sent_ms, e) for _i, e in _of(h, "record_reply", "background_answered", "leases_reply")
            if e.fields.sent_ms is not None]


def r_reply_just_under(h):
    a = _params(h).attempt_timeout_ms
    return any(a - a // 10 <= rt < a and e.fields.status != "timed_out" for rt, e in _round_trips(h))


def r_reply_past(h):
    slow = _faults(h, "slow_reply")
    for _rt, e in _round_trips(h):
        if e.fields.status == "timed_out" and any(
                s.proc == e.proc and s.fields.target == f"{e.fields.op} {e.fields.key}"
                and e.fields.sent_ms <= s.t_ms <= e.t_ms for _j, s in slow):
            return True
    return False


def r_read_reply_lost(h):
    return any(e.fields.target.startswith("GET ") for _i, e in _faults(h, "reply_lost"))


def r_fast_5xx(h):
    return any(e.fields.target.startswith(("PUT ", "DELETE ")) for _i, e in _faults(h, "fast_5xx"))


def r_conflict_racing(h):
    """A 409 on a key other than a marker's, the world naming the conditional write it raced (issue 47)."""
    return any(e.fields.racing_proc is not None and not e.fields.key.startswith("leases/")
               for _i, e in _of(h, "conflicted"))


def r_applied_5xx(h):
    """A write struck `applied_5xx` (noted as it was sent) that the bucket applied: its process's `apply` of the
    same key, sent at that instant (a failed condition answered 5xx is no such write)."""
    struck = {(e.proc, e.fields.target.split(" ", 1)[1], e.t_ms) for _i, e in _faults(h, "applied_5xx")}
    return any((a.proc, a.fields.key, a.fields.sent_ms) in struck for _j, a in _of(h, "apply"))


def r_sdk_retry(h):
    struck = [(i, e) for i, e in _faults(h, "sdk_retry")]
    for i, e in _of(h, "refused"):
        for j, s in struck:
            if j < i and s.proc == e.proc and s.fields.target.split(" ", 1)[1] == e.fields.key and (
                    e.fields.met == s.fields.state if e.fields.op == "PUT" else e.fields.status == "not_found"):
                return True
    return False


def r_machine_gone_fenced(h):
    gone, fenced = set(), set()
    for e in h.events:
        f = e.fields
        if e.kind == "fault" and f.what == "gone_for_good":
            gone.add("n" + f.target[1:])
        elif e.kind == "apply" and f.key.startswith("nodes/") and f.state.startswith("fenced ") and f.key[6:] in gone:
            fenced.add(f.key[6:])
        elif e.kind == "apply" and f.key.startswith("owners/") and f.state.startswith("held ") \
                and f.prev_state.startswith("held ") and f.prev_state.split(" ")[1] in fenced:
            return True
    return False


def r_delete_then_takeover(h):
    deleted = {}  # node -> the first mistaken delete of its nodes/ object
    for i, e in enumerate(h.events):
        f = e.fields
        if e.kind == "fault_delete" and f.key.startswith("nodes/"):
            deleted.setdefault(f.key[6:], i)
        elif e.kind == "apply" and e.proc >= 0 and f.key.startswith("owners/") and f.state.startswith("held ") \
                and f.prev_state.startswith("held ") and f.prev_state.split(" ")[1] in deleted:
            return True
    return False


def r_two_fencers(h):
    procs = h.processes
    return any(e.proc >= 0 and e.fields.key.startswith("nodes/") and e.fields.met.startswith("fenced ")
               and e.fields.key != f"nodes/{procs[e.proc].node_id}" for _i, e in _of(h, "refused"))


def r_fence_met_late_heartbeat(h):
    procs = h.processes
    landed = {}  # (key, state) -> when that fence took effect, first
    for i, e in enumerate(h.events):
        f = e.fields
        if e.kind == "apply" and f.key.startswith("nodes/") and f.state.startswith("fenced "):
            landed.setdefault((f.key, f.state), e.t_ms)
        elif e.kind == "refused" and e.proc >= 0 and f.key == f"nodes/{procs[e.proc].node_id}" \
                and f.met.split(" ")[:2] == ["fenced", procs[e.proc].instance] and len(f.met.split(" ")) == 3 \
                and (f.key, f.met) in landed and f.sent_ms < landed[(f.key, f.met)]:
            return True
    return False


def r_twin_won(h):
    procs, life = h.processes, _life(h)
    first_live = {}
    for _i, e in _of(h, "apply"):
        if e.proc >= 0 and e.fields.key == f"nodes/{procs[e.proc].node_id}" and e.fields.state.startswith("live "):
            first_live.setdefault(e.proc, e.t_ms)
    return any(procs[t].machine.startswith("t") and procs[o].machine.startswith("m")
               and procs[o].node_id == procs[t].node_id and first_live[o] < first_live[t] < life[o][1]
               for t in first_live for o in first_live)


def r_acquisition_after_failed(h):
    """An acquisition's write of p (its body names p) refused, 409'd, failed fast or answered 5xx at once, then a
    request for that actor served by p."""
    procs = h.processes
    answered = {(e.proc, e.fields.key, e.fields.sent_ms): e.fields.state for _i, e in _of(h, "record_reply")
                if e.fields.op == "PUT"}
    failed = set()
    for e in h.events:
        if e.proc < 0:
            continue
        me = ["held", procs[e.proc].node_id, procs[e.proc].instance]
        f = e.fields
        if e.kind == "served" and (e.proc, f.actor) in failed:
            return True
        if e.kind == "fault" and f.what in ("fail_fast", "fast_5xx") and f.target.startswith("PUT owners/"):
            body = f.state
            key = f.target[4:]
        elif e.kind in ("refused", "conflicted") and f.op == "PUT" and f.key.startswith("owners/"):
            body = f.state if e.kind == "conflicted" else answered.get((e.proc, f.key, f.sent_ms))
            key = f.key
        else:
            continue
        if (body or "").split(" ")[:3] == me:
            failed.add((e.proc, key[7:]))
    return False


def r_move_handed_over(h):
    procs = h.processes
    asked = {}  # actor -> the target of the last move asked
    for e in h.events:
        if e.kind == "moved":
            asked[e.fields.actor] = e.fields.target
        elif e.kind == "apply" and e.proc >= 0 and e.fields.key.startswith("owners/") \
                and e.fields.state.startswith("held ") and asked.get(e.fields.key[7:]) == procs[e.proc].node_id \
                and e.fields.prev_state.split(" ")[0] in ("nobody", "held"):
            return True
    return False


def r_drain_in_outage(h):
    procs = h.processes
    outs = [(e.t_ms, e.fields.machine, e.fields.until_ms) for _i, e in _of(h, "outage")]
    return any(e.fields.command == "drain" and e.proc >= 0 and any(
        s <= e.t_ms < u and w in (procs[e.proc].machine, "*") for s, w, u in outs) for _i, e in _of(h, "told"))


def r_old_met_marker(h):
    """An old binary's read of leases/ answered with a marker, and nothing of that old binary applied on that key
    after it."""
    procs = h.processes
    for i, e in _of(h, "leases_reply"):
        if procs[e.proc].machine.startswith("om") and e.fields.op == "GET" and e.fields.status == "ok" \
                and (e.fields.state or "").startswith("marker ") and not any(
                    x.kind == "apply" and x.proc == e.proc and x.fields.key == e.fields.key for x in h.events[i:]):
            return True
    return False


def r_bound(h, rule, kind, cap):
    return bool(h.rules.get(rule)) and any(e.fields.in_flight >= cap for _i, e in _of(h, kind))


def r_same_id_open_entry(h):
    """A process's record write `held <its node> <its instance> <g>` answered other than ok (its outcome unknown), and
    no later write of its on that key answered ok; then its read of the key answered with `held <its node> <another
    instance> <g>`, which a process of the same node id applied (issue 45 part 3: a twin or a successor)."""
    procs = h.processes
    open_ = {}
    applied = set()
    for _i, e in _of(h, "apply", "record_reply"):
        f = e.fields
        if not f.key.startswith("owners/") or e.proc < 0:
            continue
        if e.kind == "apply":
            applied.add((f.key, f.state, procs[e.proc].node_id, procs[e.proc].instance))
            continue
        me = procs[e.proc]
        parts = (f.state or "").split(" ")
        if f.op == "PUT" and parts[0] == "held":
            if f.status in ("timed_out", "conflict"):
                open_[(e.proc, f.key)] = parts[3]
            else:
                open_.pop((e.proc, f.key), None)
        elif f.op == "GET" and f.status == "ok" and (e.proc, f.key) in open_ and len(parts) == 4 \
                and parts[0] == "held" and parts[1] == me.node_id and parts[2] != me.instance \
                and parts[3] == open_[(e.proc, f.key)] and (f.key, f.state, me.node_id, parts[2]) in applied:
            return True
    return False


def r_resolver_at_cap(h):
    """The background task's requests of a process in flight recounted from their sends and answers (each answer
    names its send's instant): a resolver's read (a GET with no token) sent with 32 in flight, itself included."""
    flying = {}
    for _i, e in _of(h, "background_sent", "background_answered"):
        f = e.fields
        mine = flying.setdefault(e.proc, [])
        if e.kind == "background_answered":
            if (f.key, f.sent_ms) in mine:
                mine.remove((f.key, f.sent_ms))
            continue
        mine.append((f.key, e.t_ms))
        if f.op == "GET" and f.version is None and len(mine) >= 32:
            return True
    return False


def r_fences_past_cap(h):
    """At a listing's end (`listing_ended`) of p: 8 of p's fences' requests in flight, recounted from their sends and
    answers, each sent before that listing's LIST; and a peer it listed, none of p's fence requests on it in flight,
    whose nodes/ object then was a live write applied P + A or more before, its written_at + ttl + grace passed
    on p's clock, p's own nodes/ write acknowledged P + A or more before and p alive (a coarser FN-2 than the
    point's: the last change and p's last acknowledged write each a full watch back)."""
    p, procs = _params(h), h.processes
    watch = p.period_ms + p.attempt_timeout_ms
    objects = {}  # key -> [(t, state)]
    for _i, e in _of(h, "apply", "fault_put", "fault_delete"):
        objects.setdefault(e.fields.key, []).append((e.t_ms, e.fields.state if e.kind == "apply" else ""))
    acks = {}
    for _i, e in _of(h, "record_reply"):
        if e.fields.op == "PUT" and e.fields.status == "ok" and e.fields.key == "nodes/" + procs[e.proc].node_id:
            acks.setdefault(e.proc, []).append(e.t_ms)
    flying = {}
    for _i, e in _of(h, "fence_read_sent", "fence_sent", "fence_answered", "listing_ended"):
        f = e.fields
        mine = flying.setdefault(e.proc, {})
        if e.kind == "fence_answered":
            mine.pop((f.op, f.key, f.sent_ms), None)
        elif e.kind != "listing_ended":
            mine[("GET" if e.kind == "fence_read_sent" else "PUT", f.key, e.t_ms)] = e.t_ms
        elif len(mine) >= 8 and all(s < f.sent_ms for s in mine.values()):
            t, c = e.t_ms, procs[e.proc].clock
            busy = {k for _o, k, _s in mine}
            if not any(t - watch >= a >= t - 2 * p.ttl_ms for a in acks.get(e.proc, ())):
                continue
            for node in f.keys:
                key = "nodes/" + node
                last = [(w, st) for w, st in objects.get(key, ()) if w <= t]
                if key in busy or node == procs[e.proc].node_id or not last:
                    continue
                w, st = last[-1]
                if st.startswith("live ") and w + watch <= t and c.local(t) > int(st.split(" ")[2]) + p.takeover_ms:
                    return True
    return False


def r_old_lease_at_margin(h):
    """A new node's read of leases/ answered with an old lease whose expires_at is within safety before or grace after
    the reader's clock at the answer, and an old binary's write of that key applied after it."""
    p, procs = _params(h), h.processes
    old = [(e.t_ms, e.fields.key) for _i, e in _of(h, "apply") if e.proc >= 0
           and procs[e.proc].machine.startswith("om") and e.fields.state.startswith("old-lease ")]
    for _i, e in _of(h, "leases_reply"):
        f = e.fields
        if f.op != "GET" or f.status != "ok" or not f.state.startswith("old-lease ") \
                or procs[e.proc].machine.startswith("om"):
            continue
        local = procs[e.proc].clock.local(e.t_ms)
        expires = int(f.state.split(" ")[3])
        if expires - p.safety_ms <= local <= expires + p.grace_ms and any(t > e.t_ms and k == f.key for t, k in old):
            return True
    return False


def r_bd3(h):
    if not h.rules.get("BD-3"):
        return False
    procs, row = h.processes, {}
    for _i, e in _of(h, "background_answered"):
        f = e.fields
        if f.version is None or f.op == "PUT" and f.status in ("precondition_failed", "not_found"):
            continue
        if f.op != "PUT" and (f.status == "not_found" or f.status == "ok" and (f.state or "").split(" ")[:3] != [
                "held", procs[e.proc].node_id, procs[e.proc].instance]):
            continue
        row[e.proc] = row.get(e.proc, 0) + 1 if f.status != "ok" else 0
        if row[e.proc] >= 32:
            return True
    return False


def r_forget(h, which):
    """`cluster forget` asked of a node (the world's `operator`), its read of nodes/<node> answered (`read`),
    nothing of the operator's applied on that key before the world's next command: what it met then."""
    from checkers.start_guard import stale_after_ms

    procs, span = h.processes, stale_after_ms(_params(h))
    for i, e in _of(h, "operator"):
        if e.fields.command != "cluster_forget":
            continue
        key = "nodes/" + e.fields.node
        nxt = next((j for j, x in _of(h, "operator") if j > i and x.proc == e.proc), len(h.events))
        after = h.events[i:nxt]
        if any(x.kind == "apply" and x.proc == e.proc and x.fields.key == key for x in after):
            continue
        for r in after:
            if r.kind == "read" and r.proc == e.proc and r.fields.key == key and r.fields.serial >= 0:
                # the object in the bucket when the read was answered
                last = None
                for x in h.events:
                    if x.t_ms > r.t_ms:
                        break
                    if x.kind in ("apply", "fault_put", "fault_delete") and x.fields.key == key:
                        last = x
                if last is None:
                    continue
                if which == "format 3":
                    if last.kind == "apply" and last.fields.state.startswith(("live ", "fenced ", "released ")):
                        return True
                else:
                    written = last.fields.written_at_ms if last.kind == "fault_put" else (
                        procs[last.proc].clock.local(last.fields.sent_ms)
                        if last.kind == "apply" and last.proc >= 0 and last.fields.state.startswith("node ") else None)
                    if written is not None and procs[r.proc].clock.local(r.t_ms) - written < span:
                        return True
                break
    return False


def r_straggler(h):
    return bool(_faults(h, "straggler"))


def _config(h, key):
    return h.options.get("config") == key


def r_takeover_at_deadline(h):
    p, procs, windows = _params(h), h.processes, _lease_windows(h)
    for _i, e in _faults(h, "deadline_race"):
        t = e.t_ms
        owner = next((q for q, pr in enumerate(procs) if pr.machine == e.fields.target
                      and any(a <= t - 1 < b for a, b in windows.get(q, []))), None)
        if owner is None:
            continue
        end = next(b for a, b in windows[owner] if a <= t - 1 < b)
        label = ["held", procs[owner].node_id, procs[owner].instance]
        firsts = [x.t_ms for _j, x in _of(h, "apply") if x.t_ms > t and x.proc >= 0 and x.proc != owner
                  and x.fields.key.startswith("owners/") and x.fields.state.startswith("held ")
                  and x.fields.prev_state.split(" ")[:3] == label]
        if firsts and min(firsts) - end <= 2 * p.max_skew_ms:
            return True
    return False


def r_guard_read_lost(h):
    from checkers.start_guard import stale_after_ms

    procs, span, old = h.processes, stale_after_ms(_params(h)), {}
    for e in h.events:
        f = e.fields
        if e.kind == "fault" and f.what in ("request_lost", "fail_fast", "reply_lost") and e.proc >= 0 \
                and procs[e.proc].machine[0] in "mt" and f.target.startswith("GET nodes/"):
            w = old.get(f.target[4:])
            if w is not None and procs[e.proc].clock.local(e.t_ms) - w < span:
                return True
        elif e.kind == "fault_put":
            old[f.key] = f.written_at_ms
        elif e.kind in ("apply", "fault_delete") and f.key.startswith("nodes/"):
            old[f.key] = procs[e.proc].clock.local(f.sent_ms) if e.kind == "apply" and e.proc >= 0 \
                and f.state.startswith("node ") else None
    return False


def r_marker_unknown(h):
    procs = h.processes
    return any(e.fields.what in ("request_lost", "reply_lost", "late") and e.proc >= 0
               and not procs[e.proc].machine.startswith("om")
               and str(e.fields.target).startswith("PUT leases/") for _i, e in _of(h, "fault"))


def r_guard_rewritten(h):
    if not _up(h):
        return False
    spans = list(_switch_windows(h).values())
    return any(e.proc >= 0 and e.fields.op == "PUT" and e.fields.key.startswith("nodes/")
               and e.fields.state.startswith("node ") and e.fields.prev_state.startswith("node ")
               and any(a <= e.t_ms < b for a, b in spans) for _i, e in _of(h, "apply"))


def r_gc_between(h):
    if not _up(h):
        return False
    procs, last = h.processes, {}
    for e in h.events:
        if e.kind in ("apply", "fault_delete", "refused") and e.fields.key.startswith("leases/"):
            if e.kind == "refused":
                if e.proc >= 0 and _new(procs[e.proc]) and e.fields.cond == "if-match" and not e.fields.met \
                        and last.get(e.fields.key) == "fault_delete":
                    return True
                continue
            last[e.fields.key] = e.kind
    return False


def r_blip_cadences(h):
    o, p, procs = h.options, _params(h), h.processes
    if not (o.get("blip_alone") and o.get("blip")):
        return False
    start = o["blip"][0] + (o["upgrade"]["new_at"] if o.get("upgrade") else 0)
    last = {}
    for _i, e in _of(h, "apply"):
        f = e.fields
        if e.proc >= 0 and f.key == f"nodes/{procs[e.proc].node_id}" and f.state.startswith("live ") \
                and f.sent_ms < start:
            last[e.proc] = max(last.get(e.proc, -1), f.sent_ms)
    phases = sorted(t % p.period_ms for t in last.values())
    if len(phases) < 2:
        return False
    widest = max([b - a for a, b in zip(phases, phases[1:])] + [phases[0] + p.period_ms - phases[-1]])
    return p.period_ms - widest >= p.period_ms // 4


def r_drain_from_faults_end(h):
    p = _params(h)
    quiet = [e.t_ms for _i, e in _of(h, "quiet")]
    return bool(quiet) and any(e.t_ms == quiet[0] and e.fields.until_ms + p.ttl_ms + p.grace_ms
                               + p.attempt_timeout_ms <= h.end_ms for _i, e in _of(h, "running"))


def r_fn5(h, which):
    """The restart race's read (`race_read`: the freer, and whether its read of nodes/A left after or was applied
    before the held write) against the applies: A's new instance's first live write landing after the freer's
    record read came back naming A (between), or before the instance took an actor back (after the read)."""
    procs, a = h.processes, _params(h).attempt_timeout_ms
    firsts, seen = {}, set()
    for _i, e in _of(h, "apply"):
        f = e.fields
        if e.proc >= 0 and e.proc not in seen and f.op == "PUT" and f.key == "nodes/" + procs[e.proc].node_id \
                and f.state.startswith("live "):
            seen.add(e.proc)
            firsts.setdefault(procs[e.proc].node_id, []).append((e.t_ms, e.proc))
    for _i, e in _faults(h, "race_read"):
        freer, _, when = e.fields.detail.partition(": ")
        node = e.fields.target[len("GET nodes/"):]
        if when == "after" and which == "between":
            lives = [x for x in firsts.get(node, ()) if x[0] <= e.t_ms]
            if lives and any(r.t_ms <= lives[-1][0] and procs[r.proc].node_id == freer and r.fields.op == "GET"
                             and r.fields.key.startswith("owners/") and (r.fields.state or "").startswith(f"held {node} ")
                             for _j, r in _of(h, "record_reply")):
                return True
        elif when == "before" and which == "after":
            lives = [x for x in firsts.get(node, ()) if x[0] >= e.t_ms]
            if lives and any(x.proc == lives[0][1] and lives[0][0] <= x.t_ms <= lives[0][0] + 2 * a
                             and x.fields.key.startswith("owners/") and x.fields.state.startswith("held ")
                             for _j, x in _of(h, "apply")):
                return True
    return False


def r_marker_unknown_read(h):
    """A marker its writer never learned of (held back past its timeout and applied, or applied with its ok reply
    lost), then the actor's first owners/ record written by a process before leases/<actor> changed again."""
    if not _up(h):
        return False
    procs, ev = h.processes, h.events
    late = {(e.proc, e.fields.target[4:], e.t_ms) for _i, e in _faults(h, "late") if e.proc >= 0}
    lost = {(e.proc, e.fields.target[4:], e.t_ms) for _i, e in _faults(h, "reply_lost")
            if e.proc >= 0 and e.fields.detail == "ok"}
    first_owner = {}
    for _i, e in _of(h, "apply"):
        if e.fields.key.startswith("owners/"):
            first_owner.setdefault(e.fields.key[7:], e)
    for i, e in _of(h, "apply"):
        f = e.fields
        if e.proc < 0 or not _new(procs[e.proc]) or not f.key.startswith("leases/") or not f.state.startswith("marker "):
            continue
        if (e.proc, f.key, f.sent_ms) not in late and (e.proc, f.key, e.t_ms) not in lost:
            continue
        nxt = next((x.t_ms for x in ev[i + 1:] if x.kind in ("apply", "fault_delete") and x.fields.key == f.key),
                   h.end_ms if h.end_ms is not None else 1 << 62)
        o = first_owner.get(f.key[7:])
        if o is not None and e.t_ms < o.t_ms < nxt and o.proc != -1:
            return True
    return False


def r_guard_future(h):
    if not _up(h):
        return False
    p, procs = _params(h), h.processes
    end = h.end_ms if h.end_ms is not None else 1 << 62
    versions, current = [], {}
    for e in h.events:
        f = e.fields
        if e.kind not in ("apply", "fault_delete", "fault_put") or not f.key.startswith("nodes/"):
            continue
        if f.key in current:
            current.pop(f.key)[3] = e.t_ms
        if e.kind == "apply" and e.proc >= 0 and f.op == "PUT" and f.state.startswith("node "):
            v = [f.key, e.t_ms, procs[e.proc].clock.local(f.sent_ms), end]
        elif e.kind == "fault_put" and f.written_at_ms is not None:
            v = [f.key, e.t_ms, f.written_at_ms, end]
        else:
            continue
        versions.append(v)
        current[f.key] = v
    windows, life = _switch_windows(h), _life(h)
    for q in sorted(life):
        w = windows.get(procs[q].node_id)
        if not _new(procs[q]) or w is None or life[q][0] >= w[1]:
            continue
        for _key, applied, written, replaced in versions:
            at = max(life[q][0], applied)
            if at < min(replaced, w[1]) and written > procs[q].clock.local(at) + 2 * p.max_skew_ms:
                return True
    return False


def _drains_judged(h):
    """The `told drain` events INV-11 judges with no fault around them: its bound (ttl + grace) inside the run,
    the process neither ended, resumed nor stopped before it reported drained or the bound passed, no fault to it
    and no outage of its machine from an attempt timeout before the drain to the bound, and no release of its
    left pending by an earlier fault on a record still naming it."""
    p, procs, ev = _params(h), h.processes, h.events
    out = []
    for i, e in _of(h, "told"):
        q, t = e.proc, e.t_ms
        if e.fields.command != "drain" or q < 0 or t + p.ttl_ms + p.grace_ms > h.end_ms:
            continue
        until = t + p.ttl_ms + p.grace_ms
        bad = False
        for x in ev[i + 1:]:
            if x.t_ms > until or x.proc == q and x.kind == "drained":
                break
            if x.proc == q and (x.kind in ("exit", "crash") or x.kind == "told" and x.fields.command in ("resume", "stop")):
                bad = True
                break
        bad = bad or any(x.kind == "outage" and x.fields.machine in ("*", procs[q].machine) and x.t_ms <= until
                         and x.fields.until_ms >= t - p.attempt_timeout_ms
                         or x.kind == "fault" and x.proc == q and t - p.attempt_timeout_ms <= x.t_ms <= until for x in ev)
        state, failed = {}, set()
        for x in ev:
            if x.t_ms >= t:
                break
            if x.kind == "apply" and x.fields.key.startswith("owners/"):
                state[x.fields.key] = x.fields.state
                if x.proc == q and x.fields.state.startswith("nobody "):
                    failed.discard(x.fields.key)
            elif x.proc == q and x.kind == "fault" and x.fields.target.startswith("PUT owners/"):
                failed.add(x.fields.target[4:])
        mine = f"held {procs[q].node_id} {procs[q].instance} "
        if not bad and not any(state.get(k, "").startswith(mine) for k in failed):
            out.append(i)
    return out


def r_drain_released_busy(h):
    procs, ev = h.processes, h.events
    for i in _drains_judged(h):
        q, t = ev[i].proc, ev[i].t_ms
        mine = f"held {procs[q].node_id} {procs[q].instance} "
        named = {}
        for x in ev:
            if x.t_ms > t:
                break
            if x.kind == "apply" and x.fields.key.startswith("owners/"):
                named[x.fields.key] = x.fields.state
        held = {k for k, v in named.items() if v.startswith(mine)}
        if not held:
            continue
        for x in ev[i + 1:]:
            if x.proc == q and x.kind == "drained":
                if not held:
                    return True
                break
            if x.kind == "apply" and x.fields.key in held:
                if x.proc != q or not x.fields.state.startswith("nobody "):
                    break
                held.discard(x.fields.key)
    return False


def r_seeded_from_keys(h):
    """A create of owners/<actor> (If-None-Match, applied) whose attempt's read of leases/<actor> (its process's
    last one answered by the create's send) found no object, while a key of the actor's data (wal/, snapshot/)
    had been written before that answer."""
    reads, keys = {}, {}
    for _i, e in _of(h, "leases_reply", "apply"):
        f = e.fields
        if e.kind == "leases_reply":
            if f.op == "GET":
                reads.setdefault((e.proc, f.key[7:]), []).append(e)
        elif f.op == "PUT" and f.key.startswith(("wal/", "snapshot/")):
            keys.setdefault(f.key.split("/", 1)[1].rsplit("/", 1)[0], []).append(e.t_ms)
    for _i, e in _of(h, "apply"):
        f = e.fields
        if f.key.startswith("owners/") and f.op == "PUT" and f.cond == "if-none-match" and f.serial and e.proc >= 0:
            actor = f.key[7:]
            read = next((r for r in reversed(reads.get((e.proc, actor), [])) if r.t_ms <= f.sent_ms), None)
            if read is not None and read.fields.status == "not_found" and any(
                    t <= read.t_ms for t in keys.get(actor, ())):
                return True
    return False


def _told_list(h):
    """(process, when) of each drain the world told a process, and each move it asked of the process the actor's
    record named then."""
    procs = h.processes
    who = {(pr.node_id, pr.instance): k for k, pr in enumerate(procs)}
    names, out = {}, []
    for e in h.events:
        f = e.fields
        if e.kind == "apply" and f.key.startswith("owners/"):
            parts = f.state.split(" ")
            names[f.key] = who.get((parts[1], parts[2])) if len(parts) == 4 and parts[0] == "held" else None
        elif e.kind == "told" and f.command == "drain" and e.proc >= 0:
            out.append((e.proc, e.t_ms))
        elif e.kind == "moved" and names.get("owners/" + f.actor) is not None:
            out.append((names["owners/" + f.actor], e.t_ms))
    return out


def r_told_fences_full(h):
    a = _params(h).attempt_timeout_ms
    full = [(e.proc, e.t_ms) for _i, e in _of(h, "fence_sent") if e.fields.in_flight >= 8]
    return any(q == p and t0 <= t < t0 + a for p, t in _told_list(h) for q, t0 in full)


def r_told_release_pending(h):
    """A release of p (`nobody <g>` on a record) answered other than ok, and not yet ended when p was told: ended by
    one of its retries answered ok, or by a read after a 412 or 404 that found the record not naming p at g."""
    procs, end = h.processes, h.end_ms
    answers = {}
    for _i, e in _of(h, "record_reply"):
        if e.fields.key.startswith("owners/"):
            answers.setdefault((e.proc, e.fields.key), []).append(e)
    spans = {}
    for (q, key), rs in answers.items():
        for g in sorted({r.fields.state.split(" ")[1] for r in rs if r.fields.op == "PUT"
                         and (r.fields.state or "").startswith("nobody ")}):
            chain = [r for r in rs if r.fields.op == "PUT" and r.fields.state == f"nobody {g}"]
            first = next((r.t_ms for r in chain if r.fields.status != "ok"), None)
            if first is None:
                continue
            ended = next((r.t_ms for r in chain if r.fields.status == "ok"), None)
            held = f"held {procs[q].node_id} {procs[q].instance} {g}"
            for r in chain:
                if r.fields.status in ("precondition_failed", "not_found"):
                    after = next((x.t_ms for x in rs if x.fields.op == "GET" and x.fields.sent_ms >= r.t_ms and (
                        x.fields.status == "ok" and x.fields.state != held or x.fields.status == "not_found")), None)
                    if after is not None:
                        ended = after if ended is None else min(ended, after)
                        break
            spans.setdefault(q, []).append((first, end if ended is None else ended))
    return any(a <= t < b for q, t in _told_list(h) for a, b in spans.get(q, ()))


def _acquisition_spans(h):
    """proc -> (read-back spans, unresolved spans): an acquisition's write (`held ...`) answered other than ok;
    its read-back is the next read of that record its process sent once the answer came, in flight until
    answered; unless that read showed the write, or another version than the one the write named, the entry is
    unresolved from then until a read shows another version."""
    answers = {}
    for _i, e in _of(h, "record_reply"):
        if e.fields.key.startswith("owners/"):
            answers.setdefault((e.proc, e.fields.key), []).append(e)
    out = {}
    for (q, _key), rs in answers.items():
        reads = sorted((r for r in rs if r.fields.op != "PUT"), key=lambda r: r.fields.sent_ms)
        for w in rs:
            if w.fields.op != "PUT" or not (w.fields.state or "").startswith("held ") or w.fields.status == "ok":
                continue
            k = next((n for n, r in enumerate(reads) if r.fields.sent_ms >= w.t_ms), None)
            if k is None:
                continue
            r = reads[k]
            back, unresolved = out.setdefault(q, ([], []))
            back.append((r.fields.sent_ms, r.t_ms))
            named = w.fields.named_serial
            if r.fields.status == "ok" and (r.fields.state == w.fields.state or r.fields.serial != named):
                continue
            until = next((x.t_ms for x in reads[k + 1:] if x.fields.status == "ok" and x.fields.serial != named),
                         h.end_ms)
            unresolved.append((r.t_ms, until))
    return out


def r_told_while(h, which):
    spans = _acquisition_spans(h)
    return any(a <= t < b for q, t in _told_list(h) for a, b in spans.get(q, ([], []))[which])


def r_owner_died(h):
    """A process that held its node lease (an applied live write) crashed or exited non-zero in the quiet phase,
    its nodes/ object not deleted by mistake since its last landed write, holding a record (naming it, its lease
    valid just before it died); a later hold of that actor began, in a valid lease window of its new holder."""
    procs, windows = h.processes, _lease_windows(h)
    quiet = [e.t_ms for _i, e in _of(h, "quiet")]
    if not quiet:
        return False
    lands = {}
    for _i, e in _of(h, "apply"):
        f = e.fields
        if e.proc >= 0 and f.key == f"nodes/{procs[e.proc].node_id}" and f.state.split(" ")[:2] == [
                "live", procs[e.proc].instance]:
            lands.setdefault(e.proc, []).append(e.t_ms)
    deletes = [(e.fields.key[6:], e.t_ms) for _i, e in _of(h, "fault_delete") if e.fields.key.startswith("nodes/")]
    for _i, d in _of(h, "crash", "exit"):
        q, td = d.proc, d.t_ms
        if td < quiet[0] or q not in lands or d.kind == "exit" and d.fields.status == 0:
            continue
        ack = max((t for t in lands[q] if t <= td), default=None)
        if ack is None or any(n == procs[q].node_id and ack <= t <= td for n, t in deletes):
            continue
        if not any(a <= td - 1 < b for a, b in windows.get(q, [])):
            continue
        state = {}
        for e in h.events:
            if e.t_ms >= td:
                break
            if e.kind in ("apply", "fault_delete", "fault_put") and e.fields.key.startswith("owners/"):
                state[e.fields.key] = e.fields.state if e.kind == "apply" else ""
        mine = ["held", procs[q].node_id, procs[q].instance]
        held = {k for k, v in state.items() if (v or "").split(" ")[:3] == mine}
        for e in h.events:
            f = e.fields
            if e.t_ms > td and e.kind == "apply" and f.key in held and e.proc >= 0 and f.state.split(" ")[:3] == [
                    "held", procs[e.proc].node_id, procs[e.proc].instance] and any(
                    b > e.t_ms for _a, b in windows.get(e.proc, [])):
                return True
    return False


def _pause_spans(h):
    """(process, start, end) of each pause, from the world's `fault` events on the process."""
    return [(e.proc, e.t_ms, e.t_ms + (e.fields.ms or 0)) for e in h.events
            if e.kind == "fault" and e.fields.what == "pause" and e.proc >= 0]


def _resumed_counts(h):
    """Each resume's queued inputs by kind ('timers 3, replies 0, commands 2')."""
    out = []
    for e in h.events:
        if e.kind == "fault" and e.fields.what == "resumed":
            out.append({k: int(n) for n, k in (x.split(" ")[::-1] for x in e.fields.detail.split(", "))})
    return out


def r_pause_at_lease_end(h):
    """A pause ending within 10 ms of the end of one of the process's lease windows, as the world's facts rebuild
    them (checkers/facts.py: each from an applied live write, to its validity's end on the writer's clock)."""
    from checkers.facts import facts

    lease = facts(h).lease
    return any(abs(end - e) <= 10 for q, _s, end in _pause_spans(h) for _a, e, _i in lease.get(q, ()))


def r_two_unknown_acquires(h):
    """A process's acquisition writes of one actor at g and then g + 1, each answered by its timeout or a 409."""
    last: dict = {}
    for e in h.events:
        f = e.fields
        if e.kind != "record_reply" or f.op != "PUT" or not f.key.startswith("owners/") \
                or not (f.state or "").startswith("held "):
            continue
        g, unknown = int(f.state.split(" ")[3]), f.status in ("timed_out", "conflict")
        prev = last.get((e.proc, f.key))
        if unknown and prev == (g - 1, True):
            return True
        last[(e.proc, f.key)] = (g, unknown)
    return False


def r_old_met_new_id(h):
    """An old binary's process started while its id's nodes/ object was a format-3 one (live, fenced, released)."""
    now: dict[str, str] = {}
    for e in h.events:
        f = e.fields
        if e.kind == "start":
            if e.proc >= 0 and h.processes[e.proc].instance and h.options.get("upgrade") \
                    and h.processes[e.proc].machine.startswith("o") \
                    and now.get("nodes/" + f.node_id, "").split(" ")[0] in ("live", "fenced", "released"):
                return True
        elif e.kind in ("apply", "fault_put", "fault_delete") and f.key.startswith("nodes/"):
            now[f.key] = f.state if e.kind != "fault_delete" else ""
    return False


RECOUNT = {
    "paused past its lease": lambda h: any(e - s >= _params(h).ttl_ms - _params(h).safety_ms
                                           for _q, s, e in _pause_spans(h)),
    "pause ended at the lease's end": r_pause_at_lease_end,
    "pause between a check and its write": lambda h: any(
        e.kind == "fault" and e.fields.what == "pause" and "between its check" in (e.fields.detail or "")
        for e in h.events),
    "timer came due in a pause": lambda h: any(n.get("timers", 0) for n in _resumed_counts(h)),
    "reply queued in a pause": lambda h: any(n.get("replies", 0) and n.get("timers", 0) + n.get("commands", 0)
                                             for n in _resumed_counts(h)),
    "two unknown acquires in a row": r_two_unknown_acquires,
    "old binary met a new node's id": r_old_met_new_id,
    "clocks 2 max_skew apart": r_clocks_apart,
    "every clock at the bound": r_every_clock,
    "clock stepped back": lambda h: any(d < 0 for pr in h.processes for _t, d in pr.steps),
    "clock stepped forward": lambda h: any(d > 0 for pr in h.processes for _t, d in pr.steps),
    "config on T-2": lambda h: (lambda p: p.grace_ms + p.safety_ms == 2 * p.max_skew_ms)(_params(h)),
    "config on T-3": lambda h: (lambda p: p.ttl_ms - 2 <= 3 * p.heartbeat_period_ms)(_params(h)),
    "config on T-4": lambda h: (lambda p: 3 * p.attempt_timeout_ms in range(p.ttl_ms - p.safety_ms - 2,
                                                                            p.ttl_ms - p.safety_ms + 1))(_params(h)),
    "config scaled": lambda h: _config(h, "scaled"),
    "config large": lambda h: _config(h, "large"),
    "write applied after its timeout": r_write_applied_late,
    "reply just under its timeout": r_reply_just_under,
    "reply past its timeout": r_reply_past,
    "read reply lost": r_read_reply_lost,
    "fast 5xx on a write": r_fast_5xx,
    "SDK retry met its own write": r_sdk_retry,
    "409 on a racing conditional write": r_conflict_racing,
    "fast 5xx on an applied write": r_applied_5xx,
    "fence after own lapse": r_fence_after_own_lapse,
    "machine gone, fenced": r_machine_gone_fenced,
    "delete then takeover attempt": r_delete_then_takeover,
    "two fencers raced": r_two_fencers,
    "fence met a late heartbeat": r_fence_met_late_heartbeat,
    "twin won": r_twin_won,
    "unresolved acquire, record unchanged": r_unresolved_unchanged,
    "acquisition after a failed one": r_acquisition_after_failed,
    "move handed over": r_move_handed_over,
    "straggler at a clean stop": r_straggler,
    "drain told during an outage": r_drain_in_outage,
    "drain after a lost acquire": r_drain_after_lost_acquire,
    "upgrade": lambda h: bool(h.options.get("upgrade")),
    "old binary met a marker": r_old_met_marker,
    "bound BD-1": lambda h: r_bound(h, "BD-1", "fence_sent", 8),
    "bound BD-2": lambda h: r_bound(h, "BD-2", "background_sent", 32),
    "bound BD-3": r_bd3,
    "forget met a fresh heartbeat": lambda h: r_forget(h, "fresh"),
    "forget deleted a retired heartbeat": r_forget_deleted,
    "pending release across a lapse": r_pending_across_lapse,
    "a failed release retried until it landed": r_release_retried,
    "a lost acquisition's record released by its resolver": r_resolver_released,
    "old beat at the guard's horizon": r_old_beat_at_horizon,
    "marker write lost": lambda h: r_upgrade_fault(h, ("request_lost",), "PUT", "leases/"),
    "marker write applied late": r_marker_late,
    "marker write answered 409": r_marker_conflict,
    "old-lease read lost": lambda h: r_upgrade_fault(h, ("request_lost", "fail_fast", "reply_lost"), "GET", "leases/"),
    "seeding listing lost": r_seed_list_failed,
    "twin during the switch": r_twin_at_switch,
    "owner died in the quiet phase": r_owner_died,
    "drain or move told while a read-back is in flight": lambda h: r_told_while(h, 0),
    "drain or move told while an acquisition is unresolved": lambda h: r_told_while(h, 1),
    "drain or move told while the fence cap is full": r_told_fences_full,
    "drain or move told while a release is pending": r_told_release_pending,
    "seeded from the keys alone": r_seeded_from_keys,
    "drain judged": lambda h: bool(_drains_judged(h)),
    "drain released busy holds": r_drain_released_busy,
    "marker landed unknown, then read": r_marker_unknown_read,
    "guard met a future-dated heartbeat": r_guard_future,
    "FN-5 read order raced": lambda h: r_fn5(h, "between"),
    "FN-5 restart after the nodes/ read": lambda h: r_fn5(h, "after"),
    "blip with cadences apart": r_blip_cadences,
    "drain judged from the faults' end": r_drain_from_faults_end,
    "takeover at the deadline": r_takeover_at_deadline,
    "guard read lost on a fresh heartbeat": r_guard_read_lost,
    "marker write outcome unknown": r_marker_unknown,
    "guard met a rewritten old heartbeat": r_guard_rewritten,
    "old GC between read and marker": r_gc_between,
    "old binary restarted during the switch": r_old_at_switch,
    "forget met a format-3 object": lambda h: r_forget(h, "format 3"),
    "same id met an open entry": r_same_id_open_entry,
    "resolver at BD-2's cap": r_resolver_at_cap,
    "old lease at the margins of its expiry": r_old_lease_at_margin,
    "fences due past BD-1's cap across two passes": r_fences_past_cap,
}

CONFIGURATION = {name for name in POINTS if name.startswith("config ")}


AWAITING = awaited()  # declared, not required yet (issue 45 part 3)


def test_every_point_has_a_seed_and_a_recount():
    """Every required point; a point that `awaits` its world (checkers/registry.py) has no seed to replay yet."""
    assert set(SEEDS) == set(POINTS), "tests/checkers/coverage_seeds.py must be run again: the points changed"
    assert set(POINTS) - AWAITING <= set(RECOUNT) <= set(POINTS), "a point without a recount of its own (RECOUNT)"
    assert [p for p, v in SEEDS.items() if not v and p not in AWAITING] == []


@pytest.mark.parametrize("point", [p for p in POINTS if p not in AWAITING])
def test_a_seed_reaches_the_point_and_its_recount_agrees(point):
    seeds = SEEDS.get(point) or []
    assert seeds, f"no seed reaches {point!r}"
    for s in seeds:
        assert point in reached_of(s), f"seed {s} no longer reaches {point!r}: run tests/checkers/coverage_seeds.py"
    recount = RECOUNT[point]
    for s in POOL:
        assert recount(history_of(s)) == (point in reached_of(s)), f"seed {s}: the recount of {point!r} disagrees"


@pytest.mark.parametrize("point", [p for p in POINTS if p not in CONFIGURATION and p not in AWAITING])
def test_the_same_seeds_run_calm_never_count(point):
    """Every fault off: no point but the configuration's may count (each needs a fault, a stop, a twin, an
    upgrade or a clock's trait the calm draw turns off)."""
    for s in SEEDS[point][:1]:
        h = history_of(s, "calm")
        if point == "move handed over":  # moves are the workload's, not a fault: a calm run moves actors too
            continue
        if point in ("clocks 2 max_skew apart", "every clock at the bound", "clock stepped back",
                     "clock stepped forward"):
            assert (point in reached_of(s, "calm")) == RECOUNT[point](h)  # the clocks are drawn, calm or not
            continue
        assert point not in reached_of(s, "calm"), f"{point!r} counted on seed {s} run calm"


# --- hand-made histories that must not count ------------------------------------------------------------


def _point(name):
    from checkers import registry
    from checkers.facts import facts
    from checkers.registry import Context

    p = next(p for p in registry.points() if p.name == name)
    return lambda h: bool(p.reached(Context(h, facts(h))))


def _made(h, events, processes=None):
    """A hand-made history: h with these events (and processes), nothing of h's cache kept."""
    import dataclasses

    return dataclasses.replace(h, events=sorted(events, key=lambda e: e.t_ms), cache={}, _sha=None,
                               processes=list(h.processes if processes is None else processes))


def _edited(h, change):
    """A copy of history h whose events `change(i, e)` rewrites (None drops one): a hand-made history."""
    return _made(h, [n for n in (change(i, e) for i, e in enumerate(h.events)) if n is not None])


def test_a_lost_release_is_no_lost_acquisition():
    """Issue 44: "unresolved acquire, record unchanged" and "drain after a lost acquire" counted lost releases as
    acquisitions. The same histories with each lost acquisition's body made a release's ("nobody <g>") count
    neither."""
    for name in ("unresolved acquire, record unchanged", "drain after a lost acquire"):
        s = SEEDS[name][0]
        h = history_of(s)
        assert _point(name)(h)

        def as_release(_i, e):
            if e.kind == "fault" and (e.fields.state or "").startswith("held ") and \
                    e.fields.target.startswith("PUT owners/"):
                g = e.fields.state.split(" ")[3]
                return event(e.t_ms, e.proc, e.kind, e.fields._replace(state=f"nobody {g}"))
            return e

        h2 = _edited(h, as_release)
        assert not _point(name)(h2) and not RECOUNT[name](h2)


def test_clocks_apart_only_for_processes_that_ran_together():
    """Issue 44: "clocks 2 max_skew apart" compared the offsets of processes that never ran together. Two node
    processes of a seed given clocks 2 max_skew apart (every other node process's events taken out), the first
    crashing before the second starts, do not count; the same two running together do."""
    from history.record import Process

    name = "clocks 2 max_skew apart"
    h = history_of(SEEDS[name][0])
    p = _params(h)
    nodes = [k for k, pr in enumerate(h.processes) if pr.machine.startswith("m")]
    live = {}
    for e in h.events:
        if e.kind == "apply" and e.proc in nodes and e.fields.state.startswith("live "):
            live.setdefault(e.proc, e.t_ms)
    first, second = sorted(live, key=live.get)[:2]
    procs = list(h.processes)
    for k, off in ((first, 0), (second, 2 * p.max_skew_ms)):
        procs[k] = Process(procs[k].node_id, procs[k].instance, procs[k].machine, off, 0)
    start_second = next(e.t_ms for e in h.events if e.kind == "start" and e.proc == second)
    pair = [e for e in h.events if e.proc not in nodes or e.proc == second
            or (e.proc == first and e.t_ms < start_second - 1)]
    apart = _made(h, pair + [event(start_second - 1, first, "crash", ())], procs)
    assert not _point(name)(apart) and not RECOUNT[name](apart)
    together = _made(h, [e for e in h.events if e.proc not in nodes or e.proc in (first, second)], procs)
    assert _point(name)(together) and RECOUNT[name](together)


def test_fence_after_own_lapse_counts_the_worlds_windows_not_the_models_claim():
    """Issue 44: "fence after own lapse" counted the model's `lease_ran_out`. A history whose fencer says its lease
    ran out (a claim) while its applied live writes never let it lapse does not count; one reaching it with every
    `lease_ran_out` taken out still does."""
    name = "fence after own lapse"
    h = history_of(SEEDS[name][0])
    assert _point(name)(h)
    quiet = _edited(h, lambda _i, e: None if e.kind == "lease_ran_out" else e)
    assert _point(name)(quiet) and RECOUNT[name](quiet)
    # a fence with a claim of a lapse before it, in a run where the fencer's lease never lapsed
    for s in POOL:
        g = history_of(s)
        fences = [(i, e) for i, e in _of(g, "apply") if e.proc >= 0 and e.fields.state.startswith("fenced ")
                  and e.fields.key != f"nodes/{g.processes[e.proc].node_id}"]
        if fences and not _point(name)(g):
            i0, f0 = fences[0]
            claim = event(f0.t_ms - 1, f0.proc, "lease_ran_out", (0,))
            g2 = _made(g, g.events + [claim])
            assert not _point(name)(g2) and not RECOUNT[name](g2)
            break
    else:
        pytest.fail("no seed of the pool fences without a lapse")


def test_points_on_claims_no_longer_count_the_claim_alone():
    """Issue 44: each point that read a model's claim (its `request_failed` reason, its UP-4 and BD-1 marks) or a
    fault's intent (a `late` write the bucket then refused) counts only on what the world recorded: the same
    reaching histories with the world's facts taken out, the claims kept, count no more."""
    cases = {
        # a late write's apply taken out: the fault alone (the write refused on arrival, say) is not one
        "write applied after its timeout": lambda h: _edited(h, lambda _i, e: None if e.kind == "apply" and e.proc >= 0
                                                             and e.fields.sent_ms is not None and any(
            x.kind == "fault" and x.fields.what in ("late", "held_back") and x.proc == e.proc
            and x.t_ms == e.fields.sent_ms for x in h.events) else e),
        # the failed acquisition writes taken out, the model's `request_failed` kept
        "acquisition after a failed one": lambda h: _edited(h, lambda _i, e: None if (
            e.kind in ("refused", "conflicted") and e.fields.key.startswith("owners/")
            or e.kind == "fault" and str(e.fields.target).startswith("PUT owners/")) else e),
        # the old binaries' reads of a marker taken out, the UP-4 mark kept
        "old binary met a marker": lambda h: _edited(h, lambda _i, e: None if e.kind == "leases_reply"
                                                     and h.processes[e.proc].machine.startswith("om") else e),
        # the world's count of fences in flight made 1, the BD-1 mark kept
        "bound BD-1": lambda h: _edited(h, lambda _i, e: event(e.t_ms, e.proc, e.kind, e.fields._replace(in_flight=1))
                                        if e.kind == "fence_sent" else e),
    }
    for name, strip in cases.items():
        h = history_of(SEEDS[name][0])
        assert _point(name)(h)
        h2 = strip(h)
        assert h2.rules == h.rules
        assert not _point(name)(h2) and not RECOUNT[name](h2), name
