"""What a run leaves behind: the history every checker judges.

A history is the seed's drawn options, a table of processes (each with the
clock it ran on) and a list of events `Event(t_ms, proc, kind, fields)` in true
time order (history/schema.py: the fields are named by kind). `proc` indexes
`processes`; `kind` is one of model.observations.KINDS. The encoding used for
hashing is stable: JSON of primitives with sorted keys for the header and the rules, and the events by
`marshal` at version 2 (HASH_VERSION; JSON throughout before it), no `repr`, no `hash()`.

Worlds write histories and checkers read them; this package imports neither
(the layers: model, then history, then scenarios, then checkers).
"""

from __future__ import annotations

import hashlib
import json
import marshal
from dataclasses import dataclass, field

from model.observations import KINDS, LOCAL_CLOCK_FIELDS

from .schema import Event, event


# The encoding a history's hash is of (`History.encode`): 1, JSON throughout (every report and plan written before
# issue 46's fifth round, which hold no `hash_version`); 2, the header and rules as JSON and the events by marshal,
# half the instructions. What the tool writes carries the version its hashes are of; readers compute the hash the
# stored file names (`hash_version`), so an older report or plan replays as the same run.
HASH_VERSION = 2
HASH_VERSIONS = (1, 2)


def check_hash_version(doc: dict, what: str) -> None:
    """A stored report's or plan's `hash_version` (the encoding its history hashes are of), if it holds one, is
    one this tool computes: UsageError otherwise (a file written by a newer tool)."""
    from house.errors import UsageError

    v = hash_version(doc)
    if not isinstance(v, int) or isinstance(v, bool) or v not in HASH_VERSIONS:
        raise UsageError(f"{what} holds history hashes of an encoding this tool does not know (hash_version "
                         f"{v!r}; it knows {', '.join(map(str, HASH_VERSIONS))}): written by a newer tool?")


def hash_version(doc: dict):
    """The encoding a stored report's or plan's hashes are of: its `hash_version`, 1 when it holds none (written
    before the version was recorded). Not checked here: `History.encode` refuses one it does not know."""
    return doc.get("hash_version", 1)


MONO_SLEW_PPM = 500  # the most NTP slews a monotonic clock (Linux's adjtimex bound): a wait's true span may be this much shorter


class Clock:
    """A machine's clock: local(t) = t + offset + floor(t * drift_ppm / 1e6), but for its steps.

    And its monotonic clock (issue 47; `mono`): true time since the world began, running at the wall clock's
    drift as far as NTP's slew bounds it (MONO_SLEW_PPM), never stepped. The model times every duration on
    it (model.io.Now); a checker judges a duration on it (`mono_span`), never on the wall clock.

    `steps`: ((at_ms, delta_ms), ...) in time order, the clock jumping by delta at true instant at
    (NTP stepping it forward or back, issue 39); `offset_ms` is the offset after the last of them, so
    that the reading now (past every step so far) is the plain formula, as the world's hot path reads
    it. Before a step, the offset was that step's delta less. Between two steps the clock runs on
    (monotonic, as drift is less than 1e6 ppm); across a step back it reads the same instant twice.
    """

    __slots__ = ("offset_ms", "drift_ppm", "steps", "mono_ppm")

    def __init__(self, offset_ms: int, drift_ppm: int = 0, steps: tuple = ()) -> None:
        self.offset_ms = offset_ms
        self.drift_ppm = drift_ppm
        self.steps = steps
        self.mono_ppm = max(-MONO_SLEW_PPM, min(MONO_SLEW_PPM, drift_ppm))

    def mono(self, t_ms: int) -> int:
        """The monotonic clock's reading at true instant t: never stepped, its drift within the slew bound."""
        return t_ms + (t_ms * self.mono_ppm) // 1_000_000

    def mono_true_at(self, mono_ms: int) -> int:
        """The first true instant at which the monotonic clock reads `mono_ms` or later."""
        d = self.mono_ppm
        if not d:
            return mono_ms
        t = (mono_ms * 1_000_000) // (1_000_000 + d)
        while t + (t * d) // 1_000_000 < mono_ms:
            t += 1
        while (t - 1) + ((t - 1) * d) // 1_000_000 >= mono_ms:
            t -= 1
        return t

    def mono_span(self, t0_ms: int, t1_ms: int) -> int:
        """How long the monotonic clock counted from true instant t0 to t1: a duration as the model timed it
        (true elapsed time, but for NTP's slew). A checker judges a wait by this, never by the wall clock's
        readings, which skew, drift and steps move (T-1), so a model that times a wait on the wall clock is
        caught (issue 47)."""
        return self.mono(t1_ms) - self.mono(t0_ms)

    def local(self, t_ms: int) -> int:
        off = self.offset_ms
        if self.steps:
            for at, delta in self.steps:
                if at > t_ms:
                    off -= delta
        if self.drift_ppm:
            return t_ms + off + (t_ms * self.drift_ppm) // 1_000_000
        return t_ms + off

    def waited(self, t0_ms: int, t1_ms: int) -> int:
        """How long this clock counted from true instant t0 to t1, as a wait: its readings' difference, a step
        back between them not shortening it (the clock reads those instants again, and a node waiting for a
        reading waits them again; T-1). Without a step back, local(t1) - local(t0)."""
        d = self.local(t1_ms) - self.local(t0_ms)
        for at, delta in self.steps:
            if delta < 0 and t0_ms < at <= t1_ms:
                d -= delta
        return d

    def counted(self, t0_ms: int, t1_ms: int) -> int:
        """How long this clock counted from true instant t0 to t1 for a bound that mixes a window on the
        clock with durations (timeouts, which run in true time whatever the clock does): its readings'
        difference less every step forward between them. A step forward inside a duration is no time the
        node spent, and one inside the window only ends the window sooner (the node reads the clock); a
        step back counts as read (the window runs longer by it). T-1; CS-2's bounds."""
        d = self.local(t1_ms) - self.local(t0_ms)
        for at, delta in self.steps:
            if delta > 0 and t0_ms < at <= t1_ms:
                d -= delta
        return d

    def stepped(self, at_ms: int, delta_ms: int) -> "Clock":
        """This clock, stepped by `delta_ms` at true instant `at_ms` (no earlier than its last step)."""
        return Clock(self.offset_ms + delta_ms, self.drift_ppm, self.steps + ((at_ms, delta_ms),))

    def _segments(self) -> list[tuple[int | None, int | None, int]]:
        """(from, to, offset) of each stretch between steps (None: unbounded), in time order."""
        out = []
        off = self.offset_ms - sum(d for _, d in self.steps)
        start = None
        for at, delta in self.steps:
            out.append((start, at, off))
            off += delta
            start = at
        out.append((start, None, off))
        return out

    def _solve(self, offset_ms: int, local_ms: int) -> int:
        """The first true instant at which a clock of this offset (and drift), never stepped, reads
        `local_ms` or later."""
        if not self.drift_ppm:
            return local_ms - offset_ms
        drift = self.drift_ppm
        t = ((local_ms - offset_ms) * 1_000_000) // (1_000_000 + drift)
        while t + offset_ms + (t * drift) // 1_000_000 < local_ms:
            t += 1
        while (t - 1) + offset_ms + ((t - 1) * drift) // 1_000_000 >= local_ms:
            t -= 1
        return t

    def true_at(self, local_ms: int) -> int:
        """The first true instant at which this clock reads `local_ms` or later."""
        if not self.steps:
            return self._solve(self.offset_ms, local_ms)
        for start, end, off in self._segments():
            t = self._solve(off, local_ms)
            if start is not None and t < start:
                t = start
            if end is None or t < end:
                return t
        raise AssertionError("unreachable: the last stretch is unbounded")

    def ends_at(self, local_ms: int) -> int:
        """The first true instant from which this clock reads `local_ms` or later for good: a step back
        may bring it below again after it first got there (`true_at`). Where a validity that lasts while
        the clock reads less than `local_ms` ends (NL-4, judged at each instant on the clock as it was
        then: the last instant it reads less, and one ms). Without a step back, `true_at`."""
        if not self.steps:
            return self._solve(self.offset_ms, local_ms)
        for start, end, off in reversed(self._segments()):
            if start is None or start + off + (start * self.drift_ppm) // 1_000_000 < local_ms:
                t = self._solve(off, local_ms)
                if start is not None and t < start:
                    t = start
                return t if end is None else min(t, end)
        raise AssertionError("unreachable: the first stretch is unbounded")


@dataclass(frozen=True, slots=True)
class Process:
    node_id: str
    instance: str
    machine: str
    offset_ms: int  # its machine's clock offset when it started
    drift_ppm: int
    steps: tuple = ()  # ((at_ms, delta_ms), ...): its machine's clock stepped while it ran (Clock.steps)
    # its Clock, made on the first read and kept (the checkers read `clock` about 850 times a seed); not a field
    # a copy, a comparison or the hash sees (a `dataclasses.replace` makes it anew)
    _clock: Clock | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def clock(self) -> Clock:
        c = self._clock
        if c is None:
            if self.steps:
                c = Clock(self.offset_ms + sum(d for _, d in self.steps), self.drift_ppm, self.steps)
            else:
                c = Clock(self.offset_ms, self.drift_ppm)
            object.__setattr__(self, "_clock", c)
        return c

    @property
    def label(self) -> str:
        return f"{self.node_id}/{self.instance}"


@dataclass
class History:
    seed: int
    model: str
    scenario: str
    params: dict
    options: dict
    processes: list[Process] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    rules: dict[str, int] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    end_ms: int = 0
    _sha: str | None = None
    cache: dict = field(default_factory=dict)  # what checkers compute once and share
    # option -> its off value (a fault kind's, scenarios/faults: the world gives them): an option at its
    # off value is not part of the run's hash, so that a kind added to the tool, off in a seed, leaves
    # that seed's hash as it was (`sha256`)
    off_options: dict = field(default_factory=dict, compare=False, repr=False)
    # the request ledger (issue 48): every request a process sent, as the world saw it leave and what became of
    # it (`Sent`, history/schema.py), in send order; None: the world that wrote this history kept none (a
    # trace's). Not part of the hash: the events already say what the bucket did; this is the world's count
    # of what it was asked, which the cost checks (checkers/cost.py) judge
    requests: list | None = field(default=None, compare=False, repr=False)
    # how late the world that wrote this history may have run a process's timer (ms): 0 in the simulation
    # (a timer fires at its instant); a real process's scheduler fires it late, and the real-S3 world records
    # the most its loop ran late, a trace's loader a stated tolerance (checkers that bound a duration from
    # above, LEASE-2, add it). Not part of the hash.
    timing_slack_ms: int = field(default=0, compare=False, repr=False)

    def add(self, t_ms: int, proc: int, kind: str, fields: tuple = ()) -> None:
        self.events.append(event(t_ms, proc, kind, fields))

    # --- encoding ------------------------------------------------------------

    def header(self, every_option: bool = False, leave_out: tuple = ()) -> dict:
        """What the hash covers besides the events: the seed, the configuration, the options that are not
        at a fault kind's off value (all of them with `every_option`: the hash before issue 46), the
        processes and the end."""
        off = self.off_options
        if every_option:
            options = {k: v for k, v in self.options.items() if k not in leave_out} if leave_out else self.options
        else:
            options = self.options if not off else {k: v for k, v in self.options.items() if k not in off or v != off[k]}
        return {
            "seed": self.seed,
            "model": self.model,
            "scenario": self.scenario,
            "params": self.params,
            "options": options,
            # a process whose clock stepped carries its steps (one more field: the others encode as before)
            "processes": [[p.node_id, p.instance, p.machine, p.offset_ms, p.drift_ppm]
                          + ([[list(s) for s in p.steps]] if p.steps else []) for p in self.processes],
            "end_ms": self.end_ms,
        }

    def encode(self, every_option: bool = False, leave_out: tuple = (), version: int = HASH_VERSION) -> bytes:
        """The stable byte encoding that `sha256` hashes, of the encoding `version` (HASH_VERSION)."""
        head = json.dumps(self.header(every_option, leave_out), sort_keys=True, separators=(",", ":"))
        rules = json.dumps(self.rules, sort_keys=True, separators=(",", ":"))
        # Each event and its fields as plain tuples (a slice of the fields): marshal refuses a tuple's subclass,
        # and json's encoder copies a named tuple into a new list before it writes it (a plain tuple it writes as
        # it is: the same bytes)
        events = [(t, p, kind, fields[:]) for t, p, kind, fields in self.events]
        if version == 2:
            # marshal at version 2 writes no references between objects and no flag for an interned string (3
            # and later do both: equal values could give unequal bytes): the same values, the same bytes, in any
            # process, compiled or not. A value it cannot write (a named tuple nested in a field, an object) is
            # a loud ValueError; a set it would write in its iteration order, which PYTHONHASHSEED moves: no
            # world writes one (JSON refused them), and a test walks every kind's fields for one.
            return b"".join((b"v2\n", head.encode(), b"\n", rules.encode(), b"\n", marshal.dumps(events, 2)))
        if version != 1:
            raise ValueError(f"no history hash of encoding {version!r}: this tool knows {HASH_VERSIONS}")
        # (no check for cycles: events hold no containers of themselves, and it costs a quarter)
        body = json.dumps(events, separators=(",", ":"), check_circular=False)
        return (head + "\n" + body + "\n" + rules).encode()

    def sha256(self, version: int = HASH_VERSION) -> str:
        """The run's hash: its events, processes, rules, configuration and the options that are on (a fault
        kind's options at their off values are left out: a kind added since leaves a seed that has it off
        the same run, with the same hash). Of the encoding `version`: a stored report's or plan's own
        (`hash_version`) to compare with it."""
        if version != HASH_VERSION:
            return hashlib.sha256(self.encode(version=version)).hexdigest()
        if self._sha is None:
            self._sha = hashlib.sha256(self.encode()).hexdigest()
        return self._sha

    def hash_fields(self) -> dict:
        """What a plan written now holds of its run's hash: the hash and the encoding it is of."""
        return {"history_sha256": self.sha256(), "hash_version": HASH_VERSION}

    def sha256_every_option(self, leave_out: tuple = ()) -> str:
        """The hash as reports and plans before issue 46 hold it: every option, at its off value or not (but
        those `leave_out` names: the options of kinds added since), of the JSON encoding they were written
        with."""
        return hashlib.sha256(self.encode(every_option=True, leave_out=leave_out, version=1)).hexdigest()

    # --- reading -------------------------------------------------------------

    def of_kind(self, *kinds: str) -> list[int]:
        """The indices of the events of these kinds, in order. The history is indexed by kind once
        (one pass, kept in `cache`; events added since are indexed on the next call, so that a history
        that grows, as the explorer's do along a path, is indexed once in all): each checker then reads
        only the events it judges, not every event again. The list is shared: do not change it."""
        events = self.events
        n = len(events)
        index = self.cache.get("by_kind")
        if index is None or index[0] != n:
            if index is None or index[0] > n:
                by_kind: dict[str, list[int]] = {}
                start = 0
            else:
                start, by_kind = index
            for i in range(start, n):
                k = events[i][2]
                if k in by_kind:
                    by_kind[k].append(i)
                else:
                    by_kind[k] = [i]
            index = self.cache["by_kind"] = (n, by_kind)
        by_kind = index[1]
        if len(kinds) == 1:
            return by_kind.get(kinds[0], [])
        merged = self.cache.get(kinds)  # several kinds: merged once per length
        if merged is None or merged[0] != n:
            merged = self.cache[kinds] = (n, sorted([i for k in kinds for i in by_kind.get(k, ())]))
        return merged[1]

    def growing_copy(self) -> "History":
        """A copy to which events will be added (the explorer's branches): the events and processes
        copied, the index by kind carried over (extended on the next `of_kind`), nothing else cached."""
        h = object.__new__(History)
        h.__dict__.update(self.__dict__)
        h.events = self.events.copy()
        h.processes = self.processes.copy()
        if self.requests is not None:
            h.requests = self.requests.copy()
        h._sha = None
        index = self.cache.get("by_kind")
        h.cache = {} if index is None else {"by_kind": (index[0], {k: v.copy() for k, v in index[1].items()})}
        return h

    def describe(self, i: int) -> str:
        """One event as a readable line: `12.345 s  n1/ab12  lease_valid written_at_ms=... `."""
        t, p, kind, fields = self.events[i]
        who = self.processes[p].label if p >= 0 else "world"
        names = KINDS.get(kind, ())
        local = LOCAL_CLOCK_FIELDS.get(kind, ())
        parts = [f"{n}={_fmt(v)}{'@local' if n in local else ''}" for n, v in zip(names, fields)]
        return f"#{i:<5} {t / 1000:9.3f} s  {who:<16} {kind:<14} {' '.join(parts)}"

    def timeline(self) -> str:
        return "\n".join(self.describe(i) for i in range(len(self.events)))


def _fmt(v) -> str:
    if isinstance(v, str) and (" " in v or v == ""):
        return json.dumps(v)
    return str(v)


@dataclass(frozen=True, slots=True)
class Violation:
    """A broken invariant, with the events (indices into history.events) that prove it."""

    invariant: str
    message: str
    events: tuple[int, ...] = ()

    def explain(self, history: History) -> str:
        lines = [f"{self.invariant}: {self.message}"]
        lines += ["    " + history.describe(i) for i in self.events]
        return "\n".join(lines)
