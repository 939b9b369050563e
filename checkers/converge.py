"""CONV-1 every process settles: once the faults are over, the protocol converges.

TigerBeetle's VOPR runs a liveness phase after its safety phase in which a healthy core must
converge, and names what blocks it. Here the quiet phase is that phase, and this checker judges,
on world facts, the part of convergence INV-4 (final rounds served, nothing stays held), INV-11
(a drain ends) and CS-2 (a stop ends) do not:

- **The traffic settles.** In the quiet phase's last liveness span the world records every
  request a process sends (`sent`). A node process that runs there sends its lease cadence (its
  own `nodes/<id>` writes), its listing (`LIST nodes/`, `GET nodes/...`), a fence of a peer now
  and then, data writes (acts, judged by INV-1 and INV-8), and the work a request brings it: the
  record reads and writes, the marker, the restore's listing of an actor asked of it (a
  `client` request, or a forwarded one: `arrived`) within `work_ms` of the asking. Anything
  else is background work that never ended, and it is named as the blocker: an unresolved
  acquire read for ever (OR-8), a pending release retried against a record that will not
  change (OR-5, OR-6), a fence sent again and again (FN-3). A process settles or it does not;
  it is judged only where the span ran whole (a run with a quiet phase).
- **Every request is answered.** A request that reaches a running process in the quiet phase is
  answered (served, failed, or forwarded) within `work_ms`: an acquisition that waits for ever
  on a lock nobody gives back (OR-9) never answers.

`work_ms` is derived from the run's configuration: twenty one-way trips at the drawn network
delay (a route read, the record, the node, the marker and its listing, the write, its
read-back, the restore, each there and back) and two attempt timeouts. The model's own claims
are shown beside a blocker (what it said it was doing, and since when), never used to decide.
"""

from __future__ import annotations

from bisect import bisect_right

from history import History, Violation

from .facts import Facts, facts
from .registry import Context, Measure, invariant, point

INVARIANT = "CONV-1"
ACTOR_PREFIXES = ("owners/", "leases/")  # the keys of an actor's record and marker (and its restore's LIST wal/)
FENCES_SETTLED = 2  # a fence of one peer sent more often than this in the span has not settled


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
        if key.startswith(prefix):
            return key[len(prefix):]
    if op == "LIST" and key.startswith("wal/"):
        return key[len("wal/"):].rstrip("/")
    return None


def _node_procs(history: History) -> list[int]:
    """The processes of node slots (machines m...): the ones that must settle (twins and replacements
    are gone in the quiet phase, old binaries stopped, the operator runs commands)."""
    return [k for k, pr in enumerate(history.processes) if pr.machine.startswith("m")]


def _asked(history: History, quiet_t: int) -> dict[tuple[int, str], list[int]]:
    """(proc, actor) -> the instants a request for the actor reached the process in the quiet phase."""
    events = history.events
    out: dict[tuple[int, str], list[int]] = {}
    for i in history.of_kind("client", "arrived"):
        t, p, _kind, f = events[i]
        if t >= quiet_t and p >= 0:
            out.setdefault((p, f.actor), []).append(t)
    return out


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
    asked = _asked(history, quiet_t)
    settle = settle_from_ms(history, fx)
    sent = [i for i in sent if events[i].t_ms >= settle]
    out = _unsettled(history, fx, sent, asked, work)
    out += _unanswered(history, fx, quiet_t, work)
    return out


def _unsettled(history: History, fx: Facts, sent: list[int], asked: dict, work: int) -> list[Violation]:
    events = history.events
    procs = history.processes
    running = set(_node_procs(history)) - set(fx.ended)
    stray: dict[tuple[int, str, str], list[int]] = {}  # (proc, op, key) -> the events no request drove
    fences: dict[tuple[int, str], list[int]] = {}
    for i in sent:
        t, p, _kind, f = events[i]
        if p not in running:
            continue
        op, key = f.op, f.key
        if key.startswith("nodes/"):
            if op == "PUT" and key != "nodes/" + procs[p].node_id:
                fences.setdefault((p, key), []).append(i)
            continue  # its lease cadence, its listing, an acquisition's read of a peer's lease
        actor = _actor_of(op, key)
        if actor is None:
            continue  # data writes are acts (INV-1, INV-8)
        times = asked.get((p, actor), ())
        k = bisect_right(times, t) - 1
        if k >= 0 and t - times[k] <= work:
            continue  # the work of a request for that actor
        stray.setdefault((p, op, key), []).append(i)
    out = []
    for (p, op, key), idx in sorted(stray.items()):
        first, last = events[idx[0]].t_ms, events[idx[-1]].t_ms
        gap = f", every {(last - first) / (len(idx) - 1) / 1000:.3f} s" if len(idx) > 1 else ""
        out.append(Violation(
            INVARIANT,
            f"{procs[p].label} kept sending {op} {key} with no request for that actor to drive it: {len(idx)} "
            f"time(s) from {first / 1000:.3f} s to {last / 1000:.3f} s{gap}, in the quiet phase's last span, "
            f"once every fault was over{_claim(history, p, key, first)}",
            (idx[0], idx[-1]) if len(idx) > 1 else (idx[0],)))
    for (p, key), idx in sorted(fences.items()):
        if len(idx) > FENCES_SETTLED:
            out.append(Violation(
                INVARIANT,
                f"{procs[p].label} sent a fence of {key} {len(idx)} times in the quiet phase's last span, from "
                f"{events[idx[0]].t_ms / 1000:.3f} s to {events[idx[-1]].t_ms / 1000:.3f} s: a fence that keeps "
                f"failing against an object that does not change has not settled (FN-3)", (idx[0], idx[-1])))
    return out


def _claim(history: History, p: int, key: str, before: int) -> str:
    """What the process itself last said about the actor before `before` (a claim, shown, not used)."""
    actor = key.split("/", 1)[1] if "/" in key else key
    events = history.events
    said = None
    for i in history.of_kind("acquire_unresolved", "release_pending", "unresolved_ended", "release_dropped",
                             "released", "hold_began"):
        t, q, kind, f = events[i]
        if t > before:
            break
        if q == p and f.actor == actor:
            said = (t, kind, f)
    if said is None:
        return ""
    t, kind, f = said
    return (f"; the process itself last reported {kind.replace('_', ' ')} {actor} at generation {f.generation} at "
            f"{t / 1000:.3f} s (its claim)")


def _unanswered(history: History, fx: Facts, quiet_t: int, work: int) -> list[Violation]:
    """Requests that reached a running process in the quiet phase and got no answer within `work`."""
    events = history.events
    procs = history.processes
    open_: dict[tuple[int, int], tuple[int, int, str]] = {}  # (proc, request) -> (delivered at, event, actor)
    out = []
    end = history.end_ms
    for i in history.of_kind("client", "arrived", "served", "request_failed", "forwarded"):
        t, p, kind, f = events[i]
        if t < quiet_t or p < 0:
            continue
        if kind in ("client", "arrived"):
            open_.setdefault((p, f.request), (t, i, f.actor))
        else:
            open_.pop((p, f.request), None)
    for (p, req), (t, i, actor) in sorted(open_.items(), key=lambda kv: kv[1][0]):
        ended = fx.ended.get(p)
        if t + work > end or ended is not None and ended[0] <= t + work:
            continue  # the run, or the process, ended before the answer was due
        out.append(Violation(
            INVARIANT,
            f"a request for {actor} (request {req}) reached {procs[p].label} at {t / 1000:.3f} s, once every fault "
            f"was over, and was never answered (served, failed or forwarded) within {work / 1000:.3f} s: something "
            f"it waits on is never given back (a lock per actor, OR-9, or an acquisition that never ends)", (i,)))
    return out


# --- the situations convergence needs (coverage points) ----------------------------------------


@point("pending release across a lapse", "a release pending before its node lease lapsed was written again after "
       "the lease recovered, and landed or met a changed record (OR-5, OR-6: retries pause while the lease is "
       "invalid)", topic="ownership")
def _pending_across_lapse(c: Context) -> bool:
    """World facts only: a write of process p to a record then naming p met a fault (a release that
    did not land: OR-5 keeps it pending), and a later write of p to that record, sent in a window of
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
            if p >= 0 and f.target.startswith("PUT owners/"):
                key = f.target[len("PUT "):]
                if named.get(key, "").startswith(f"held {procs[p].node_id} {procs[p].instance} "):
                    failed.setdefault((p, key), t)
            continue
        if not f.key.startswith("owners/"):
            continue
        since = failed.get((p, f.key)) if p >= 0 else None
        if since is not None and since < t and (kind == "refused" or f.state.startswith("nobody")):
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
    lost = [(events[j].t_ms, events[j].proc, events[j].fields.target[len("PUT "):])
            for what in ("request_lost", "fail_fast") for j in c.faults(what)
            if events[j].fields.target.startswith("PUT owners/")]
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


@point("acquisition after a failed one", "an acquisition on a node failed (its read or write failed or was "
       "refused) and a later request for the same actor on that node was served: the lock per actor was given "
       "back (OR-9)", topic="ownership")
def _lock_given_back(c: Context) -> bool:
    events = c.history.events
    failed: dict[tuple[int, str], int] = {}
    for i in c.history.of_kind("request_failed", "served"):
        t, p, kind, f = events[i]
        if kind == "request_failed":
            if f.reason.startswith("acquire: ") and f.reason != "acquire: outcome unknown":
                failed.setdefault((p, f.actor), t)
        elif (p, f.actor) in failed:
            return True
    return False
