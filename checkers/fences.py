"""FENCE-1, a peer's fence judged on world facts at the instant it was sent (FN-1, FN-2, FN-3).

A node process fences a peer's `nodes/A` (a fence write: a PUT on another node's object, counted by
the world as it leaves, `fence_sent`) only
- while its own node lease is valid (FN-1): inside a window rebuilt from its applied live writes;
- on a fresh read sent a full P + A after a window of its lease began (FN-2: the watch counts from
  the fencer's first acknowledged lease write after any lapse of its own; that write took effect
  before it was acknowledged, so the window's start is no later), counted on the fencer's own clock (one drifting fast counts P + A in less true time).
  The read is not the world's to see (a GET of `nodes/A` is also an acquisition's read), but it was
  answered within an attempt timeout A before the fence was sent: some instant of the last A before
  the fence must lie in a window, P + A after its start. (The read may precede a lapse of the
  fencer's own and the decision follow its recovery: FN-3 decides "on this read alone".)
- and, for a fence that took effect over `live i W`, once W + ttl + grace has passed on the fencer's
  clock (FN-3 decides on the fresh read: the owner's validity ended by W + ttl - safety on its own).

The operator's fences (FN-7, process on machine `op`) follow none of these and are not judged here.
A fence decided early is how a blip restarts a cluster (INV-9) or an owner loses actors it still
serves; this check names the decision itself, whatever followed.

The fencing situations a campaign must reach are declared here too (coverage points, read from
the bucket's applied and refused writes and the world's faults): a fence after the fencer's own
lapse (FN-2's restart), a machine gone for good fenced and taken over, a takeover attempt over a
record naming a node whose object was deleted (FN-5, FN-6), two fencers racing (FN-4), and a
fence meeting a lease write sent before it landed (NL-10). Its margin: how long after the first
instant FN-3 allowed it each peer's fence over a `live` object was sent (`fence`).
"""

from __future__ import annotations

from bisect import bisect_left

from history import History, Violation

from .facts import Facts, facts, sent_ms
from .registry import Context, invariant, margin, once, point

INVARIANT = "FENCE-1"
DRIFT_SLACK_MS = 50
ROUNDING_MS = 2  # true instants to the fencer's clock, both ends rounded


@invariant(INVARIANT, "a peer's fence is decided as FN-1..FN-3 say", kind="safety", rules=("FN-1", "FN-2", "FN-3"))
def check(history: History, fx: Facts | None = None) -> list[Violation]:
    fx = facts(history) if fx is None else fx
    return list(once(history, "fences", lambda: _judge(history, fx))[0])


def _judge(history: History, fx: Facts) -> tuple[list[Violation], int | None]:
    """The violations, and FN-3's least slack: over the peers' fences that took effect over `live i W`,
    the fencer's clock at the send minus the first instant at which W + ttl + grace had passed on it
    (negative: sent too early, a violation)."""
    p = fx.params
    watch = p.period_ms + p.attempt_timeout_ms
    reply_within = p.attempt_timeout_ms + p.attempt_timeout_ms // 20 + DRIFT_SLACK_MS  # A on a drifting clock
    span = p.ttl_ms + p.grace_ms
    events = history.events
    procs = history.processes
    out = []
    least = None
    # one per fencer and lease window it sent from (FN-1, FN-2), and per object it fenced too early (FN-3): a new
    # window or another object is its own occurrence (issue 44: not one per process)
    flagged: set[tuple] = set()
    for i in history.of_kind("fence_sent", "apply"):
        t, q, kind, f = events[i]
        if q < 0 or procs[q].machine == "op":
            continue
        label = procs[q].label
        clock = procs[q].clock
        local = clock.local  # FN-3's written_at + ttl + grace on the fencer's wall clock; FN-2's watch on its
        # monotonic one (Clock.mono_span)
        if kind == "fence_sent":
            w = fx.lease_valid_at(q, t)
            # (invalid: the gap after its last window, or before its first)
            occurrence = (q, "window", max((s for s, _e, _j in fx.lease.get(q, ()) if s <= t), default=None))
            if occurrence in flagged:
                continue
            if w is None:
                flagged.add(occurrence)
                out.append(Violation(INVARIANT, f"{label} sent a fence of {f.key} at {t / 1000:.3f} s while its node lease "
                                                f"was not valid (FN-1)", (i,)))
            elif not any(clock.mono_span(s, min(t, e)) >= watch - ROUNDING_MS and e > t - reply_within
                             for s, e, _j in fx.lease.get(q, ())):
                flagged.add(occurrence)
                out.append(Violation(INVARIANT, f"{label} sent a fence of {f.key} at {t / 1000:.3f} s, "
                                                f"{(t - w[0]) / 1000:.3f} s after its node lease became valid again at "
                                                f"{w[0] / 1000:.3f} s: the watch lasts P + A ({watch / 1000:.3f} s) from "
                                                f"the fencer's first acknowledged write after a lapse (FN-2)", (w[2], i)))
            continue
        if not str.startswith(f.key, "nodes/") or f.key == "nodes/" + procs[q].node_id \
                or not str.startswith(f.state, "fenced "):
            continue
        prev = f.prev_state.split(" ")
        if len(prev) != 3 or prev[0] != "live":
            continue
        sent_local = local(sent_ms(events[i]))
        slack = sent_local - (int(prev[2]) + span + 1)  # (passed: the first millisecond after it)
        least = slack if least is None else min(least, slack)
        if slack < 0 and (q, f.key, f.prev_state) not in flagged:
            flagged.add((q, f.key, f.prev_state))
            out.append(Violation(INVARIANT, f"{label} fenced '{f.prev_state}' on {f.key}, sending at {sent_local} on its "
                                            f"clock: not after its written_at + ttl + grace ({int(prev[2]) + span}) "
                                            f"(FN-3)", (i,)))
    return out, least


@margin("fence", "a fence decided (FN-3): over the peers' fences that took effect over `live i W`, the fencer's clock "
                 "at the send minus the first instant W + ttl + grace had passed on it", invariant=INVARIANT,
        rules=("FN-3",))
def _fence(c: Context) -> int | None:
    return once(c.history, "fences", lambda: _judge(c.history, c.facts))[1]


# --- coverage: the fencing situations a campaign must reach ---------------------------------------------


@point("fence after own lapse", "a process fenced a peer after its own lease had lapsed and come back (FN-2's restart)",
       topic="fencing")
def _fence_after_own_lapse(c: Context) -> bool:
    """World facts (issue 44): a fence of process q that took effect, sent inside a window of q's node lease
    (its applied live writes, checkers/facts.py) that is not its first: q's lease had run out and q wrote it
    live again before sending the fence. Never the model's own `lease_ran_out`."""
    history, fx = c.history, c.facts
    events, procs = history.events, history.processes
    for i in c.writes("nodes/"):
        _t, q, _kind, f = events[i]
        if q < 0 or not str.startswith(f.state, "fenced ") or f.key == f"nodes/{procs[q].node_id}":
            continue
        sent = sent_ms(events[i])
        windows = fx.lease.get(q, [])
        if any(k and s <= sent < e for k, (s, e, _j) in enumerate(windows)):
            return True
    return False


@point("machine gone, fenced", "a machine gone for good was fenced and its actors taken over", topic="fencing")
def _gone_fenced(c: Context) -> bool:
    """World facts, in order (issue 44): the world took machine m<k> away for good, then a fence of nodes/n<k>
    took effect, then an acquisition replaced a record naming n<k> (its actors taken over after the fence)."""
    events = c.history.events
    gone = {"n" + events[i].fields.target[1:]: i for i in reversed(c.faults("gone_for_good"))}  # node -> first
    if not gone:
        return False
    fenced: dict[str, int] = {}  # node -> its first fence after it was gone
    for i in c.writes("nodes/"):
        f = events[i].fields
        node = f.key[len("nodes/"):]
        if str.startswith(f.state, "fenced ") and node in gone and gone[node] < i:
            fenced.setdefault(node, i)
    for i in c.writes("owners/"):
        f = events[i].fields
        if str.startswith(f.state, "held ") and str.startswith(f.prev_state, "held "):
            node = f.prev_state.split(" ")[1]
            if node in fenced and fenced[node] < i:
                return True
    return False


@point("delete then takeover attempt", "an acquisition read a record naming a node whose nodes/ object was deleted",
       topic="fencing")
def _delete_then_takeover(c: Context) -> bool:
    """An acquisition by a process replaced a record naming a node whose nodes/ object the world
    had deleted by mistake before it (FN-5: an absent object frees nothing; FN-6)."""
    history = c.history
    events = history.events
    deletes: dict[str, list[int]] = {}  # node -> the indices of the mistaken deletes of its nodes/ object
    for i in history.of_kind("fault_delete"):
        key = events[i].fields.key
        if str.startswith(key, "nodes/"):
            deletes.setdefault(key[len("nodes/"):], []).append(i)
    if not deletes:
        return False
    for i in c.writes("owners/"):
        t, q, _kind, f = events[i]
        if q < 0 or not str.startswith(f.state, "held "):
            continue
        prev = f.prev_state.split(" ")
        if prev[0] == "held" and prev[1] in deletes:
            before = deletes[prev[1]]
            k = bisect_left(before, i)  # the last delete before this write
            if k and t >= events[before[k - 1]].t_ms:
                return True
    return False


@point("two fencers raced", "a fence met another fence that landed first (FN-4)", topic="fencing")
def _two_fencers(c: Context) -> bool:
    history = c.history
    events = history.events
    procs = history.processes
    for i in history.of_kind("refused"):
        _t, q, _kind, f = events[i]
        if (q >= 0 and str.startswith(f.key, "nodes/") and f.met.split(" ")[0] == "fenced"
                and procs[q].node_id != f.key[len("nodes/"):]):
            return True
    return False


@point("fence met a late heartbeat", "a lease write sent before a fence of it landed met that fence", topic="fencing")
def _fence_met_late_heartbeat(c: Context) -> bool:
    """A process's own lease write, sent before the fence naming its instance took effect, refused by it."""
    history = c.history
    events = history.events
    procs = history.processes
    for i in history.of_kind("refused"):
        _t, q, _kind, f = events[i]
        if q < 0 or not str.startswith(f.key, "nodes/") or procs[q].node_id != f.key[len("nodes/"):]:
            continue
        met = f.met.split(" ")
        if met[0] != "fenced" or len(met) != 3 or met[1] != procs[q].instance:
            continue
        landed = next((events[k].t_ms for k in c.writes("nodes/") if k < i and events[k].fields.key == f.key
                       and events[k].fields.state == f.met), None)
        if landed is not None and sent_ms(events[i]) < landed:
            return True
    return False
