"""INV-7 failover: an actor whose owner died (crashed, or exited on a lost lease or a fence) in
the quiet phase is writable again within ttl + grace + P + A + 2 * max_skew of the owner's last
lease write (the last it sent before it died, when it took effect: one in flight at the death
lands after it), plus the wait for a request (and the round trips of the acquisition).
Holds, lease writes and exemptions are the world's facts (checkers/facts.py): an owner whose
nodes/<id> the world deleted by mistake is left out, whatever its exit says.

`measure` gives the failover times (ms), from the last acknowledged lease write to the first
new hold, the figure the ADR's soak reported (18.2 s median, 24.4 s p99); its coverage point is a
failover measured; its margin, how long before its deadline each failover judged came (`failover`).
"""

from __future__ import annotations

from model.params import Params

from history import History, Violation

from .facts import Facts, facts
from .registry import Context, Measure, invariant, margin, once, point

INVARIANT = "INV-7"


def _cases(history: History, fx: Facts) -> list[tuple]:
    """(actor, dead proc, last applied lease write, death time, first new hold or None, index of death
    event), found once per history (check and measure both read them)."""
    cached = history.cache.get("failover_cases")
    if cached is None:
        cached = history.cache["failover_cases"] = list(_find_cases(history, fx))
    return cached


def _find_cases(history: History, fx: Facts):
    events = history.events
    quiet = history.of_kind("quiet")
    if not quiet:
        return
    quiet_t = events[quiet[0]].t_ms
    deleted: dict[str, list[int]] = {}  # node id -> when the world deleted its nodes/ object by mistake
    for i in history.of_kind("fault_delete"):
        t, _p, _kind, f = events[i]
        if f.key.startswith("nodes/"):
            deleted.setdefault(f.key[len("nodes/"):], []).append(t)
    deaths: list[tuple[int, int, int, int]] = []
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
            ack = max(w.applied_ms for w in fx.live_writes[p] if w.sent_ms <= t)
            deaths.append((p, t, i, ack))
    for p, td, i, ack in deaths:
        for h in fx.holds:
            if h.proc == p and not h.old and fx.valid_at(h, td - 1):  # it owned the actor when it died
                new = next((x for x in fx.holds if x.actor == h.actor and x.start_ms > td and fx.windows(x)), None)
                yield h.actor, p, ack, td, new, i


def measure(history: History, fx: Facts | None = None) -> list[int]:
    fx = facts(history) if fx is None else fx
    return [new.start_ms - ack for _a, _p, ack, _td, new, _i in _cases(history, fx) if new is not None]


def _valid_at(windows, t: int) -> bool:
    return any(s <= t < e for s, e, _i in windows)


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


@invariant(INVARIANT, "failover", kind="liveness", rules=("T-5", "FN-2", "FN-3", "FN-9"), quiet=True,
           measure=Measure("failover_ms", measure, unjudged=list))
def check(history: History, fx: Facts | None = None) -> list[Violation]:
    fx = facts(history) if fx is None else fx
    return list(once(history, "failovers_judged", lambda: _judge(history, fx))[0])


def _judge(history: History, fx: Facts) -> tuple[list[Violation], int | None]:
    """The violations, and the least slack of the failovers judged: the deadline (the first request
    after the actor had to be free, plus the acquisition's round trips) minus the instant its new hold
    began (negative: later, or never, -1 at best: a violation)."""
    p = Params(**history.params)
    # a listing reads LIST then one GET per node, one after another (the ADR: its duration grows
    # with N), and the fence is one more round trip: at most this long in the world's network
    delay = history.options.get("delay_ms_max", 0)
    listing = (history.options.get("nodes", 1) + 2) * 2 * delay
    # (+ 2 * max_skew: written_at is on the owner's clock and the taker waits until its own clock passes
    # written_at + ttl + grace; each clock is within max_skew of true time, so the taker's may run up to
    # 2 * max_skew behind the owner's: T-2's whole budget)
    bound = p.ttl_ms + p.grace_ms + p.period_ms + p.attempt_timeout_ms + 2 * p.max_skew_ms + listing
    # T-5: a taker watches a full P + A from its own first acknowledged lease write, and
    # decides at its next listing (every P)
    watch = 2 * p.period_ms + p.attempt_timeout_ms + listing
    # the acquisition's own round trips after the request: routing, the record, nodes/<id> (FN-5),
    # the write, the restore, a forward; each way at most the world's network delay, which does not
    # scale with the timing (the real-S3 world's short attempts see the same network)
    slack = 2 * p.attempt_timeout_ms + 12 * delay
    leases = fx.lease
    requests: dict[str, list[tuple[int, int]]] = {}
    events = history.events
    for i in history.of_kind("client"):
        t, q, _kind, f = events[i]
        requests.setdefault(f.actor, []).append((t, q))
    refusing = _refusing(history)
    out = []
    least = None
    for actor, proc, ack, td, new, i in _cases(history, fx):
        # the earliest moment some other process could take over: the bound from the last
        # acknowledged write, or later if no taker had watched long enough by then
        free_at = None
        for q, ws in leases.items():
            if q == proc:
                continue
            for s, e, _j in ws:
                at = max(ack + bound, s + watch)
                if at < e and (free_at is None or at < free_at):
                    free_at = at
        if free_at is None:
            continue
        # the first request after that which reached a process able to act on it: its lease valid, and
        # neither draining nor stopping (CS-3, CS-1: such a node refuses to acquire, by rule; seed 2000938,
        # tests/plans/inv7-request-at-a-draining-node.json)
        asked = next((t for t, q in requests.get(actor, ())
                      if t >= free_at and _valid_at(leases.get(q, ()), t)
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
                f"actor {actor}: its owner {history.processes[proc].label} died at {td / 1000:.3f} s (its last lease write "
                f"took effect at {ack / 1000:.3f} s); it had to be acquirable by {free_at / 1000:.3f} s and was requested at "
                f"{asked / 1000:.3f} s, but a new hold began {got}",
                (i,) if new is None else (i, new.opened),
            ))
    return out, least


@margin("failover", "failover's bound (INV-7, T-5): ttl + grace + P + A + 2 max_skew (and the listing) after the dead "
                    "owner's last lease write, then the first request and the acquisition's round trips, minus the "
                    "instant a new hold of its actor began", invariant=INVARIANT, rules=("T-5",))
def _failover(c: Context) -> int | None:
    return once(c.history, "failovers_judged", lambda: _judge(c.history, c.facts))[1]


@point("owner died in the quiet phase", "a failover was measured (INV-7)", topic="failover")
def _failover_measured(c: Context) -> bool:
    return bool(measure(c.history, c.facts))
