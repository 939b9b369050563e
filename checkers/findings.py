"""Known findings about the protocol: violations the correct model, faithful to ADR 0020, can
reach because the ADR allows them.

A finding is shown, never hidden: the world keeps the faults that produce it, every campaign
counts the seeds in which it appeared (`protocol_findings` in the report), and `--strict`
makes them fail the run. Each has an id, the ADR text it concerns, a scripted reproduction
(a test), and a classifier that recognises it in a history from its preconditions, read from
world facts. A violation that matches no finding fails the run as always.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from .facts import facts, sent_ms
from history import History, Violation
from .records import old_heartbeat


@dataclass(frozen=True)
class Finding:
    id: str
    title: str
    invariants: tuple[str, ...]  # the invariants its violations are reported under
    adr: str  # the ADR text it concerns
    reproduction: str  # the test that reproduces it on a script
    matches: Callable[[History, Violation], bool]


def _procs_of(history: History, v: Violation) -> set[int]:
    events = history.events
    return {events[i].proc for i in v.events if 0 <= i < len(events) and events[i].proc >= 0}


def _twin_straddles_delete(history: History, v: Violation) -> bool:
    """A process of node n whose start check straddled a mistaken delete of nodes/n (started
    before it, its first live write after it) held n's lease while another process of n did,
    and the violation involves only processes of n."""
    procs = history.processes
    involved = _procs_of(history, v)
    nodes = {procs[p].node_id for p in involved}
    if len(nodes) != 1:
        return False
    (node,) = nodes
    deletes = [t for t, _p, kind, f in history.events if kind == "fault_delete" and f.key == "nodes/" + node]
    if not deletes:
        return False
    fx = facts(history)
    starts = {p: t for t, p, kind, _f in history.events if kind == "start"}
    mine = [p for p in range(len(procs)) if procs[p].node_id == node]
    for td in deletes:
        for q in mine:
            first = next((w.applied_ms for w in fx.live_writes.get(q, ())), None)
            if starts.get(q, td + 1) <= td and first is not None and first > td:
                qs = fx.lease.get(q, ())
                for p in mine:
                    if p != q and any(s < e2 and s2 < e for s, e, _i in fx.lease.get(p, ()) for s2, e2, _j in qs):
                        return True
    return False


def _drain_waits_on_lost_acquire(history: History, v: Violation) -> bool:
    """The drained process lost an acquire's record write before the drain (the request never
    reached the bucket: lost on the way, or failed fast, refused before sending; seed 6445 of the
    20,000-seed sweep), or the bucket answered it 409 (a conflict: not applied; seed 854 of a
    2,000-seed sweep), and that record did not change from then to the drain: the unresolved
    acquire (OR-7 counts a conflict as not succeeded) is read until the record changes (OR-8), and
    the drain waits on it (CS-3). Either the record stays unchanged to the drain's bound (the
    resolver has no bound: the drain never ends), or another process changes it first and the
    drain reports drained only then, within the resolver's next read (two attempt timeouts):
    the entry held it to that change (calm seed 5 at c9ba6c3, kept as a plan)."""
    if v.invariant != "INV-11" or not v.events:
        return False
    told = v.events[0]
    td, p = history.events[told].t_ms, history.events[told].proc
    params = facts(history).params
    end = td + params.ttl_ms + params.grace_ms
    lost: dict[str, int] = {}  # owners/ key -> when p's write of it was lost
    changed: dict[str, int] = {}  # a lost key -> its record's first change after the drain
    drained_at = None
    for t, q, kind, f in history.events:
        if q == p and kind == "drained" and t >= td:
            drained_at = t
            break
        if (q == p and kind == "fault" and t < td and f.what in ("request_lost", "fail_fast")
                and f.target.startswith("PUT owners/")):
            lost.setdefault(f.target[len("PUT "):], t)
        elif q == p and kind == "conflicted" and t < td and f.op == "PUT" and f.key.startswith("owners/"):
            lost.setdefault(f.key, t)
        elif kind == "apply" and f.key in lost:
            if t < td:
                del lost[f.key]  # it changed before the drain: no entry of it held the drain
            else:
                changed.setdefault(f.key, t)
    slack = 2 * params.attempt_timeout_ms  # the resolver's next read after a change: its back-off, and the read
    for key in lost:
        tc = changed.get(key)
        if tc is None or tc > end:
            return True  # unchanged to the bound: the drain waits for ever (OR-8 has no bound)
        if drained_at is not None and tc <= drained_at <= tc + slack:
            return True  # drained only once another's write changed the record the entry read
    return False


def _fence_gone_before_read(history: History, v: Violation) -> bool:
    """A process's first write landed late, after it went back to its start check (NL-7 keeps its
    instance); a peer fenced that object; the fence was gone (deleted by mistake, or replaced
    by a twin's or replacement's write) before the check read it; the check passed and the same
    instance wrote live again, not over its fence but over what replaced it."""
    if v.invariant != "INV-10" or not v.events:
        return False
    ev = history.events
    j = v.events[0]
    if ev[j].kind == "refused" and ev[j].fields.met.startswith("fenced "):
        # the other form (seed 13073 of the 20,000-seed sweep): the first write met the fence (a 412
        # does not say what it met), and another process (a twin) wrote over that fence, or it was
        # deleted, before the instance's start check read it: the instance never learns it was fenced,
        # runs on, and may write live again over what replaced the fence and act
        p, key, fence = ev[j].proc, ev[j].fields.key, ev[j].fields.met
        return any(kind == "fault_delete" and f.key == key or kind == "apply" and f.key == key and q != p
                   and f.prev_state == fence for _t, q, kind, f in ev[j + 1:])
    if len(v.events) != 2:
        return False
    i = v.events[1]
    if ev[j].kind != "apply" or ev[i].kind != "apply":
        return False
    return ev[i].fields.prev_state != ev[j].fields.state  # it wrote over something else than the fence naming it


def _blip_fence(history: History, v: Violation):
    """(blip start, fencer, fenced process, fence time) of an INV-9 violation that is a fence."""
    if v.invariant != "INV-9" or not v.events:
        return None
    t, fencer, kind, f = history.events[v.events[0]]
    if kind != "apply" or not f.state.startswith("fenced ") or fencer < 0:
        return None
    start = history.options["blip"][0]
    start += history.options["upgrade"]["new_at"] if history.options.get("upgrade") else 0
    fenced_inst = f.state.split(" ")[1]
    fenced = next((k for k, pr in enumerate(history.processes)
                   if pr.instance == fenced_inst and f.key == "nodes/" + pr.node_id), None)
    return None if fenced is None else (start, fencer, fenced, t)


def _first_write_swallowed(history: History, v: Violation) -> bool:
    """The fenced process had written its node lease once, its first write after the start check,
    sent less than an attempt timeout before the blip began (applied before it or in it): the blip
    swallowed that write's reply (NL-7: back to the start check, whose wait starts again)."""
    found = _blip_fence(history, v)
    if found is None:
        return False
    start, _fencer, fenced, t = found
    fx = facts(history)
    writes = [w for w in fx.live_writes.get(fenced, ()) if w.applied_ms < t]
    return len(writes) == 1 and 0 <= start - writes[0].sent_ms < fx.params.attempt_timeout_ms


def _blip_lapses_one_not_the_other(history: History, v: Violation) -> bool:
    """A global blip: the fenced node's lease ran out after the blip began (its last write came
    early in its cadence, or its next attempt after the blip came too late) while the fencer's
    did not, so the fencer's watch never restarted (FN-2 restarts it after its *own* lapse only)
    and it fenced the other as soon as the other's written_at + ttl + grace passed on its clock,
    before the other's first write after the blip landed."""
    found = _blip_fence(history, v)
    if found is None or _first_write_swallowed(history, v):
        return False
    start, fencer, fenced, t = found
    fx = facts(history)
    # the fencer's lease held from the blip to the sending of its fence, when it decided (it never
    # lapsed, so never restarted its watch; the fence may land after that lease ran out: a fencer whose
    # first write after the blip waits on an attempt the blip swallowed lapses just after deciding); the
    # fenced node's ran out after the blip began, before that fence (the blip cost it the writes that
    # would have renewed it)
    decided = sent_ms(history.events[v.events[0]])
    whole = any(s <= start and e >= decided for s, e, _i in fx.lease.get(fencer, ()))
    lapsed = any(s <= start < e <= t for s, e, _i in fx.lease.get(fenced, ()))
    return whole and lapsed


def _old_heartbeat_over_a_new_node(history: History, v: Violation) -> bool:
    """The record of an actor names (or its failover waits on) a process (A, i) whose `live` object on
    `nodes/A` an old binary's heartbeat replaced (written unconditionally, UP-4): the old binary ran on
    after i's start guard passed (UP-2 judged it retired: its heartbeats were held back), i met the old
    format and exited (NL-10). An old-format object frees nothing (FN-5) and takes no fence (FN-7), so
    the actor waits for a process of A to come back through its start guard (INV-7: later than T-5's
    bound), or, if none does, stays held (INV-4): `nodes/A` ends in that old heartbeat, or absent once
    an operator's `cluster forget` (FN-8) deleted it with no `cluster fence` of the absent object after
    (FN-7: the remedy is forget, then fence)."""
    events = history.events
    if v.invariant == "INV-4":
        m = re.search(r"names ([^/\s]+)/([0-9a-f]+)", v.message)
        if m is None:
            return False
        node, inst = m.groups()
        key = "nodes/" + node
        writes = [f for f in (events[i].fields for i in history.of_kind("apply")) if f.key == key]
        over = next((k for k, f in enumerate(writes)
                     if f.prev_state.startswith(f"live {inst} ") and old_heartbeat(f.state)), None)
        # from the landing on: old heartbeats, or a forget's delete; never a format-3 object again
        return over is not None and all(old_heartbeat(f.state) or f.op == "DELETE" for f in writes[over:])
    if v.invariant == "INV-7":
        died = v.events[0]  # INV-7 names the owner's death first
        t_died, p, kind, _f = events[died]
        if kind not in ("crash", "exit") or p < 0:
            return False
        proc = history.processes[p]
        key = "nodes/" + proc.node_id
        # the object on nodes/A when i died: an old heartbeat written over i's own live object
        last = None
        for i in history.of_kind("apply"):
            if events[i].t_ms > t_died:
                break
            if events[i].fields.key == key:
                last = events[i].fields
        return (last is not None and old_heartbeat(last.state) and last.prev_state.startswith(f"live {proc.instance} "))
    return False


FINDINGS: tuple[Finding, ...] = (
    Finding(
        id="F-1",
        title="a twin whose start check straddles a mistaken delete of nodes/<id> holds the node lease beside "
              "the other process",
        invariants=("LEASE-1", "INV-1", "INV-6", "INV-10"),
        adr="Section 1: 'The start check waits ttl plus grace in every case, including when no object exists ... "
            "so a process whose object was deleted while it still ran is always given time to show itself.' "
            "Section 2: 'After an object was deleted anyway, a process started with that --node-id frees its "
            "actors.' Two operator mistakes together (a twin, and a delete during its check) let the twin's "
            "reads miss the other process's object, written and deleted between two of its reads.",
        reproduction="tests/checkers/test_findings.py::test_f1_a_twin_straddling_a_delete_holds_the_lease_beside_the_other",
        matches=_twin_straddles_delete,
    ),
    Finding(
        id="F-2",
        title="a drain waits forever on an acquire whose record write was lost (or refused 409): the resolver has "
              "no bound",
        invariants=("INV-11",),
        adr="Section 3: 'The background task reads the record until it can decide' (OR-8), with no bound; "
            "section 4: 'A drain ... reports drained only when its set of pending releases is empty' (CS-3).",
        reproduction="tests/checkers/test_findings.py::test_f2_a_drain_waits_forever_on_a_lost_acquire",
        matches=_drain_waits_on_lost_acquire,
    ),
    Finding(
        id="F-3",
        title="an instance whose fence was gone before its start check read it writes live again: a late first "
              "write, fenced, then the fence deleted by mistake or replaced by a twin",
        invariants=("INV-10",),
        adr="Section 1: 'If that write fails, the node goes back to the start check; it does not take a new "
            "instance.' Section 2: 'Instances on nodes/A only change through conditional writes, and a new "
            "instance writes only after its start check waited ttl plus grace, so once i's object was replaced i "
            "can no longer write.' With a mistaken delete (section 2: 'deleted anyway') or a twin replacing the "
            "fence, the instance whose late first write was fenced never reads its fence and writes again under "
            "the fenced instance. It held nothing meanwhile (it never had a valid lease), so no record it names "
            "was freed under it.",
        reproduction="tests/checkers/test_findings.py::test_f3_a_fence_gone_before_the_check_read_it_lets_its_instance_write_again",
        matches=_fence_gone_before_read,
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
            "fence A the moment A's validity ends, before A's first write after the blip lands.",
        reproduction="tests/checkers/test_findings.py::test_f4_a_blip_ending_between_two_nodes_deadlines_gets_one_fenced",
        matches=_blip_lapses_one_not_the_other,
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
        matches=_first_write_swallowed,
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
        matches=_old_heartbeat_over_a_new_node,
    ),
)


def classify(history: History, violations: list[Violation]) -> tuple[list[Violation], dict[str, list[Violation]]]:
    """(violations no finding explains, {finding id: the violations it explains})."""
    unexplained: list[Violation] = []
    found: dict[str, list[Violation]] = {}
    for v in violations:
        f = next((f for f in FINDINGS if v.invariant in f.invariants and f.matches(history, v)), None)
        if f is None:
            unexplained.append(v)
        else:
            found.setdefault(f.id, []).append(v)
    return unexplained, found
