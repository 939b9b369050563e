"""Coverage of the upgrade's races (section 6): the situations around the switch that UP-1..UP-4 must
survive, found in each history on world facts (what the bucket applied, refused or answered 409,
the faults the world gave requests, the processes' starts and ends and clocks); none reads a model
claim.

A new node's *switch window* (per node id) runs from the first start of a new process under that id
to the first `live` write of its node lease that took effect (its start guard and start check run
in it, UP-1, UP-2), or the run's end. The races:

- the guard met an old heartbeat being rewritten (a straggler beating), or one dated ahead of the new
  node's clock (a retired node's clock far ahead): UP-2's "keeps being rewritten" and its lapse of a
  future-dated heartbeat;
- a marker write (a new node's PUT on `leases/`: it writes there only markers, UP-3) lost, applied
  after its timeout, answered 409; a marker whose writer never learned it landed, read by the next
  acquisition ("a crash between the two writes leaves the marker, from which the next acquisition
  seeds the same way");
- a seeding listing (a new node's LIST of an actor's `wal/` before the actor's first `owners/`
  record: UP-3's seed) or an old-lease read (a new node's GET on `leases/`) that failed or was lost;
- the old garbage collection deleting an old lease between a new node's read of it and its marker
  write, so that the marker's If-Match met no object;
- a twin (a second process under a new node's id) and an old binary started again, during a
  switch window.

Declares coverage points only (no invariant): the invariants that judge these runs are the usual
ones (INV-1, INV-2, INV-3, UP-2).
"""

from __future__ import annotations

from dataclasses import dataclass

from .facts import keyed, sent_ms
from .registry import Context, point

LOST_OR_FAILED = ("request_lost", "fail_fast", "reply_lost")


def is_new(machine: str) -> bool:
    """A new node's process: machines m0.., its twins t0.. (and the switch's twin), a replacement r0."""
    return machine[:1] in ("m", "t", "r")


def is_old(machine: str) -> bool:
    """An old binary's process (om0.., the retired omf)."""
    return str.startswith(machine, "om")


@dataclass
class _Races:
    guard_rewritten: bool = False
    guard_future: bool = False
    marker_lost: bool = False
    marker_late: bool = False
    marker_conflict: bool = False
    marker_unknown_read: bool = False
    seed_list_failed: bool = False
    lease_read_failed: bool = False
    gc_between: bool = False
    twin_at_switch: bool = False
    old_at_switch: bool = False


def _windows(c: Context) -> dict[str, tuple[int, int]]:
    """node id -> its switch window (true time): the first start of a new process under it, to the
    first `live` write of one of them that took effect (or the run's end)."""
    history = c.history
    procs = history.processes
    events = history.events
    first_start: dict[str, int] = {}
    for i in history.of_kind("start"):
        t, q = events[i].t_ms, events[i].proc
        pr = procs[q]
        if is_new(pr.machine) and pr.node_id not in first_start:
            first_start[pr.node_id] = t
    end = history.end_ms if history.end_ms is not None else 1 << 62
    first_live: dict[str, int] = {}
    for q, writes in c.facts.live_writes.items():
        node = procs[q].node_id
        if is_new(procs[q].machine) and writes:
            first_live[node] = min(first_live.get(node, end), writes[0].applied_ms)
    return {n: (s, first_live.get(n, end)) for n, s in first_start.items()}


def _races(c: Context) -> _Races:
    history = c.history
    out = _Races()
    if not history.options.get("upgrade"):
        return out
    procs = history.processes
    events = history.events
    windows = _windows(c)
    spans = sorted(windows.values())
    end = history.end_ms if history.end_ms is not None else 1 << 62
    new_procs = {k for k, pr in enumerate(procs) if is_new(pr.machine)}
    starts: dict[int, int] = {}  # process -> when it started
    for i in history.of_kind("start"):
        starts.setdefault(events[i].proc, events[i].t_ms)

    def in_a_window(t: int) -> bool:
        return any(s <= t < e for s, e in spans)

    # --- old heartbeats while a new node's guard runs ---------------------------------------------------
    # each version of an old heartbeat: (key, applied at, written_at on its writer's clock, replaced at)
    versions: list[list] = []
    current: dict[str, list] = {}
    for i in keyed(history, "nodes/", "apply", "fault_delete", "fault_put"):
        t, q, kind, f = events[i]
        old = current.pop(f.key, None)
        if old is not None:
            old[3] = t
        if kind == "apply" and q >= 0 and f.op == "PUT" and str.startswith(f.state, "node "):
            v = [f.key, t, procs[q].clock.local(sent_ms(events[i])), end]
            if str.startswith(f.prev_state, "node ") and in_a_window(t):
                out.guard_rewritten = True  # rewritten while a new node's guard ran
        elif kind == "fault_put" and f.written_at_ms is not None:
            v = [f.key, t, f.written_at_ms, end]
        else:
            continue
        versions.append(v)
        current[f.key] = v
    band = 2 * c.params.max_skew_ms  # dated further ahead than two clocks in the band can be apart: a clock far ahead
    for k in sorted(new_procs):
        s = starts.get(k, end)
        node_window = windows.get(procs[k].node_id)
        if node_window is None or s >= node_window[1]:
            continue  # a process started after its id's switch: not a guard of the switch
        clock = procs[k].clock
        for _key, applied, written_at, replaced in versions:
            at = max(s, applied)
            if at < min(replaced, node_window[1]) and written_at > clock.local(at) + band:
                out.guard_future = True
                break

    # --- marker writes, seeding reads ---------------------------------------------------------------------
    first_owner: dict[str, int] = {}
    for i in c.writes("owners/"):
        first_owner.setdefault(events[i].fields.key[len("owners/"):], i)
    late_sent: set[tuple[int, str, int]] = set()  # (proc, key, sent at) of marker writes applied late
    lost_reply: set[tuple[int, str, int]] = set()  # (proc, key, at) of marker writes whose OK was lost
    for what in ("request_lost", "late", "reply_lost", "fail_fast"):
        for i in c.faults(what):
            t, q, _kind, f = events[i]
            if q not in new_procs or f.target is None:
                continue
            op, _, key = f.target.partition(" ")
            if op == "PUT" and str.startswith(key, "leases/"):
                if what == "request_lost":
                    out.marker_lost = True
                elif what == "late":
                    late_sent.add((q, key, t))
                elif what == "reply_lost" and f.detail == "ok":
                    lost_reply.add((q, key, t))
            elif what in LOST_OR_FAILED and op == "GET" and str.startswith(key, "leases/"):
                out.lease_read_failed = True
            elif what in LOST_OR_FAILED and op == "LIST" and str.startswith(key, "wal/"):
                actor = key[len("wal/"):].rstrip("/")
                j = first_owner.get(actor)
                if j is None or i < j:
                    out.seed_list_failed = True  # before the actor's first owners/ record: UP-3's seed
    for i in history.of_kind("conflicted"):
        q, f = events[i].proc, events[i].fields
        if q in new_procs and str.startswith(f.key, "leases/"):
            out.marker_conflict = True
    # the leases/ keys' applied writes and deletes, in order; and the owners/ creates
    touched: dict[str, list[int]] = {}
    for i in history.of_kind("apply", "fault_delete", "refused"):
        key = events[i].fields.key
        if str.startswith(key, "leases/"):
            touched.setdefault(key, []).append(i)
    for key, idx in touched.items():
        for n, i in enumerate(idx):
            t, q, kind, f = events[i]
            if kind == "refused":
                # the old GC's delete between a new node's read of an old lease and its marker's If-Match
                if (q in new_procs and f.cond == "if-match" and not f.met and n
                        and events[idx[n - 1]].kind == "fault_delete"):
                    out.gc_between = True
                continue
            if kind != "apply" or q not in new_procs or not str.startswith(f.state, "marker "):
                continue
            s = sent_ms(events[i])
            if (q, key, s) in late_sent:
                out.marker_late = True
            elif (q, key, t) not in lost_reply:
                continue
            # its writer never learned it landed: did the next acquisition seed from it (owners/ created
            # above it, with leases/ untouched since)?
            nxt = next((events[j].t_ms for j in idx[n + 1:] if events[j].kind != "refused"), end)
            j = first_owner.get(key[len("leases/"):])
            if j is not None and events[j].t_ms > t and events[j].t_ms < nxt and events[j].proc != -1:
                out.marker_unknown_read = True

    # --- twins and old binaries during a switch window ------------------------------------------------
    ended = c.facts.ended
    old_started: dict[str, int] = {}
    for k in sorted(starts, key=lambda k: starts[k]):
        pr = procs[k]
        s = starts[k]
        life_end = ended.get(k, (end,))[0]
        if str.startswith(pr.machine, "t") or pr.machine == "r0":
            w = windows.get(pr.node_id)
            if w is not None and s < w[1] and life_end > w[0]:
                out.twin_at_switch = True
        elif is_old(pr.machine) and pr.machine != "omf":
            if pr.machine in old_started and in_a_window(s):
                out.old_at_switch = True  # an old binary started again while a new node's guard ran
            old_started.setdefault(pr.machine, s)
    return out


# each race's coverage point: (the _Races flag that reaches it, its name, what it means)
_POINTS = (
    ("guard_rewritten", "guard met a rewritten old heartbeat",
     "an old-format heartbeat was rewritten (an old node beating) while a new node's start guard ran, in "
     "its switch window (UP-2: one that keeps being rewritten means an old node runs)"),
    ("guard_future", "guard met a future-dated heartbeat",
     "while a new node's start guard ran, an old-format heartbeat was dated more than 2 * max_skew ahead "
     "of that node's clock, from a clock outside the band (UP-2: it lapses on the node's own count)"),
    ("marker_lost", "marker write lost",
     "a new node's marker write (PUT leases/) was lost on the way (UP-3)"),
    ("marker_late", "marker write applied late",
     "a new node's marker write took effect after its sender gave up on it (UP-3)"),
    ("marker_conflict", "marker write answered 409",
     "the bucket answered a new node's marker write 409 (not applied; UP-3)"),
    ("marker_unknown_read", "marker landed unknown, then read",
     "a marker whose writer never learned it landed (applied late, or its reply lost) was followed by the "
     "actor's owners/ record with leases/ untouched: the next acquisition seeded from it (UP-3)"),
    ("seed_list_failed", "seeding listing lost",
     "a new node's listing of an actor's wal/ before the actor's first owners/ record (UP-3's seed) failed"
     " or was lost"),
    ("lease_read_failed", "old-lease read lost",
     "a new node's read of leases/ (UP-3's first acquisition) failed or was lost"),
    ("gc_between", "old GC between read and marker",
     "the old garbage collection deleted an old lease between a new node's read of it and its marker "
     "write, whose If-Match met no object (UP-3)"),
    ("twin_at_switch", "twin during the switch",
     "a second process under a new node's id ran while that id's first start guard and start check ran "
     "(UP-1, NL-6)"),
    ("old_at_switch", "old binary restarted during the switch",
     "an old binary was started again while a new node's start guard ran (UP-2, UP-4)"),
)


def _flag(attr: str):
    """The predicate of one race's point: its flag in the one scan of the history."""
    return lambda c: getattr(c.scan(_races), attr)


for _attr, _name, _doc in _POINTS:
    point(_name, _doc, topic="upgrade")(_flag(_attr))

