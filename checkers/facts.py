"""What the world knows, rebuilt once per history: node-lease validity, holds and acts.

Every checker judges the model against these facts (DESIGN.md: facts, then claims). They are
rebuilt only from what the world recorded: the writes the bucket applied (`apply`: what was
written, what it replaced, when it took effect and when its writer sent it), each process's
clock, its exit or crash, and what each process did outside itself (`served` and
`data_acked`, the replies it gave clients for an actor; the data writes it sent). The model's
own claims (`lease_valid`, `hold_began`, `hold_ended`, exit reasons) are never read here;
checkers read them only to cross-check them against these facts.

- A lease window of process p (NL-4): from the instant one of p's `live` writes on
  `nodes/<id>` took effect to its send time on p's own clock + ttl - safety, in true time.
  Windows merge; they end at p's exit or crash. Only applied writes grant validity, and only
  from their send time: a `written_at` that is not the sender's clock at send grants nothing
  more (LEASE-1 reports it).
- A hold (OR-3) of actor X by p at generation g: from the instant a write of `owners/X`
  naming p at g took effect, while that record is unchanged and p lives. It is valid (OR-4,
  INV-1) at the instants p's node lease is also valid: nothing can free the record while p's
  lease stands (a lapse that recovers proves `nodes/<id>` never changed, NL-11).
- An old binary's hold (section 6): from its write of `leases/X` (a live old lease) to its
  last renewal's send time on its clock + ttl - safety, while the record is unchanged but for
  its own renewals at that generation; a renewal landing after that validity ended opens a
  new stretch of the same hold (`renewal`).
- An act: p acted for X at true time t: it served a request (`served`), answered it when the
  request's event ended (`answered`; events take time, CS-1), sent a data write to `wal/X/`
  (at its send time, if it took effect), or told a client its write was durable (`data_acked`).
"""

from __future__ import annotations

from bisect import bisect_right
from operator import itemgetter
from dataclasses import dataclass, field

from model.params import Params

from history import History

OWNERS = "owners/"
NODES = "nodes/"
LEASES = "leases/"
DATA = "wal/"
KEY_CLASSES = (NODES, OWNERS, LEASES, DATA)  # the key classes `keyed` indexes (a key's first part with its slash)


@dataclass(slots=True)
class Hold:
    actor: str
    proc: int
    generation: int
    start_ms: int  # the record write took effect
    end_ms: int  # the record changed, the process ended (an old lease: also its validity ended)
    opened: int  # event index of the record write
    closed: int | None = None  # event index that ended it (None: the run's end, or an old lease's validity)
    how_closed: str = "the run's end"
    old: bool = False  # an old binary's per-actor lease (section 6)
    renewal: bool = False  # an old lease's renewal after its validity had ended (the same hold)
    # OR-4, NL-11: valid only with no lapse since it was acquired: the end of the window of its
    # process's node lease that holds the instant it was acquired; acquired while no window held its
    # process (a lapse), never valid. Acquired: when its process registered it (its `hold_began`, at
    # or after its record took effect: an acquisition whose reply was lost registers at its read-back,
    # which may follow a lapse and a recovery, OR-7), a claim bounded by the hold's first act (world
    # fact: nothing acts in a hold before registering it); no claim: the instant its record took effect
    lapse_ms: int = 1 << 62

    def describe(self, history: History) -> str:
        p = history.processes[self.proc]
        kind = "old lease" if self.old else "hold"
        return (f"{kind} of {self.actor} by {p.label} (machine {p.machine}) at generation {self.generation}, "
                f"its record from {self.start_ms / 1000:.3f} s to {self.end_ms / 1000:.3f} s, ended by "
                f"{self.how_closed}")


@dataclass(slots=True)
class LiveWrite:
    """One applied `live` write of a process's node lease."""

    applied_ms: int
    sent_ms: int
    sent_local_ms: int  # the sender's clock at send
    written_at_ms: int  # what the write says
    until_local_ms: int  # sent_local + ttl - safety
    until_ms: int  # the same, in true time
    event: int


@dataclass
class Facts:
    params: Params
    ended: dict[int, tuple[int, int]] = field(default_factory=dict)  # proc -> (true time, event) of exit/crash
    live_writes: dict[int, list[LiveWrite]] = field(default_factory=dict)  # proc -> in apply order
    lease: dict[int, list[tuple[int, int, int]]] = field(default_factory=dict)  # proc -> merged (start, end, event)
    holds: list[Hold] = field(default_factory=list)  # in the order they began
    acts: list[tuple[int, int, str, str, int]] = field(default_factory=list)  # (t, proc, actor, what, event)

    by_proc_actor: dict[tuple[int, str], list[Hold]] = field(default_factory=dict)
    lease_starts: dict[int, list[int]] = field(default_factory=dict)  # proc -> its lease windows' starts
    _held: dict | None = field(default=None, repr=False)  # held_spans(), built when first asked for

    def valid_at(self, h: Hold, t: int) -> bool:
        """Is hold h valid at true time t: its record names it, and (new holds) its lease is valid."""
        return h.start_ms <= t < h.end_ms and (h.old or t < h.lapse_ms and self.lease_valid_at(h.proc, t) is not None)

    def valid_hold(self, proc: int, actor: str, t: int) -> Hold | None:
        """The hold of `actor` by `proc` valid at true time t, if any."""
        for h in self.by_proc_actor.get((proc, actor), ()):
            if self.valid_at(h, t):
                return h
        return None

    def held_spans(self) -> dict[tuple[int, str], tuple[list[int], list[int]]]:
        """(proc, actor) -> the true-time spans in which some hold of the actor by the process is valid, merged:
        (their starts, their ends). `valid_hold(p, actor, t)` is not None exactly when t falls in one (the union
        of the holds' `windows`): a checker that asks it of every act finds the answer by bisection, not by four
        calls an act. Built once."""
        held = self._held
        if held is None:
            spans: dict[tuple[int, str], list[tuple[int, int]]] = {}
            for h in self.holds:
                ws = self.windows(h)
                if ws:
                    spans.setdefault((h.proc, h.actor), []).extend(ws)
            held = self._held = {}
            for k, ws in spans.items():
                ws.sort()
                starts: list[int] = []
                ends: list[int] = []
                for a, b in ws:
                    if ends and a <= ends[-1]:
                        ends[-1] = max(ends[-1], b)
                    else:
                        starts.append(a)
                        ends.append(b)
                held[k] = (starts, ends)
        return held

    def windows(self, h: Hold) -> list[tuple[int, int]]:
        """The true-time intervals in which hold h is valid."""
        if h.old:
            return [(h.start_ms, h.end_ms)] if h.end_ms > h.start_ms else []
        out = []
        for s, e, _i in self.lease.get(h.proc, ()):
            a, b = max(s, h.start_ms), min(e, h.end_ms, h.lapse_ms)
            if a < b:
                out.append((a, b))
        return out

    def lease_valid_at(self, proc: int, t: int) -> tuple[int, int, int] | None:
        """The lease window of `proc` containing true time t, if any."""
        ws = self.lease.get(proc)
        if not ws:
            return None
        k = bisect_right(self.lease_starts[proc], t) - 1
        if k >= 0 and t < ws[k][1]:
            return ws[k]
        return None


def facts(history: History) -> Facts:
    """The world's facts of one history (computed once, shared by every checker)."""
    cached = history.cache.get("facts")
    if cached is None:
        cached = history.cache["facts"] = _rebuild(history)
    return cached


def keyed(history: History, prefix: str, *kinds: str) -> list[int]:
    """The indices of the events of `kinds` (kinds with a `key` field: `apply`, `fault_delete`, `fault_put`,
    `record_reply`, `refused`...) whose key begins with `prefix`, a key's first part with its slash ("nodes/",
    "owners/", "leases/", "wal/"), in order. Indexed once per history and kinds (kept in its cache, shared: do
    not change it): a checker that reads one class of keys no longer walks the others (a seed applies four data
    writes for every write of an owners/ record)."""
    events = history.events
    if prefix not in KEY_CLASSES:  # (no checker asks for another: a scan, not an index)
        return [i for i in history.of_kind(*kinds) if str.startswith(events[i].fields.key, prefix)]
    cache = history.cache
    n = len(events)
    index = cache.get(("keyed",) + kinds)
    if index is None or index[0] != n:
        # (by `str.startswith`, one C call each, not the key's first part cut out: a method call and a new string)
        nodes: list[int] = []
        owners: list[int] = []
        leases: list[int] = []
        data: list[int] = []
        for i in history.of_kind(*kinds):
            _t, _p, _kind, f = events[i]
            key = f.key
            if str.startswith(key, NODES):
                nodes.append(i)
            elif str.startswith(key, OWNERS):
                owners.append(i)
            elif str.startswith(key, LEASES):
                leases.append(i)
            elif str.startswith(key, DATA):
                data.append(i)
        index = cache[("keyed",) + kinds] = (n, {NODES: nodes, OWNERS: owners, LEASES: leases, DATA: data})
    return index[1][prefix]


def act_actor(key: str) -> str:
    """The actor a data key belongs to: wal/<actor>/<segment>."""
    return key[len(DATA):].rsplit("/", 1)[0]


def _rebuild(history: History) -> Facts:
    params = Params(**history.params)
    span = params.ttl_ms - params.safety_ms
    procs = history.processes
    clocks = [p.clock for p in procs]
    fx = Facts(params)
    events = history.events
    for i in history.of_kind("exit", "crash"):
        t, p, kind, f = events[i]
        if p >= 0 and p not in fx.ended:
            # what it did in the millisecond it ended, before it ended, it did alive
            fx.ended[p] = (t + 1, i)

    # --- node leases from applied live writes --------------------------------------------
    raw: dict[int, list[list[int]]] = {}
    for i in keyed(history, NODES, "apply"):
        t, p, kind, f = events[i]
        if p < 0 or f.op != "PUT":
            continue
        parts = f.state.split(" ")
        pr = procs[p]
        if len(parts) != 3 or parts[0] != "live" or parts[1] != pr.instance or f.key != NODES + pr.node_id:
            continue
        sent = sent_ms(events[i])
        sent_local = clocks[p].local(sent)
        until_local = sent_local + span
        # (NL-4: valid while its clock reads less; a clock stepped back reads less again: `ends_at`, T-1)
        until = clocks[p].ends_at(until_local)
        fx.live_writes.setdefault(p, []).append(LiveWrite(t, sent, sent_local, int(parts[2]), until_local, until, i))
        if until > t:
            raw.setdefault(p, []).append([t, until, i])
    for p, ws in raw.items():
        merged = merge_windows(ws, fx.ended.get(p, (None,))[0])
        fx.lease[p] = [tuple(w) for w in merged]
        fx.lease_starts[p] = [w[0] for w in merged]

    # --- holds from applied records --------------------------------------------------------
    open_new: dict[str, Hold] = {}  # owners/ key -> the hold its record names
    open_old: dict[str, Hold] = {}  # leases/ key -> the old lease its record is

    def close(h: Hold, t: int, i: int | None, how: str) -> None:
        if t < h.end_ms:
            h.end_ms, h.closed, h.how_closed = max(t, h.start_ms), i, how

    writes = ("apply", "fault_delete", "fault_put")
    for i in sorted(keyed(history, OWNERS, *writes) + keyed(history, LEASES, *writes)):  # (the two in their order)
        t, p, kind, f = events[i]
        key = f.key
        if str.startswith(key, OWNERS):
            h = open_new.pop(key, None)
            if h is not None:
                close(h, t, i, "its record changing" if kind == "apply" else "its record deleted outside the protocol")
            if kind != "apply" or p < 0:
                continue
            parts = f.state.split(" ")
            pr = procs[p]
            if len(parts) == 4 and parts[0] == "held" and parts[1] == pr.node_id and parts[2] == pr.instance:
                h = Hold(key[len(OWNERS):], p, int(parts[3]), t, history.end_ms, i)
                stop = fx.ended.get(p)
                if stop is not None:
                    close(h, stop[0], stop[1], "its process ending")
                open_new[key] = h
                fx.holds.append(h)
        elif str.startswith(key, LEASES):
            parts = f.state.split(" ") if kind == "apply" else []
            cur = open_old.get(key)
            same = (cur is not None and p == cur.proc and len(parts) == 4 and parts[0] == "old-lease"
                    and int(parts[2]) == cur.generation and int(parts[3]) != 0)
            renewal = same and t < cur.end_ms
            if cur is not None and not renewal:
                open_old.pop(key)
                close(cur, t, i, "its old lease's record changing")
            if kind != "apply" or p < 0 or len(parts) != 4 or parts[0] != "old-lease" or int(parts[3]) == 0:
                continue
            until = clocks[p].ends_at(clocks[p].local(sent_ms(events[i])) + span)
            stop = fx.ended.get(p)
            if renewal:
                cur.end_ms = max(cur.end_ms, until if stop is None else min(until, stop[0]))
                continue
            h = Hold(key[len(LEASES):], p, int(parts[2]), t, max(t, until), i, None,
                     "its old lease's validity ending", old=True, renewal=same)
            if stop is not None and stop[0] < h.end_ms:
                close(h, stop[0], stop[1], "its process ending")
            open_old[key] = h
            fx.holds.append(h)

    # --- acts ---------------------------------------------------------------------------------
    for i in history.of_kind("served", "answered", "data_acked", "apply"):
        t, p, kind, f = events[i]
        if kind == "served":
            fx.acts.append((t, p, f.actor, "served a request", i))
        elif kind == "answered":
            fx.acts.append((t, p, f.actor, "answered a request (its event's end)", i))
        elif kind == "data_acked":
            fx.acts.append((t, p, f.actor, "acknowledged a data write", i))
        elif kind == "apply" and str.startswith(f.key, DATA) and f.op == "PUT" and p >= 0:
            fx.acts.append((sent_ms(events[i]), p, act_actor(f.key), "sent a data write", i))
    fx.acts.sort(key=itemgetter(0, 4))  # (time, event)
    began: dict[tuple[int, str, int], int] = {}  # (proc, actor, generation) -> its first hold_began
    for i in history.of_kind("hold_began"):
        t, p, _kind, f = events[i]
        began.setdefault((p, f.actor, f.generation), t)
    acted: dict[tuple[int, str], list[int]] = {}  # (proc, actor) -> its acts' instants, in time order
    for t, p, actor, _what, _i in fx.acts:
        acted.setdefault((p, actor), []).append(t)
    for h in fx.holds:
        fx.by_proc_actor.setdefault((h.proc, h.actor), []).append(h)
        if not h.old:
            # the claim is cross-checked: a process registers a hold before it acts in it, so its
            # first act at or after the record took effect bounds the claimed instant
            times = acted.get((h.proc, h.actor), ())
            k = bisect_right(times, h.start_ms - 1)
            first_act = times[k] if k < len(times) else 1 << 62
            at = max(h.start_ms, min(began.get((h.proc, h.actor, h.generation), h.start_ms), first_act))
            w = fx.lease_valid_at(h.proc, at)
            h.lapse_ms = w[1] if w is not None else at  # acquired while not valid: never valid
    return fx


def merge_windows(ws: list[list[int]], stop: int | None) -> list[list[int]]:
    """Validity windows [start, end, ...] in the order they began, cut at `stop` (None: not cut) and merged
    where they meet or overlap (the later ones' extra fields dropped)."""
    merged: list[list[int]] = []
    for w in ws:
        if stop is not None:
            w[1] = min(w[1], stop)
        if w[1] <= w[0]:
            continue
        if merged and w[0] <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], w[1])
        else:
            merged.append(w)
    return merged


def minus(span: tuple[int, int], others) -> list[tuple[int, int]]:
    """The parts of `span` outside every interval of `others` (sorted, disjoint)."""
    out, (a, b) = [], span
    for s, e in others:
        if e <= a or s >= b:
            continue
        if s > a:
            out.append((a, s))
        a = max(a, e)
        if a >= b:
            break
    if a < b:
        out.append((a, b))
    return out


def sent_ms(event) -> int:
    """When the writer of an `apply` (or `refused`) event sent it: its `sent_ms` field (the event's
    own time in hand-made histories that leave it out: None, or not a time)."""
    sent = event.fields.sent_ms
    return sent if isinstance(sent, int) else event.t_ms


def segment_generation(segment: str) -> int:
    """The generation a segment name carries: <generation>-<instance>-<seq> (ADR 0007)."""
    try:
        return int(segment.split("-", 1)[0])
    except ValueError:
        return 0


def pauses(history: History) -> dict[int, list[tuple[int, int]]]:
    """Per process, the true-time spans of its pauses, as the world recorded them (`fault` "pause" on the
    process, issue 47: it took no step; its inputs, its commands and its outgoing requests waited until it
    resumed). Computed once per history (kept in its cache, shared: do not change it)."""
    out = history.cache.get("pauses")
    if out is not None:
        return out
    out = history.cache["pauses"] = {}
    events = history.events
    for i in history.of_kind("fault"):
        t, p, _kind, f = events[i]
        if f.what == "pause" and p >= 0:
            out.setdefault(p, []).append((t, t + (f.ms or 0)))
    return out
