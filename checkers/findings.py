"""Known findings about the protocol: violations the correct model, faithful to ADR 0020, can
reach because the ADR allows them.

A finding is shown, never hidden: the world keeps the faults that produce it, every campaign
counts the seeds in which it appeared (`protocol_findings` in the report), and `--strict`
makes them fail the run. Each has an id, the ADR text it concerns, a scripted reproduction
(a test), and a classifier that recognises it in a history by its cause: the causal chain its
docstring states, read from world facts, never its preconditions alone (a real bug that meets
them would be counted as the finding and pass). And only within the chain's scope: a violation is
the finding's when its processes, keys and instants are the ones the chain names (the same
process, the same record, the write the chain lost), whatever else happened in the run (issue 36:
a classifier that took "any violation on that node" or "any lost write" let real bugs pass). A
violation that matches no finding fails the run as always; tests/checkers/test_findings.py feeds
each classifier a reproduction doctored to keep the preconditions without the cause
(`test_<id>_without_its_cause_is_a_violation_*`), and each finding's reproduction beside an
unrelated bug whose violation must fail the run (`test_<id>_beside_*`).

Issue 44: each classifier returns its chain (`Chain`): its cause as the run's plan holds it, its window
and its scope; a violation is the finding's only when every event it names lies inside them (`covers`),
and every premise is a world fact (`record_reply`, deliveries, applied writes, the cadence of the writes
sent), never a timer standing in for one. Each classifier's docstring lists its premises ("Premises, world
facts:"; docs/findings.md shows them). A driver that can replay the run also requires the chain's cause to
be necessary (counterexamples/necessity.py, through checkers/verdict.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from .facts import act_actor, facts, sent_ms
from .records_converge import known_own_lease
from history import History, Violation
from .drain_ends import judged_until
from .records import old_heartbeat
from .start_guard import check as _up2


@dataclass(frozen=True)
class Cause:
    """One fault of a chain's cause, as the run's plan holds it (scenarios/plan.py): a scheduled entry of a
    fault kind (`kind`: "deletes", "twins", "blip", ...; naming `node`, or started on `machine`, at or before
    `to_ms`), or a request's drawn fate (`kind` ""; the request `request`, "<op> <key>", sent by `machine`,
    decided in [from_ms, to_ms]). The necessity replay (counterexamples/necessity.py) removes it as the
    shrinker removes a fault."""

    what: str  # in words, for a message: "the mistaken delete of nodes/n1 at 20.900 s"
    kind: str = ""
    node: str = ""
    machine: str = ""
    request: str = ""
    from_ms: int = 0
    to_ms: int = 0


@dataclass(frozen=True)
class Chain:
    """A finding's causal chain as one history shows it, on world facts: its window (from its cause,
    `since_ms`, to `until_ms`) and its scope (the processes `procs`, the actors `actors`: None, any). A
    violation is the finding's only when every event it names lies inside both (`covers`), but the chain's
    own events (`given`: the fence it meets, the record it frees, the window it overlaps, which came before
    the cause by the chain's own order). `cause`: the faults whose removal must remove the violation (the
    necessity replay)."""

    finding: str
    since_ms: int
    procs: frozenset
    actors: frozenset | None = None
    until_ms: int | None = None
    given: frozenset = frozenset()
    cause: tuple = ()

    def covers(self, history: History, v: Violation) -> bool:
        events = history.events
        for i in v.events:
            if i in self.given:
                continue
            if not 0 <= i < len(events):
                return False
            e = events[i]
            if e.t_ms < self.since_ms or (self.until_ms is not None and e.t_ms > self.until_ms):
                return False
            if e.proc >= 0 and e.proc not in self.procs:
                return False
            if self.actors is not None and not event_actors(e) <= self.actors:
                return False
        return True


@dataclass(frozen=True)
class Finding:
    id: str
    title: str
    invariants: tuple[str, ...]  # the invariants its violations are reported under
    adr: str  # the ADR text it concerns
    reproduction: str  # the test that reproduces it on a script
    chain: Callable[[History, Violation], Chain | None]  # its chain in a history, for one violation

    def matches(self, history: History, v: Violation) -> bool:
        """Does this finding explain `v`: its chain holds, and covers every event `v` names."""
        c = self.chain(history, v)
        return c is not None and c.covers(history, v)

    @property
    def premises(self) -> list[str]:
        """The world facts its chain rests on, as its classifier's docstring lists them ("Premises, world
        facts:" then one "- " line each)."""
        doc = self.chain.__doc__ or ""
        if "Premises" not in doc:
            return []
        out: list[str] = []
        for line in doc.split("Premises", 1)[1].splitlines()[1:]:
            line = line.strip()
            if str.startswith(line, "- "):
                out.append(line[2:])
            elif out and line:
                out[-1] += " " + line
            elif out:
                break
        return out


def event_actors(e) -> set[str]:
    """The actors one event concerns: an act's or a claim's actor, a record's or a data key's."""
    f = e.fields
    actor = getattr(f, "actor", None)
    key = getattr(f, "key", None) or ""
    if isinstance(actor, str):
        return {actor}
    if str.startswith(key, ("owners/", "leases/")):
        return {key.split("/", 1)[1]}
    if str.startswith(key, "wal/"):
        return {act_actor(key)}
    return set()


def _procs_of(history: History, v: Violation) -> set[int]:
    events = history.events
    return {events[i].proc for i in v.events if 0 <= i < len(events) and events[i].proc >= 0}


def _actors_of(history: History, v: Violation) -> set[str]:
    """The actors a violation's events concern: an act's or a claim's actor, a record's or a data key's."""
    out: set[str] = set()
    for i in v.events:
        out |= event_actors(history.events[i])
    return out


def _twin_straddles_delete(history: History, v: Violation) -> Chain | None:
    """F-1 by its cause, never by its preconditions alone (a delete of nodes/n somewhere, a process of
    n whose check began before it), nor by the node a violation is about. The chain it must see in
    world facts, all on one key nodes/n:

    1. a mistaken delete (`fault_delete`) removed the `live` object of a process p of n (the last
       write on the key before the delete was p's);
    2. nothing changed the key from the delete to a live write of another process q of n that landed
       on no object (prev serial 0): q's write took the key the delete emptied (NL-5, NL-7: its
       check found no object, or its If-None-Match was sent before the delete and held back);
    3. q had started before the delete (its start check straddled it: the other's object was
       written, and deleted, between two of its reads, or before its write landed);

    then one of its two consequences, the violation naming exactly what the chain names:

    4. LEASE-1, the two windows of n's lease it reports being p's window opened before the delete
       and q's window holding the instant q's write landed (both held n's lease); or
    5. INV-1 or INV-8 about one actor X, between p and a process r (of another node, or q itself):
       after q's object landed, and while it was still the key's last change, r replaced X's record
       naming p's instance (FN-5: `live` naming another instance frees at once) inside one of p's
       lease windows from before the delete, and the violation's events are p's and r's, about X,
       from q's landing to the end of that window of p (two owners act; found by the F-1 variants,
       issue 31): a violation of that actor from before the delete, or after p's old window ended
       (a new hold, a new lease window), is not F-1's (issue 44).

    Anything else in such a run (a violation of another process of n, of another actor, of another
    invariant) is not F-1's: it fails the run.

    Premises, world facts:
    - `fault_delete` of nodes/n while its last applied write was p's `live` object (the delete, the cause);
    - an `apply` of q's `live` write on nodes/n with no previous object, the key unchanged since the delete;
    - q's `start` before the delete;
    - LEASE-1: p's lease window (from its applied live writes) open before the delete, q's holding q's landing;
    - INV-1/INV-8: r's `apply` on owners/X over a record naming p, after q's landing while q's object was
      nodes/n's last change, inside p's window from before the delete; the violation's events p's and r's,
      about X, from q's landing to that window's end (p's record and r's hold as the chain's own events)."""
    if v.invariant not in ("LEASE-1", "INV-1", "INV-8"):
        return None
    involved = _procs_of(history, v)
    fx = facts(history)
    for node, p, q, landed, td, _delete in _straddles(history):
        before = [(s, e, i) for s, e, i in fx.lease.get(p, ()) if s < td]
        cause = (Cause(f"the mistaken delete of nodes/{node} at {td / 1000:.3f} s", "deletes", node=node, to_ms=td),)
        if v.invariant == "LEASE-1":  # (4)
            mine_q = [(s, e, i) for s, e, i in fx.lease.get(q, ()) if s <= landed < e]
            for s, e, i in mine_q:
                for s2, e2, i2 in before:
                    if set(v.events) == {i, i2} and s < e2 and s2 < e:
                        return Chain("F-1", td, frozenset((p, q)), None, None, frozenset((i, i2)), cause)
        elif p in involved:  # (5)
            actors = _actors_of(history, v)
            for actor, r, opened, closed, window_end in _freed_records(history, node, p, q, landed, before):
                if involved <= {p, r} and actors <= {actor}:
                    given = frozenset(x for x in (opened, closed) if x is not None)
                    chain = Chain("F-1", landed, frozenset((p, r)), frozenset((actor,)), window_end, given, cause)
                    if chain.covers(history, v):
                        return chain
    return None


def _straddles(history: History):
    """(node, p, q, when q's write landed, when the delete was, the delete's event) for each chain (1)-(3)
    of F-1."""
    procs = history.processes
    starts = {p: t for t, p, kind, _f in history.events if kind == "start"}
    events = history.events
    by_node: dict[str, dict[str, int]] = {}
    for k, pr in enumerate(procs):
        by_node.setdefault(pr.node_id, {})[pr.instance] = k
    state: dict[str, str] = {}  # nodes/ key -> the object on it as the world knows it
    deleted: dict[str, tuple[int, int, int]] = {}  # key -> (when, whose live object, event) of a delete, its last change
    for i in history.of_kind("apply", "fault_delete", "fault_put"):
        t, q, kind, f = events[i]
        if not str.startswith(f.key, "nodes/"):
            continue
        key = f.key
        node = key[len("nodes/"):]
        mine = by_node.get(node, {})
        if kind == "fault_delete":
            parts = state.get(key, "").split(" ")
            owner = mine.get(parts[1]) if parts[0] == "live" and len(parts) == 3 else None
            if owner is None:
                deleted.pop(key, None)
            else:
                deleted[key] = (t, owner, i)  # (1)
            state[key] = ""
            continue
        d = deleted.pop(key, None)
        if (kind == "apply" and d is not None and q >= 0 and q != d[1] and q in mine.values()
                and not f.prev_serial and str.startswith(f.state, f"live {procs[q].instance} ")  # (2)
                and starts.get(q, t) <= d[0]):  # (3)
            yield node, d[1], q, t, d[0], d[2]
        state[key] = f.state if kind == "apply" else "old"


def _freed_records(history: History, node: str, p: int, q: int, landed: int, before):
    """(5): (actor, r, the event that wrote the record naming p, the event that ended r's hold begun by its
    write, the end of p's window it fell in) for each owners/ record naming p's instance that a process r
    other than p replaced after q's object landed on nodes/<node>, while that object was still the key's
    last change, inside one of p's lease windows from before the delete."""
    procs = history.processes
    events = history.events
    key = "nodes/" + node
    p_names = f" {node} {procs[p].instance} "
    q_live = f"live {procs[q].instance} "
    last_on_key = None  # the latest change of nodes/<node> seen so far: (its writer, its state)
    last_write: dict[str, int] = {}  # owners/ key -> the event of its last applied write
    out = []
    fx = facts(history)
    for i in history.of_kind("apply", "fault_delete", "fault_put"):
        t, r, kind, f = events[i]
        if f.key == key:
            last_on_key = (r, f.state if kind == "apply" else "")
            continue
        opened = last_write.get(f.key)
        if kind == "apply":
            last_write[f.key] = i
        if (kind != "apply" or t < landed or not str.startswith(f.key, "owners/") or r < 0 or r == p
                or p_names not in f" {f.prev_state} "):
            continue
        if last_on_key is None or last_on_key[0] != q or not str.startswith(last_on_key[1], q_live):
            continue
        for s, e, _i in before:
            if s <= t < e:
                closed = next((h.closed for h in fx.holds if h.opened == i), None)
                out.append((f.key[len("owners/"):], r, opened, closed, e))
    return out


def _lost_acquire_writes(history: History, p: int, before: int) -> dict[str, int]:
    """owners/ key -> when process p's acquisition write of it (OR-3: its body names p) was lost before
    `before` (the request never reached the bucket: lost on the way, or failed fast, refused before
    sending; seed 6445 of the 20,000-seed sweep) or answered 409 (a conflict: not applied; seed 854 of a
    2,000-seed sweep), and the record did not change from then to `before`: OR-7's unresolved acquire,
    which OR-8's resolver reads until the record changes. A lost release (`nobody`) is not one: a
    pending release keeps writing (OR-5), it has no unbounded read."""
    lost: dict[str, int] = {}
    procs = history.processes
    for t, q, kind, f in history.events:
        if t >= before:
            break
        key = _lost_acquisition(procs, p, q, kind, f)
        if key is not None:
            lost.setdefault(key, t)
        elif kind == "apply" and f.key in lost:
            del lost[f.key]  # it changed: no entry of it is left to read
    return lost


def _lost_acquisition(procs, p: int, q: int, kind: str, f) -> str | None:
    """The owners/ key of process p's acquisition write (its state `held <p's node> <p's instance> <g>`,
    OR-3) this event says never landed (lost on the way, failed fast, answered 500/503 at once, or answered
    409), else None."""
    if q != p:
        return None
    if kind == "fault" and f.what in ("request_lost", "fail_fast", "fast_5xx") \
            and str.startswith(f.target, "PUT owners/"):
        key = f.target[len("PUT "):]
    elif kind == "conflicted" and f.op == "PUT" and str.startswith(f.key, "owners/") and f.racing_proc is not None:
        # a 409 only while another conditional write to the record was in flight (issue 47: AWS's answer to a
        # conflicting operation); one with nothing in flight is no store's answer, and no cause of F-2's
        key = f.key
    else:
        return None
    parts = (f.state or "").split(" ")
    pr = procs[p]
    return key if len(parts) == 4 and parts[0] == "held" and parts[1:3] == [pr.node_id, pr.instance] else None


def _reads(history: History, p: int, key: str, start: int, end: int) -> bool:
    """The world saw process p send a read of `key` in [start, end] (`sent`: recorded while it drains
    and in the quiet phase's last span): the resolver is reading exactly that record."""
    events = history.events
    return any(start <= events[i].t_ms <= end and events[i].proc == p and events[i].fields.op == "GET"
               and events[i].fields.key == key for i in history.of_kind("sent"))


def _first_change(history: History, key: str, after: int) -> int | None:
    return next((t for t, _q, kind, f in history.events if t >= after and kind == "apply" and f.key == key), None)


def _naming(history: History, p: int, at: int) -> set[str]:
    """The owners/ keys whose record named process p (its node and instance) at true time `at`, as the
    bucket applied them."""
    pr = history.processes[p]
    mine = f"held {pr.node_id} {pr.instance} "
    state: dict[str, bool] = {}
    events = history.events
    for i in history.of_kind("apply", "fault_delete"):
        t, _q, kind, f = events[i]
        if t > at:
            break
        if str.startswith(f.key, "owners/"):
            state[f.key] = kind == "apply" and str.startswith(f.state, mine)
    return {k for k, named in state.items() if named}


def _resolver_reads_an_unchanged_record(history: History, v: Violation) -> Chain | None:
    """F-2 by its cause, never by its preconditions alone, nor by any lost write to a record. The chain
    it must see in world facts: a process's *acquisition* lost its record write (the write carried
    `held <its node> <its instance> <g>`: `_lost_acquire_writes`; a lost release is not F-2), the record
    never changed since, and the process is seen reading exactly that record where it is blocked
    (OR-8's resolver, which has no bound). The record the lost write would have replaced did not name the
    process itself: over its own record, its own pending release of it (OR-5, retried until it lands)
    would change it, so a record that stays frozen under its own name is a release never retried, not an
    unresolved acquire (issue 44).

    - INV-11: the drained process is the one whose acquisition write was lost before the drain was
      judged (at the drain, or at the faults' end for a drain told with faults around it), it read that
      record during the drain's bound, and the record stayed unchanged to the bound (the drain never
      ends), or changed and the drain reported drained only then, within the resolver's next read (two
      attempt timeouts): the entry held it to that change (calm seed 5 at c9ba6c3, kept as a plan). And
      nothing else held the drain: when it is judged (the bound, or the report), no other record names
      the process (a release that never landed is another reason, not F-2's).
    - CONV-1: the blocker is a process reading an owners/ record whose acquisition write it lost, and
      that record did not change from the loss to its reads (but for the one read after a change that
      decides).

    Premises, world facts:
    - a `fault` (request_lost, fail_fast, fast_5xx) or a `conflicted` answer on p's PUT of owners/X whose
      state names p (an acquisition, OR-3), not applied: the cause; a 409 only with the conditional write to
      owners/X it raced in flight (`racing_proc`, issue 47), which the cause names;
    - the last `apply` on owners/X before it did not name p's instance (no release of p's own could end it);
    - no `apply` on owners/X from the loss to the instant judged (but for the read after a change that decides);
    - INV-11: p's `sent` reads of owners/X during the drain's bound, and no other record naming p when judged;
    - CONV-1: the violation's events are exactly p's `sent` reads of owners/X, after the loss."""
    events = history.events
    params = facts(history).params
    procs = history.processes
    if v.invariant == "CONV-1":
        sent = [events[i] for i in v.events if events[i].kind == "sent"]
        if not sent or len(sent) != len(v.events):
            return None
        p, key, first, last = sent[0].proc, sent[0].fields.key, sent[0].t_ms, sent[-1].t_ms
        if any(e.proc != p or e.fields.op != "GET" or e.fields.key != key for e in sent) \
                or not str.startswith(key, "owners/"):
            return None
        # the last loss of p's acquisition write of that record before the reads (whatever changed it since:
        # the reads are judged against the first change after the loss)
        losses = [t for t, q, kind, f in events if t < first and _lost_acquisition(procs, p, q, kind, f) == key]
        if not losses or _names(history, key, losses[-1], p):
            return None
        tc = _first_change(history, key, losses[-1])
        # unchanged while it read, but for the resolver's next read after a change (its back-off, the read)
        if tc is None or last <= tc + 2 * params.attempt_timeout_ms:
            return Chain("F-2", losses[-1], frozenset((p,)), frozenset((key[len("owners/"):],)),
                         cause=(_lost_cause(history, p, key, losses[-1]),))
        return None
    if v.invariant != "INV-11" or not v.events:
        return None
    td, p = events[v.events[0]].t_ms, events[v.events[0]].proc
    t0 = events[v.events[1]].t_ms if len(v.events) > 1 else td  # judged from the faults' end
    # the instant INV-11 judged it: its bound's end, past the events the process still ran (seed 3089 of
    # the 20,000: a release that waited on a running event until after ttl + grace + A from the faults' end)
    end = judged_until(history, v)
    drained_at = next((t for t, q, kind, _f in events[v.events[0]:] if q == p and kind == "drained"), None)
    # the drain ended without a report (the world resumed or stopped it, the process ended)
    ended_at = next((t for t, q, kind, f in events[v.events[0] + 1:] if q == p and (
        kind in ("exit", "crash") or kind == "told" and f.command in ("resume", "stop"))), None)
    slack = 2 * params.attempt_timeout_ms  # the resolver's next read after a change: its back-off, and the read
    lost = _lost_acquire_writes(history, p, t0)
    for key, t_lost in lost.items():
        if _names(history, key, t_lost, p) or not _reads(history, p, key, td, end):
            continue  # over its own record, or not waiting on that entry
        tc = _first_change(history, key, t0)
        if tc is None or tc > end:
            judged_at = end  # unchanged to the bound: the drain waits for ever (OR-8 has no bound)
        elif tc > end - slack and drained_at is None and ended_at is not None and ended_at <= tc + slack:
            # changed so close to the bound that the drain was ended (resumed, stopped) before the
            # resolver's next read, which would have decided: it waited on that entry to the end
            judged_at = ended_at
        elif drained_at is not None and tc <= drained_at <= tc + slack:
            judged_at = tc  # drained only once another's write changed the record the entry read
        else:
            continue
        if _naming(history, p, judged_at) <= set(lost):
            # the drain's own events (told, the faults' end) define the violation, whenever they came
            return Chain("F-2", t_lost, frozenset((p,)), frozenset((key[len("owners/"):],)),
                         given=frozenset(v.events), cause=(_lost_cause(history, p, key, t_lost),))
    return None


def _names(history: History, key: str, at: int, p: int) -> bool:
    """The record `key` as the bucket last applied it before true time `at` names process p's instance."""
    pr = history.processes[p]
    events = history.events
    state = ""
    for i in history.of_kind("apply", "fault_delete"):
        if events[i].t_ms >= at:
            break
        if events[i].fields.key == key:
            state = events[i].fields.state if events[i].kind == "apply" else ""
    return str.startswith(state, f"held {pr.node_id} {pr.instance} ")


def _lost_cause(history: History, p: int, key: str, t: int) -> Cause:
    """The drawn fate that lost p's write of `key` at true time t (its request's way to the bucket, or the
    bucket's 409, naming the conditional write it raced), decided at most an attempt timeout and a network
    delay before."""
    a = facts(history).params.attempt_timeout_ms + history.options.get("delay_ms_max", 0)
    pr = history.processes[p]
    raced = ""
    for i in history.of_kind("conflicted"):
        e = history.events[i]
        if e.t_ms == t and e.proc == p and e.fields.key == key and e.fields.racing_proc is not None:
            other = history.processes[e.fields.racing_proc]
            raced = (f" (answered 409 while {other.label}'s conditional write of it, sent at "
                     f"{e.fields.racing_sent_ms / 1000:.3f} s, was in flight)")
            break
    return Cause(f"the loss of {pr.label}'s acquisition write of {key} at {t / 1000:.3f} s{raced}", node=pr.node_id,
                 machine=pr.machine, request="PUT " + key, from_ms=t - a, to_ms=t)


def _removed(history: History, key: str, fence: str, writer: int, after: int, until: int) -> int | None:
    """When the fence `fence` on `key` was gone (deleted by mistake, or written over by another
    process than `writer`) after event `after` and no later than true time `until`, if it was."""
    for t, q, kind, f in history.events[after + 1:]:
        if t > until:
            break
        if kind == "fault_delete" and f.key == key or kind == "apply" and f.key == key and q != writer \
                and f.prev_state == fence:
            return t
    return None


def _unacknowledged(history: History, p: int, w) -> bool:
    """Process p never learnt its live write `w` landed: no answer the world delivered to it showed that write
    (its acknowledgement, or NL-9's re-read showing it: `known_own_lease`, on `record_reply`), whatever its
    timing. A first write after the start check that p never learnt of leaves p in its check, keeping its
    instance (NL-7). (Before issue 44 this was a timer standing in for the fact: applied past A, or a reply
    fault noted on it.)"""
    return not any(q == p and written_at == w.written_at_ms for q, _t, written_at in _known(history))


def _known(history: History) -> list[tuple[int, int, int]]:
    return history.cache.setdefault("findings_known_own_lease", known_own_lease(history))


def _check_reads(history: History, p: int, after: int, until: int) -> list[tuple[int, str]]:
    """(answered at, the state shown: "" absent) of each read of p's own nodes/ key sent after true time
    `after` and answered by `until` with an object or its absence (`record_reply`), but NL-9's re-reads (the
    first read sent at or after a lease write of p was answered otherwise than ok: a first write's re-read
    sends p back to its check whatever it shows, NL-7; the check's own reads decide, NL-10)."""
    events = history.events
    key = "nodes/" + history.processes[p].node_id
    out = []
    reread_from = None  # a failed lease write's answer: the next read sent from then is NL-9's
    for i in history.of_kind("record_reply"):
        t, q, _kind, f = events[i]
        if t > until:
            break
        if q != p or f.key != key:
            continue
        if f.op == "PUT":
            reread_from = t if f.status != "ok" else None
            continue
        if reread_from is not None and f.sent_ms >= reread_from:
            reread_from = None
            continue
        if f.sent_ms > after and f.status in ("ok", "not_found"):
            out.append((t, f.state if f.status == "ok" else ""))
    return out


def _unanswered_writes(history: History, p: int, until: int) -> list:
    """p's live writes that landed by true time `until`, if p never learnt of any of them (no answer delivered
    to it showed one: each sent it back to its start check keeping its instance, NL-7); [] otherwise."""
    writes = [w for w in facts(history).live_writes.get(p, ()) if w.applied_ms <= until]
    return writes if all(_unacknowledged(history, p, w) for w in writes) else []


def _in_its_check(history: History, p: int, fence: int):
    """Process p was back in its start check when the fence (event `fence`) landed over the object of
    its last live write before it, and p never learnt of any of those writes. One write (the late first
    write after its check), or more (seed 13963 of the 20,000-seed sweep with the pause draw: two writes of
    the check whose answers never came, then a third met the fence and its 412 came too late). Returns that
    last write (the one the fence replaced), or None."""
    events = history.events
    writes = _unanswered_writes(history, p, events[fence].t_ms)
    if not writes or events[fence].fields.prev_state != events[writes[-1].event].fields.state:
        return None
    return writes[-1]


def _met_in_its_check(history: History, j: int):
    """INV-10's second clause under F-3: the write of process p that met the fence naming it (event j,
    refused) was sent from its start check, so a refusal sent it back there (NL-7) rather than to NL-9's
    re-read: every live write of p that landed before it was one p never learnt of, and the fence it met
    replaced the object one of them left (p's own late write, fenced by a peer or the operator). Returns
    (the fence's event, p's write it replaced), or None."""
    events = history.events
    _t, p, _kind, f = events[j]
    writes = _unanswered_writes(history, p, sent_ms(events[j]))
    if not writes:
        return None
    fence = next((i for i in reversed(history.of_kind("apply")) if i < j and events[i].fields.key == f.key), None)
    if fence is None or events[fence].fields.state != f.met:
        return None
    w = next((w for w in writes if events[fence].fields.prev_state == events[w.event].fields.state), None)
    return None if w is None else (fence, w)


def _f3_cause(history: History, p: int, w, key: str, fence: int, gone_at: int) -> tuple:
    """F-3's cause as the plan holds it: the fate that kept p from learning that the write the fence replaced
    landed (late, its reply lost or slowed), and what took the fence away (the mistaken delete, or the twin
    that wrote over it)."""
    pr = history.processes[p]
    events = history.events
    node = key[len("nodes/"):]
    out = [Cause(f"the fate of {pr.label}'s write of {key} sent at {w.sent_ms / 1000:.3f} s, the fence's object",
                 machine=pr.machine, request="PUT " + key, from_ms=w.sent_ms, to_ms=w.applied_ms)]
    remover = next((i for i in history.of_kind("apply", "fault_delete") if events[i].t_ms == gone_at
                    and events[i].fields.key == key and i > fence), None)
    if remover is not None and events[remover].kind == "fault_delete":
        out.append(Cause(f"the mistaken delete of {key} at {gone_at / 1000:.3f} s", "deletes", node=node,
                         to_ms=gone_at))
    elif remover is not None and events[remover].proc >= 0:
        m = history.processes[events[remover].proc].machine
        kind = "twins" if str.startswith(m, "t") else "deletes" if str.startswith(m, "r") else ""
        if kind:
            out.append(Cause(f"the process on {m} that wrote over the fence at {gone_at / 1000:.3f} s", kind,
                             node=node, machine=m, to_ms=gone_at))
    return tuple(out)


def _fence_gone_before_read(history: History, v: Violation) -> Chain | None:
    """F-3 by its cause, never by its preconditions alone (a live write over something else than the
    fence, or a meeting with a fence that someone changed some time later). Two forms.

    Written live again over the fence (INV-10's first clause). The chain it must see in world facts:
    1. every live write of p before the fence (its first after its start check, and any later one the
       check sent again) was one p never learnt of (no answer delivered to it showed it: its reply lost,
       or timed out, and no re-read showing it): p went back to its start check keeping its instance
       each time (NL-7) (`_in_its_check`);
    2. a peer (FN-3) or the operator (FN-7) fenced the object the last of them left;
    3. the fence was gone before the check read it: deleted by mistake, or written over by another
       process (a twin or a replacement), between the fence's landing and p's live write, and no read of
       its check the world delivered to p in that span showed the fence;
    4. p's live write landed over what replaced the fence, never over the fence naming it.

    Met its fence, which was gone before the check re-read it (INV-10's second clause; seed 13073 of
    the 20,000-seed sweep): p's write, sent from its start check (every live write of p before it was
    one p never learnt of, and the fence replaced the object one of them left: `_met_in_its_check`),
    was refused by the fence naming it (a 412 does not say what it met), so p went back to its start
    check (NL-7); the fence was deleted, or another process (a twin) wrote over it, before the first read of
    p's check after the refusal was answered, and no read of its check showed the fence (NL-9's re-read
    sends a first write back to the check whatever it shows, NL-7): p never learns it was fenced, runs on, and may write live again over what replaced the fence and act. A running process
    (one that had learnt of a live write of its own) that meets its fence re-reads (NL-9) and exits,
    whatever happens to the fence after: not F-3. (Before issue 44 "before the check re-read it" was a
    timer of 2 A; the world records the reads.)

    Premises, world facts:
    - p's live writes before the fence (`apply`), none of them shown to p by any `record_reply` (its
      acknowledgement, or NL-9's re-read);
    - the fence's `apply` over the object the one of them left (by a peer or the operator);
    - a `fault_delete` of the key, or another process's `apply` over the fence, before p's live write (first
      form) or before the first read of p's check sent after its refused write was answered (second form);
    - no read of its check (`record_reply`, but NL-9's re-read) delivered to p showing the fence, from its
      landing to p's live write (first form), or from the refusal to the run's end (second form);
    - the violation's events are p's (the fence's as the chain's own), from the fence's landing on."""
    if v.invariant != "INV-10" or not v.events:
        return None
    ev = history.events
    j = v.events[0]
    if ev[j].kind == "refused" and str.startswith(ev[j].fields.met, "fenced "):
        p, key, fence = ev[j].proc, ev[j].fields.key, ev[j].fields.met
        met = _met_in_its_check(history, j)
        if met is None:
            return None  # a running process met its fence: NL-9's re-read tells it, whatever happens next
        fence_i, w = met
        # (to the run's end: the violation may name only the meeting, judged 2 A after it)
        reads = _check_reads(history, p, sent_ms(ev[j]), history.end_ms)
        gone = _removed(history, key, fence, p, j, reads[0][0] if reads else history.end_ms)
        if gone is None or any(state == fence for _t, state in reads):
            return None
        return Chain("F-3", ev[fence_i].t_ms, frozenset((p,)), None, None, frozenset((fence_i,)),
                     _f3_cause(history, p, w, key, fence_i, gone))
    if len(v.events) != 2:
        return None
    i = v.events[1]
    if ev[j].kind != "apply" or ev[i].kind != "apply":
        return None
    p, key, fence = ev[i].proc, ev[j].fields.key, ev[j].fields.state
    w = _in_its_check(history, p, j)  # (1), (2)
    if w is None:
        return None
    gone = _removed(history, key, fence, p, j, ev[i].t_ms)
    if gone is None or any(state == fence for _t, state in _check_reads(history, p, ev[j].t_ms, ev[i].t_ms)):  # (3)
        return None
    # (4): over what the last change before it left, never over the fence
    last = next((f for t, _q, kind, f in reversed(ev[j:i]) if kind in ("apply", "fault_delete", "fault_put")
                 and f.key == key), None)
    if ev[i].fields.prev_state == fence:
        return None
    chain = Chain("F-3", ev[j].t_ms, frozenset((p,)), None, None, frozenset((j,)),
                  _f3_cause(history, p, w, key, j, gone))
    if last is not None and not hasattr(last, "state"):
        return chain  # bytes written outside the protocol (an old binary): the world does not know their state
    return chain if ev[i].fields.prev_state == ("" if last is None else last.state) else None


def _blip_span(history: History) -> tuple[int, int]:
    """(start, end) in true time of the run's global blip: from the world's `outage` of every machine
    ("*") to its end as recorded, or the quiet phase's start if that came first (it ends every cut)."""
    start = history.options["blip"][0]
    start += history.options["upgrade"]["new_at"] if history.options.get("upgrade") else 0
    events = history.events
    end = start + history.options["blip"][1]
    for i in history.of_kind("outage"):
        if events[i].t_ms >= start and events[i].fields.machine == "*":
            end = events[i].fields.until_ms
            break
    quiet = next((events[i].t_ms for i in history.of_kind("quiet")), None)
    return start, end if quiet is None or quiet < start else min(end, quiet)


def _blip_fence(history: History, v: Violation):
    """(blip start, blip end, fencer, fenced process, fence event) of an INV-9 violation that is a fence,
    or the exit that fence caused: the fenced process's failed exit after the fence landed, while the fence
    was still the object on its key (the process met it: a write refused, or its check's read, NL-10)."""
    if v.invariant != "INV-9" or not v.events:
        return None
    events = history.events
    j = v.events[0]
    t, who, kind, f = events[j]
    if kind == "exit" and who >= 0:
        pr = history.processes[who]
        key = "nodes/" + pr.node_id
        last = next((i for i in reversed(history.of_kind("apply", "fault_delete", "fault_put"))
                     if i < j and events[i].fields.key == key), None)
        if last is None or events[last].kind != "apply" \
                or not str.startswith(events[last].fields.state, f"fenced {pr.instance} "):
            return None
        j = last
        t, who, kind, f = events[j]
    if kind != "apply" or not str.startswith(f.state, "fenced ") or who < 0:
        return None
    if not _fence_waited(history, j):
        return None
    start, end = _blip_span(history)
    fenced_inst = f.state.split(" ")[1]
    fenced = next((k for k, pr in enumerate(history.processes)
                   if pr.instance == fenced_inst and f.key == "nodes/" + pr.node_id), None)
    return None if fenced is None else (start, end, who, fenced, j)


def _fence_waited(history: History, j: int) -> bool:
    """The fence (event j) was sent once the object's kept written_at + ttl + grace had passed on the
    fencer's clock (FN-3's bound: B may fence A only then; F-4 and F-5 are fences the ADR allows, at that
    bound, never earlier ones)."""
    e = history.events[j]
    p = facts(history).params
    written_at = int(e.fields.state.split(" ")[2])
    return history.processes[e.proc].clock.local(sent_ms(e)) > written_at + p.ttl_ms + p.grace_ms


def _first_write_swallowed(history: History, v: Violation) -> Chain | None:
    """F-5 by its cause, never by its preconditions alone (one write sent shortly before the blip).
    The chain it must see in world facts:

    1. the fenced process had written its node lease once before the fence, its first write after its
       start check, sent less than an attempt timeout before the blip began and applied before the blip
       ended: its reply was due in the blip;
    2. the process never learnt that write landed: no answer the world delivered to it showed it (its
       acknowledgement, NL-9's re-read: `record_reply`), and its answer, if the world recorded one, was
       the timeout, at or after the blip began: the blip swallowed the reply, and NL-9's re-read failed
       in the blip too (NL-7: back to the start check, whose wait starts again). (Before issue 44 this
       was the world's maximum delay standing in for the reply's way back; the world records the reply.)
    3. the fence replaced exactly the object that write left (nothing renewed it: the process was back
       in its check), as peers fence an object unchanged for ttl + grace on their clocks (FN-3).

    Premises, world facts:
    - the global blip's `outage` of every machine, and the fence's `apply` (FN-3's bound passed on the
      fencer's clock) or the fenced process's `exit` with the fence its key's object;
    - the fenced process's one `apply`ed live write before the fence, sent less than A before the blip,
      applied before it ended, never shown to it by a `record_reply`, its own answer the timeout in the blip;
    - the fence's `apply` over exactly the object that write left;
    - the violation's events the fencer's and the fenced process's, from that write's send on."""
    found = _blip_fence(history, v)
    if found is None:
        return None
    start, end, fencer, fenced, j = found
    events = history.events
    t = events[j].t_ms
    fx = facts(history)
    writes = [w for w in fx.live_writes.get(fenced, ()) if w.applied_ms < t]
    if len(writes) != 1:
        return None
    w = writes[0]
    if not (0 <= start - w.sent_ms < fx.params.attempt_timeout_ms and w.applied_ms < end):  # (1)
        return None
    written = events[w.event].fields
    if not _unacknowledged(history, fenced, w):  # (2)
        return None
    answer = next((events[i] for i in history.of_kind("record_reply") if events[i].proc == fenced
                   and events[i].fields.key == written.key and events[i].fields.op == "PUT"
                   and events[i].fields.sent_ms == w.sent_ms), None)
    if answer is not None and (answer.fields.status != "timed_out" or answer.t_ms < start):
        return None  # answered before the blip, or answered at all: the blip did not swallow it
    if events[j].fields.prev_state != written.state:  # (3)
        return None
    return Chain("F-5", w.sent_ms, frozenset((fencer, fenced)), cause=(_blip_cause(history, start),))


def _blip_cause(history: History, start: int) -> Cause:
    return Cause(f"the global blip at {start / 1000:.3f} s", "blip", to_ms=start)


def _cadence_kept(history: History, p: int, before: int) -> bool:
    """NL-2 on world facts: once process p first learnt a lease write of its own landed (it was running),
    up to true time `before`, it sent a lease write (`record_reply` on its nodes/ key: each PUT it sent, and
    when its answer or timeout came) at least every P on its clock, but while an attempt of it was still
    unanswered (the next write then leaves with the answer: the model's tick waits for the attempt). A node
    that writes less often than NL-2 says runs out early, not because of where a blip fell (issue 44)."""
    events = history.events
    pr = history.processes[p]
    key = "nodes/" + pr.node_id
    period = facts(history).params.period_ms
    slack = 50  # a timer fires on a drifting clock, and a millisecond's rounding
    running = min((t for q, t, _w in _known(history) if q == p), default=None)
    if running is None or running >= before:
        return True
    puts = sorted((events[i].fields.sent_ms, events[i].t_ms) for i in history.of_kind("record_reply")
                  if events[i].proc == p and events[i].fields.key == key and events[i].fields.op == "PUT"
                  and running <= events[i].fields.sent_ms < before)
    clock = pr.clock
    last = running  # its last send, or the instant it learnt it was running
    answered = running  # when every attempt sent so far had been answered
    for s_, a_ in puts + [(before, before)]:
        due = clock.mono_true_at(clock.mono(last) + period)  # NL-2 on the monotonic clock (issue 47)
        if s_ > due + slack and s_ > answered + slack:
            return False  # the period was up, nothing in flight, and no write left
        last, answered = s_, max(answered, a_)
    return True


def _blip_lapses_one_not_the_other(history: History, v: Violation) -> Chain | None:
    """F-4 by its cause, never by its preconditions alone (a lease that ran out after a blip began).
    The chain it must see in world facts, for a global blip [start, end):

    1. the fencer's node lease held from the blip's start to the sending of its fence, when it decided:
       it never lapsed, so its watch never restarted (FN-2 restarts it after its *own* lapse only; the
       fence may land after that lease ran out: a fencer whose first write after the blip waits on an
       attempt the blip swallowed lapses just after deciding);
    2. the fenced process's lease was valid when the blip began and ran out after, before the fence:
       no write of it landed from the blip's start to the fence (the blip cost it the writes that would
       have renewed it), and the fence replaced the object it last wrote before the blip (the fencer
       watched it unchanged since);
    3. the fenced process kept NL-2's cadence before the blip (its lease writes every P from the previous
       send, on its clock, as the world saw them sent: `_cadence_kept`): its lease ran out in the blip
       because of where the blip fell in its cadence, not because it wrote too seldom (issue 44: a node
       writing every P + 1 s was fenced and counted as F-4);
    4. the blip's span against the deadlines: the fence landed, or the fenced process sent its first
       write after the blip, within a period and an attempt timeout of the blip's end (a write in
       flight when it ended, then the cadence's next): the fenced process renewed as soon as the bucket
       let it, and too late. A node that stayed silent longer after the blip lapsed on its own.

    Not F-5 (the blip swallowed the reply to the fenced process's first write).

    Premises, world facts:
    - the global blip's `outage` of every machine;
    - the fencer's lease window (its applied live writes) from the blip's start to its fence's send;
    - the fenced process's lease window open at the blip's start and closed before the fence; no `apply`
      of its live writes from the blip's start to the fence; the fence over the object it last wrote;
    - its lease writes before the blip (`record_reply`: sent, answered) every P on its clock (NL-2);
    - its first write after the blip sent, or the fence applied, within P + A of the blip's end;
    - the violation's events the fencer's and the fenced process's, from the blip's start on."""
    found = _blip_fence(history, v)
    if found is None or _first_write_swallowed(history, v) is not None:
        return None
    start, end, fencer, fenced, j = found
    events = history.events
    t = events[j].t_ms
    fx = facts(history)
    decided = sent_ms(events[j])
    whole = any(s <= start and e >= decided for s, e, _i in fx.lease.get(fencer, ()))  # (1)
    lapsed = any(s <= start < e <= t for s, e, _i in fx.lease.get(fenced, ()))
    if not (whole and lapsed):
        return None
    writes = fx.live_writes.get(fenced, ())
    before = [w for w in writes if w.applied_ms < start]
    if not before or any(start <= w.applied_ms <= t for w in writes):  # (2)
        return None
    if events[j].fields.prev_state != events[before[-1].event].fields.state:
        return None
    if not _cadence_kept(history, fenced, start):  # (3)
        return None
    key = events[j].fields.key
    after = next((sent_ms(events[i]) for i in history.of_kind("apply", "refused")
                  if events[i].proc == fenced and events[i].fields.key == key and sent_ms(events[i]) >= end), None)
    renewed = t if after is None else min(t, after)
    clock = history.processes[fenced].clock  # (NL-2: a write every period from the previous send, on its monotonic clock)
    if renewed <= clock.mono_true_at(clock.mono(end) + fx.params.period_ms + fx.params.attempt_timeout_ms):  # (4)
        return Chain("F-4", start, frozenset((fencer, fenced)), cause=(_blip_cause(history, start),))
    return None


def _old_heartbeat_over_a_new_node(history: History, v: Violation) -> Chain | None:
    """The record of an actor names (or its failover waits on) a process (A, i) whose `live` object on
    `nodes/A` an old binary's heartbeat replaced (written unconditionally, UP-4): the old binary ran on
    after i's start guard passed, and passed by the rule (UP-2 on the bucket's heartbeats: the ones the
    guard could read were stale; `_guard_held`), i met the old format and exited (NL-10). An old-format object frees nothing (FN-5) and takes no fence (FN-7), so
    the actor waits for a process of A to come back through its start guard (INV-7: later than T-5's
    bound), or, if none does, stays held (INV-4): `nodes/A` ends in that old heartbeat, or absent once
    an operator's `cluster forget` (FN-8) deleted it with no `cluster fence` of the absent object after
    (FN-7: the remedy is forget, then fence).

    Premises, world facts:
    - an old binary's heartbeat `apply`ed on nodes/A over i's `live` object (the cause: it landed late);
    - i's start guard passed on stale heartbeats only (UP-2 judged on the bucket's heartbeats);
    - INV-4: from that landing on, nodes/A holds old heartbeats or a forget's delete, never a format-3 object;
    - INV-7: at i's death, nodes/A's object is that heartbeat over i's live object;
    - the violation's events from that landing on."""
    events = history.events
    if v.invariant == "INV-4":
        m = re.search(r"names ([^/\s]+)/([0-9a-f]+)", v.message)
        if m is None:
            return None
        node, inst = m.groups()
        i = next((k for k, pr in enumerate(history.processes) if (pr.node_id, pr.instance) == (node, inst)), None)
        if i is None or not _guard_held(history, i):
            return None
        key = "nodes/" + node
        writes = [k for k in history.of_kind("apply") if events[k].fields.key == key]
        over = next((n for n, k in enumerate(writes)
                     if str.startswith(events[k].fields.prev_state, f"live {inst} ")
                     and old_heartbeat(events[k].fields.state)),
                    None)
        # from the landing on: old heartbeats, or a forget's delete; never a format-3 object again
        if over is None or not all(old_heartbeat(events[k].fields.state) or events[k].fields.op == "DELETE"
                                   for k in writes[over:]):
            return None
        return _f6_chain(history, writes[over])
    if v.invariant == "INV-7":
        died = v.events[0]  # INV-7 names the owner's death first
        t_died, p, kind, _f = events[died]
        if kind not in ("crash", "exit") or p < 0:
            return None
        if not _guard_held(history, p):
            return None
        proc = history.processes[p]
        key = "nodes/" + proc.node_id
        # the object on nodes/A when i died: an old heartbeat written over i's own live object
        last = None
        for k in history.of_kind("apply"):
            if events[k].t_ms > t_died:
                break
            if events[k].fields.key == key:
                last = k
        if (last is not None and old_heartbeat(events[last].fields.state)
                and str.startswith(events[last].fields.prev_state, f"live {proc.instance} ")):
            return _f6_chain(history, last)
    return None


def _f6_chain(history: History, k: int) -> Chain:
    """F-6's chain from the old heartbeat's landing (event k) over a new node's live object."""
    e = history.events[k]
    machine = history.processes[e.proc].machine if e.proc >= 0 else ""
    cause = (Cause(f"the fate of the old heartbeat of {e.fields.key} sent at {sent_ms(e) / 1000:.3f} s",
                   machine=machine, request="PUT " + e.fields.key, from_ms=sent_ms(e), to_ms=e.t_ms),)
    return Chain("F-6", e.t_ms, frozenset(range(len(history.processes))), cause=cause)


def _guard_held(history: History, i: int) -> bool:
    """F-6's premise: process i's start guard passed by the rule (UP-2, judged on the bucket's heartbeats by
    checkers/start_guard.py): every old heartbeat its last round could read was stale, so the one that
    later landed over i's object was one it could not see (held back, stalled then resumed, or written by
    an old binary started after the switch). A guard that passed on a fresh heartbeat is a bug of the
    guard, not F-6."""
    events = history.events
    return not any(events[k].proc == i for v in _up2(history) for k in v.events)


FINDINGS: tuple[Finding, ...] = (
    Finding(
        id="F-1",
        title="a twin whose start check straddles a mistaken delete of nodes/<id> holds the node lease beside "
              "the other process, or its object, landed, frees that process's records to another node while "
              "it still acts",
        invariants=("LEASE-1", "INV-1", "INV-8"),
        adr="Section 1: 'The start check waits ttl plus grace in every case, including when no object exists ... "
            "so a process whose object was deleted while it still ran is always given time to show itself.' "
            "Section 2: 'After an object was deleted anyway, a process started with that --node-id frees its "
            "actors.' Two operator mistakes together (a twin, and a delete during its check) let the twin's "
            "reads miss the other process's object, written and deleted between two of its reads.",
        reproduction="tests/checkers/test_findings.py::test_f1_a_twin_straddling_a_delete_holds_the_lease_beside_the_other",
        chain=_twin_straddles_delete,
    ),
    Finding(
        id="F-2",
        title="an acquire whose record write was lost (or refused 409) is resolved for ever while the record "
              "stays unchanged (the resolver has no bound): a drain waits on it for ever",
        invariants=("INV-11", "CONV-1"),
        adr="Section 3: 'The background task reads the record until it can decide' (OR-8), with no bound; "
            "section 4: 'A drain ... reports drained only when its set of pending releases is empty' (CS-3). "
            "Once the faults are over the process never settles either (CONV-1): it reads that record for "
            "ever.",
        reproduction="tests/checkers/test_findings.py::test_f2_a_drain_waits_forever_on_a_lost_acquire",
        chain=_resolver_reads_an_unchanged_record,
    ),
    Finding(
        id="F-3",
        title="an instance whose fence was gone before its start check read it writes live again: the check's "
              "writes never answered (a late first write, or more), fenced, then the fence deleted by mistake or "
              "replaced by a twin",
        invariants=("INV-10",),
        adr="Section 1: 'If that write fails, the node goes back to the start check; it does not take a new "
            "instance.' Section 2: 'Instances on nodes/A only change through conditional writes, and a new "
            "instance writes only after its start check waited ttl plus grace, so once i's object was replaced i "
            "can no longer write.' With a mistaken delete (section 2: 'deleted anyway') or a twin replacing the "
            "fence, the instance whose late first write (or a later write of its check, none of them answered) was "
            "fenced never reads its fence and writes again under the fenced instance. It held nothing meanwhile "
            "(it never had a valid lease), so no record it names was freed under it.",
        reproduction="tests/checkers/test_findings.py::test_f3_a_fence_gone_before_the_check_read_it_lets_its_instance_write_again",
        chain=_fence_gone_before_read,
    ),
    Finding(
        id="F-4",
        title="a global blip restarts a node when the nodes' lease cadences differ: the one whose lease ran out "
              "during it is fenced by one whose lease did not",
        invariants=("INV-9",),
        adr="Section 1: 'A bucket blip therefore never restarts a cluster.' Section 2: B fences A only after "
            "watching it 'counted from B's first acknowledged lease write after any lapse of its own (so after a "
            "bucket outage every node first renews, and only then may judge the others)'. A blip shorter than "
            "B's remaining validity is no lapse of B's; if A's last write came earlier in its cadence, A's "
            "validity ran out during the blip, and with grace + safety = 2 * max_skew (T-2's equality) B may "
            "fence A the moment A's validity ends, before A's first write after the blip lands. The finding rests on "
            "one reading of the ADR's words: 'any lapse of its own' read as 'its lease ran out' (NL-11's lapse, as "
            "model/ reads it). The parenthesis ('so after a bucket outage every node first renews, and only then may "
            "judge the others') supports another: any failed lease write of B's is a lapse for the watch, which then "
            "counts again from B's next acknowledged write; under that reading F-4 does not arise "
            "(amendments/f4_failed_write_is_a_lapse.py). The ADR's wording is ambiguous; its authors must say "
            "which they meant.",
        reproduction="tests/checkers/test_findings.py::test_f4_a_blip_ending_between_two_nodes_deadlines_gets_one_fenced",
        chain=_blip_lapses_one_not_the_other,
    ),
    Finding(
        id="F-5",
        title="a global blip that swallows the reply to a node's first lease write gets that node fenced: it "
              "goes back to the start check, whose wait starts again, while peers watch the object it wrote",
        invariants=("INV-9",),
        adr="Section 1: 'If that write fails, the node goes back to the start check ... The start check waits ttl "
            "plus grace in every case' and 'A first write whose reply was lost follows the re-read rule below "
            "before going back to the check'; 'A bucket blip therefore never restarts a cluster.' During the blip "
            "the re-read fails too, so the node goes back to the check, whose ttl + grace counts from its first "
            "read after the blip; peers saw the object the first write left live, unchanged, from before the "
            "blip, and fence it first (written_at + ttl + grace on their clocks). The node exits (NL-10) and is "
            "restarted. Nothing is unsafe: the node never acted; the blip restarted it.",
        reproduction="tests/checkers/test_findings.py::test_f5_a_blip_swallowing_a_first_write_reply_gets_the_node_fenced",
        chain=_first_write_swallowed,
    ),
    Finding(
        id="F-6",
        title="an old binary's heartbeat landing over a new node's live object, after that node's start guard "
              "passed, leaves the records it took held by an old-format object until the node comes back "
              "through its start guard (later than T-5's bound), or for good if it does not",
        invariants=("INV-4", "INV-7"),
        adr="Section 6: 'Old and new nodes must never run together', kept by the start guard (wait while an "
            "old-format heartbeat was written less than its horizon plus ttl plus grace ago; 'an old heartbeat "
            "that keeps being rewritten means an old node is running'). Section 2: 'An absent nodes/A, or an "
            "old-format object, frees nothing' (FN-5); 'nothing is written over a fence or an old format' "
            "(FN-7). An old binary whose heartbeats were held back (writes applied late) looks retired, the "
            "guard passes, and its next heartbeat, unconditional, lands over the new node's live object: the "
            "new node exits (NL-10, an old format). If that node does not come back through its start check "
            "(its machine gone, or it stays stopped), the actors it took stay held: only an operator's "
            "`cluster forget` (FN-8) then `cluster fence` (FN-7) frees them (a fence first finds nothing to "
            "fence; a forget alone leaves an absent object, which frees nothing either). If it comes back, its "
            "start guard waits out the old heartbeat first, so the failover outlasts T-5's bound (INV-7). "
            "Nothing is unsafe.",
        reproduction="tests/checkers/test_findings.py::test_f6_an_old_heartbeat_over_a_new_node_leaves_its_records_held",
        chain=_old_heartbeat_over_a_new_node,
    ),
)


def classify(history: History, violations: list[Violation]) -> tuple[list[Violation], dict[str, list[Violation]]]:
    """(violations no finding explains, {finding id: the violations it explains})."""
    unexplained, found, _chains = classify_chains(history, violations)
    return unexplained, found


def classify_chains(history: History, violations: list[Violation]):
    """(violations no finding explains, {finding id: the violations it explains}, [(violation, its chain)]
    for each explained one): a violation is a finding's when that finding's chain holds in the history and
    covers every event the violation names (`Chain.covers`)."""
    unexplained: list[Violation] = []
    found: dict[str, list[Violation]] = {}
    chains: list[tuple[Violation, Chain]] = []
    for v in violations:
        hit = None
        for f in FINDINGS:
            if v.invariant in f.invariants:
                c = f.chain(history, v)
                if c is not None and c.covers(history, v):
                    hit = c
                    break
        if hit is None:
            unexplained.append(v)
        else:
            found.setdefault(hit.finding, []).append(v)
            chains.append((v, hit))
    return unexplained, found, chains
