"""INV-1 one owner, judged on acts: every act for an actor (a request served, a data write
sent, a client told its write is durable) falls inside a hold of that actor by the acting
process that is valid at that instant, and two different holds' valid windows never overlap
(an old binary's per-actor lease against a new node's hold, across the upgrade).

Holds and their validity come from the world's facts (checkers/facts.py): the record writes
the bucket applied, the node-lease writes and their send times on the sender's clock, the
processes' ends. Nothing the model says about its own holds or leases is read.

And OR-2, the acquisition's gate: a record write naming its writer (an acquisition, OR-3) is sent
only while the writer's node lease is valid. One sent while it was not may take a record that a
peer is freeing at that moment (FN-5 counts from the writer's last written_at), and the writer
would later act for an actor another node owns.

And FN-5, the freeing rule, on the bucket's states: an acquisition that replaced a record naming
another process (A, i) decided on a read of `nodes/A` served in the last attempt timeout before
its write was sent; some state the bucket held there in that span must free (A, i): `live`
naming another instance, or `fenced`/`released` whose kept written_at + ttl + grace had passed on
the taker's clock. An absent object, an old-format one, or `live` naming i frees nothing. Its
margin: how long after that time bound each acquisition freed by it was sent (`record_freed`).
"""

from __future__ import annotations

from bisect import bisect_right

from history import History, Violation

from .facts import Facts, facts, keyed, pauses, sent_ms
from .registry import Context, invariant, margin, once

INVARIANT = "INV-1"


@invariant(INVARIANT, "one owner", kind="safety", rules=("OR-2", "OR-4", "FN-5", "NL-4", "NL-11"))
def check(history: History, fx: Facts | None = None) -> list[Violation]:
    fx = facts(history) if fx is None else fx
    out: list[Violation] = []
    out.extend(_acts_outside_holds(history, fx))
    out.extend(_acquired_without_lease(history, fx))
    out.extend(once(history, "takeovers_freed", lambda: _taken_without_freeing(history, fx))[0])
    out.extend(_overlaps(history, fx))
    return out


def _acquired_without_lease(history: History, fx: Facts) -> list[Violation]:
    """OR-2: each applied `owners/` write naming its writer was sent inside a window of the writer's
    node lease (checkers/facts.py: from an applied live write to its send time + ttl - safety)."""
    out = []
    events = history.events
    procs = history.processes
    flagged: set[tuple[int, int | None]] = set()  # (process, the lease window before the send): one each
    paused = pauses(history)
    for i in keyed(history, "owners/", "apply"):
        _t, q, _kind, f = events[i]
        if q < 0 or not str.startswith(f.state, "held "):
            continue
        pr = procs[q]
        if f.state.split(" ")[1:3] != [pr.node_id, pr.instance]:
            continue
        sent = _emitted(paused.get(q, ()), sent_ms(events[i]))
        if fx.lease_valid_at(q, sent) is None:
            starts = [s for s, _e, _w in fx.lease.get(q, ()) if s <= sent]
            gap = (q, starts[-1] if starts else None)  # a lapse after another window is a new occurrence
            if gap in flagged:
                continue
            flagged.add(gap)
            out.append(Violation(INVARIANT, f"{pr.label} sent its acquisition of {f.key[len('owners/'):]} (\"{f.state}\") at "
                                            f"{sent / 1000:.3f} s, while its node lease was not valid: an acquisition "
                                            f"writes the record only while the node lease is valid (OR-2)", (i,)))
    return out


def _emitted(spans, sent: int) -> int:
    """When the process handed a request to the network: its send, or, for one that left as a pause of its
    process ended, the pause's start (its last step before it stopped). OR-2 is a rule of the process's steps
    ("checked right before the record write"): a pause between the check and the bytes leaving is the
    world's delay of an outgoing request, like the network's, which the conditional write and OR-4's check at
    the answer cover (issue 47's pauses, seed 251: tests/plans/pause-between-check-and-write.json)."""
    for s, e in spans:
        if s <= sent <= e + 1:
            return s
    return sent


def _taken_without_freeing(history: History, fx: Facts) -> tuple[list[Violation], int | None]:
    """FN-5: each acquisition over `held A i g` (another process's hold) had, among the states of
    nodes/A in the attempt timeout before its send, one that frees (A, i). And the least slack of the
    acquisitions freed by a time bound: the taker's clock at the send minus the first instant at which
    the best such state's kept written_at + ttl + grace had passed (negative: nothing freed it yet, a
    violation); those a `live` state of another instance freed at once have no bound to measure."""
    p = fx.params
    span = p.ttl_ms + p.grace_ms
    reach = p.attempt_timeout_ms + 50  # the nodes/A read was served no earlier (its reply came within A)
    events = history.events
    procs = history.processes
    states: dict[str, list[tuple[int, str]]] = {}  # nodes/ key -> [(since, state)]; "" absent, "old" old format
    out = []
    least = None
    flagged: set[tuple[str, int, str]] = set()  # (record, taker, the instance it took from): one each
    for i in history.of_kind("apply", "fault_delete", "fault_put"):
        t, q, kind, f = events[i]
        key = f.key
        if str.startswith(key, "nodes/"):
            state = f.state if kind == "apply" else ("" if kind == "fault_delete" else "old")
            states.setdefault(key, []).append((t, state))
            continue
        if kind != "apply" or q < 0 or not str.startswith(key, "owners/"):
            continue
        new, prev = f.state.split(" "), f.prev_state.split(" ")
        pr = procs[q]
        if new[0] != "held" or new[1:3] != [pr.node_id, pr.instance] or prev[0] != "held" or len(prev) < 4:
            continue
        node, inst = prev[1], prev[2]
        if (node, inst) == (pr.node_id, pr.instance):
            continue  # its own current instance (OR-3)
        sent = sent_ms(events[i])
        local = pr.clock.local(sent)
        seen = [s for at, s in states.get("nodes/" + node, ()) if at <= sent]
        window = [s for at, s in states.get("nodes/" + node, ()) if sent - reach < at <= sent]
        held = (seen[-len(window) - 1:-len(window)] if window else seen[-1:]) or [""]
        best = max((x for x in (_free_slack(s, inst, local, span) for s in held + window) if x is not None),
                   default=None)
        if best is not None and best != AT_ONCE:
            least = best if least is None else min(least, best)
        if (best is None or best < 0) and (key, q, inst) not in flagged:
            flagged.add((key, q, inst))
            shown = ", ".join(f'"{s}"' if s else "absent" for s in held + window)
            out.append(Violation(INVARIANT, f"{pr.label} took {key[len('owners/'):]} (\"{f.state}\") over "
                                            f"\"{f.prev_state}\", while nodes/{node} held only {shown} in the attempt "
                                            f"timeout before its write: nothing there frees {node}/{inst} (FN-5)", (i,)))
    return out, least


AT_ONCE = 1 << 62  # the slack of a state that frees whatever the time (`live` naming another instance)


def _free_slack(state: str, inst: str, local_ms: int, span: int) -> int | None:
    """FN-5 on a state line of nodes/A, for a record naming instance `inst`, at `local_ms` on the taker's
    clock: how long it has freed it (ms; negative: it will once its kept written_at + ttl + grace has
    passed; AT_ONCE: `live` naming another instance frees at once), or None: it never frees it (absent,
    old format, `live` naming `inst`)."""
    parts = state.split(" ")
    if len(parts) != 3 or parts[0] not in ("live", "fenced", "released"):
        return None  # absent, old format
    if parts[0] == "live":
        return AT_ONCE if parts[1] != inst else None
    return local_ms - (int(parts[2]) + span + 1)  # (passed: from the first millisecond after it)


@margin("record_freed", "a record freed by its time bound (FN-5): an acquisition over another process's record, "
                        "sent (on the taker's clock) after the first instant a fenced or released nodes/ state's kept "
                        "written_at + ttl + grace had passed", invariant=INVARIANT, rules=("FN-5",))
def _record_freed(c: Context) -> int | None:
    return once(c.history, "takeovers_freed", lambda: _taken_without_freeing(c.history, c.facts))[1]


def _acts_outside_holds(history: History, fx: Facts) -> list[Violation]:
    out = []
    # one per process, actor and the hold it last had (none: -1): a later hold, or another process, is a new
    # occurrence (issue 44: one per actor let a finding that explained the first hide the rest)
    flagged: set[tuple[int, str, int]] = set()
    held = fx.held_spans()  # (valid_hold(p, actor, t) is not None: t in one of these, found by bisection)
    for t, p, actor, what, i in fx.acts:
        spans = held.get((p, actor))
        if spans is not None:
            k = bisect_right(spans[0], t) - 1
            if k >= 0 and t < spans[1][k]:
                continue
        before = [h for h in fx.by_proc_actor.get((p, actor), ()) if h.start_ms <= t]
        occurrence = (p, actor, before[-1].opened if before else -1)
        if occurrence in flagged:
            continue
        label = history.processes[p].label
        lease = "" if fx.lease_valid_at(p, t) else "; its node lease was not valid then"
        if before:
            h = before[-1]
            if not lease and not h.old and h.lapse_ms <= t < h.end_ms:
                lease = (f"; its node lease lapsed at {h.lapse_ms / 1000:.3f} s, after the hold was acquired: "
                         f"a lease that recovers owns nothing older (OR-4, NL-11)")
            why = f"its last {h.describe(history)}{lease}"
            evs = tuple(sorted({h.opened, i} | ({h.closed} if h.closed is not None else set())))
        else:
            why = f"no write of its record naming it had taken effect{lease}"
            evs = (i,)
        out.append(Violation(INVARIANT, f"{label} {what} for {actor} at {t / 1000:.3f} s without a valid hold: {why}",
                             evs))
        flagged.add(occurrence)
    return out


def _overlaps(history: History, fx: Facts) -> list[Violation]:
    """Valid windows of holds by different processes (or an old lease and a new hold) overlapping."""
    by_actor: dict[str, list] = {}
    for h in fx.holds:
        for s, e in fx.windows(h):
            by_actor.setdefault(h.actor, []).append((s, e, h))
    out = []
    for actor in sorted(by_actor):
        best = None
        shown: set[tuple[int, int]] = set()  # each pair of holds once (issue 44: not once per actor)
        for s, e, h in sorted(by_actor[actor], key=lambda w: (w[0], w[2].opened)):
            if (best is not None and s < best[1] and (h.proc != best[2].proc or h.old != best[2].old)
                    and (best[2].opened, h.opened) not in shown):
                b = best[2]
                shown.add((b.opened, h.opened))
                evs = tuple(sorted({x for x in (b.opened, b.closed, h.opened, h.closed) if x is not None}))
                out.append(Violation(
                    INVARIANT,
                    f"actor {actor} had two owners from {s / 1000:.3f} s to {min(best[1], e) / 1000:.3f} s: "
                    f"{b.describe(history)}, valid until {best[1] / 1000:.3f} s; and {h.describe(history)}, "
                    f"valid from {s / 1000:.3f} s",
                    evs,
                ))
            if best is None or e > best[1]:
                best = (s, e, h)
    return out
