"""UP-3 and UP-4, judged on world facts: the first acquisition of an actor across the upgrade, and
the old binaries' restraint once the new version has marked or created it.

UP-3, on every `owners/<actor>` create that took effect (a PUT `If-None-Match`: no record yet, the
first acquisition), with s its send time and P its process:
- (a) its generation is above every generation a `leases/<actor>` body carried before s (old leases,
  markers), and above every `wal/` or `snapshot/` key of the actor that was in the bucket when P's
  seeding listing was sent, whatever that listing answered. The seeding listing is P's last listing
  of the actor's keys delivered to it (`listed`) and sent after its read of leases/ was answered
  and before s. A listing that failed or was lost decides nothing: with none delivered, any key in
  the bucket when the read was answered (the earliest the listing could be sent) is a violation.
- (b) at s the bucket holds a marker (`wasmkeep-lease 2`) on `leases/<actor>`: the create follows
  the marker, never goes with it.
- (c) P knew of that marker from the bucket, in this attempt: the attempt is P's last read of
  `leases/<actor>` answered before s (`leases_reply` GET); either that read found a marker, or a
  marker write of P's was acknowledged to P after it (`leases_reply` PUT ok). A marker write whose
  reply P never got (lost, or past its timeout) is resolved by a fresh read, never assumed: the
  next create then needs a read answered after it. A create with no read of leases/ at all fails
  this clause too.
What P was told is a world fact: the world records each answer it delivered to a request on
`leases/` (`leases_reply`) and each listing of an actor's keys (`listed`). A history without any
`leases_reply` (hand-made ones, which write records without the upgrade's steps) is not judged on
UP-3; every world in scenarios/ records them, and a first acquisition always reads leases/ first.

UP-4: an old binary (a process on a machine `om*`, where the upgrade scenario and the scripted
upgrade world run model/old_lease.py) acquires an actor when a write of its on `leases/<actor>`
takes effect (an acquisition, a renewal or a release: each replaces what it read). None may take
effect after a marker was applied on `leases/<actor>` or after `owners/<actor>` was first written:
the old binary must have read the marker as corrupt, and every condition of its writes names a
version the marker replaced. (Its acts inside a hold it had before are INV-1's to judge.) And on
`nodes/`: an old binary started while `nodes/<id>` held a format-3 object (a new node used the id) must
find the id taken at its start check and write nothing; a heartbeat of its landing over a format-3 object,
that key having held only such objects since it started, names both processes (broken model
`old_ignores_new_heartbeat`). A straggler started before the switch is F-6's, not this rule's.

Two invariants, not one with four clauses: UP-3 judges the new node's first acquisition and UP-4
the old binary's restraint, two binaries and two rules, each with its own broken models; UP-3's
clauses share one reconstruction of the attempt and name themselves in the message.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field

from history import History, Violation

from .facts import DATA, LEASES, NODES, OWNERS, sent_ms, segment_generation
from .registry import Context, invariant, point

INVARIANT = "UP-3"
OLD_INVARIANT = "UP-4"  # the old binary's side, declared here too (one scan of the attempt serves both)
SEGMENTS = (DATA, "snapshot/")  # the prefixes whose keys carry an actor's generations (this world writes wal/ only)
MARKER = "marker "
OLD_MACHINE = "om"  # the machines old binaries run on (scenarios/faults/upgrade.py, scenarios/script.py)


def old_binary(history: History, proc: int) -> bool:
    """Whether process `proc` runs the old binary (model/old_lease.py): its machine is om<i> or omf."""
    return proc >= 0 and str.startswith(history.processes[proc].machine, OLD_MACHINE)


def lease_generation(state: str) -> int | None:
    """The generation a `leases/` state line carries ("old-lease <node> <g> <expires>", "marker <g>")."""
    parts = state.split(" ")
    try:
        if parts[0] == "old-lease" and len(parts) == 4:
            return int(parts[2])
        if parts[0] == "marker" and len(parts) == 2:
            return int(parts[1])
    except ValueError:
        pass
    return None


@dataclass
class _Series:
    """One actor's values over true time: `at[k]` the instant of change k, `value[k]` what holds from it."""

    at: list[int] = field(default_factory=list)
    value: list[tuple] = field(default_factory=list)

    def add(self, t: int, v: tuple) -> None:
        self.at.append(t)
        self.value.append(v)

    def by(self, t: int, strict: bool = False) -> tuple | None:
        """The value holding at t (the last change at or before t; `strict`: before t)."""
        k = (bisect_left(self.at, t) if strict else bisect_right(self.at, t)) - 1
        return self.value[k] if k >= 0 else None


@dataclass
class _Scan:
    lease: dict[str, _Series] = field(default_factory=dict)  # actor -> (state or "" if none, event)
    lease_top: dict[str, _Series] = field(default_factory=dict)  # actor -> (highest generation a body carried, event)
    keys: dict[str, _Series] = field(default_factory=dict)  # actor -> (highest key generation, key, event)
    key_count: dict[str, list[int]] = field(default_factory=dict)  # actor -> applied key writes' instants
    replies: dict[tuple[int, str], list[int]] = field(default_factory=dict)  # (proc, actor) -> leases_reply events
    listings: dict[tuple[int, str], list[int]] = field(default_factory=dict)  # (proc, actor) -> listed events
    creates: list[int] = field(default_factory=list)  # owners/ creates that took effect
    first_new: dict[str, int] = field(default_factory=dict)  # actor -> first marker or owners/ write applied
    first_owner: dict[str, int] = field(default_factory=dict)  # actor -> first owners/ write applied


def _actor_of_segment(key: str) -> tuple[str, str] | None:
    for prefix in SEGMENTS:
        if str.startswith(key, prefix):
            return key[len(prefix):].rsplit("/", 1)[0], key.rsplit("/", 1)[1]
    return None


def _scan(history: History) -> _Scan:
    cached = history.cache.get("upgrade_seed")
    if cached is not None:
        return cached
    sc = _Scan()
    events = history.events
    for i in history.of_kind("apply", "fault_delete", "fault_put", "listed", "leases_reply"):
        t, p, kind, f = events[i]
        if kind == "listed":
            if str.startswith(f.prefix, DATA):
                sc.listings.setdefault((p, f.prefix[len(DATA):].rstrip("/")), []).append(i)
            continue
        key = f.key
        if kind == "leases_reply":
            sc.replies.setdefault((p, key[len(LEASES):]), []).append(i)
        elif str.startswith(key, LEASES):
            actor = key[len(LEASES):]
            state = f.state if kind == "apply" and f.serial else ""
            sc.lease.setdefault(actor, _Series()).add(t, (state, i))
            g = lease_generation(state)
            top = sc.lease_top.setdefault(actor, _Series())
            if g is not None and (not top.value or g > top.value[-1][0]):
                top.add(t, (g, i))
            if str.startswith(state, MARKER):
                sc.first_new.setdefault(actor, i)
        elif str.startswith(key, OWNERS):
            if kind != "apply":
                continue
            actor = key[len(OWNERS):]
            sc.first_new.setdefault(actor, i)
            sc.first_owner.setdefault(actor, i)
            if f.op == "PUT" and f.cond == "if-none-match" and f.serial and p >= 0:
                sc.creates.append(i)
        elif kind == "apply" and f.op == "PUT":
            seg = _actor_of_segment(key)
            if seg is None:
                continue
            actor, name = seg
            g = segment_generation(name)
            sc.key_count.setdefault(actor, []).append(t)
            top = sc.keys.setdefault(actor, _Series())
            if not top.value or g > top.value[-1][0]:
                top.add(t, (g, key, i))
    history.cache["upgrade_seed"] = sc
    return sc


def _attempt_read(history: History, sc: _Scan, p: int, actor: str, s: int) -> int | None:
    """The attempt a create sent at s belongs to: its process's last read of leases/<actor> answered by
    then (a first acquisition reads leases/ first, and holds the actor's lock until the create's reply)."""
    events = history.events
    return next((r for r in reversed(sc.replies.get((p, actor), ()))
                 if events[r].t_ms <= s and events[r].fields.op == "GET"), None)


@invariant(INVARIANT, "the first acquisition seeds above the old lease and the keys, after a marker it knows of",
           kind="safety", rules=("UP-3",))
def check(history: History) -> list[Violation]:
    """every owners/ create that took effect is above the old lease and the keys its seeding listing
    could see (a failed listing decides nothing), follows a marker in the bucket, and rests on a marker
    its process learned of from the bucket in that attempt (read, or its write acknowledged)."""
    if not history.of_kind("leases_reply"):
        return []  # a history whose world recorded no answers on leases/ (hand-made): nothing to judge
    sc = _scan(history)
    events = history.events
    procs = history.processes
    out: list[Violation] = []
    for c in sc.creates:
        t_c, p, _kind, f = events[c]
        actor = f.key[len(OWNERS):]
        parts = f.state.split(" ")
        if len(parts) != 4 or parts[0] != "held":
            continue
        gen = int(parts[3])
        s = sent_ms(events[c])
        who = f"{procs[p].label}'s create of {f.key} at generation {gen} (sent {s / 1000:.3f} s)"
        replies = sc.replies.get((p, actor), [])
        read = _attempt_read(history, sc, p, actor, s)
        t_read = events[read].t_ms if read is not None else None

        # (a) above the old lease and every marker the bucket held before the create was sent
        top = sc.lease_top.get(actor)
        old = top.by(s) if top is not None else None
        if old is not None and gen <= old[0]:
            out.append(Violation(INVARIANT, f"(a) {who} is not above generation {old[0]}, which leases/{actor} "
                                       f"carried before it ({events[old[1]].fields.state})", (old[1], c)))
        # (a) above every key in the bucket when its seeding listing was sent
        listing = next((k for k in reversed(sc.listings.get((p, actor), []))
                        if events[k].fields.sent_ms <= s and (t_read is None or events[k].fields.sent_ms >= t_read)),
                       None)
        keys = sc.keys.get(actor)
        if listing is not None:
            sent = events[listing].fields.sent_ms
            seen = keys.by(sent, strict=True) if keys is not None else None
            if seen is not None and gen <= seen[0]:
                out.append(Violation(INVARIANT, f"(a) {who} is not above generation {seen[0]}, which {seen[1]} carried, "
                                           f"in the bucket when its seeding listing was sent ({sent / 1000:.3f} s)",
                                     (seen[2], listing, c)))
        else:
            since = t_read if t_read is not None else s
            n = bisect_right(sc.key_count.get(actor, []), since)
            if n:
                seen = keys.by(since)
                out.append(Violation(INVARIANT, f"(a) {who} followed no listing of the actor's keys delivered to it in "
                                           f"this attempt, while {n} key(s) of it were in the bucket (the highest "
                                           f"{seen[1]}): a listing that failed decides nothing",
                                     ((read,) if read is not None else ()) + (seen[2], c)))
        # (b) a marker in the bucket when the create was sent
        lease = sc.lease.get(actor)
        now = lease.by(s) if lease is not None else None
        if now is None or not str.startswith(now[0], MARKER):
            what = f"held {now[0]}" if now is not None and now[0] else "held nothing"
            out.append(Violation(INVARIANT, f"(b) {who}: leases/{actor} {what} then, no marker",
                                 ((now[1],) if now is not None else ()) + (c,)))
        # (c) a marker this process knew of, from the bucket, in this attempt
        if read is None:
            out.append(Violation(INVARIANT, f"(c) {who} followed no read of leases/{actor} answered to it", (c,)))
            continue
        rf = events[read].fields
        known = rf.status == "ok" and str.startswith(rf.state, MARKER)
        if not known:
            known = any(events[r].t_ms <= s and events[r].fields.op == "PUT" and events[r].fields.status == "ok"
                        and str.startswith(events[r].fields.state, MARKER)
                        for r in replies[replies.index(read) + 1:])
        if not known:
            found = (rf.state or "no object") if rf.status in ("ok", "not_found") else f"no answer ({rf.status})"
            out.append(Violation(INVARIANT, f"(c) {who} rests on no marker it knew of: its read of leases/{actor} "
                                       f"(answered {events[read].t_ms / 1000:.3f} s) found {found}, and no marker "
                                       f"write of its was acknowledged to it since", (read, c)))
    return out


@invariant(OLD_INVARIANT, "an old binary never takes an actor the new version marked or created", kind="safety",
           rules=("UP-4",))
def check_old(history: History) -> list[Violation]:
    """no write of an old binary on leases/<actor> takes effect after a marker was applied there or
    owners/<actor> was first written; none on nodes/<id> lands over a format-3 object when nodes/<id> held
    one, and only such, from the old binary's start on."""
    return _old_takes(history) + _old_over_new(history)


FORMAT_3 = ("live", "fenced", "released")  # the states of a `wasmkeep-node 3` object (NL-1)


def _old_over_new(history: History) -> list[Violation]:
    """UP-4 on nodes/: an old binary started after the switch cannot read a new heartbeat, so its start
    check reports its id as taken when a new node uses it. On world facts: a write of an old binary on
    `nodes/<id>` that lands over a format-3 object, where every object `nodes/<id>` held from that binary's
    start to that write was in format 3 (the id was taken all along: its start check read a format-3 object,
    whatever it was answered), names the old binary and the process whose object it wrote over."""
    events = history.events
    procs = history.processes
    started: dict[int, int] = {}
    for i in history.of_kind("start"):
        started.setdefault(events[i].proc, events[i].t_ms)
    changes: dict[str, list[tuple[int, str]]] = {}  # nodes/<id> -> (when, the state it took), in order
    out: list[Violation] = []
    flagged: set[int] = set()
    for i in history.of_kind("apply", "fault_delete", "fault_put"):
        t, p, kind, f = events[i]
        if not str.startswith(f.key, NODES):
            continue
        state = f.state if kind == "apply" else ("old" if kind == "fault_put" else "")
        history_of_key = changes.setdefault(f.key, [])
        if kind == "apply" and old_binary(history, p) and p not in flagged and p in started \
                and f.prev_state.split(" ")[0] in FORMAT_3:
            since = started[p]
            before = [st for when, st in history_of_key if when <= since]
            during = [st for when, st in history_of_key if when > since]
            if before and all(st.split(" ")[0] in FORMAT_3 for st in [before[-1], *during]):
                flagged.add(p)
                named = f.prev_state.split(" ")[1]
                whose = next((pr.label for pr in procs if pr.instance == named), f"instance {named}")
                out.append(Violation(OLD_INVARIANT, f"{procs[p].label}, an old binary started at {since / 1000:.3f} s "
                                                    f"while {f.key} held '{before[-1]}' (format 3: a new node used the "
                                                    f"id), wrote its heartbeat over {whose}'s '{f.prev_state}' at "
                                                    f"{t / 1000:.3f} s: its start check must report the id as taken",
                                     (i,)))
        history_of_key.append((t, state))
    return out


def _old_takes(history: History) -> list[Violation]:
    sc = _scan(history)
    events = history.events
    out: list[Violation] = []
    flagged: set[str] = set()
    for i in history.of_kind("apply"):
        t, p, _kind, f = events[i]
        if not str.startswith(f.key, LEASES) or not old_binary(history, p):
            continue
        actor = f.key[len(LEASES):]
        first = sc.first_new.get(actor)
        if first is None or first > i or actor in flagged:
            continue
        flagged.add(actor)
        fm = events[first].fields
        what = f"the marker on {fm.key} ({fm.state})" if str.startswith(fm.key, LEASES) else f"{fm.key} ({fm.state})"
        out.append(Violation(OLD_INVARIANT, f"{history.processes[p].label}, an old binary, wrote {f.key} "
                                  f"({f.prev_state or 'no object'} -> {f.state or 'deleted'}) at {t / 1000:.3f} s, "
                                  f"after {what} took effect at {events[first].t_ms / 1000:.3f} s", (first, i)))
    return out


# --- coverage: the races UP-3's clauses live in -------------------------------------------------------------


@dataclass
class _Races:
    marker_unknown: bool = False  # a new node's marker write whose outcome it could not know
    seeded_from_keys: bool = False  # a create whose read found no leases/ object while keys existed (the old GC's case)


UNKNOWN = ("request_lost", "reply_lost", "late")  # faults after which a writer does not know its write's outcome


def _races(c: Context) -> _Races:
    history = c.history
    out = _Races()
    sc = _scan(history)
    events = history.events
    for i in history.of_kind("fault"):
        t, p, _kind, f = events[i]
        if p < 0 or old_binary(history, p) or not isinstance(f.target, str):
            continue
        if f.what in UNKNOWN and str.startswith(f.target, "PUT " + LEASES):
            out.marker_unknown = True
    for k in sc.creates:
        t, p, _kind, f = events[k]
        actor = f.key[len(OWNERS):]
        s = sent_ms(events[k])
        read = _attempt_read(history, sc, p, actor, s)
        if read is not None and events[read].fields.status == "not_found" and \
                bisect_right(sc.key_count.get(actor, []), events[read].t_ms):
            out.seeded_from_keys = True
    return out


@point("marker write outcome unknown", "a new node's marker write on leases/ was lost, its reply lost, or it "
       "was held back past its timeout (landed or not): the writer must read leases/ again, never assume (UP-3)",
       topic="upgrade")
def _marker_unknown(c: Context) -> bool:
    return c.scan(_races).marker_unknown


@point("seeded from the keys alone", "a first acquisition read no leases/ object for an actor whose keys were in "
       "the bucket (the old GC collected its released lease): its seed comes from the keys (UP-3)", topic="upgrade")
def _seeded_from_keys(c: Context) -> bool:
    return c.scan(_races).seeded_from_keys


@point("old binary met a new node's id", "an old binary started while `nodes/<its id>` held a format-3 object (a new "
       "node used the id): its start check must report the id as taken (UP-4)", topic="upgrade")
def _old_met_new_id(c: Context) -> bool:
    history = c.history
    events = history.events
    format3: dict[str, bool] = {}  # nodes/<id> -> whether it holds a format-3 object now
    for i in history.of_kind("apply", "fault_delete", "fault_put", "start"):
        _t, p, kind, f = events[i]
        if kind == "start":
            if old_binary(history, p) and format3.get(NODES + f.node_id):
                return True
        elif str.startswith(f.key, NODES):
            format3[f.key] = kind == "apply" and f.state.split(" ")[0] in FORMAT_3
    return False


@point("old lease at the margins of its expiry", "a new node's first acquisition read an old binary's lease within "
       "safety before or grace after its expires_at, on the reader's clock, and its owner renewed it after that read "
       "(UP-3: live by the old rules until expires_at + grace)", topic="upgrade")  # (scenarios/faults/old_margins.py)
def _old_lease_at_margin(c: Context) -> bool:
    history = c.history
    events = history.events
    p = c.params
    renewed: dict[str, list[int]] = {}  # leases/ key -> when an old binary's write of it landed
    for i in history.of_kind("apply"):
        t, q, _kind, f = events[i]
        if str.startswith(f.key, LEASES) and old_binary(history, q) and str.startswith(f.state, "old-lease "):
            renewed.setdefault(f.key, []).append(t)
    for i in history.of_kind("leases_reply"):
        t, q, _kind, f = events[i]
        if f.op != "GET" or f.status != "ok" or not str.startswith(f.state, "old-lease ") or old_binary(history, q):
            continue
        expires = int(f.state.split(" ")[3])
        local = history.processes[q].clock.local(t)
        if expires - p.safety_ms <= local <= expires + p.grace_ms and any(w > t for w in renewed.get(f.key, ())):
            return True
    return False
