"""BD-1, judged on world facts: a process has at most 8 fences at work at once (fences run on a
task of their own, beside the listing, so a hung fence never delays it).

A fence holds its slot from its read (FN-3 decides on one fresh GET) until its write's answer. The world
counts, at each request of a fence a process sends, its read (`fence_read_sent`) or its write (a PUT on
another node's `nodes/` object: FN-3's fence, FN-7's operator fence, `fence_sent`), the fences' requests
that process has in flight, this one included: sent, and not yet answered by a reply or a timeout the world
delivered (`fence_answered`). A count rises only at a send, so judging every send judges every instant. The
world tells a fence's read from the listing's (one GET per listed key, each sent on the answer to the
previous one) and from an acquisition's (the read of a node's lease sent on the answer to a record's read,
FN-5) by what the process was answered when it sent it (scenarios/core.py, `_is_fence`). The bound binds
when most of a large cluster goes at once (`fence_crowd`, `mass`; coverage point "bound BD-1"). Broken
models `unbounded_fences` and `fence_reads_uncounted` (a cap on the fences whose write is in flight only).

BD-2..BD-4 have checkers of their own (pending_entries.py, refusals.py, release_tries.py), on what
the world saw the background task send and answer. The coverage points of the three bounds
(BD-1..BD-3) are the model's rule marks, cross-checked on the world's facts: only the model knows when a
bound held work back, and a point counts only when the world saw the bound bind (issue 44).
"""

from __future__ import annotations

from history import History, Violation

from .registry import Context, invariant, point

INVARIANT = "BD-1"
FENCES_AT_ONCE = 8  # BD-1


@invariant(INVARIANT, "at most 8 fences at work at once, their reads and writes", kind="safety", rules=("BD-1",))
def check(history: History) -> list[Violation]:
    return over_cap(history, ("fence_sent", "fence_read_sent"), FENCES_AT_ONCE, INVARIANT, lambda f, kind: (
        f"a fence's {'read' if kind == 'fence_read_sent' else 'write'} of {f.key}",
        f"fences' requests in flight (reads and writes), this one included (BD-1: at most {FENCES_AT_ONCE} fences "
        f"at once)"))


def over_cap(history: History, kinds: tuple[str, ...], cap: int, inv: str, says) -> list[Violation]:
    """A violation of `inv` for each process that sent a request (`kinds` events) with more than `cap` of them
    in flight, this one included (`says(fields, kind)`: what it sent, what was in flight)."""
    events = history.events
    out = []
    over: set[int] = set()  # the processes over the cap now: each stretch over it is its own occurrence (issue 44)
    for i in history.of_kind(*kinds):
        t, p, kind, f = events[i]
        if f.in_flight <= cap:
            over.discard(p)
        elif p not in over:
            over.add(p)
            what, flying = says(f, kind)
            out.append(Violation(inv, f"{history.processes[p].label} sent {what} at {t / 1000:.3f} s with "
                                      f"{f.in_flight} {flying}", (i,)))
    return out


def _cap_full(c: Context, kind: str, cap: int) -> bool:
    """The world saw a process send a request (`kind` events) with `cap` of its kind in flight, this one included."""
    events = c.history.events
    return any((events[i].fields.in_flight or 0) >= cap for i in c.history.of_kind(kind))


def _refused_in_a_row(c: Context, n: int) -> bool:
    """The world delivered n refusals in a row to one process's pending releases, as checkers/refusals.py counts
    them (BD-3): a retry answered other than ok, 412 or 404, or the read after a 412 or 404 that failed; a retry
    that landed, or a read finding the record still naming the process, ends the run."""
    events = c.history.events
    procs = c.history.processes
    streak: dict[int, int] = {}
    for i in c.history.of_kind("background_answered"):
        _t, p, _kind, f = events[i]
        if f.version is None:
            continue  # the resolver's read: no refusal
        if f.op == "PUT":
            if f.status in ("precondition_failed", "not_found"):
                continue  # the read that follows is the entry's
            refused = f.status != "ok"
        elif f.status == "not_found" or f.status == "ok" and not str.startswith(
                f.state or "", f"held {procs[p].node_id} {procs[p].instance} "):
            continue  # the record no longer names it: the entry ends
        else:
            refused = f.status != "ok"
        streak[p] = streak.get(p, 0) + 1 if refused else 0
        if streak[p] >= n:
            return True
    return False


# The three bounds hold work back inside the model; the world sees only what went out. Each point is the
# model's mark cross-checked on the world's facts (issue 44): counted only when the world saw the bound bind
# (the cap full, the refusals in a row), never on the mark alone.


@point("bound BD-1", "a node had more fences to run than it may run at once", topic="bounds")
def _fences_held_back(c: Context) -> bool:
    return bool(c.history.rules.get("BD-1")) and _cap_full(c, "fence_sent", FENCES_AT_ONCE)


@point("bound BD-2", "a node had more pending entries than it may work at once", topic="bounds")
def _pending_held_back(c: Context) -> bool:
    from .pending_entries import PENDING_AT_ONCE

    return bool(c.history.rules.get("BD-2")) and _cap_full(c, "background_sent", PENDING_AT_ONCE)


@point("bound BD-3", "a pass over pending entries stopped after refusals in a row", topic="bounds")
def _pass_stopped(c: Context) -> bool:
    from .refusals import REFUSALS_IN_A_ROW

    return bool(c.history.rules.get("BD-3")) and _refused_in_a_row(c, REFUSALS_IN_A_ROW)


@point("fences due past BD-1's cap across two passes", "a node's listing ended with 8 fences at work from an earlier "
       "pass and a further peer's fence due (BD-1: it waits for a later pass)", topic="bounds")
def _fences_due_past_cap(c: Context) -> bool:
    """World facts only. A node process p's listing of nodes/ ended (`listing_ended`: the answer to its last GET
    delivered, where the model decides its fences; the world records it only while p has BD-1's cap of fences'
    requests in flight), and then:
    - BD-1: 8 of p's fences' requests were in flight, recounted from the world's sends (`fence_read_sent`,
      `fence_sent`) and answers (`fence_answered`: op, key, send time), each sent before that listing's LIST
      (an earlier pass's fences, or their FN-4 retries): the cap full across the pass;
    - and one more fence was due at that instant: a peer K it listed, with no fence request of p's on nodes/K in
      flight, whose object then was an applied `live i W` write (FN-3: the fresh read would find it live) with
      W + ttl + grace passed on p's wall clock (FN-3, FN-5), p's node lease valid (FN-1), and watched unchanged
      a full P + A (FN-2): the object landed before an earlier LIST of nodes/ by p (the world's ledger), every
      GET of nodes/K p sent before its next LIST answered 2xx, and from that next LIST's send, and from p's first
      acknowledged lease write since its lease window began (`record_reply`), P + A passed on p's monotonic
      clock by the listing's end.
    So p had 9 or more fences due with 8 still in flight from an earlier pass: BD-1 holds the 9th back (a cap
    counted per pass, or on this pass's fences only, would run it). Reached in `fence_crowd` seeds, whose bucket
    loses the node's fence writes for a period and an attempt timeout from its first (each fence read and written
    again, FN-4): 43 of swarm seeds 0..399, of the 81 that draw a crowd (70 `fence_crowd`, 11 `mass`; no other
    seed can reach it), 0 before; a required point since."""
    history = c.history
    ends = history.of_kind("listing_ended")
    if not ends or history.requests is None:
        return False
    events = history.events
    procs = history.processes
    p_ = c.params
    watch = p_.period_ms + p_.attempt_timeout_ms
    flying: dict[int, dict[tuple, int]] = {}  # proc -> (op, key, sent) -> sent
    fence_events = history.of_kind("fence_read_sent", "fence_sent", "fence_answered")
    k = 0
    for i in ends:
        while k < len(fence_events) and fence_events[k] < i:
            t, q, kind, f = events[fence_events[k]]
            mine = flying.setdefault(q, {})
            if kind == "fence_answered":
                mine.pop((f.op, f.key, f.sent_ms), None)
            else:
                mine[("GET" if kind == "fence_read_sent" else "PUT", f.key, t)] = t
            k += 1
        t, q, _kind, f = events[i]
        mine = flying.get(q, {})
        if len(mine) < FENCES_AT_ONCE or any(sent >= f.sent_ms for sent in mine.values()):
            continue
        busy = {key for _op, key, _s in mine}
        if any(_due(c, q, "nodes/" + node, t, watch) for node in f.keys
               if "nodes/" + node not in busy and node != procs[q].node_id):
            return True
    return False


def _due(c: Context, q: int, key: str, t: int, watch: int) -> bool:
    """Was a fence of `key` due for process q at true time t, on world facts (FN-1, FN-2, FN-3)?"""
    history = c.history
    events = history.events
    proc = history.processes[q]
    window = c.facts.lease_valid_at(q, t)
    if window is None:
        return False  # FN-1
    last = None  # the object at t: its last change before t
    for i in history.of_kind("apply", "fault_put", "fault_delete"):
        e = events[i]
        if e.t_ms > t:
            break
        if e.fields.key == key:
            last = e
    if last is None or last.kind != "apply" or not str.startswith(last.fields.state, "live "):
        return False
    parts = last.fields.state.split(" ")
    if proc.clock.local(t) <= int(parts[2]) + c.params.takeover_ms:
        return False  # FN-3: W + ttl + grace not passed on p's clock
    own = "nodes/" + proc.node_id
    ack = next((events[i].t_ms for i in history.of_kind("record_reply") if events[i].proc == q
                and events[i].t_ms >= window[0] and events[i].fields.key == own and events[i].fields.op == "PUT"
                and events[i].fields.status == "ok"), None)
    if ack is None or ack > t:
        return False
    mine = [r for r in history.requests if r.proc == q and r.sent_ms < t]
    lists = [r.sent_ms for r in mine if r.op == "LIST" and r.key == "nodes/"]
    for s0, s1 in zip(lists, lists[1:]):
        if s0 <= last.t_ms or proc.clock.mono_span(max(s1, ack), t) < watch:
            continue
        gets = [r for r in mine if r.op == "GET" and r.key == key and s0 < r.sent_ms < s1]
        if gets and all(r.answer == "2xx" and not r.reply_lost for r in gets):
            return True
    return False
