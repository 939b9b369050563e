"""CONV-1 every process settles: once the faults are over, the protocol converges.

TigerBeetle's VOPR runs a liveness phase after its safety phase in which a healthy core must
converge, and names what blocks it. Here the quiet phase is that phase, and this checker judges,
on world facts, the part of convergence INV-4 (final rounds served, nothing stays held), INV-11
(a drain ends), CS-2 (a stop ends) and CONV-2 (every record converges) do not:

- **The traffic settles.** In the quiet phase's last liveness span the world records every
  request a process sends (`sent`). A node process that runs there sends, and may send only:
  - its lease cadence (NL-2, NL-3: its own `nodes/<id>` written every P, a lease period's worth of
    writes in the span, two more at most) and its listing (`LIST nodes/` as often, FN-2), from its
    first lease write that took effect on (before it, its start check and guard read, UP-1, UP-2);
  - its listing's reads of its peers, and its fence reads (`GET nodes/<peer>`: two per listing, and
    one more per fence of that peer); a fence of a peer now and then (at most twice in the span, FN-3:
    a fence that keeps failing against an object that does not change has not settled);
  - the work a request brings it, counted per request: a request for an actor that reached it (a
    `client` request, or a forwarded one: `arrived`) allows, from its arrival to its answer (the
    world's `answer`; without one, `work_ms`), at most what one acquisition and one service take: five
    requests on the actor's record (the routing read, the acquisition's read, its write, its read-back,
    a release), one read of a node's lease (FN-5), three on its marker (UP-3), two listings of its data
    (the seeding, the restore) and one data write (the request's segment, OR-4, sent as it is served).
    Each send uses up the allowance of the earliest request still open for that actor; a request's
    allowance covers nothing past its answer. A read of a node's lease is covered by its cadence (the
    listing's reads of that node, or two of its own) or by a request open then, whichever allocation
    covers the most (a burst of acquisitions each reading its own id must not find the requests' reads
    spent on the listing's).
  Anything else is background work that never ended, and it is named as the blocker: an unresolved
  acquire read for ever (OR-8), a pending release retried against a record that will not change
  (OR-5, OR-6), a fence sent again and again (FN-3, FN-4), a data write no request asked for, reads
  of a node's lease beyond what the listing and the fences need. A process settles or it does not; it
  is judged only where the span ran whole (a run with a quiet phase).
- **Every request is answered.** A request that reaches a running process in the quiet phase is
  answered within `work_ms`, as the world saw it: the world passed its answer on to the client
  (served, or failed), or carried it on to the node it was forwarded to (`answer`, recorded by the
  world, never the process's own `served` / `request_failed` / `forwarded`): an acquisition that
  waits for ever on a lock nobody gives back (OR-9) never answers.

`work_ms` is derived from the run's configuration: twenty one-way trips at the drawn network
delay (a route read, the record, the node, the marker and its listing, the write, its
read-back, the restore, each there and back) and two attempt timeouts. The model's own claims
are shown beside a blocker (what it said it was doing, and since when), never used to decide.
"""

from __future__ import annotations

from bisect import bisect_right

from history import History, Violation

from .facts import Facts, act_actor, facts, keyed
from .registry import Context, Measure, invariant, point

INVARIANT = "CONV-1"
ACTOR_PREFIXES = ("owners/", "leases/")  # the keys of an actor's record and marker (and its restore's LIST wal/)
FENCES_SETTLED = 2  # a fence of one peer sent more often than this in the span has not settled
LEASE_SPARE = 2  # lease writes (and listings) beyond one a period in the span: the span's two ends
# what one request for an actor may bring, per kind of request (see the module's docstring)
PER_REQUEST = {"owners": 5, "node": 1, "leases": 3, "list": 2, "data": 1}


def work_ms(history: History, fx: Facts) -> int:
    """How long a request's work may take once the faults are over (see the module's docstring)."""
    delay = history.options.get("delay_ms_max", 120)
    return 20 * delay + 2 * fx.params.attempt_timeout_ms


def settle_from_ms(history: History, fx: Facts) -> int:
    """Where the quiet phase's last liveness span begins: the world records what processes send from
    there (and, before it, only what draining ones send)."""
    return history.end_ms - history.options.get("liveness_ms", fx.params.ttl_ms + fx.params.grace_ms)


def _actor_of(op: str, key: str) -> str | None:
    """The actor a request is about (its record, its marker, its restore's listing), else None."""
    for prefix in ACTOR_PREFIXES:
        if str.startswith(key, prefix):
            return key[len(prefix):]
    if op == "LIST" and str.startswith(key, "wal/"):
        return key[len("wal/"):].rstrip("/")
    return None


def _node_procs(history: History) -> list[int]:
    """The processes of node slots (machines m...): the ones that must settle (twins and replacements
    are gone in the quiet phase, old binaries stopped, the operator runs commands)."""
    return [k for k, pr in enumerate(history.processes) if str.startswith(pr.machine, "m")]


def _asked(history: History, quiet_t: int, work: int) -> dict[tuple[int, str], list[tuple[int, int, str]]]:
    """(proc, actor) -> (arrival, answer, how) of each request for the actor that reached the process in the
    quiet phase, in arrival order: its answer the world's (`answer`: served, failed, forwarded), or, without
    one, `work` after its arrival."""
    events = history.events
    out: dict[tuple[int, str], list[tuple[int, int, str]]] = {}
    open_: dict[tuple[int, int], list] = {}  # (proc, request) -> the entry its answer closes
    for i in history.of_kind("client", "arrived", "answer"):
        t, p, kind, f = events[i]
        if t < quiet_t or p < 0:
            continue
        if kind == "answer":
            entry = open_.pop((p, f.request), None)
            if entry is not None and t <= entry[1]:
                entry[1], entry[2] = t, f.how
            continue
        entry = [t, t + work, ""]
        open_[(p, f.request)] = entry
        out.setdefault((p, f.actor), []).append(entry)
    return {k: [tuple(e) for e in v] for k, v in out.items()}


def judged(history: History) -> int:
    """How many blockers a history let CONV-1 judge: the node processes running through the settle
    span (each must settle), and the requests that reached one in the quiet phase (each must be
    answered). A report sums it (`convergence_judged`)."""
    quiet = history.of_kind("quiet")
    if not quiet:
        return 0
    fx = facts(history)
    quiet_t = history.events[quiet[0]].t_ms
    procs = len(set(_node_procs(history)) - set(fx.ended))
    requests = sum(1 for i in history.of_kind("client", "arrived")
                   if history.events[i].t_ms >= quiet_t and history.events[i].proc >= 0)
    return procs + requests


@invariant(INVARIANT, "every process settles once the faults are over", kind="liveness",
           rules=("OR-5", "OR-6", "OR-8", "OR-9", "FN-3", "CS-3"), quiet=True,
           measure=Measure("convergence_judged", judged, unjudged=int))
def check(history: History, fx: Facts | None = None) -> list[Violation]:
    quiet = history.of_kind("quiet")
    sent = history.of_kind("sent")
    if not quiet:
        return []
    fx = facts(history) if fx is None else fx
    events = history.events
    quiet_t = events[quiet[0]].t_ms
    work = work_ms(history, fx)
    asked = _asked(history, quiet_t, work)
    settle = settle_from_ms(history, fx)
    sent = [i for i in sent if events[i].t_ms >= settle]
    out = _unsettled(history, fx, sent, asked, work)
    out += _unanswered(history, fx, work)
    return out


def _kind_of(op: str, key: str) -> tuple[str, str | None]:
    """(the kind of a request a process sent, the actor it is about): see PER_REQUEST; "node" has no actor."""
    if str.startswith(key, "owners/"):
        return "owners", key[len("owners/"):]
    if str.startswith(key, "leases/"):
        return "leases", key[len("leases/"):]
    if str.startswith(key, "wal/"):
        if op == "LIST":
            return "list", key[len("wal/"):].rstrip("/")
        return "data", act_actor(key)
    if str.startswith(key, "nodes/"):
        return "node", None
    return "other", None


class _Allowance:
    """The work requests brought one process: each request's allowance, usable from its arrival to its
    answer (the work of a request is done by then: the routing read, the acquisition, its read-back, the
    restore, and the data write sent as it is served; a request forwarded once its acquisition lost the
    race, OR-7, that acquisition), used up in arrival order."""

    def __init__(self, asked: list[tuple[int, int, str]]) -> None:
        self.asked = asked  # (arrival, answer, how), in arrival order
        self.times = [a for a, _b, _how in asked]
        # per kind, what each request has left (a list per kind, not a dict per request: a crowd's process is
        # asked thousands of times), and the first request that may still give one (those before it have none
        # left, or were answered before an instant already asked about)
        self.left = {kind: [n] * len(asked) for kind, n in PER_REQUEST.items()}
        self.first = dict.fromkeys(PER_REQUEST, 0)

    def take(self, kind: str, t: int) -> bool:
        """Use one `kind` of the earliest request open at t (arrived, not answered before t) with one left.
        Asked in time order (the events' order), per kind: a request answered before t is closed at every
        later instant too, so the scan starts past those as it does past the spent ones (a crowd's thousands
        of answered requests were scanned again for every event)."""
        asked = self.asked
        left = self.left[kind]
        end = bisect_right(self.times, t)
        k = self.first[kind]
        while k < end and (not left[k] or asked[k][1] < t):
            k += 1
        self.first[kind] = k
        for k in range(k, end):
            if asked[k][1] >= t and left[k] > 0:
                left[k] -= 1
                return True
        return False


def _unsettled(history: History, fx: Facts, sent: list[int], asked: dict, work: int) -> list[Violation]:
    events = history.events
    procs = history.processes
    running = set(_node_procs(history)) - set(fx.ended)
    span = history.end_ms - settle_from_ms(history, fx)
    period = fx.params.period_ms
    per_span = span // period + LEASE_SPARE  # lease writes, or listings, in the span
    allowed: dict[tuple[int, str], _Allowance] = {}
    every: dict[int, _Allowance] = {}  # proc -> the allowance of all its requests (the node reads: FN-5)
    by_proc: dict[int, list[tuple[int, int, str]]] = {}
    for (p, actor), entries in asked.items():
        allowed[(p, actor)] = _Allowance(entries)
        by_proc.setdefault(p, []).extend(entries)
    for p, entries in by_proc.items():
        every[p] = _Allowance(sorted(entries))
    stray: dict[tuple[int, str, str], list[int]] = {}  # (proc, op, key) -> the events no request drove
    fences: dict[tuple[int, str], list[int]] = {}
    cadence: dict[tuple[int, str, str], list[int]] = {}  # (proc, op, key) -> its own lease writes, listings, reads
    node_reads: dict[int, list[int]] = {}  # proc -> its reads of node leases in the span (GET nodes/<x>)
    for i in sent:
        t, p, _kind, f = events[i]
        if p not in running:
            continue
        op, key = f.op, f.key
        kind, actor = _kind_of(op, key)
        if kind == "node":
            started = fx.lease_starts.get(p)
            if not started or t < started[0]:
                continue  # its start check and guard (UP-1, UP-2: judged by their own checks), not its cadence
            own = key == "nodes/" + procs[p].node_id
            if op == "PUT" and not own:
                fences.setdefault((p, key), []).append(i)
            elif op == "GET":
                node_reads.setdefault(p, []).append(i)
            else:
                cadence.setdefault((p, op, key), []).append(i)
            continue
        if actor is not None:
            a = allowed.get((p, actor))
            if a is not None and a.take(kind, t):
                continue  # the work of a request for that actor
        stray.setdefault((p, op, key), []).append(i)

    def limit(p: int, op: str, key: str) -> int:
        if op in ("PUT", "LIST"):
            return per_span
        if key != "nodes/" + procs[p].node_id:
            return 2 * per_span + len(fences.get((p, key), ()))  # two a listing, one more a fence of it
        return LEASE_SPARE

    for (p, op, key), idx in cadence.items():
        if len(idx) > limit(p, op, key):
            stray[(p, op, key)] = idx
    for p, reads in node_reads.items():
        for key, idx in _undriven_node_reads(history, reads, every.get(p), lambda key, p=p: limit(p, "GET", key)):
            stray[(p, "GET", key)] = idx
    out = []
    for (p, op, key), idx in sorted(stray.items()):
        first, last = events[idx[0]].t_ms, events[idx[-1]].t_ms
        gap = f", every {(last - first) / (len(idx) - 1) / 1000:.3f} s" if len(idx) > 1 else ""
        _k, actor = _kind_of(op, key)
        out.append(Violation(
            INVARIANT,
            f"{procs[p].label} kept sending {op} {key} with no request for that actor to drive it: {len(idx)} "
            f"time(s) from {first / 1000:.3f} s to {last / 1000:.3f} s{gap}, in the quiet phase's last span, "
            f"once every fault was over" + (f"{claim(history, p, actor, first)}" if actor is not None else
                                           f" (its lease cadence and listing allow {per_span} a span)"),
            (idx[0], idx[-1]) if len(idx) > 1 else (idx[0],)))
    for (p, key), idx in sorted(fences.items()):
        if len(idx) > FENCES_SETTLED:
            out.append(Violation(
                INVARIANT,
                f"{procs[p].label} sent a fence of {key} {len(idx)} times in the quiet phase's last span, from "
                f"{events[idx[0]].t_ms / 1000:.3f} s to {events[idx[-1]].t_ms / 1000:.3f} s: a fence that keeps "
                f"failing against an object that does not change has not settled (FN-3, FN-4)", (idx[0], idx[-1])))
    return out


def _undriven_node_reads(history: History, reads: list[int], requests: _Allowance | None,
                         limit) -> list[tuple[str, list[int]]]:
    """A process's reads of node leases in the span that neither its cadence nor its requests drove:
    (key, the reads of that key the requests did not cover), for each key with a read left over.

    Each read is covered by the cadence of its key (`limit(key)` reads: the listing's, the fences', two of its
    own id) or by one request open at its instant (one read of a node's lease each, FN-5), whichever: the
    most reads covered is a matching (a flow: reads to the requests open then, or to their key's cadence).
    The greedy pass (each read to the earliest open request, the rest to the cadence) covers them all in
    almost every run; only when it leaves some over is the matching computed, so that a read is named only
    if no allocation covers it (the listing's reads of peers must not spend the requests an acquisition's
    own reads need)."""
    events = history.events
    by_key: dict[str, list[int]] = {}
    for i in reads:  # (the requests' node reads are spent only here: the greedy pass takes them in place)
        if requests is not None and requests.take("node", events[i].t_ms):
            continue
        by_key.setdefault(events[i].fields.key, []).append(i)
    if all(len(idx) <= limit(key) for key, idx in by_key.items()):
        return []
    import networkx as nx

    g = nx.DiGraph()
    asked = requests.asked if requests is not None else []
    times = requests.times if requests is not None else []
    keys = sorted({events[i].fields.key for i in reads})
    for key in keys:
        g.add_edge(("key", key), "sink", capacity=limit(key))
    for k in range(len(asked)):
        g.add_edge(("request", k), "sink", capacity=PER_REQUEST["node"])
    for i in reads:
        t, key = events[i].t_ms, events[i].fields.key
        g.add_edge("source", ("read", i), capacity=1)
        g.add_edge(("read", i), ("key", key), capacity=1)
        for k in range(bisect_right(times, t)):
            if asked[k][1] >= t:
                g.add_edge(("read", i), ("request", k), capacity=1)
    _value, flow = nx.maximum_flow(g, "source", "sink")
    # a read no allocation covers names its key, with the reads of that key no request covered
    left = {events[i].fields.key for i in reads if flow["source"][("read", i)] == 0}
    return [(key, [i for i in reads if events[i].fields.key == key
                   and (flow["source"][("read", i)] == 0 or flow[("read", i)][("key", key)] == 1)])
            for key in keys if key in left]


def claim(history: History, p: int, actor: str, before: int) -> str:
    """What process p itself last said about `actor` before `before`: a claim, shown beside a violation,
    never used to decide (CONV-1, CONV-2)."""
    events = history.events
    said = None
    for i in history.of_kind("acquire_unresolved", "release_pending", "unresolved_ended", "release_dropped",
                             "released", "hold_began", "hold_ended", "resolver_release"):
        t, q, kind, f = events[i]
        if t > before:
            break
        if q == p and f.actor == actor:
            said = (t, kind, f)
    if said is None:
        return "; the process itself reported nothing about it (its claims)"
    t, kind, f = said
    return (f"; the process itself last reported {kind.replace('_', ' ')} {actor} at generation {f.generation} at "
            f"{t / 1000:.3f} s (its claim)")


def _unanswered(history: History, fx: Facts, work: int) -> list[Violation]:
    """Requests that reached a running process in the quiet phase and that the world saw no answer to (served,
    failed or forwarded, `answer`) within `work`."""
    events = history.events
    procs = history.processes
    open_: dict[tuple[int, int], tuple[int, int, str]] = {}  # (proc, request) -> (delivered at, event, actor)
    out = []
    end = history.end_ms
    quiet = history.of_kind("quiet")[0]
    for i in history.of_kind("client", "arrived", "answer"):
        t, p, kind, f = events[i]
        if i < quiet or p < 0:
            continue  # (the world records answers from the quiet phase's start on: `quiet`'s event)
        if kind != "answer":
            open_.setdefault((p, f.request), (t, i, f.actor))
        elif t - open_.get((p, f.request), (t,))[0] <= work:
            open_.pop((p, f.request), None)
    for (p, req), (t, i, actor) in sorted(open_.items(), key=lambda kv: kv[1][0]):
        ended = fx.ended.get(p)
        if t + work > end or ended is not None and ended[0] <= t + work:
            continue  # the run, or the process, ended before the answer was due
        out.append(Violation(
            INVARIANT,
            f"a request for {actor} (request {req}) reached {procs[p].label} at {t / 1000:.3f} s, once every fault "
            f"was over, and the world saw no answer to it (served, failed or forwarded) within {work / 1000:.3f} s: "
            f"something it waits on is never given back (a lock per actor, OR-9, or an acquisition that never ends)",
            (i,)))
    return out


# --- the situations convergence needs (coverage points) ----------------------------------------


@point("pending release across a lapse", "a release pending before its node lease lapsed was written again after "
       "the lease recovered, and landed or met a changed record (OR-5, OR-6: retries pause while the lease is "
       "invalid)", topic="ownership")
def _pending_across_lapse(c: Context) -> bool:
    """World facts only: a write of process p to a record then naming p met a fault (a release that
    did not land, its body `nobody <g>` as the world recorded the struck write: OR-5 keeps it pending), and a later write of p to that record, sent in a window of
    p's node lease that began after the fault (a lapse between), landed `nobody` or was refused."""
    fx = c.facts
    history = c.history
    events = history.events
    procs = history.processes
    named: dict[str, str] = {}  # owners/ key -> its applied state
    failed: dict[tuple[int, str], int] = {}  # (proc, key) -> when its release of that record met a fault
    for i in history.of_kind("apply", "refused", "fault"):
        t, p, kind, f = events[i]
        if kind == "fault":
            if p >= 0 and str.startswith(f.target, "PUT owners/") and str.startswith(f.state or "", "nobody "):
                key = f.target[len("PUT "):]
                if str.startswith(named.get(key, ""), f"held {procs[p].node_id} {procs[p].instance} "):
                    failed.setdefault((p, key), t)
            continue
        if not str.startswith(f.key, "owners/"):
            continue
        since = failed.get((p, f.key)) if p >= 0 else None
        if since is not None and since < t and (kind == "refused" or str.startswith(f.state, "nobody")):
            starts = fx.lease_starts.get(p, [])
            k = bisect_right(starts, t) - 1
            # the write was sent in a lease window that began after the release failed: a lapse between
            if k >= 1 and starts[k] > since and fx.lease[p][k - 1][1] > since - 1:
                return True
        if kind == "apply":
            named[f.key] = f.state
    return False


@point("unresolved acquire, record unchanged", "an acquisition's record write never reached the bucket and the "
       "record stayed as the acquisition read it for ttl + grace after (OR-7, OR-8: the resolver keeps reading)",
       topic="ownership")
def _unresolved_unchanged(c: Context) -> bool:
    events = c.history.events
    tg = c.params.ttl_ms + c.params.grace_ms
    procs = c.history.processes
    # an acquisition's write (issue 44): the body the world records the struck write carried names its sender
    # (`fault`'s state: "held <node> <instance> <g>"), never a release's "nobody <g>"
    lost = [(events[j].t_ms, events[j].proc, events[j].fields.target[len("PUT "):])
            for what in ("request_lost", "fail_fast") for j in c.faults(what)
            if str.startswith(events[j].fields.target, "PUT owners/") and events[j].proc >= 0
            and str.startswith(events[j].fields.state or "",
                               f"held {procs[events[j].proc].node_id} {procs[events[j].proc].instance} ")]
    if not lost:
        return False
    changes: dict[str, list[int]] = {}
    for i in c.writes("owners/"):
        changes.setdefault(events[i].fields.key, []).append(events[i].t_ms)
    for t, p, key in lost:
        later = [x for x in changes.get(key, ()) if x > t]
        if (not later or later[0] > t + tg) and t + tg <= c.history.end_ms:
            return True
    return False


@point("drain told during an outage", "a node was told to drain while its machine was cut off the bucket "
       "(INV-11 counts its bound from the outage's end)", topic="clean stop and drain")
def _drain_in_outage(c: Context) -> bool:
    events = c.history.events
    outs = [(events[i].t_ms, events[i].fields.machine, events[i].fields.until_ms) for i in c.history.of_kind("outage")]
    if not outs:
        return False
    for i in c.history.of_kind("told"):
        t, p, _k, f = events[i]
        if f.command == "drain" and p >= 0:
            m = c.history.processes[p].machine
            if any(s <= t < u and (w == m or w == "*") for s, w, u in outs):
                return True
    return False


@point("acquisition after a failed one", "an acquisition on a node failed (its write failed or was refused) and a "
       "later request for the same actor on that node was served: the lock per actor was given back (OR-9)",
       topic="ownership")
def _lock_given_back(c: Context) -> bool:
    """World facts (issue 44): an acquisition's record write of process p (its body names p: "held <node>
    <instance> <g>", as the world recorded it struck, answered, or 409'd) that the bucket refused (412, 404,
    409) or that failed on its way (a fast failure, a fast 5xx), then a request for that actor served by p.
    The model's own `request_failed` reason is not read."""
    history = c.history
    events = history.events
    procs = history.processes
    # the body of every PUT on a record the world answered (a refusal carries none: its answer's does)
    body = {(events[i].proc, events[i].fields.key, events[i].fields.sent_ms): events[i].fields.state or ""
            for i in history.of_kind("record_reply") if events[i].fields.op == "PUT"}
    failed: set[tuple[int, str]] = set()
    for i in history.of_kind("refused", "conflicted", "fault", "served"):
        _t, p, kind, f = events[i]
        if p < 0:
            continue
        mine = f"held {procs[p].node_id} {procs[p].instance} "
        if kind == "served":
            if (p, f.actor) in failed:
                return True
        elif kind == "fault":
            if f.what in ("fail_fast", "fast_5xx") and str.startswith(f.target, "PUT owners/") \
                    and str.startswith(f.state or "", mine):
                failed.add((p, f.target[len("PUT owners/"):]))
        elif str.startswith(f.key, "owners/") and f.op == "PUT":
            state = f.state if kind == "conflicted" else body.get((p, f.key, f.sent_ms))
            if str.startswith(state or "", mine):
                failed.add((p, f.key[len("owners/"):]))
    return False


@point("two unknown acquires in a row", "a process's acquisition write of an actor at generation g went unanswered "
       "(timed out, or a conflict: OR-7, its outcome unknown), and its next acquisition write of that actor, at g + 1, "
       "too", topic="ownership")
def _two_unknown_acquires(c: Context) -> bool:
    events = c.history.events
    last: dict[tuple[int, str], tuple[int, bool]] = {}  # (proc, key) -> (generation, unknown) of its last acquire
    for i in keyed(c.history, "owners/", "record_reply"):
        _t, p, _kind, f = events[i]
        if f.op != "PUT" or not str.startswith(f.state, "held "):
            continue
        g = int(f.state.split(" ")[3])
        unknown = f.status in ("timed_out", "conflict")
        before = last.get((p, f.key))
        if unknown and before is not None and before[1] and before[0] == g - 1:
            return True
        last[(p, f.key)] = (g, unknown)
    return False


@point("same id met an open entry", "a process's read of a record whose acquisition it had left unresolved (its write "
       "at g unanswered, OR-7) found the record naming its own node id under another instance at g: a twin or a "
       "successor under the same id took it while the entry was open (OR-7, OR-8 must tell the instance, not the id)",
       topic="twins")  # (reached by scenarios/faults/twin_entries.py)
def _same_id_met_open_entry(c: Context) -> bool:
    history = c.history
    events = history.events
    procs = history.processes
    open_: dict[tuple[int, str], int] = {}  # (proc, key) -> the generation of its unresolved acquisition
    for i in keyed(history, "owners/", "record_reply"):
        _t, p, _kind, f = events[i]
        if f.op == "PUT" and str.startswith(f.state, "held "):
            if f.status in ("timed_out", "conflict"):
                open_[(p, f.key)] = int(f.state.split(" ")[3])
            else:
                open_.pop((p, f.key), None)
        elif f.op == "GET" and f.status == "ok" and (p, f.key) in open_:
            parts = f.state.split(" ")
            if (len(parts) == 4 and parts[0] == "held" and parts[1] == procs[p].node_id
                    and parts[2] != procs[p].instance and int(parts[3]) == open_[(p, f.key)]):
                return True
    return False
