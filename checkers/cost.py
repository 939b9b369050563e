"""COST-1..COST-6: the ADR's claims about requests, judged on the request ledger like any invariant (issue 48).

ADR 0020 exists to cut the bucket's bill, and its "Cost, after" section and section 5 count requests. Each
count is a check here, on what the world saw each process send (`History.requests`, checkers/ledger.py) and on
the world's events, judged where no fault excuses a request (the quiet phase) or case by case:

- COST-1, a lease write per node per period, retries apart ("a lease write every third of the ttl (the
  heartbeat, now conditional)"): in the quiet phase, a node's lease write that follows an acknowledged one
  leaves at least a period after it on the node's monotonic clock, and none leaves more than a period and two attempt
  timeouts after the one before (a tick that found an attempt, or NL-9's re-read, in flight waits for it).
- COST-2, the listing ("one LIST and then one GET per node, one after another. A cluster of N nodes makes
  N x (1 + N) requests a period"): a node lists `nodes/` at most once a period (on its monotonic clock), and reads
  each object its listing returned at most once before it lists again: at most N GETs for N objects listed.
  The ADR's N x (1 + N) counts a node's own object among those read; the model reads every object but its own
  (N x N a period: docs/protocol.md, "Where this page departs from the ADR"), which the bound admits.
- COST-3, a hold's requests ("a record read and write to acquire, a write to release, and the restore's
  listing, as today"): per acquisition (from a node's read of the record to its next one), at most one write
  of the record, one read-back (OR-7) and one read of the named node (FN-5, which the ADR's count leaves out);
  once the write has left, at most one listing of the actor's data (the restore) and one foreground release.
- COST-4, the upgrade, once ("its first hold under the new version also reads leases/, lists its keys to seed
  the generation and writes the marker (a GET, a LIST and a PUT)"): per acquisition, at most one request of
  each on `leases/<actor>` (GET, PUT) and one seeding listing, and none at all when the acquisition's read of
  `owners/<actor>` found a record: once the record exists, an actor costs no more upgrade requests.
- COST-5, nothing grows with a hold's length ("Renewals disappear"): a process writes a hold's record
  ("held <node> <instance> <g>") once; a second write naming the same hold is a renewal. What a node sends
  per period whatever its holds (its lease writes and its listing) is COST-1's and COST-2's.
- COST-6, two retries in practice (section 5: "After a write acknowledged at t, the next go at t + 3 and
  t + 6 ... So a node has two retries in practice before its lease runs out"): whenever a node's lease runs
  out (the validity of its last acknowledged write, `written_at + ttl - safety` on its clock, ends with no
  later acknowledgement), with A <= P and 2 P < ttl - safety (the ADR's timing), at least two lease writes
  left it after that write and before the run-out. Judged in every phase, case by case: a run-out across
  a pause of the process or a step of its clock is not judged (the fault, not the cadence, took the time).

A violation names the node, the period and the requests (each with its send time and fate); the requests
are the ledger's rows, not events, so the message carries them, with the events that anchor them (the
writes the bucket applied) where there are some.

Must not know: any price (campaign/prices.py).
"""

from __future__ import annotations

from itertools import islice

from history import History, Violation

from . import ledger
from .facts import keyed, pauses
from .ledger import Row
from .registry import invariant, once

CHECK_IDS = ("COST-1", "COST-2", "COST-3", "COST-4", "COST-5", "COST-6")  # the checks this module declares
SLACK_MS = 1  # a clock read in whole ms: a period measured between two sends may read one short


def _s(t_ms: int) -> str:
    return f"{t_ms / 1000:.3f} s"


def desc(r: Row) -> str:
    """A request for a person: `PUT nodes/n1 at 12.345 s (2xx)`."""
    return f"{r.sent.op} {r.sent.key} at {_s(r.sent.sent_ms)} ({r.outcome})"


class _Run:
    """What the cost checks read of one history, computed once: the ledger's rows by process, each process's
    life, the pauses of its machine and the world's stop."""

    def __init__(self, history: History) -> None:
        self.h = history
        self.rows = ledger.rows(history)
        # each process's requests in send order (the ledger's order; an SDK's own retry of a write, appended
        # when it is sent, is not the process's request)
        self.by_proc: dict[int, list[Row]] = {}
        self.rereads: set[tuple[int, str, int]] = set()  # (proc, key, sent_ms) of each NL-9 re-read
        by_proc = self.by_proc
        for r in self.rows:
            # (the request's fields unpacked at once: compiled, each `s.field` is a generic attribute read)
            sent_ms, proc, _op, key, purpose, _answer, _lost, _entries, sdk_retry, _detail = r.sent
            if not sdk_retry:
                rs = by_proc.get(proc)
                if rs is None:
                    by_proc[proc] = [r]
                else:
                    rs.append(r)
            if purpose == "lease_reread":
                self.rereads.add((proc, key, sent_ms))
        self._attempts: dict[int, list] = {}
        ev = history.events
        self.ended: dict[int, int] = {}
        for i in history.of_kind("exit", "crash"):
            self.ended.setdefault(ev[i].proc, ev[i].t_ms)
        self.stop_told: dict[int, int] = {}
        for i in history.of_kind("told"):
            if ev[i].fields.command == "stop":
                self.stop_told.setdefault(ev[i].proc, ev[i].t_ms)
        self.pauses: dict[int, list[tuple[int, int]]] = pauses(history)  # (the checkers' one copy: read only)
        quiet = history.of_kind("quiet")
        self.quiet_at = ev[quiet[0]].t_ms if quiet else None
        # (proc, key, sent_ms) of each write whose 2xx reached its process before its timeout (`record_reply`:
        # what the process learned of its records and its own node lease)
        self.acked: set[tuple[int, str, int]] = set()
        for i in history.of_kind("record_reply"):
            f = ev[i].fields
            if f.op == "PUT" and f.status == "ok":
                self.acked.add((ev[i].proc, f.key, f.sent_ms))
        self._applied: dict[tuple[int, str, int], int] | None = None  # (proc, key, sent_ms) -> its `apply` event

    def node_procs(self) -> list[int]:
        """The new model's node processes (not the operator's, not an old binary's, machines `om*`)."""
        return [p for p, proc in enumerate(self.h.processes)
                if proc.node_id != "operator" and not str.startswith(proc.machine, "om")]

    def paused(self, p: int, t0: int, t1: int) -> bool:
        return any(a < t1 and b > t0 for a, b in self.pauses.get(p, ()))

    def stepped(self, p: int, t0: int, t1: int) -> bool:
        return any(t0 < at <= t1 for at, _d in self.h.processes[p].steps)

    def anchors(self, rs) -> tuple[int, ...]:
        """The events that anchor these requests: the writes of them the bucket applied (indexed once, when a
        violation first needs them)."""
        applied = self._applied
        if applied is None:
            applied = self._applied = {}
            ev = self.h.events
            for i in self.h.of_kind("apply"):
                f = ev[i].fields
                applied.setdefault((ev[i].proc, f.key, f.sent_ms), i)
        out = []
        for r in rs:
            i = applied.get((r.sent.proc, r.sent.key, r.sent.sent_ms))
            if i is not None:
                out.append(i)
        return tuple(sorted(out))


def run_of(history: History) -> _Run:
    return once(history, "cost_run", lambda: _Run(history))


def _acked(run: _Run, r: Row) -> bool:
    """The process learned the bucket's 2xx before its timeout (not lost on the way, not late)."""
    return (r.sent.proc, r.sent.key, r.sent.sent_ms) in run.acked


# --- COST-1 ---------------------------------------------------------------------------------------------


@invariant("COST-1", "a lease write per node per period, retries apart", kind="safety", rules=("COST-1", "NL-2"),
           quiet=True, ledger=True)
def check_lease_cadence(history: History) -> list[Violation]:
    """Judged on the ledger in the quiet phase: a node's lease write after an acknowledged one leaves a period
    after it on its monotonic clock (where NL-2's cadence runs), and no later than a period and two attempt
    timeouts. A pause of the process between the two is not judged; a step of its wall clock does not excuse."""
    if not history.requests:
        return []
    run = run_of(history)
    p_ = run.h.params
    period, attempt = p_["heartbeat_period_ms"], p_["attempt_timeout_ms"]
    period = min(period, p_["ttl_ms"] // 3)
    # requests in flight as the faults ended are answered (or time out) within an attempt, their retries
    # within a second more: judged from then on
    start = (run.quiet_at or history.end_ms) + 2 * attempt + 1_000
    out = []
    for p in run.node_procs():
        proc = history.processes[p]
        clock = proc.clock
        stop = min(run.stop_told.get(p, history.end_ms), run.ended.get(p, history.end_ms), history.end_ms)
        every = [r for r in run.by_proc.get(p, ()) if r.sent.op == "PUT" and r.key_class == "nodes/<own>"
                 and r.sent.purpose != "released_write"]
        writes = [r for r in every if start <= r.sent.sent_ms < stop]
        n = 0  # every[:n]: the writes sent before t0 (`every` is in send order; t0 grows)
        for a, b in zip(writes, writes[1:]):
            t0, t1 = a.sent.sent_ms, b.sent.sent_ms
            while n < len(every) and every[n].sent.sent_ms < t0:
                n += 1
            if run.paused(p, t0, t1):
                continue
            gap = clock.mono_span(t0, t1)  # NL-2's cadence runs on the monotonic clock (issue 47): a step is no excuse
            # a retry (NL-3: sent within a period of an unacknowledged write) leaves the tick's cadence as it was: the
            # next tick is P after the tick, so less than P after the retry (swarm seed 633)
            before = every[n - 1] if n else None
            retry = before is not None and not _acked(run, before) and \
                clock.mono_span(before.sent.sent_ms, t0) < period - SLACK_MS  # (after an unanswered write)
            if _acked(run, a) and gap < period - SLACK_MS and not retry:
                out.append(Violation("COST-1", (
                    f"{proc.label} sent two lease writes {gap} ms apart on its monotonic clock in the period from "
                    f"{_s(t0)}, the first acknowledged (a lease write every period P = {period} ms, retries "
                    f"apart): {desc(a)}, {desc(b)}"), run.anchors((a, b))))
                break
            if _acked(run, a) and gap > period + 2 * attempt + SLACK_MS:
                out.append(Violation("COST-1", (
                    f"{proc.label} sent no lease write for {gap} ms on its monotonic clock after {desc(a)} (the next: "
                    f"{desc(b)}): a lease write every period P = {period} ms, an attempt A = {attempt} ms in "
                    f"flight delaying it at most twice"), run.anchors((a,))))
                break
    return out


# --- COST-2 ---------------------------------------------------------------------------------------------


@invariant("COST-2", "the listing: one LIST and at most one GET per object listed, per node per period",
           kind="safety", rules=("COST-2", "FN-2"), ledger=True)
def check_listing(history: History) -> list[Violation]:
    """Judged on the ledger: a node lists `nodes/` at most once a period and reads each object a listing
    returned at most once before its next listing (the ADR's N x (1 + N) a period at most)."""
    if not history.requests:
        return []
    run = run_of(history)
    p_ = run.h.params
    period = min(p_["heartbeat_period_ms"], p_["ttl_ms"] // 3)
    out = []
    for p in run.node_procs():
        proc = history.processes[p]
        rs = [r for r in run.by_proc.get(p, ()) if r.sent.purpose in ("listing", "listing_get")]
        lists = [i for i, r in enumerate(rs) if r.sent.purpose == "listing"]
        found = None
        for n, i in enumerate(lists):
            lst = rs[i]
            nxt = lists[n + 1] if n + 1 < len(lists) else len(rs)
            if n + 1 < len(lists):
                t0, t1 = lst.sent.sent_ms, rs[nxt].sent.sent_ms
                gap = proc.clock.mono_span(t0, t1)  # the listing's period, on the monotonic clock (issue 47)
                if gap < period - SLACK_MS:
                    found = (f"{proc.label} listed nodes/ twice within a period (P = {period} ms): {desc(lst)} and "
                             f"{desc(rs[nxt])}, {gap} ms apart on its monotonic clock", (lst, rs[nxt]))
                    break
            gets = rs[i + 1:nxt]
            listed = lst.sent.entries if lst.outcome == "2xx" else 0
            keys = [g.sent.key for g in gets]
            twice = sorted({k for k in keys if keys.count(k) > 1})
            if len(gets) > (listed or 0) or twice:
                why = (f"read {', '.join(twice)} more than once" if twice else
                       f"sent {len(gets)} GETs after a listing that returned {listed or 0} objects")
                found = (f"{proc.label} {why} in the period from {_s(lst.sent.sent_ms)} (one LIST and then one "
                         f"GET per node, N x (1 + N) a period at most): {desc(lst)}, then "
                         + ", ".join(desc(g) for g in gets), (lst, *gets))
                break
        if found:
            out.append(Violation("COST-2", found[0], run.anchors(found[1])))
    return out


# --- COST-3 and COST-4: per acquisition ----------------------------------------------------------------


ACQUISITION = ("acquire_read", "acquire_node_read", "acquire_write", "acquire_readback")


def attempts(run: _Run, p: int) -> list[tuple[str, list[Row]]]:
    """Process p's acquisitions, one per read of a record (`acquire_read`): (actor, the requests of p about
    that actor from that read to its next one), in order (computed once per process)."""
    got = run._attempts.get(p)
    if got is None:
        got = run._attempts[p] = _attempts(run, p)
    return got


_ABOUT_ACTORS = ("owners/", "leases/", "wal/ list", "wal/ segment")


def _attempts(run: _Run, p: int) -> list[tuple[str, list[Row]]]:
    by_actor: dict[str, list[Row]] = {}
    for r in run.by_proc.get(p, ()):
        s, _node, kc, _outcome, _phase, cause = r  # (unpacked once: compiled, each `.field` is a generic read)
        if kc not in _ABOUT_ACTORS and cause != "acquisition":
            continue  # (the lease, the listing, fences: about no actor)
        if cause == "resolver" or str.startswith(s.purpose, "pending_"):
            continue  # background work, not the hold's (OR-6's retries, OR-8's resolver)
        actor = r.actor
        if actor is not None:
            by_actor.setdefault(actor, []).append(r)
    out = []
    for actor, rs in by_actor.items():
        cur: list[Row] | None = None
        wrote = False
        for k, r in enumerate(rs):
            # a read of the record starts an acquisition ("a record read and write to acquire"): the first
            # read, and a read-back after the acquisition's write was answered, when a write follows it (an
            # amendment's read-back that acts on what it read, q4, is a read and a write of its own)
            if r.key_class == "owners/" and (r.sent.purpose == "acquire_read" or (
                    r.sent.purpose == "acquire_readback" and wrote and _writes_after(rs, k))):
                cur = [r]
                wrote = False
                out.append((actor, cur))
            elif cur is not None:
                cur.append(r)
                wrote = wrote or r.sent.purpose == "acquire_write"
    out.sort(key=lambda x: x[1][0].sent.sent_ms)
    return out


def _writes_after(rs: list[Row], k: int) -> bool:
    """Whether an acquisition's write of the record follows request rs[k] before the next first read. (By its
    place: `rs.index(r)` compared rows field by field from the start, for every read-back.)"""
    for x in islice(rs, k + 1, None):
        if x.sent.purpose == "acquire_read":
            return False
        if x.sent.purpose == "acquire_write":
            return True
    return False


# what a fault made of a request: the bucket never answered it, or not definitively; the requests an acquisition
# sends after one are the fault's cost (the faults' extra, by cause, in the report), not the claim's
FAULTED = ("lost", "unanswered", "5xx", "409")


def _until_a_fault(rs: list[Row]) -> list[Row]:
    """An acquisition's requests up to and including the first one a fault met."""
    for k, r in enumerate(rs):
        if str.startswith(r.outcome, FAULTED) or r.outcome.endswith("reply lost"):
            return rs[:k + 1]
    return rs


def _acquisition_counts(rs: list[Row]) -> tuple[dict, list[Row], list[Row]]:
    """Counts by purpose until the record write left; what came after it (the hold's)."""
    counts: dict[str, list[Row]] = {}
    after: list[Row] = []
    wrote = False
    for r in rs:
        if wrote:
            after.append(r)
        if r.sent.purpose in ACQUISITION:
            counts.setdefault(r.sent.purpose, []).append(r)
        if r.sent.purpose == "acquire_write":
            wrote = True
    return counts, after, rs


def _per_acquisition(history: History, inv: str, claim: str, judge) -> list[Violation]:
    """A violation of `inv` for each process with an acquisition `judge(actor, its requests)` finds at fault
    (it returns (what the process sent, the requests) or None); `claim`: the ADR's count, for the message."""
    if not history.requests:
        return []
    run = run_of(history)
    out = []
    for p in run.node_procs():
        for actor, rs in attempts(run, p):
            why = judge(actor, _until_a_fault(rs))
            if why:
                text, reqs = why
                out.append(Violation(inv, (
                    f"{history.processes[p].label} sent {text} of {actor}, the acquisition from "
                    f"{_s(rs[0].sent.sent_ms)} ({claim}): " + ", ".join(desc(r) for r in [rs[0], *reqs])),
                    run.anchors(reqs)))
                break
    return out


@invariant("COST-3", "a hold: a record read and write to acquire, a write to release, the restore's listing",
           kind="safety", rules=("COST-3", "OR-3", "OR-5"), ledger=True)
def check_hold_requests(history: History) -> list[Violation]:
    """Judged on the ledger, per acquisition: at most one record write, one read-back, one read of the named
    node; after the write, one listing of the actor's data and one foreground release."""
    def judge(actor, rs):
        counts, after, _ = _acquisition_counts(rs)
        extra = [(what, counts[what]) for what in ("acquire_write", "acquire_readback", "acquire_node_read")
                 if len(counts.get(what, ())) > 1]
        restores = [r for r in after if r.sent.op == "LIST" and r.key_class == "wal/ list"]
        releases = [r for r in after if r.sent.purpose == "release"]
        if extra:
            what, reqs = extra[0]
            return f"{len(reqs)} requests {what} in one acquisition", reqs
        if len(restores) > 1:
            return f"{len(restores)} listings of its data after one acquisition's write (one restore)", restores
        if len(releases) > 1:
            return f"{len(releases)} foreground releases of one hold (one write to release)", releases
        return None

    return _per_acquisition(history, "COST-3", "a record read and write to acquire, a write to release, the "
                                               "restore's listing", judge)


@invariant("COST-4", "the upgrade: a GET, a LIST and a PUT per actor, once", kind="safety",
           rules=("COST-4", "UP-3"), ledger=True)
def check_upgrade_once(history: History) -> list[Violation]:
    """Judged on the ledger, per acquisition: at most one GET and one PUT of `leases/<actor>` and one seeding
    listing, and none when the read of `owners/<actor>` found a record."""
    def judge(actor, rs):
        marker = [r for r in rs if r.key_class == "leases/"]
        seeds = [r for r in rs if r.sent.purpose == "upgrade_seed_list"]
        gets = [r for r in marker if r.sent.op == "GET"]
        puts = [r for r in marker if r.sent.op != "GET"]
        if str.startswith(rs[0].outcome, "2xx") and (marker or seeds):
            return "upgrade requests in an acquisition whose read found the record", marker + seeds
        if len(gets) > 1 or len(puts) > 1 or len(seeds) > 1:
            return "more than one GET, LIST or PUT of the upgrade in one acquisition", marker + seeds
        return None

    return _per_acquisition(history, "COST-4", "a GET, a LIST and a PUT per actor, once, on its first hold under "
                                               "the new version", judge)


# --- COST-5 ---------------------------------------------------------------------------------------------


@invariant("COST-5", "no renewals: a hold's record is written once", kind="safety", rules=("COST-5", "OR-4"),
           ledger=True)
def check_no_renewals(history: History) -> list[Violation]:
    """Judged on what each process sent on its records (`record_reply`): a hold's record written again once
    the process knew it had landed is a renewal."""
    if history.requests is None:
        return []
    ev = history.events
    known: dict[tuple[int, str, str], int] = {}  # (proc, key, "held ...") -> the answer that showed it landed
    out = []
    flagged: set[int] = set()
    for i in keyed(history, "owners/", "record_reply"):
        e = ev[i]
        f = e.fields
        if not str.startswith(f.state or "", "held "):
            continue
        k = (e.proc, f.key, f.state)
        if f.op != "PUT":
            if f.status == "ok":
                known.setdefault(k, i)  # a read showing the hold (OR-7's read-back): the process knows it holds
            continue
        first = known.get(k)
        # a write of a hold the process knew had landed (acknowledged, or read back) is a renewal; the same
        # state written again after a write it never learnt of is a new acquisition at the same generation
        if first is not None and ev[first].t_ms <= f.sent_ms and e.proc not in flagged:
            flagged.add(e.proc)
            out.append(Violation("COST-5", (
                f"{history.processes[e.proc].label} wrote {f.key} as \"{f.state}\" again, sent at "
                f"{_s(f.sent_ms)}, once it knew that hold's record had landed ({_s(ev[first].t_ms)}): a renewal "
                f"(renewals disappear: a hold costs its acquisition and release, not its length)"), (first, i)))
        if f.status == "ok":
            known.setdefault(k, i)
    return out


# --- COST-6 ---------------------------------------------------------------------------------------------


@invariant("COST-6", "two lease writes after the last acknowledged one before a lease runs out",
           kind="safety", rules=("COST-6", "T-4", "NL-3"), ledger=True)
def check_two_retries(history: History) -> list[Violation]:
    """Judged on the ledger and the answers each process got: a lease that runs out (A <= P, 2 P < ttl -
    safety) had two lease writes sent after its last acknowledged one (section 5)."""
    return [v for v, _margin in _run_outs(history) if v is not None]


def _run_outs(history: History) -> list[tuple[Violation | None, int]]:
    """Each judged run-out: (its violation or None, the writes sent in its span)."""
    if not history.requests:
        return []
    return once(history, "cost_run_outs", lambda: _judge_run_outs(history))


def _judge_run_outs(history: History) -> list[tuple[Violation | None, int]]:
    run = run_of(history)
    p_ = history.params
    period = min(p_["heartbeat_period_ms"], p_["ttl_ms"] // 3)
    span = p_["ttl_ms"] - p_["safety_ms"]
    if p_["attempt_timeout_ms"] > period or 2 * period >= span:
        return []  # not the ADR's arithmetic: the claim does not apply
    ev = history.events
    acks: dict[int, list[tuple[int, int, int]]] = {}  # proc -> (answered at, written_at on its clock, event)
    for i in keyed(history, "nodes/", "record_reply"):
        e = ev[i]
        f = e.fields
        proc = history.processes[e.proc] if e.proc >= 0 else None
        if proc is None or f.key != "nodes/" + proc.node_id or f.status != "ok":
            continue
        parts = (f.state or "").split(" ")
        if len(parts) != 3 or parts[0] != "live" or parts[1] != proc.instance:
            continue
        if f.op == "GET" and (e.proc, f.key, f.sent_ms) not in run.rereads:
            continue  # (NL-9's re-read showing its own live write is an acknowledgement too; the start check's is not)
        acks.setdefault(e.proc, []).append((e.t_ms, int(parts[2]), i, f.sent_ms))
    out = []
    for p in run.node_procs():
        proc = history.processes[p]
        clock = proc.clock
        end = min(run.ended.get(p, history.end_ms), run.stop_told.get(p, history.end_ms), history.end_ms)
        # (validity end on its clock, the written_at it came from, the event, how long after the write's send
        # the process learned of it)
        until = None
        runs: list[tuple[int, int, int, int]] = []
        for t, written_at, i, asked in acks.get(p, ()):
            if until is not None and (not runs or runs[-1][2] != until[2]):
                r = clock.ends_at(until[0])
                if r <= t and r < end:
                    runs.append((r, until[1], until[2], until[3]))  # (each validity runs out once)
            if (until is None or written_at + span > until[0]) and clock.ends_at(written_at + span) > t:
                until = (written_at + span, written_at, i, t - clock.true_at(written_at))  # (learned after it
                # ended, it granted nothing)
        if until is not None and (not runs or runs[-1][2] != until[2]):
            r = clock.ends_at(until[0])
            if r < end:
                runs.append((r, until[1], until[2], until[3]))
        lease_writes = [r for r in run.by_proc.get(p, ()) if r.sent.op == "PUT" and r.key_class == "nodes/<own>"]
        for r_ms, written_at, i, late in runs:
            s = clock.true_at(written_at)
            if run.paused(p, s, r_ms) or run.stepped(p, s, r_ms) or late > p_["attempt_timeout_ms"]:
                continue  # (acknowledged later than an attempt after its send, by NL-9's re-read: the ADR's
                # "after a write acknowledged at t, the next go at t + 3" has a whole attempt less here)
            sent = [w for w in lease_writes if s < w.sent.sent_ms < r_ms]
            key = "nodes/" + proc.node_id
            if any(q == p and k == key and s < at < r_ms for q, k, at in run.rereads):
                out.append((None, len(sent)))  # (a write refused, NL-9's re-read in flight when the next go was
                continue  # due: the ADR's arithmetic counts attempts that time out, not a refusal and its re-read)
            if len(sent) >= 2:
                out.append((None, len(sent)))
                continue
            out.append((Violation("COST-6", (
                f"{proc.label}'s lease ran out at {_s(r_ms)} with {len(sent)} lease write(s) sent after the last "
                f"acknowledged one (sent at {_s(s)}), at P = {period} ms and A = {p_['attempt_timeout_ms']} ms: two "
                f"retries in practice before a lease runs out (section 5)"
                + (": " + ", ".join(desc(w) for w in sent) if sent else "")), (i, *run.anchors(sent))), len(sent)))
    return out
