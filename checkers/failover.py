"""INV-7 failover, judged per takeover: an owner that died (crashed, or exited on a lost lease or a
fence) in the quiet phase is fenced, and its actors writable again, by the instant the earliest peer able
to could have taken over, from that peer's own view (T-5: "15 s after the last acknowledged write, plus
whatever part of P + A the fencer had not yet watched").

For each peer q whose node lease is valid then, on q's own clock: its first sight of the dead process's
last object unchanged is its first listing after that write landed (the last it sent before it died: one in
flight at the death lands after it) and after the faults ended for q (the quiet phase, q's outages), each
listing a listing's slack long (LIST then one GET per node at the world's delay), or the start of its watch
(its first acknowledged lease write of a window, FN-2), whichever is later; it may fence once a full P + A of
that watch and `written_at + ttl + grace` on its clock have passed (FN-2, FN-3: the skew between the two
clocks is theirs, not a worst case), at its next listing's end, plus the fence's read and write. Judged:
- (fence) the dead process's `nodes/<id>` changed (a fence, or a restart's or a twin's write) by the
  earliest such instant over the peers (eight fences due at once wait a listing more, BD-1);
- each actor it owned was held again within the acquisition's round trips of the first request after that
  instant that reached a process able to take it (its lease valid and its write's answer back, NL-4; its
  clock past the same written_at + ttl + grace, FN-5; its view past its first listing after the change
  landed, OR-10; neither draining nor stopping).
Before this, the bound was the worst case (ttl + grace + P + A + 2 max_skew after the last write, for every
takeover alike), and a failover losing a whole period passed (broken model `late_fence_decision`).
Holds, lease writes and exemptions are the world's facts (checkers/facts.py): an owner whose
nodes/<id> the world deleted by mistake is left out, whatever its exit says.

`measure` gives the failover times (ms), from the last acknowledged lease write to the first
new hold, the figure the ADR's soak reported (18.2 s median, 24.4 s p99); its coverage point is a
failover measured; its margin, the least slack of the fences and the actors judged (`failover`).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

from model.params import Params

from history import History, Violation

from .bounds import FENCES_AT_ONCE
from .facts import Facts, facts, keyed
from .registry import Context, Measure, invariant, margin, once, point

INVARIANT = "INV-7"


def _cases(history: History, fx: Facts) -> list[tuple]:
    """(actor, dead proc, last applied lease write, death time, first new hold or None, index of death
    event), found once per history (check and measure both read them)."""
    cached = history.cache.get("failover_cases")
    if cached is None:
        cached = history.cache["failover_cases"] = list(_find_cases(history, fx))
    return cached


def _deaths(history: History, fx: Facts) -> list[tuple[int, int, int, int, int]]:
    """(dead proc, death time, index of its death event, its last lease write's landing, that write's
    written_at) of every owner death in the quiet phase judged (crashed, or exited non-zero, its node lease
    once held), found once per history."""
    cached = history.cache.get("failover_deaths")
    if cached is not None:
        return cached
    out: list[tuple[int, int, int, int, int]] = []
    history.cache["failover_deaths"] = out
    events = history.events
    quiet = history.of_kind("quiet")
    if not quiet:
        return out
    quiet_t = events[quiet[0]].t_ms
    deleted: dict[str, list[int]] = {}  # node id -> when the world deleted its nodes/ object by mistake
    for i in history.of_kind("fault_delete"):
        t, _p, _kind, f = events[i]
        if str.startswith(f.key, "nodes/"):
            deleted.setdefault(f.key[len("nodes/"):], []).append(t)
    for i in history.of_kind("crash", "exit"):
        t, p, kind, f = events[i]
        if (kind == "crash" or f.status != 0) and t >= quiet_t and p in fx.live_writes:
            ack = max((w.applied_ms for w in fx.live_writes[p] if w.applied_ms <= t), default=None)
            if ack is None:
                continue  # it never held its lease: it owned nothing
            if any(ack <= d <= t for d in deleted.get(history.processes[p].node_id, ())):
                # the world deleted its nodes/<id> (an operator's mistake) after its last write: only a
                # restart's start check or an operator's fence frees its records (FN-5, FN-7),
                # outside T-5's bound
                continue
            # a lease write sent before the death may land after it: peers see that one last
            last = max((w for w in fx.live_writes[p] if w.sent_ms <= t), key=lambda w: w.applied_ms)
            out.append((p, t, i, last.applied_ms, last.written_at_ms))
    return out


def _find_cases(history: History, fx: Facts):
    for p, td, i, ack, _w in _deaths(history, fx):
        for h in fx.holds:
            if h.proc == p and not h.old and fx.valid_at(h, td - 1):  # it owned the actor when it died
                new = next((x for x in fx.holds if x.actor == h.actor and x.start_ms > td and fx.windows(x)), None)
                yield h.actor, p, ack, td, new, i


def measure(history: History, fx: Facts | None = None) -> list[int]:
    fx = facts(history) if fx is None else fx
    return [new.start_ms - ack for _a, _p, ack, _td, new, _i in _cases(history, fx) if new is not None]


def _refusing(history: History) -> dict[int, list[tuple[int, int | None]]]:
    """Per process, the spans in which it acquires nothing new, the world's own instructions: from `told
    drain` until `told resume` (CS-3: "A draining node acquires nothing new until it is told to resume"),
    from `told stop` for good (CS-1: a stopping node acquires nothing). None: open to the end."""
    spans: dict[int, list[tuple[int, int | None]]] = {}
    open_: dict[int, tuple[int, bool]] = {}  # proc -> (since, stopping)
    events = history.events
    for i in history.of_kind("told"):
        t, p, _kind, f = events[i]
        if f.command in ("drain", "stop"):
            since, stopping = open_.get(p, (t, False))
            open_[p] = (since, stopping or f.command == "stop")
        elif f.command == "resume" and p in open_ and not open_[p][1]:
            spans.setdefault(p, []).append((open_.pop(p)[0], t))
    for p, (since, _stopping) in open_.items():
        spans.setdefault(p, []).append((since, None))
    return spans


def _refuses_at(spans: list[tuple[int, int | None]], t: int) -> bool:
    return any(s <= t and (e is None or t < e) for s, e in spans)


def _acknowledged(history: History) -> dict[int, list[int]]:
    """Per process, the instants it learned its node lease valid, in time order: each answer it got that its
    own `live` write of `nodes/<id>` was applied, or its re-read finding that write (NL-9's adoption). A
    process acts on its lease only from such an answer (NL-4: the lease counts from the send, but the node
    knows of it only once answered); a request reaching it between its write's landing and that answer is
    refused, "not ready" (seed 18269 of a drains draw: the one request in the landing's millisecond)."""
    procs = history.processes
    events = history.events
    out: dict[int, list[int]] = {}
    for i in keyed(history, "nodes/", "record_reply"):
        t, p, _kind, f = events[i]
        if p < 0 or f.status != "ok" or f.op not in ("PUT", "GET"):
            continue
        pr = procs[p]
        if f.key != "nodes/" + pr.node_id or not str.startswith(f.state, "live "):
            continue
        if f.state.split(" ")[1:2] == [pr.instance]:
            out.setdefault(p, []).append(t)
    return out


def _knows_valid(windows, acks: list[int], t: int) -> bool:
    """Is `t` inside a lease window of the process, at or after an answer that told it so within that
    window (`_acknowledged`)?"""
    for s, e, _i in windows:
        if s <= t < e:
            k = bisect_right(acks, t)
            return k > 0 and acks[k - 1] >= s
    return False


@invariant(INVARIANT, "failover", kind="liveness", rules=("T-5", "FN-2", "FN-3", "FN-9"), quiet=True,
           measure=Measure("failover_ms", measure, unjudged=list))
def check(history: History, fx: Facts | None = None) -> list[Violation]:
    fx = facts(history) if fx is None else fx
    return list(once(history, "failovers_judged", lambda: _judge(history, fx))[0])


@dataclass(frozen=True, slots=True)
class _Timing:
    """What a takeover's bound is made of, for one history."""

    params: Params
    delay_ms: int  # the world's network delay, each way, at most
    listing_ms: int  # a listing's length: LIST, then one GET per node, one after another (the ADR: it grows with N)
    quiet_ms: int  # the quiet phase began
    outages: dict  # machine ("*": every one) -> when its last outage ended
    # proc -> the last fault the world dealt one of its listing's requests (LIST nodes/, GET nodes/<id>): a
    # listing in flight then ends by its timeout, up to A later, and the next listing starts a period after
    listing_faults: dict

    def calm_ms(self, machine: str) -> int:
        """The faults are over for a process on `machine`: the quiet phase began, and its outages ended."""
        return max(self.quiet_ms, self.outages.get(machine, 0), self.outages.get("*", 0))


def _timing(history: History) -> _Timing:
    delay = history.options.get("delay_ms_max", 0)
    events = history.events
    outages: dict[str, int] = {}
    for i in history.of_kind("outage"):
        f = events[i].fields
        outages[f.machine] = max(outages.get(f.machine, 0), f.until_ms)
    quiet = [events[i].t_ms for i in history.of_kind("quiet")[:1]]
    listing_faults: dict[int, int] = {}
    for i in history.of_kind("fault"):
        t, p, _kind, f = events[i]
        if f.target and str.startswith(f.target, ("LIST nodes/", "GET nodes/")):
            listing_faults[p] = t
    return _Timing(Params(**history.params), delay, (history.options.get("nodes", 1) + 2) * 2 * delay,
                   quiet[0] if quiet else 0, outages, listing_faults)


def _fence_due(history: History, fx: Facts, tm: _Timing, proc: int, ack: int, written_at: int,
               crowd: int = 0) -> tuple[int, int] | None:
    """T-5 per takeover, from each possible fencer's own view (FN-2, FN-3): (the instant by which the dead
    process `proc`'s object, its last write landed at `ack` carrying `written_at`, must have been fenced by
    the earliest peer able to, that peer) or None if no peer's lease was valid long enough. For a peer q,
    on q's clock: its first sight of the object unchanged is its first listing after `ack` and after the
    faults (every P, each a listing long; a listing whose request met a fault ends by its timeout, A after it,
    seed 10064), or its watch's start (its first acknowledged lease write of a window, FN-2), whichever
    is later; the fence is due at q's first listing that ends once both a full P + A of that watch and
    `written_at + ttl + grace` (FN-3, on q's wall clock: the skew between the two clocks is the clocks' own)
    have passed, plus the fence's read and write (three one-way trips). The listing's period and the watch
    are durations, counted on q's monotonic clock (issue 47); FN-3's comparison is on its wall clock. `crowd`: how many other fences
    fell due before this one in the same watch: every eight more wait a listing more (BD-1)."""
    p = tm.params
    delay = tm.delay_ms
    best = None
    for q, ws in fx.lease.items():
        if q == proc:
            continue
        c = history.processes[q].clock
        calm = tm.calm_ms(history.processes[q].machine)
        lf = tm.listing_faults.get(q)
        if lf is not None:  # a listing whose request met a fault ends by its timeout (A, its monotonic clock)
            calm = max(calm, c.mono_true_at(c.mono(lf) + p.attempt_timeout_ms))
        free = c.true_at(written_at + p.takeover_ms + 1)  # (passed: its first millisecond after)
        # the first listing after the landing, or after the faults (a listing's read may fail until then)
        seen = c.mono_true_at(c.mono(max(ack, calm)) + p.period_ms) + tm.listing_ms
        for s, e, _j in ws:
            watch_from = max(seen, s + delay)  # (the watch counts from its lease write's answer)
            ready = max(free, c.mono_true_at(c.mono(watch_from) + p.period_ms + p.attempt_timeout_ms))
            decided = c.mono_true_at(c.mono(ready) + p.period_ms * (1 + crowd // FENCES_AT_ONCE)) + tm.listing_ms
            if decided < e and (best is None or decided + 3 * delay < best[0]):
                best = (decided + 3 * delay, q)
    return best


def _fenced_at(history: History, proc: int, ack: int) -> tuple[int, int] | None:
    """(when, event) the dead process's `nodes/<id>` first changed after its last write landed at `ack` (a
    fence, a restart's first write, a twin's, an old binary's heartbeat), or None."""
    key = "nodes/" + history.processes[proc].node_id
    events = history.events
    for i in history.of_kind("apply", "fault_put"):
        t, _p, _kind, f = events[i]
        if t > ack and f.key == key:
            return t, i
    return None


def _judge(history: History, fx: Facts) -> tuple[list[Violation], int | None]:
    """The violations, and the least slack of the failovers judged: of each fence (its due instant minus
    the instant the dead process's object changed) and of each actor (the deadline, the first request after
    the actor had to be free plus the acquisition's round trips, minus the instant its new hold began;
    negative: later, or never, -1 at best: a violation)."""
    tm = _timing(history)
    p, delay = tm.params, tm.delay_ms
    # the acquisition's own round trips after the request: routing, the record, nodes/<id> (FN-5), the
    # write, the restore, a forward; each way at most the world's network delay, which does not scale with
    # the timing (the real-S3 world's short attempts see the same network)
    slack = 2 * p.attempt_timeout_ms + 12 * delay
    leases = fx.lease
    procs = history.processes
    requests: dict[str, list[tuple[int, int]]] = {}
    events = history.events
    for i in history.of_kind("client"):
        t, q, _kind, f = events[i]
        requests.setdefault(f.actor, []).append((t, q))
    refusing = _refusing(history)
    acknowledged = _acknowledged(history)
    out = []
    least = None
    due: dict[int, tuple[int, int, int]] = {}  # dead proc -> (fence due, fencer, written_at)
    deaths = _deaths(history, fx)
    for proc, td, i, ack, written_at in deaths:
        # BD-1: the deaths whose watch runs beside this one's, each a fence of the same fencers
        crowd = sum(1 for q, _t, _i, a, _w in deaths if q != proc and ack - p.period_ms <= a <= ack)
        d = _fence_due(history, fx, tm, proc, ack, written_at, crowd)
        if d is None:
            continue
        due[proc] = (d[0], d[1], written_at)
        if d[0] > history.end_ms:
            continue  # the run ended before it was due
        changed = _fenced_at(history, proc, ack)
        left = d[0] - changed[0] if changed is not None else min(-1, d[0] - history.end_ms)
        least = left if least is None else min(least, left)
        if left < 0:
            got = "never" if changed is None else f"only at {changed[0] / 1000:.3f} s"
            out.append(Violation(
                INVARIANT,
                f"(fence) {procs[proc].label} died at {td / 1000:.3f} s, its last lease write (written_at {written_at} "
                f"on its clock) landed at {ack / 1000:.3f} s; {procs[d[1]].label} first saw it unchanged by its next "
                f"listing and could fence it once a full P + A of that watch and written_at + ttl + grace had passed "
                f"on its clock, at its next listing (a listing's slack: {tm.listing_ms} ms; the fence's read and "
                f"write: {3 * delay} ms): by {d[0] / 1000:.3f} s; its object changed {got} (T-5, FN-2, FN-3)",
                (i,) if changed is None else (i, changed[1]),
            ))
    for actor, proc, ack, td, new, i in _cases(history, fx):
        if proc not in due:
            continue  # no peer's lease valid long enough to take over
        # the earliest moment some other process could take over: the fence due, and then a request at a
        # process whose clock has passed the same written_at + ttl + grace (FN-5) and able to act on it: its
        # lease valid and known to it (answered, NL-4), neither draining nor stopping (CS-3, CS-1: such a node refuses to acquire, by rule;
        # seed 2000938, tests/plans/inv7-request-at-a-draining-node.json)
        free_at, fencer, written_at = due[proc]
        # OR-10: a node routes by its own view, which shows the owner not live from its first listing after
        # the fence (or the change) landed, a listing long
        changed = _fenced_at(history, proc, ack)
        fenced = min(free_at, changed[0]) if changed is not None else free_at

        def sees(q: int, t: int) -> bool:
            c = procs[q].clock
            return t >= c.mono_true_at(c.mono(fenced) + p.period_ms) + tm.listing_ms

        asked = next((t for t, q in requests.get(actor, ())
                      if t >= free_at and _knows_valid(leases.get(q, ()), acknowledged.get(q, []), t) and sees(q, t)
                      and procs[q].clock.local(t) > written_at + p.takeover_ms
                      and not _refuses_at(refusing.get(q, ()), t)), None)
        if asked is None or asked + slack > history.end_ms:
            continue  # nobody asked for it after it had to be free: nothing to judge
        deadline = asked + slack
        left = deadline - new.start_ms if new is not None else min(-1, deadline - history.end_ms)
        least = left if least is None else min(least, left)
        if new is None or new.start_ms > deadline:
            got = "never" if new is None else f"only at {new.start_ms / 1000:.3f} s"
            out.append(Violation(
                INVARIANT,
                f"actor {actor}: its owner {procs[proc].label} died at {td / 1000:.3f} s (its last lease write "
                f"took effect at {ack / 1000:.3f} s); {procs[fencer].label} could have fenced it by {free_at / 1000:.3f} s "
                f"(its own first sight of the object unchanged, plus a listing's slack) and it was requested at "
                f"{asked / 1000:.3f} s, but a new hold began {got}",
                (i,) if new is None else (i, new.opened),
            ))
    return out, least


@margin("failover", "failover's bound per takeover (INV-7, T-5): the instant the earliest peer able to could have "
                    "fenced the dead owner (its own first sight of the object unchanged, P + A of watch, written_at + "
                    "ttl + grace on its clock, its next listing) minus the instant the owner's object changed; and the "
                    "first request after it plus the acquisition's round trips minus the instant a new hold of its "
                    "actor began", invariant=INVARIANT, rules=("T-5",))
def _failover(c: Context) -> int | None:
    return once(c.history, "failovers_judged", lambda: _judge(c.history, c.facts))[1]


@point("owner died in the quiet phase", "a failover was measured (INV-7)", topic="failover")
def _failover_measured(c: Context) -> bool:
    return bool(measure(c.history, c.facts))
