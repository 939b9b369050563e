"""UP-2, judged on world facts: a new node starts writing its node lease only once every old-format
heartbeat it could have read was stale by the start guard's test: written more than horizon +
ttl + grace ago on the new node's clock (horizon: three heartbeat periods), or, for one dated
ahead of its clock, that long plus max_skew after it appeared in the bucket, counted on the new
node's own clock (UP-2: its monotonic clock; a clock that drifts across the max_skew band counts
durations short or long, and the rule is judged as that node could apply it).

The heartbeats are the old binaries' applied writes on `nodes/` (their written_at is the writer's
clock at send, which the world knows), those the guard could read between the process's start and
the moment it says its guard passed (`guard_passed`, a claim cross-checked here); its first `live`
write that took effect must come after that moment. A guard that passes early lets a new node serve beside an old one that may still
hold per-actor leases (section 6).

FN-8 applies the same test: `cluster forget` deletes (conditionally) a retired old-format
heartbeat once stale by it. Judged on what the bucket applied: every delete on `nodes/` that took
effect (only forget deletes there) removed an old-format heartbeat written at least horizon +
ttl + grace before the deleter's clock read at that instant (its decision came no later, and its
clock only moves on). A forget that deletes a fresh old heartbeat hides an old binary still
running from every new node's start guard; one that deletes a format-3 object is no forget.
"""

from __future__ import annotations

from .facts import Facts, facts, sent_ms
from history import History, Violation

INVARIANT = "UP-2"


def check(history: History, fx: Facts | None = None) -> list[Violation]:
    fx = facts(history) if fx is None else fx
    p = fx.params
    span = 3 * p.heartbeat_period_ms + p.ttl_ms + p.grace_ms
    procs = history.processes
    clocks = [pr.clock for pr in procs]
    old: dict[str, list[tuple[int, int, int]]] = {}  # key -> [(applied at, written_at on the writer's clock, event)]
    out = []
    events = history.events
    for i in history.of_kind("apply", "fault_delete", "fault_put"):
        t, q, kind, f = events[i]
        if kind == "apply" and q >= 0 and f[0].startswith("nodes/") and f[1] == "DELETE":
            out.extend(_forget(f[0], old.get(f[0]), f[7], t, q, i, procs, span))
        if kind == "apply" and q >= 0 and f[0].startswith("nodes/") and f[6].startswith("node "):
            old.setdefault(f[0], []).append((t, clocks[q].local(sent_ms(events[i])), i))
        elif kind == "fault_put" and f[0].startswith("nodes/") and len(f) > 2 and f[2] is not None:
            old.setdefault(f[0], []).append((t, f[2], i))  # the world wrote an old heartbeat dated f[2]
        elif f[0] in old and not (kind == "apply" and f[6].startswith("node ")):
            old[f[0]].append((t, None, i))  # replaced or deleted: no old heartbeat there from now
    if not old:
        return out
    starts = {events[i][1]: events[i][0] for i in history.of_kind("start")}
    # when each process says its guard passed (a claim, read only against the bucket's heartbeats;
    # an old binary started after that is an old version running, logged, not the guard's)
    passed = {}
    for i in history.of_kind("guard_passed"):
        t, q = events[i][0], events[i][1]
        if q not in passed:
            passed[q] = (t, i)
    for n, writes in sorted(fx.live_writes.items()):
        first = writes[0]
        began = starts.get(n, 0)
        t_g, g_event = passed.get(n, (first.sent_ms, first.event))
        if first.sent_ms < t_g:
            out.append(Violation(INVARIANT, f"{procs[n].label} wrote its first node lease at {first.sent_ms / 1000:.3f} s, "
                                            f"before its start guard passed ({t_g / 1000:.3f} s)", (first.event, g_event)))
            continue
        # the guard's last round read every key at some instant of its last R ms: LIST, then one GET
        # per key, each within an attempt timeout, half a period after the round before
        keys = len({events[k][3][0] for k in history.of_kind("apply") if events[k][3][0].startswith("nodes/")})
        window = p.heartbeat_period_ms // 2 + (keys + 1) * p.attempt_timeout_ms
        for key, beats in sorted(old.items()):
            # what that round read there: the body present at t_g - window, or one written after
            there = [b for b in beats if b[0] <= t_g - window][-1:] + [b for b in beats if t_g - window < b[0] < t_g]
            fresh = []
            for t_old, written_at, i in there:
                if written_at is None:
                    fresh = []
                    break  # no old heartbeat there at some point: the round may have read none
                read = max(t_old, began)  # it read this body no earlier than this
                # (the lapse of a future-dated one is counted on this node's own clock, which may drift)
                until = min(clocks[n].true_at(written_at + span),
                            clocks[n].true_at(clocks[n].local(read) + span + p.max_skew_ms))
                if t_g >= until:
                    fresh = []
                    break  # a stale one: the round may have read it
                fresh.append((t_old, until, i))
            if fresh:
                t_old, until, i = min(fresh, key=lambda x: x[1])
                out.append(Violation(
                    INVARIANT,
                    f"{procs[n].label}'s start guard passed at {t_g / 1000:.3f} s, while every old-format heartbeat on "
                    f"{key} its last round could read was fresh by its test (the stalest, applied at "
                    f"{t_old / 1000:.3f} s, not stale before {until / 1000:.3f} s)", (i, g_event)))
                break
    return out


def _forget(key, beats, prev_state, t, q, i, procs, span) -> list[Violation]:
    """FN-8: the delete of `key` by process q, applied at t, removed what UP-2's test calls a stale
    old-format heartbeat (`beats`: the key's old heartbeats so far, the last one the deleted body
    when it is one)."""
    who = procs[q].label
    if not prev_state.startswith("node ") or not beats or beats[-1][1] is None:
        what = f"a {prev_state.split(' ', 1)[0]} record" if prev_state else "no object"
        return [Violation(INVARIANT, f"FN-8: {who} deleted {key} at {t / 1000:.3f} s, which held {what}, "
                                     f"not a retired old-format heartbeat", (i,))]
    _t_old, written_at, j = beats[-1]
    age = procs[q].clock.local(t) - written_at
    if age < span:
        return [Violation(INVARIANT, f"FN-8: {who} deleted the old-format heartbeat on {key} at {t / 1000:.3f} s, "
                                     f"written {age / 1000:.3f} s before on its clock: fresh by UP-2's test "
                                     f"(stale after {span / 1000:.3f} s)", (j, i))]
    return []
