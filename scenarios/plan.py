"""Faults as data (issue 13): every random decision of a run, keyed by what it decides.

A seed's run draws its decisions from its parts' random streams (streams.py). Given a `Choices`
that records, the world draws exactly as without it and notes each decision under a key naming
what it decided: ``send m1 PUT nodes/n1 #3`` is the fate and delay of the fourth lease write
machine m1 sent, ``event m0 #12`` how long the thirteenth event served on m0 ran. It also
notes the workload it drew (client requests, hibernations, moves) as a list.

Given a `Choices` built from such a table (a *plan*), the world draws nothing: its streams
refuse every draw (streams.Refusing), each decision is read from the table, and a
decision the table lacks takes its default, the calm one (no fault, the shortest delay).
So a plan replays its seed exactly (same history, same hash), and a plan with entries
removed is the same run with those faults removed and nothing else moved: keys count per
machine and per request, so a decision about one machine never shifts to another. The
shrinker (shrink.py) stands on this; a counterexample file is a plan.

The scheduled faults (outages, crashes, twins, deletes, the operator's fences, stops, drains,
races, the blip, the upgrade) are already data: the drawn options. A plan removes one by
putting None in its place, so that the others keep their indices (a twin's machine is named
by its index).
"""

from __future__ import annotations

import zlib
from collections import Counter

FORMAT = "nodelease-counterexample/1"

# each site's calm default, for a decision a plan lacks
DEFAULTS = {
    # [fate, ms]: ok (delivered after ms), lost, fail_fast (answered after ms), late (ms past the timeout),
    # conflict (answered 409 after ms, not applied)
    "send": ["ok", 1],
    "reply": ["ok", 1],  # [fate, ms]: ok (delivered after ms), lost, slow (delivered after ms)
    "refused": 1,  # a refused connection's answer, ms (a cut-off's mode is the scheduled fault)
    "conflict": False,  # the bucket answers a conditional write 409 (a concurrent one), a fault
    "sdk_retry": 1,  # the gap before the client's SDK sends a write again (its answer lost: sdk_retry_412), ms
    "alias": False,  # the bucket returns a read token other than the write token (a behaviour, not a fault)
    "event": 0,  # how long a served request's event runs, ms
    "restart": None,  # the supervisor's restart delay, ms (None: the options' minimum)
    "forward": 1,  # a forwarded command's delay, ms
    "retry": None,  # a client's retry of a failed request, after ms (None: no retry)
    "final_node": None,  # the node a final-round request goes to (None: the first that runs)
    "final_actors": None,  # the actors the final rounds ask for (None: all)
    "quiet_stop": None,  # the node retired in the quiet phase (None: the first that runs)
    "quiet_crash": None,  # the node crashed in the quiet phase (None: the first)
    "quiet_crash_down": None,  # how long its machine stays down, ms (None: the supervisor's restart delay)
    "quiet_crash_gone": False,  # its machine never comes back (issue 47q; a plan from before: it does)
    "gc": False,  # the old garbage collection deletes this lease
    "soon": False,  # a delete's replacement starts at once
    "later": 1,  # the delay of a step of a fault the world plays out (a delete race, a straggler), ms
    "around": None,  # the other node a delete race's requests go to (None: the first)
    # a restart race's (restart_races.py): indices into the world's candidates, taken modulo their count
    "restart_race": 0,  # the node crashed, the actors it is asked for, the freer chosen at the crash
    "race_actor": 0,  # the actor whose record the freer reads
    "race_freer": 0,  # the freer, when none was chosen at the crash
    "race_mode": 0,  # the race's mode (restart_races.MODES)
    "entry_tell": None,  # when the operator tells a node with an open entry a drain or a move (None: never)
    "entry_move": None,  # [actor, target] moved then (None: a drain)
    "entry_resume": 1,  # that drain resumed after ms
    "fence_cross": None,  # how long a node's fence is held back while the operator fences the same node (None: not)
    "fence_cap_tell": False,  # the operator tells a node whose fences fill BD-1's cap a drain or a move
    # a pause's (pauses.py): how far past its lease's end a "deadline" pause ends, ms; the holder struck, an
    # index into the candidates taken modulo their count; a held write's trip to the bucket once it leaves, ms;
    # when a client request for one of its actors reaches the stopped holder, ms into the pause (None: none, as
    # plans before issue 47 part 4 ran), and which actor (an index, modulo)
    "pause_end": 0,
    "pause_node": 0,
    "pause_trip": 1,
    "pause_request": None,
    "pause_actor": 0,
    "pause_wait": False,  # a "long" or "deadline" pause finding no holder waits for the next acquisition
    # an old binary's renewal struck to fail until its lease's expiry nears (old_margins.py): None (not), or [the
    # new node asked, an index into the candidates taken modulo their count; ms into the margins its read aims at]
    "old_margin": None,
    # the free actor a node armed for a same-id race is asked for (twin_entries.py), an index taken modulo their count
    "twin_poke": 0,
}
# the sites whose non-default values are faults: a request's fate, a bucket conflict, and the operator's
# instructions timed on an open entry or a fence (scenarios/faults/open_entries.py, crossed_fences.py)
FAULT_SITES = ("send", "reply", "conflict", "entry_tell", "fence_cross", "fence_cap_tell", "old_margin")


def is_fault(key: str, value) -> bool:
    """Is this recorded decision a fault (a request lost, failed fast or late, a reply lost or
    slowed, a bucket conflict, an instruction of the operator timed on an open entry or a fence)?"""
    site = key.split(" ", 1)[0]
    if site in ("send", "reply"):
        return value[0] != "ok"
    return site in FAULT_SITES and bool(value)


# the fault sites a recording run still draws in the quiet phase: the bucket's 409 to a conditional write racing
# another in flight (faults/conflict.py: `keeps_in_quiet`, a real bucket's behaviour the quiet phase cannot turn
# off). A plan replayed reads them as recorded there; before, its quiet phase read them calm, and a recorded
# plan replayed as another run (4 of swarm seeds 0..149, among them seed 12614 of the 20,000: its shrink found
# "the plan does not fail"). Kept equal to the kinds' `keeps_in_quiet` by a test (this module imports no kind).
KEPT_IN_QUIET = ("conflict",)


def calm_in_quiet(key: str, value) -> bool:
    """A plan's decision read as its calm default once the quiet phase has begun: a fault the quiet phase
    turns off (not one a real bucket keeps: KEPT_IN_QUIET)."""
    return is_fault(key, value) and key.split(" ", 1)[0] not in KEPT_IN_QUIET


def instance_default(key: str) -> str:
    return f"{zlib.crc32(key.encode()):08x}"


def default(site: str, key: str):
    """The calm value of a decision a plan lacks."""
    return instance_default(key) if site == "instance" else DEFAULTS[site]


def decision_key(seen: Counter, site: str, who: str) -> str:
    """The key of the next decision `site` makes about `who` (`seen` counts them per site and who)."""
    base = f"{site} {who}"
    k = seen[base]
    seen[base] = k + 1
    return f"{base} #{k}"


class Choices:
    """Record a run's decisions (table None), or replay them from a table (a plan)."""

    # the workload of a recording run: drawn from this instant on (Branching keeps a plan's before it;
    # None: the plan's whole workload kept, none drawn)
    until_ms: int | None = 0
    kept: list = []

    def __init__(self, table: dict | None = None, workload: list | None = None) -> None:
        self.recording = table is None
        self.table: dict = {} if table is None else table
        self.workload: list = [] if workload is None else workload
        self._seen: Counter = Counter()
        self.misses = 0  # decisions a plan lacked (defaults taken)
        # the world's quiet phase has begun (World._quiet_begins): no fault is drawn from then on, so
        # a fault a plan holds for a later decision is read as the calm default, as a recording run
        # would have drawn it (a shrunk plan's ordinals shift: a fault drawn for the first PUT of a
        # key during the faults may otherwise land on the first one the shrunk run sends in quiet)
        self.quiet = False
        self.quiet_dropped = 0  # the faults so read

    def pick(self, site: str, who: str, draw, *args):
        """The decision `site` makes about `who` now: drawn and noted (recording), or read."""
        key = decision_key(self._seen, site, who)
        if self.recording:
            value = draw(*args)
            if type(value) is tuple:
                value = list(value)
            self.table[key] = value
            return value
        value = self.table.get(key, _MISSING)
        if value is _MISSING:
            self.misses += 1
            return default(site, key)
        if self.quiet and calm_in_quiet(key, value):
            self.quiet_dropped += 1
            return default(site, key)
        return value

    def note(self, t_ms: int, *what) -> None:
        """A workload step drawn now (recording only)."""
        if self.recording:
            self.workload.append([t_ms, *what])

    def faults(self) -> list[tuple[str, object]]:
        return [(k, v) for k, v in self.table.items() if is_fault(k, v)]


_MISSING = object()


class Branching(Choices):
    """A plan's decisions where it holds them, fresh draws from the world's streams where it does not
    (the guided search's mutants, guided/mutate.py): a recording run, so the table it leaves is the
    whole run's, a plan like any other (`times` says when each decision was made, `clock` is the
    world's true time, set once the world exists).

    `until_ms` is where the workload is redrawn: the plan's steps before it are kept and the world
    draws its client requests, hibernations and moves from then on; None keeps the plan's workload
    whole and draws none. A redrawn decision is one the table lacks; a plan cut at an instant
    ("reseed after t") is one whose later decisions were taken out."""

    def __init__(self, table: dict, workload: list, until_ms: int | None = None) -> None:
        super().__init__(None, None)
        self.given = table
        self.until_ms = until_ms
        self.kept = list(workload) if until_ms is None else [s for s in workload if s[0] < until_ms]
        self.workload = list(self.kept)
        self.times: dict = {}
        self.clock = _no_clock

    def pick(self, site: str, who: str, draw, *args):
        key = decision_key(self._seen, site, who)
        self.times[key] = self.clock()
        value = self.given.get(key, _MISSING)
        if value is not _MISSING and self.quiet and calm_in_quiet(key, value):
            self.quiet_dropped += 1
            value = default(site, key)
        if value is _MISSING:
            value = draw(*args)
            if type(value) is tuple:
                value = list(value)
        self.table[key] = value
        return value


def _no_clock() -> int:
    raise RuntimeError("a Branching run's clock was not set (guided/search.py sets it to the world's true time)")


class Continuing(Choices):
    """A plan replayed until the first decision the code no longer asks for or asks anew, the rest drawn
    (`replay --continue`, P#'s replay-then-continue): a counterexample written before the code changed stays
    a starting point. A recording run, so the table it leaves is the continued run's whole plan.

    The plan's decisions are read in the order its run made them (its table's order): a decision asked
    before one the plan made earlier means the code no longer asks for that one (there, at least); with
    `complete` (a recorded plan: every decision its run read is in it) a decision the plan lacks is one the
    code asks anew; a shrunk plan lacks the decisions at their calm defaults, so it reads those as such and
    sees only the first. From the divergence on, every decision is drawn from the run's streams (the seed
    given to the world). The plan's workload is kept whole."""

    until_ms = None

    def __init__(self, table: dict, workload: list, complete: bool) -> None:
        super().__init__(None, None)
        self.given = table
        self.order = list(table)
        self.position = {key: i for i, key in enumerate(self.order)}
        self.complete = complete
        self.next = 0  # the position in the plan's order of the next decision expected
        self.read = 0  # decisions read from the plan
        self.drawn = 0  # decisions drawn (from the divergence on)
        self.diverged: dict | None = None  # where: {"t_ms", "asked", "expected", "how"}
        self.kept = list(workload)
        self.workload = list(self.kept)
        self.clock = _no_clock

    def pick(self, site: str, who: str, draw, *args):
        key = decision_key(self._seen, site, who)
        if self.diverged is None:
            i = self.position.get(key)
            expected = self.order[self.next] if self.next < len(self.order) else None
            if i is not None and i == self.next or i is None and not self.complete:
                value = self.given[key] if i is not None else default(site, key)
                if i is not None:
                    self.next, self.read = i + 1, self.read + 1
                if self.quiet and calm_in_quiet(key, value):
                    self.quiet_dropped += 1
                    value = default(site, key)
                self.table[key] = value
                return value
            how = "asks anew" if i is None else "no longer asks for"  # (i > next: the keys count, each is asked once)
            self.diverged = {"t_ms": self.clock(), "asked": key, "expected": expected, "how": how}
        self.drawn += 1
        value = draw(*args)
        if type(value) is tuple:
            value = list(value)
        self.table[key] = value
        return value
