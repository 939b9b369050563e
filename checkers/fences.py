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
"""

from __future__ import annotations

from .facts import Facts, facts, sent_ms
from history import History, Violation

INVARIANT = "FENCE-1"
DRIFT_SLACK_MS = 50
ROUNDING_MS = 2  # true instants to the fencer's clock, both ends rounded


def check(history: History, fx: Facts | None = None) -> list[Violation]:
    fx = facts(history) if fx is None else fx
    p = fx.params
    watch = p.period_ms + p.attempt_timeout_ms
    reply_within = p.attempt_timeout_ms + p.attempt_timeout_ms // 20 + DRIFT_SLACK_MS  # A on a drifting clock
    span = p.ttl_ms + p.grace_ms
    events = history.events
    procs = history.processes
    out = []
    flagged: set[int] = set()
    for i in history.of_kind("fence_sent", "apply"):
        t, q, kind, f = events[i]
        if q < 0 or q in flagged or procs[q].machine == "op":
            continue
        label = procs[q].label
        local = procs[q].clock.local  # the watch is counted on the fencer's clock, which may drift
        if kind == "fence_sent":
            w = fx.lease_valid_at(q, t)
            if w is None:
                flagged.add(q)
                out.append(Violation(INVARIANT, f"{label} sent a fence of {f[0]} at {t / 1000:.3f} s while its node lease "
                                                f"was not valid (FN-1)", (i,)))
            elif not any(local(min(t, e)) - local(s) >= watch - ROUNDING_MS and e > t - reply_within
                             for s, e, _j in fx.lease.get(q, ())):
                flagged.add(q)
                out.append(Violation(INVARIANT, f"{label} sent a fence of {f[0]} at {t / 1000:.3f} s, "
                                                f"{(t - w[0]) / 1000:.3f} s after its node lease became valid again at "
                                                f"{w[0] / 1000:.3f} s: the watch lasts P + A ({watch / 1000:.3f} s) from "
                                                f"the fencer's first acknowledged write after a lapse (FN-2)", (w[2], i)))
            continue
        if not f[0].startswith("nodes/") or f[0] == "nodes/" + procs[q].node_id or not f[6].startswith("fenced "):
            continue
        prev = f[7].split(" ")
        if len(prev) != 3 or prev[0] != "live":
            continue
        sent_local = local(sent_ms(events[i]))
        if sent_local <= int(prev[2]) + span:
            flagged.add(q)
            out.append(Violation(INVARIANT, f"{label} fenced '{f[7]}' on {f[0]}, sending at {sent_local} on its clock: not "
                                            f"after its written_at + ttl + grace ({int(prev[2]) + span}) (FN-3)", (i,)))
    return out
