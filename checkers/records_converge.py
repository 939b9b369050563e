"""CONV-2 every record converges: a record naming a live instance is held by it, or worked on by it.

OR-5..OR-8 and CS-3 promise that once the faults are over every `owners/` record names nobody, or a
process that holds it, or one being taken over. Judged on what the bucket applied and what the world
delivered, never on what a process says:

- **The world's facts.** A record's state is the bucket's (`apply`). What a process sent on a record,
  and what it learned of it, is the world's `record_reply`: every request on an `owners/` key (or on its
  own `nodes/<id>`) a process sends is answered, by the bucket or by its timeout, and the world records
  the request (a PUT's own body: a release names nobody at the hold's generation) and the answer it
  delivered (a GET's object). Lease windows and ends are checkers/facts.py's.
- **Held.** A record R (`held n i g`, landed at t_R) is held by its instance p when p learned it (an
  answer delivered to p after t_R showed R: its write acknowledged, or a read of R), sent nothing since
  that gives generation g up (a write naming nobody at g, or an acquisition at a later generation over
  it), and p's node lease has held without a lapse from the learning to the instant judged (OR-4: a
  lapse ends every hold, NL-11; an answer showing the record that reaches p once its lease is valid
  again begins a hold afresh).
- **Worked on.** A record naming p that p does not hold (it never learned it: the write's outcome is
  unknown to it; it gave it up; or its lease lapsed since) must be worked on by p until it names
  something else: the resolver reads it (OR-8, every A at most, from the read-back's answer), a pending
  release is retried (OR-5, OR-6, backing off to 8 s in this model). Work is what the world saw p send
  on that record (and a new acquisition's marker read and data listing for its actor, OR-3, UP-3: the
  steps between its read of the record and its write), each bound timed on p's monotonic clock (a slow
  one, NTP slewing it, stretches its timers; a step of its wall clock moves none, issue 47). A silence longer than the work's bound while the record still names p is a
  violation: nobody else can free the record while p's lease stands (FN-5), and p no longer works for
  it. Only the time p was on duty counts: its node lease valid as p knew it (from the answers the world
  delivered to it: a `live` write of its own acknowledged, or NL-9's one re-read after that write was
  refused (or, never having learnt a write of its own landed, its reply lost: NL-7) showing it, each
  valid to its written_at + ttl - safety on p's clock, NL-4, NL-9; any other read of its own object
  grants it nothing, as it adopts nothing from it: `known_own_lease`; OR-6 pauses the work while it is
  invalid),
  and p not told to stop (CS-1 makes its lease invalid). That is the whole silence in the quiet phase,
  up to the run's end (the end state the ADR promises), and any stretch of the fault phase in which
  p's lease held as it knew it.
- **Every release ends.** A release p sent that did not land is one p must retry, the same write, until
  it lands, or a refusal of it is followed by a read (OR-5: the record no longer names p at g): an entry
  left open and untried for longer than the retry bound once the faults are over, its process running
  to the end, is a violation, whatever the record says by then (a drain waits on it for ever, CS-3).

A record naming a process that ended is INV-4's (FN-5 on the final `nodes/<n>`). A process whose
`nodes/<n>` was fenced or replaced keeps its duty until it learns it (its next lease write fails its
condition, and it exits: NL-10); peers take the record over (FN-5). A silence that is still within its
bound at the end is work still going: CONV-1 judges whether it ever ends. The model's own claims (its
`release_pending`, `acquire_unresolved`, ...) are printed beside a violation, never used to decide.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from operator import itemgetter

from model.io import CONFLICT, NOT_FOUND, OK, PRECONDITION_FAILED, PUT, TIMED_OUT

from .refusals import BACKOFF_MAX_MS  # OR-6's cap as docs/protocol.md states it: the checkers' own, not the model's

from history import History, Violation
from history.record import MONO_SLEW_PPM

from .converge import claim
from .facts import Facts, facts, keyed, merge_windows, minus
from .pending_entries import PENDING_AT_ONCE  # BD-2's cap, the checkers' own statement
from .registry import Context, invariant, margin, once, point

INVARIANT = "CONV-2"
OWNERS = "owners/"
LEASES = "leases/"
DATA = "wal/"
SLACK_MS = 250  # scheduling and rounding: timers fire on the process's clock, which may drift
REFUSED = (PRECONDITION_FAILED, NOT_FOUND)


def trips(history: History) -> int:
    """Four one-way trips at the drawn network delay, and a little slack."""
    return 4 * history.options.get("delay_ms_max", 120) + SLACK_MS


def on_clock(pr, ms: int) -> int:
    """The true ms a timer of `ms` on process pr's monotonic clock takes (issue 47: every timer and timeout
    runs on it, and a step of the wall clock moves none): one that runs slow (NTP's slew, at most
    MONO_SLEW_PPM) stretches every back-off and timeout it times. (Seed 4309, before: on the wall clock, 1.5 %
    slow, A = 8 s ran 8.26 s.)"""
    d = max(-MONO_SLEW_PPM, min(MONO_SLEW_PPM, pr.drift_ppm))
    return ms if d >= 0 else -(-ms * 1_000_000 // (1_000_000 + d)) + 1


def bounds(history: History, fx: Facts, pr=None) -> tuple[int, int]:
    """(the resolver's bound, a pending release's bound), in true ms: the longest process `pr` may leave
    a record it does not hold unworked while its lease is valid.

    - OR-7, OR-8: a write whose answer did not reach its sender (lost, timed out) is read back once its
      attempt is over, and an unresolved one read again A/8 later, backing off to every A, each read
      answered (or timed out) within A: whenever the write lands, the sender's next request on the record
      leaves within 2 A (its previous read's answer, then the back-off).
    - OR-5, OR-6, BD-4: a release is answered within A (a foreground one within 1 s, BD-4), a refused one
      read within A more; the retries back off from 500 ms to 8 s (this model's reading of "retries back
      off", docs/protocol.md): the next request comes within 8 s + 2 A.
    Each timed on pr's monotonic clock (NTP may slew it slow), with four one-way trips at the drawn delay
    and a little slack."""
    a = fx.params.attempt_timeout_ms
    clock = (lambda ms: on_clock(pr, ms)) if pr is not None else (lambda ms: ms)
    return clock(2 * a) + trips(history), clock(BACKOFF_MAX_MS + 2 * a) + trips(history)


class _Io:
    """What the world saw each process send on each record, and learn of it (`record_reply`)."""

    def __init__(self, history: History) -> None:
        events = history.events
        self.sends: dict[tuple[int, str], list[int]] = {}  # (proc, key) -> send instants, sorted
        self.learned: dict[tuple[int, str], list[tuple[int, str, int]]] = {}  # -> (answered at, state, event)
        self.puts: dict[tuple[int, str], list[tuple[int, str, str, int, int]]] = {}  # -> (sent, state, status,
        #                                                                           answered at, event)
        self.reads: dict[tuple[int, str], list[tuple[int, str, str, int]]] = {}  # -> (sent, status, state, event)
        for i in keyed(history, OWNERS, "record_reply"):
            t, p, _kind, f = events[i]
            k = (p, f.key)
            self.sends.setdefault(k, []).append(f.sent_ms)
            if f.status == OK and str.startswith(f.state, "held "):
                self.learned.setdefault(k, []).append((t, f.state, i))
            if f.op == PUT:
                self.puts.setdefault(k, []).append((f.sent_ms, f.state, f.status, t, i))
            else:
                self.reads.setdefault(k, []).append((f.sent_ms, f.status, f.state, i))
        # an acquisition's own steps between its read of the record and its write (OR-3, UP-3: the marker
        # `leases/<actor>` read or written, the actor's data listed to restore) are work on that record: the
        # write that ends them is one more request on it, and the actor's lock keeps the resolver waiting
        # meanwhile (seed 16683: three slow replies in a row between the read and the write). The world
        # records those it answered (`leases_reply`, `listed`); one that timed out is a gap of A at most.
        for i in history.of_kind("leases_reply", "listed"):
            t, p, kind, f = events[i]
            key = _actor_record(f.key if kind == "leases_reply" else f.prefix)
            if key is not None and p >= 0:
                self.sends.setdefault((p, key), []).append(f.sent_ms)
        # a background request (the resolver's, a pending release's) the world saw leave (`background_sent`)
        # is work even when no answer ever came: its process crashed with it in flight (seed 9859 of the
        # merged draw: a restart race's crash 457 ms after the resolver's read left)
        for i in history.of_kind("background_sent"):
            t, p, _kind, f = events[i]
            if str.startswith(f.key, OWNERS) and p >= 0:
                self.sends.setdefault((p, f.key), []).append(t)
        # a request still in flight at the run's end has no answer yet: the world recorded it as `sent` if it
        # left in the quiet phase's last span (CONV-1's)
        for i in history.of_kind("sent"):
            t, p, _kind, f = events[i]
            key = f.key if str.startswith(f.key, OWNERS) else _actor_record(f.key)
            if key is not None and p >= 0:
                self.sends.setdefault((p, key), []).append(t)
        for v in self.sends.values():
            v.sort()


def _actor_record(key: str) -> str | None:
    """The owners/ record of the actor a `leases/<actor>` marker or a `wal/<actor>/` listing is about."""
    if str.startswith(key, LEASES):
        return OWNERS + key[len(LEASES):]
    if str.startswith(key, DATA) and key.endswith("/"):
        return OWNERS + key[len(DATA):-1]
    return None


def records_io(history: History) -> _Io:
    """The history's `_Io`, read once (the check and the coverage points share it)."""
    return once(history, "records_io", lambda: _Io(history))


def _gen(state: str) -> int | None:
    """The generation a record's state line carries ("held n i g", "nobody g"), else None."""
    parts = state.split(" ")
    try:
        return int(parts[-1]) if parts[0] in ("held", "nobody") else None
    except ValueError:
        return None


def _gives_up(state: str, held: str, g: int) -> bool:
    """A write of `state` over a record `held` at generation g ends p's hold of it: a release of g (nobody
    g), or an acquisition at a later generation (OR-3 over its own instance)."""
    gen = _gen(state)
    return gen is not None and state != held and gen >= g


class _Duty:
    """When a process was on duty for its records: its node lease valid as it knew it (NL-4, NL-9: from
    the answers the world delivered to it: a `live` write of its own acknowledged, or a read of its own
    `live` object after a refusal, each valid until its written_at + ttl - safety on its clock), and it
    not told to stop (CS-1 makes its lease invalid), nor paused (the world stopped it: scenarios/faults/pauses.py).
    Off duty, its work pauses (OR-6). Nor is it on duty
    for one more record while its background task works as many entries as BD-2 lets it (32 of its
    requests in flight, as the world counted them at each send and delivered their answers): an entry
    then waits for a slot, and a record's silence is measured on either side of that wait (a node that
    releases a crowd of actors at once, scenarios/faults/release_crowd.py)."""

    def __init__(self, history: History, fx: Facts, trips: int) -> None:
        events = history.events
        procs = history.processes
        span = fx.params.ttl_ms - fx.params.safety_ms
        self.stop: dict[int, int] = {}  # proc -> when it was told to stop, or sent its `released` write
        raw: dict[int, list[list[int]]] = {}
        for i in history.of_kind("told", "released_sent"):
            t, q, kind, f = events[i]
            if kind == "released_sent" or f.command == "stop":
                self.stop.setdefault(q, t)
        for q, t, written_at in known_own_lease(history):
            until = procs[q].clock.ends_at(written_at + span)
            if until > t:
                raw.setdefault(q, []).append([t, until])
        full = _at_cap(history)
        # a paused process takes no step (SIGSTOP, a GC pause: the world's `pause` events, issue 47): off duty
        for i in history.of_kind("fault"):
            t, q, _kind, f = events[i]
            if f.what == "pause" and q >= 0 and f.ms:
                full[q] = _merged(list(full.get(q, ())) + [(t, t + f.ms)])
        self.known: dict[int, list[tuple[int, int]]] = {}
        for q, ws in raw.items():
            stop = min(self.stop.get(q, 1 << 62), fx.ended.get(q, (1 << 62,))[0])
            self.known[q] = _without([(a, b) for a, b in merge_windows(ws, stop)], full.get(q, ()))
        self.starts = {q: [a for a, _b in ws] for q, ws in self.known.items()}

    def longest(self, p: int, a: int, b: int) -> tuple[int, int]:
        """The longest stretch of [a, b] in which p was on duty: (its start, its length)."""
        ws = self.known.get(p, ())
        k = max(bisect_right(self.starts.get(p, ()), a) - 1, 0)
        best, at = 0, a
        for s, e in ws[k:]:
            if s >= b:
                break
            x, y = max(s, a), min(e, b)
            if y - x > best:
                best, at = y - x, x
        return at, best


def known_own_lease(history: History) -> list[tuple[int, int, str]]:
    """(proc, when, written_at on its clock) for each answer the world delivered to a process that told it
    its own `live` object on `nodes/<id>` stood (NL-4, NL-9): its lease write acknowledged (a PUT answered
    ok), or NL-9's one re-read after that write failed its condition (412, 409, 404), or after its reply
    was lost while it had never learnt a live write of its own landed (NL-7: a first write follows NL-9
    first): the first read of its key sent at or after that answer and before its next write, showing its
    own `live` object. Any other read of its own object (FN-5's read of `nodes/<own id>` to free a record
    naming another instance of its node, a start check's) tells it nothing about its validity: it does not
    adopt what it shows (seed 3 at ttl 10 s: reads while its last write's reply was lost showed that
    write, and the lease as it knew it ran out 4 s before the lease those reads would have granted)."""
    events = history.events
    procs = history.processes
    out: list[tuple[int, int, str]] = []
    learnt: set[int] = set()  # processes that learnt a live write of their own landed
    reread: dict[int, int] = {}  # proc -> the answer of its failed lease write its next read re-reads after
    for i in keyed(history, "nodes/", "record_reply"):
        t, q, _kind, f = events[i]
        if q < 0 or f.key != "nodes/" + procs[q].node_id:
            continue
        parts = f.state.split(" ")
        own_live = f.status == OK and len(parts) == 3 and parts[0] == "live" and parts[1] == procs[q].instance
        if f.op == PUT:
            if f.sent_ms >= reread.get(q, 1 << 62):
                reread.pop(q)  # a write sent since: that re-read, if any, is no longer NL-9's
            if own_live:
                learnt.add(q)
                out.append((q, t, int(parts[2])))
            elif f.status in REFUSED + (CONFLICT,) or f.status == TIMED_OUT and q not in learnt:
                reread[q] = t
            continue
        at = reread.get(q)
        if at is None or f.sent_ms < at:
            continue
        del reread[q]  # NL-9 reads once
        if own_live:
            learnt.add(q)
            out.append((q, t, int(parts[2])))
    return out


def _at_cap(history: History) -> dict[int, list[tuple[int, int]]]:
    """proc -> the stretches in which its background task had PENDING_AT_ONCE requests in flight (BD-2: no
    other entry may be worked then), from the world's `background_sent` (its count, this one included)
    and `background_answered` (each answer delivered: a reply, or the timeout)."""
    events = history.events
    flying: dict[int, int] = {}
    since: dict[int, int] = {}
    out: dict[int, list[tuple[int, int]]] = {}
    for i in history.of_kind("background_sent", "background_answered"):
        t, q, kind, f = events[i]
        n = f.in_flight if kind == "background_sent" else max(flying.get(q, 0) - 1, 0)
        was = flying.get(q, 0)
        flying[q] = n
        if n >= PENDING_AT_ONCE > was:
            since[q] = t
        elif was >= PENDING_AT_ONCE > n and q in since:
            out.setdefault(q, []).append((since.pop(q), t))
    for q, t in since.items():
        out.setdefault(q, []).append((t, history.end_ms))
    return out


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """`spans` sorted and made disjoint (overlapping ones joined)."""
    out: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _without(windows: list[tuple[int, int]], holes) -> list[tuple[int, int]]:
    """`windows` (sorted, disjoint) less the stretches `holes` (sorted, disjoint)."""
    return [part for w in windows for part in minus(w, holes)] if holes else windows


def _judge(history: History, fx: Facts) -> tuple[list[Violation], int | None]:
    events = history.events
    procs = history.processes
    end = history.end_ms
    io = records_io(history)
    duty = _Duty(history, fx, trips(history))
    by_label = {(pr.node_id, pr.instance): k for k, pr in enumerate(procs)}
    out: list[Violation] = []
    least: int | None = None
    flagged: set[tuple[int, str, int]] = set()

    # --- the records, interval by interval ---------------------------------------------------------
    intervals: list[tuple[str, int, int, int]] = []  # (key, landed at, until, apply event)
    current: dict[str, tuple[int, int]] = {}  # key -> (landed at, apply event) of a record naming someone
    for i in keyed(history, OWNERS, "apply", "fault_delete", "fault_put"):
        t, q, kind, f = events[i]
        cur = current.pop(f.key, None)
        if cur is not None:
            intervals.append((f.key, cur[0], t, cur[1]))
        if kind == "apply" and f.serial and str.startswith(f.state, "held "):
            current[f.key] = (t, i)
    for key, (t, i) in current.items():
        intervals.append((key, t, end, i))
    intervals.sort(key=itemgetter(1, 0))  # (landed at, key)

    for key, t_r, until, a_ev in intervals:
        f = events[a_ev].fields
        parts = f.state.split(" ")
        p = by_label.get((parts[1], parts[2])) if len(parts) == 4 else None
        if p is None or procs[p].machine in ("op",) or str.startswith(procs[p].machine, "om"):
            continue
        g = int(parts[3])
        stop = min(until, fx.ended.get(p, (end,))[0], end)
        if stop <= t_r:
            continue
        k = (p, key)
        g_resolve, g_release = bounds(history, fx, procs[p])
        answers = [t for t, s, _i in io.learned.get(k, ()) if t >= t_r and s == f.state and t < stop]
        learned = answers[0] if answers else None
        give = next(((s, st, i) for s, st, _status, _t, i in io.puts.get(k, ())
                     if s >= t_r and s < stop and _gives_up(st, f.state, g)), None)
        held_to = stop if give is None else give[0]
        knew = min(x for x in (learned, held_to) if x is not None)
        # (from, to, bound, why): the stretches in which p had to work on the record
        segments: list[tuple[int, int, int, str]] = [
            (t_r, knew, g_resolve, "it did not know that record (no answer showing it, its write's or a read's, had "
                                   "reached it yet): its read-back and the resolver must read it (OR-7, OR-8)")]
        # a lapse after it learned the record ends the hold (NL-11) until an answer showing the record
        # reaches it again once its lease is valid: that answer begins a hold afresh (OR-4; seed 2479: an
        # acquisition's acknowledgement delayed past a lapse and the lease's renewal)
        cur, last_to = learned, None
        while cur is not None and cur < held_to:
            w = fx.lease_valid_at(p, cur)
            if w is None or w[1] >= held_to:
                break
            back = _next_window(fx, p, w[1])
            if back is None or back >= stop:
                break
            again = next((t for t in answers if t >= back and fx.lease_valid_at(p, t) is not None), None)
            again = again if again is not None and again < held_to else None
            last_to = stop if again is None else again
            segments.append((back, last_to, g_release, f"its node lease lapsed at {w[1] / 1000:.3f} s after it "
                                                       f"learned the record: the lapse ended the hold into a pending "
                                                       f"release (NL-11, OR-5)"))
            cur = again
        if give is not None and last_to != stop:
            segments.append((give[0], stop, g_release, f"it gave it up (sent {give[1]!r} at {give[0] / 1000:.3f} s): its "
                                                       f"release must be retried until it ends (OR-5, OR-6)"))
        sends = io.sends.get(k, [])
        for s0, s1, bound, why in segments:
            if s1 <= s0:
                continue
            lo, hi = bisect_right(sends, s0), bisect_left(sends, s1)
            points = [s0] + sends[lo:hi] + [s1]
            for a, b in zip(points, points[1:]):
                if b - a <= bound // 2:
                    continue  # (too short to matter: the margin's least slack is below half the bound)
                # p's work pauses while its lease is invalid, or not known to it to be valid (OR-6)
                a, length = duty.longest(p, a, b)
                slack = bound - length
                least = slack if least is None else min(least, slack)
                b = a + length
                if slack < 0 and (p, key, g) not in flagged:
                    flagged.add((p, key, g))
                    out.append(Violation(
                        INVARIANT,
                        f"{key} named {procs[p].label} at generation {g} (version {f.serial}, written by "
                        f"{_who(history, a_ev)} at {t_r / 1000:.3f} s, its last write then) while {procs[p].label} held "
                        f"nothing for it: {why}; yet it sent nothing on that record from {a / 1000:.3f} s to "
                        f"{b / 1000:.3f} s ({(b - a) / 1000:.3f} s, beyond the bound of {bound / 1000:.3f} s), its node "
                        f"lease valid, and known to it, throughout, and nobody else could free it (FN-5)"
                        f"{claim(history, p, key[len(OWNERS):], b)}",
                        (a_ev,) + ((give[2],) if give is not None else ())))

    # --- every release ends -----------------------------------------------------------------------
    quiet_t = events[history.of_kind("quiet")[0]].t_ms if history.of_kind("quiet") else None
    if quiet_t is not None:
        p_ = fx.params
        resume = quiet_t + p_.period_ms + p_.attempt_timeout_ms  # leases are valid again by then
        for (p, key), puts in sorted(io.puts.items()):
            if p in fx.ended or duty.stop.get(p, 1 << 62) <= end or fx.lease_valid_at(p, end - 1) is None:
                continue
            chains: dict[int, list[tuple[int, str, int, int]]] = {}
            for s, st, status, t, i in puts:
                if str.startswith(st, "nobody "):
                    chains.setdefault(int(st.split(" ")[1]), []).append((s, status, t, i))
            reads = io.reads.get((p, key), [])
            for g, chain in sorted(chains.items()):
                if (p, key, g) in flagged or _ended(chain, reads, f"held {procs[p].node_id} {procs[p].instance} {g}"):
                    continue
                last = chain[-1]
                since, length = duty.longest(p, max(last[0], resume), end)
                slack = bounds(history, fx, procs[p])[1] - length
                least = slack if least is None else min(least, slack)
                if slack < 0:
                    flagged.add((p, key, g))
                    out.append(Violation(
                        INVARIANT,
                        f"{procs[p].label} released {key} at generation {g} ({len(chain)} attempt(s), the last sent at "
                        f"{last[0] / 1000:.3f} s and answered {last[1]!r}): that release never landed and never ended "
                        f"(no refusal of it followed by a read), yet it was not tried again from "
                        f"{since / 1000:.3f} s to {(since + length) / 1000:.3f} s, the run's end, once every fault was over: a "
                        f"pending release left for ever (OR-5, OR-6; a drain would wait on it, CS-3)"
                        f"{claim(history, p, key[len(OWNERS):], end)}",
                        (chain[0][3], last[3])))
    return out, least


def _ended(chain, reads, held: str) -> bool:
    """Did this release end as OR-5 ends one: an attempt landed, or a refused one was followed by a read
    (sent once the refusal reached the releaser) showing the record no longer names it at its generation?"""
    sent = sorted(reads)
    for s, status, t, _i in chain:
        if status == OK:
            return True
        if status in REFUSED:
            k = bisect_left([r[0] for r in sent], t)
            for r_t, r_status, r_state, _j in sent[k:]:
                if r_status == OK and r_state != held or r_status == NOT_FOUND:
                    return True
                if r_status == OK:
                    break  # it still names it: retried (the chain goes on)
    return False


def _next_window(fx: Facts, p: int, after: int) -> int | None:
    starts = fx.lease_starts.get(p, [])
    k = bisect_right(starts, after)
    return starts[k] if k < len(starts) else None


def _who(history: History, i: int) -> str:
    q = history.events[i].proc
    return history.processes[q].label if q >= 0 else "the world"


def _verdict(history: History, fx: Facts | None = None) -> tuple[list[Violation], int | None]:
    fx = facts(history) if fx is None else fx
    return once(history, "records_converge", lambda: _judge(history, fx))


@invariant(INVARIANT, "every record converges: held by the instance it names, or worked on by it",
           kind="liveness", rules=("OR-5", "OR-6", "OR-7", "OR-8", "CS-3"), quiet=True)
def check(history: History, fx: Facts | None = None) -> list[Violation]:
    if not history.of_kind("quiet"):
        return []
    return list(_verdict(history, fx)[0])


@margin("record_work", "the least slack, over every record naming an instance that did not hold it, between the "
        "longest the instance left it unworked (on duty: its lease valid as it knew it) and that work's bound (the "
        "resolver's 2 A, a pending release's 8 s + 2 A), and over every release left open at the end",
        invariant=INVARIANT, rules=("OR-5", "OR-6", "OR-8"))
def _record_work(c: Context) -> int | None:
    if not c.history.of_kind("quiet"):
        return None
    return _verdict(c.history, c.facts)[1]


# --- the situations record convergence needs (coverage points) -----------------------------------
#
# Drains and moves that meet an open entry are where a record is most easily left naming a node that
# no longer works for it (CS-3, OR-11): the drain waits on the entry, and it refuses the requests that
# would otherwise re-acquire the record. Each open entry is read from world facts (`record_reply`,
# `fence_sent`), never from the process's claims.


class _Open:
    """Per process, the stretches of true time in which it had an entry open, by kind."""

    def __init__(self, c: Context) -> None:
        history = c.history
        io = records_io(history)
        a = c.params.attempt_timeout_ms
        procs = history.processes
        self.spans: dict[str, dict[int, list[tuple[int, int]]]] = {
            "release": {}, "unresolved": {}, "readback": {}, "fences": {}}
        end = history.end_ms
        for (p, key), puts in io.puts.items():
            reads = sorted(io.reads.get((p, key), ()))
            read_sent = [r[0] for r in reads]
            chains: dict[int, list[tuple[int, str, int, int]]] = {}
            for s, st, status, t, i in puts:
                if str.startswith(st, "nobody "):
                    chains.setdefault(int(st.split(" ")[1]), []).append((s, status, t, i))
                elif str.startswith(st, "held ") and status != OK:
                    # an acquisition with an unknown outcome: its read-back is the next read it sent (OR-7)
                    k = bisect_left(read_sent, t)
                    if k == len(reads):
                        continue
                    r_sent, r_status, r_state, j = reads[k]
                    answered = history.events[j].t_ms
                    self._add("readback", p, r_sent, answered)
                    named = history.events[i].fields.named_serial
                    if r_status == OK and (r_state == st or history.events[j].fields.serial != named):
                        continue  # its own write, or changed: decided at once
                    until = next((history.events[jj].t_ms for _s, rs, _st, jj in reads[k + 1:]
                                  if rs == OK and history.events[jj].fields.serial != named), end)
                    self._add("unresolved", p, answered, until)
            for g, chain in chains.items():
                held = f"held {procs[p].node_id} {procs[p].instance} {g}"
                first_failed = next((t for _s, status, t, _i in chain if status != OK), None)
                if first_failed is None:
                    continue
                landed = next((t for _s, status, t, _i in chain if status == OK), None)
                ended = landed
                for _s, status, t, _i in chain:
                    if status in REFUSED:
                        k = bisect_left(read_sent, t)
                        r = next((history.events[j].t_ms for _rs, r_status, r_state, j in reads[k:]
                                  if r_status == OK and r_state != held or r_status == NOT_FOUND), None)
                        if r is not None:
                            ended = r if ended is None else min(ended, r)
                            break
                self._add("release", p, first_failed, end if ended is None else ended)
        cap = 8  # BD-1 (model.fencing.FENCE_CONCURRENCY): the world counts a process's fences in flight
        for i in history.of_kind("fence_sent"):
            t, p, _k, f = history.events[i]
            if f.in_flight >= cap:
                self._add("fences", p, t, t + a)  # (at most: each of them is answered within A)
        for spans in self.spans.values():
            for v in spans.values():
                v.sort()

    def _add(self, kind: str, p: int, a: int, b: int) -> None:
        if b > a:
            self.spans[kind].setdefault(p, []).append((a, b))

    def at(self, kind: str, p: int, t: int) -> bool:
        return any(a <= t < b for a, b in self.spans[kind].get(p, ()))


def told(c: Context) -> list[tuple[str, int, int]]:
    """("drain" or "move", the process told, when): a drain the world told a process, and a move the world
    asked of whoever holds an actor (the process its record named then, in the bucket)."""
    history = c.history
    events = history.events
    procs = history.processes
    by_label = {(pr.node_id, pr.instance): k for k, pr in enumerate(procs)}
    names: dict[str, int] = {}  # owners/ key -> the process it names
    out = []
    for i in history.of_kind("told", "moved", "apply"):
        t, p, kind, f = events[i]
        if kind == "apply":
            if str.startswith(f.key, OWNERS):
                parts = f.state.split(" ")
                q = by_label.get((parts[1], parts[2])) if len(parts) == 4 and parts[0] == "held" else None
                if q is None:
                    names.pop(f.key, None)
                else:
                    names[f.key] = q
        elif kind == "told":
            if f.command == "drain" and p >= 0:
                out.append(("drain", p, t))
        elif OWNERS + f.actor in names:
            out.append(("move", names[OWNERS + f.actor], t))
    return out


def _open(c: Context) -> _Open:
    return c.scan(_Open)


def _told(c: Context) -> list[tuple[str, int, int]]:
    return c.scan(told)


def told_while(c: Context, kind: str) -> set[str]:
    """Which of drain and move were told to a process while it had an entry of `kind` open."""
    o = _open(c)
    return {what for what, p, t in _told(c) if o.at(kind, p, t)}


@point("drain or move told while a release is pending", "a node was told to drain, or asked to move an actor it "
       "held, while a release of its own had failed (or gone unanswered) and not ended (OR-5, OR-11, CS-3)",
       topic="clean stop and drain")
def _told_while_pending(c: Context) -> bool:
    return bool(told_while(c, "release"))


@point("drain or move told while an acquisition is unresolved", "a node was told to drain, or asked to move an "
       "actor it held, while an acquisition of its own was unresolved: its write unanswered, its read-back "
       "showing the record unchanged or failing, and no read since showing a change (OR-7, OR-8, CS-3)",
       topic="clean stop and drain")
def _told_while_unresolved(c: Context) -> bool:
    return bool(told_while(c, "unresolved"))


@point("drain or move told while a read-back is in flight", "a node was told to drain, or asked to move an actor "
       "it held, while the read-back of an acquisition of its own that did not succeed was in flight (OR-7, CS-3)",
       topic="clean stop and drain")
def _told_while_readback(c: Context) -> bool:
    return bool(told_while(c, "readback"))


@point("drain or move told while the fence cap is full", "a node was told to drain, or asked to move an actor it "
       "held, within an attempt timeout of sending its eighth fence in flight (BD-1: the cap full, at most)",
       topic="clean stop and drain")
# (required since the 20,000-seed sweep at f64f46e: reached in 2,770 seeds, 13.9 %; only the seeds of a fence crowd
# or a mass crowd can fill the cap, 3,888 of the 20,000, 71 % of them; the world tells a drain or a move whenever it
# sees the cap full, scenarios/faults/crossed_fences.py)
def _told_while_fences_full(c: Context) -> bool:
    return bool(told_while(c, "fences"))


@point("a lost acquisition's record released by its resolver", "an acquisition's write went unanswered, landed, and "
       "its writer, which never learned it from an answer, released it (OR-7, OR-8: the record converged)",
       topic="ownership")
def _resolver_released(c: Context) -> bool:
    """World facts: an acquisition's write of p (`held ...`) answered other than ok (the world's `record_reply`:
    its outcome unknown to p), applied all the same (`apply` of that state by p), then p's release of that
    generation applied over it (issue 44: a release that landed, not one merely sent)."""
    history = c.history
    events = history.events
    io = records_io(history)
    for (p, key), puts in io.puts.items():
        lost = {st for _s, st, status, _t, _i in puts if str.startswith(st, "held ") and status != OK}
        if not lost:
            continue
        applied = [(i, events[i].fields.state) for i in c.writes(OWNERS)
                   if events[i].fields.key == key and events[i].proc == p]
        for k, (i, st) in enumerate(applied):
            if st in lost:
                g = st.split(" ")[3]
                if any(later == f"nobody {g}" for _j, later in applied[k + 1:]):
                    return True
    return False


@point("a failed release retried until it landed", "a release that failed or went unanswered was retried, the same "
       "write, until one landed (OR-5, OR-6)", topic="ownership")
def _release_retried(c: Context) -> bool:
    io = records_io(c.history)
    for puts in io.puts.values():
        failed: set[str] = set()
        for _s, st, status, _t, _i in puts:
            if str.startswith(st, "nobody "):
                if status == OK and st in failed:
                    return True
                if status != OK:
                    failed.add(st)
    return False
