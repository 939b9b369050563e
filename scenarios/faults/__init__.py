"""The registry of fault kinds: every way the world can hurt the protocol, one object each.

A fault kind is one module of this package holding one `FaultKind` (its `KIND`). It says, in one
place, everything the rest of the world needs to know about it:

- `options`: the options it reads from a seed's drawn options, each with its **off** value, so
  that a seed (or a plan) that leaves an option out has that fault off, and `calm` is every kind
  off (`turn_off`);
- how a seed draws it: its `draw_<stage>(ctx)` methods, called in swarm.DRAW_ORDER, each drawing from
  the kind's own stream (`ctx.rng`, "draw/<id>": scenarios/streams.py), so that no other part's draw
  moves with it; a kind not named there draws in one stage, `draw_main`, after them;
- how the world schedules it (`schedule(world, base)`), in ORDER below, and what fate it gives a
  request on its way to the bucket or back (`send_early`, `send_late`, `reply_early`, `reply_late`:
  hooks the world calls in ORDER, installed only in seeds where the kind is `active`; what they draw,
  they draw from the run's stream of the kind, `world.rngs[id]`);
- the per-run state it keeps on the world (`state`: attribute -> factory) and what the quiet
  phase turns off (`quiet(world)`);
- what the shrinker may remove (`scheduled` lists, whose entries it sets to None; `flags`, set to
  their off value), shorten (`durations`: the index of a length in each entry) and which entries
  name a node (`node_field`, for dropping a node); where each entry's instant is (`at_field`: the
  guided search moves it, guided/mutate.py);
- `rules`: the protocol rules its situations exercise, and `title`, one line for people.

A `fault` event in the history names what struck (`what`: "request_lost", "late", "outage",
"deadline_race", ...; FAULT_EVENTS lists them), what it hit, and how long. Faults belong to the world:
model/ never sees them. Must not know: any protocol rule beyond what a real network, bucket,
machine or operator can do.
"""

from __future__ import annotations

import importlib
import pkgutil

# The order in which kinds are scheduled and asked for a request's fate (and in which kinds that
# draw in one stage draw, after swarm.DRAW_ORDER). The world's own steps stand where the world
# schedules them: "@starts" (the nodes start), "@operator" (the operator's process),
# "@workload", "@script" (a scripted world's steps), "@quiet" (the quiet phase begins),
# "@final_rounds" (its requests for every actor). A kind not listed here goes after the last
# kind, before "@quiet".
ORDER = (
    "upgrade", "@starts", "@operator", "operator_fences", "@workload", "@script", "fence_crowd", "release_crowd",
    "acquire_crowd",
    "conflict", "fast_5xx", "sdk_retry_412", "conflict_any", "degraded", "outages", "crashes", "deadline_races", "reply_drops",
    "fail_fast", "request_lost", "reply_lost", "record_storms", "guard_storms", "late", "slow_reply",
    "crash_for_good", "mass", "twins", "stops", "drains", "deletes", "blip",
    "@quiet", "quiet_crash", "@final_rounds", "quiet_stop",
)


# What a `fault` event's `what` may say (the worlds record these; coverage points and the known
# findings read them): what struck, in the words a timeline uses. The world refuses any other
# (World.fault_event: a loud error naming it), so a kind's new fault is registered here first.
FAULT_EVENTS: dict[str, str] = {
    "fail_fast": "a request failed fast: refused, never applied",
    "request_lost": "a request was lost on the way: never applied, never answered",
    "late": "a write was held back past its sender's timeout, then applied (ms: how long held back)",
    "held_back": "a scripted rule held a request back before the bucket (ms: how long)",
    "conflict": "a conditional write was answered 409 ConditionalRequestConflict, never applied",
    "fast_5xx": "a request was answered 500/503 at once, never applied (the sender cannot know: timed_out)",
    "applied_5xx": "a write reached the bucket and was applied, and was answered 500/503 at once (ms: when it reached "
                   "the bucket; the sender cannot know: timed_out)",
    "sdk_retry": "a write applied, its answer lost, and the client's SDK sent it again (the retry answers it)",
    "reply_lost": "a reply was lost after the bucket applied the request (detail: the reply's status)",
    "slow_reply": "a reply came late (ms: its delay)",
    "outage": "a machine, or every one (*), was cut off the bucket (ms: for how long; detail: the mode)",
    "deadline_race": "an owner was cut off right after an acknowledged lease write (a deadline race)",
    "gone_for_good": "a machine died and never came back",
    "record_storm": "a stretch of lost and slow record writes began (ms: its length)",
    "guard_storm": "a stretch of lost nodes/ reads began, as new nodes start (ms: its length)",
    "reply_drops": "a stretch of lost write replies began (ms: its length)",
    "crowd_hang": "the bucket partition of a crowd's records stopped answering (ms: for how long)",
    "acquire_stall": "the bucket partition of a crowd's records stalled on writes: each held until it ends, the reads "
                     "of their keys hanging meanwhile (ms: for how long)",
    "old_margin": "an old binary's renewals of a lease began to be lost until its expiry nears, the last one applied "
                  "late (ms: until a new node reads it)",
    "restart_race": "a node holding records was crashed, for its restart to race another node's reads (FN-5)",
    "race_hold": "a restarted node's first live write was held in the network while another node read (FN-5)",
    "race_read": "a read of the freer in a restart race was applied (detail: before or after the held write)",
    "straggler": "an event that outlasted a clean stop's wait ended, just after `released` was sent",
    "clock_step": "a machine's clock was stepped (NTP): ms the step, the detail true time's offset after it",
    "pause": "a process was stopped (SIGSTOP, a GC pause) for ms: its inputs waited, its clocks ran on (detail: "
             "where it landed)",
    "resumed": "a paused process resumed: the detail says what queued meanwhile (timers, replies, commands), "
               "delivered now in the order they arrived",
}


class FaultKind:
    """One kind of fault. Subclasses fill in what applies; the defaults do nothing."""

    id: str = ""
    title: str = ""
    rules: tuple[str, ...] = ()
    options: dict = {}  # option -> its off value (`turn_off` sets these)
    switches: tuple[str, ...] | None = None  # the options that switch it on (None: every option)
    settings: dict = {}  # option -> its default, for options that shape the fault but do not switch it on
    rates: tuple[str, ...] = ()  # options that are per-request probabilities (zero when shielded, and in quiet)
    scheduled: tuple[str, ...] = ()  # options holding lists of scheduled entries
    flags: dict = {}  # option -> its off value, for a fault the shrinker may turn off whole
    node_field: dict = {}  # option -> the index of the node id in each of its entries
    durations: dict = {}  # option -> the index of a length (ms) in each of its entries
    at_field: dict = {}  # option -> the index of the instant (ms) in each of its entries, -1: the entry is it
    state: dict = {}  # world attribute -> a factory of its value at the start of a run
    keeps_in_quiet = False  # a behaviour of a real bucket the quiet phase cannot turn off

    # --- the draw ----------------------------------------------------------------------------

    def draw_main(self, ctx) -> None:
        """The draw of a kind that draws in one stage (kinds drawn by another, like a guard storm with
        its upgrade, draw nothing here)."""

    def draw_rate(self, ctx, choices: tuple[float, ...]) -> None:
        """The draw of a kind whose one option is a rate (`rates[0]`): one of `choices` (off in most seeds,
        a light or a heavy rate in the rest), never around a lone blip nor in a preset's race."""
        rate = ctx.choice(choices)
        ctx.o[self.rates[0]] = 0.0 if stays_off(ctx) else ctx.at_least(self.id, rate)

    def turn_off(self, o: dict) -> None:
        """Every option of this kind at its off value."""
        for k, v in self.options.items():
            o[k] = _fresh(v)

    def active(self, o: dict) -> bool:
        """Whether a seed with options `o` uses this kind at all (its hooks run only then): an option
        other than its off value (a list whose entries a plan removed, all None, is off)."""
        names = self.options if self.switches is None else self.switches
        return any(_on(o.get(k, self.options[k]), self.options[k]) for k in names)

    # --- the world ---------------------------------------------------------------------------

    def base_ms(self, o: dict) -> int:
        """The instant the new nodes start, if this kind moves it (an upgrade's switch): every other
        fault's times count from the latest any kind says."""
        return 0

    def schedule(self, world, base: int) -> None:
        """Schedule what the options say (`base`: the instant the new nodes start)."""

    def quiet(self, world) -> None:
        """The quiet phase begins: this kind's faults stop."""

    # request fates: None, or a fate (what, ms) as the network's draws return them (scenarios/network.py:
    # SEND_FATES, REPLY_FATES name every fate; another is a loud error naming the kind)
    send_early = None  # (world, proc, req, f) -> fate | None, before the request's delay is drawn
    send_late = None  # (world, proc, req, f, delay) -> fate | None, after it
    reply_early = None  # (world, proc, req, f) -> fate | None
    reply_late = None  # (world, proc, req, f, delay) -> fate | None

    # --- event hooks: the moments a kind may strike at. A kind that overrides one is asked at that moment
    # (in the seeds where it is active; `quiet_acts` in every seed), in faults.ORDER; the world finds them by
    # override (`overrides`), never by a name's presence. `w` is the world, through its port (scenarios/port.py).

    def on_sent(self, w, proc, rid: int, req, timeout: int) -> bool:
        """A request left `proc`: True holds it back in the network (the kind lets it go later, restart_races)."""
        return False

    def on_fence_sent(self, w, proc, req, in_flight: int) -> None:
        """A fence (a write of another node's nodes/ record) left `proc`, `in_flight` of its fences now (BD-1)."""

    def on_released_sent(self, w, proc) -> None:
        """`proc` sent its own `released` node lease (a clean stop's, CS-1)."""

    def on_lease_acked(self, w, proc, sent_ms: int) -> None:
        """`proc`'s own lease write (sent at `sent_ms`) was acknowledged: the moment some races strike."""

    def on_answered(self, w, proc, req, reply) -> None:
        """The bucket answered `req` (before the reply's fate is drawn)."""

    def on_record_reply(self, w, proc, req, status: str, serial: int, named) -> None:
        """A request of `proc` on an owners/ record or its own node lease was answered or timed out (CONV-2)."""

    def on_event_begins(self, w, proc):
        """A served request's event begins on `proc`: its length in ms, None (a straggler), or NotImplemented
        (not this kind's to say: it is drawn)."""
        return NotImplemented

    def quiet_acts(self, w) -> None:
        """The quiet phase begins and its turned-off faults are quiet: the kind acts once more (quiet_stop)."""

    HOOKS = ("on_sent", "on_fence_sent", "on_released_sent", "on_lease_acked", "on_answered", "on_record_reply",
             "on_event_begins", "quiet_acts")

    def overrides(self, hook: str) -> bool:
        """Whether this kind acts at the moment `hook` names (it overrides the base's method)."""
        return getattr(type(self), hook) is not getattr(FaultKind, hook)

    # --- the shrinker ------------------------------------------------------------------------

    def atoms(self, o: dict) -> list:
        """What of this kind a plan with options `o` holds that the shrinker may remove, one at a time:
        (option, index) for a scheduled entry, (option, None) for a flag that is on."""
        out: list = [(name, i) for name in self.scheduled for i, x in enumerate(o.get(name) or ()) if x is not None]
        out += [(name, None) for name in self.flags if o.get(name)]
        return out

    def remove(self, o: dict, atom) -> None:
        """`o` without one of this kind's atoms (an entry set to None: the others keep their indices)."""
        name, i = atom
        if i is None:
            o[name] = _fresh(self.flags[name])
        else:
            o[name][i] = None

    def drop_node(self, o: dict, node: str) -> None:
        """A plan without `node`: this kind's entries naming it go (set to None)."""
        for name, field in self.node_field.items():
            o[name] = [None if x is not None and x[field] == node else x for x in o.get(name) or ()]

    def __repr__(self) -> str:
        return f"<fault kind {self.id}>"


class Stretch(FaultKind):
    """A fault that lasts a stretch of time: a flag on the world, set at each stretch's start (with a
    `fault` event saying what struck) and cleared at its end, or when the quiet phase begins; the
    kind's hooks read the flag."""

    flag: str = ""  # the world attribute that is True during a stretch
    what: str = ""  # the `fault` event's what (FAULT_EVENTS)
    target: str = ""  # and what it hits
    detail: str = ""

    def stretches(self, o: dict) -> list:
        """[at, length_ms] entries (None: removed by a plan)."""
        return list(o.get(self.scheduled[0]) or ())

    def schedule(self, w, base: int) -> None:
        for at, length_ms in filter(None, self.stretches(w.options)):
            w.later(base + at, w.fault_step, self.id, "stretch", True, length_ms)
            w.later(base + at + length_ms, w.fault_step, self.id, "stretch", False)

    def stretch(self, w, on: bool, length_ms: int | None = None) -> None:
        if on and not w.in_quiet:
            w.fault_event(-1, self.what, self.target, length_ms, self.detail)
        setattr(w, self.flag, on and not w.in_quiet)

    def quiet(self, w) -> None:
        setattr(w, self.flag, False)


class Entry(FaultKind):
    """A fault drawn with another kind: switched on by an entry of that kind's options (`within`, a
    dict when on, like the upgrade's), which the shrinker removes alone (the other kind stays)."""

    within: str = ""  # the option holding the entry
    entry: str = ""  # the entry's name in it (None or absent: off)

    def setting(self, o: dict):
        return (o.get(self.within) or {}).get(self.entry)

    def active(self, o: dict) -> bool:
        return bool(self.setting(o))

    def atoms(self, o: dict) -> list:
        return [(self.within, self.entry)] if self.active(o) else []

    def remove(self, o: dict, atom) -> None:
        if o.get(self.within):
            o[self.within][self.entry] = None


def stays_off(ctx) -> bool:
    """A kind drawn after the others (`draw_main`) draws nothing in this seed: a lone blip's (INV-9's
    proviso: no other fault around it) or a preset's race (its focus keeps every other fault off)."""
    return ctx.alone or ctx.preset.focus is not None


# what would strike a crowd's node, or take it away, while its crowd plays out (fence_crowd, release_crowd,
# acquire_crowd)
NODE_FAULTS = ("crashes", "outages", "twins", "deletes", "stops", "drains", "operator_fences", "crash_for_good")


def keep_node(ctx, node: str | None, since: int = 0) -> None:
    """A crowd's node kept out of the seed's node faults (their entries naming it dropped, as a plan drops
    them; every other node keeps its own), or with `node` None every node's entries from `since` on (a
    crowd of the whole cluster: those before have played out by then); and the deadline races off (each
    keeps its pair calm and cuts its owner off: a crowd meeting one is lost). A global outage or blip
    during the crowd waits for it (World.calm)."""
    o = ctx.o
    for kind_id in NODE_FAULTS:
        kind = KINDS[kind_id]
        if node is not None:
            kind.drop_node(o, node)
            continue
        for name, at in kind.at_field.items():
            o[name] = [None if x is not None and x[at] >= since else x for x in o.get(name) or ()]
    ctx.turn_off("deadline_races")


def _on(value, off) -> bool:
    if isinstance(value, list) and value and all(x is None for x in value):
        return False
    return value != off


def _fresh(v):
    return list(v) if isinstance(v, list) else dict(v) if isinstance(v, dict) else v


def _discover() -> dict[str, FaultKind]:
    found: dict[str, FaultKind] = {}
    for m in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if m.name.startswith("_"):
            continue
        kind = getattr(importlib.import_module(f"{__name__}.{m.name}"), "KIND", None)
        if not isinstance(kind, FaultKind):
            raise TypeError(f"scenarios/faults/{m.name}.py defines no KIND (a FaultKind)")
        if not kind.id or kind.id in found:
            raise TypeError(f"scenarios/faults/{m.name}.py: its kind's id {kind.id!r} is empty or taken")
        found[kind.id] = kind
    listed = [k for k in ORDER if not k.startswith("@")]
    unknown = [k for k in listed if k not in found]
    if unknown:
        raise TypeError(f"scenarios.faults.ORDER names kinds no module defines: {', '.join(unknown)}")
    ordered = {k: found[k] for k in listed}
    ordered.update((k, v) for k, v in found.items() if k not in ordered)
    return ordered


KINDS: dict[str, FaultKind] = _discover()  # id -> kind, in ORDER


def steps() -> list[str]:
    """ORDER with every kind in it: the unlisted kinds before "@quiet"."""
    extra = [k for k in KINDS if k not in ORDER]
    q = ORDER.index("@quiet")
    return list(ORDER[:q]) + extra + list(ORDER[q:])


def defaults() -> dict:
    """Every kind's options at their off values (and settings at their defaults): a world with no fault."""
    out: dict = {}
    for kind in KINDS.values():
        for k, v in {**kind.settings, **kind.options}.items():
            out[k] = _fresh(v)
    return out


RATES: tuple[str, ...] = tuple(r for kind in KINDS.values() for r in kind.rates)
NO_FAULTS: dict[str, float] = {r: 0.0 for r in RATES}  # the rates in force for a shielded request


def scheduled_lists() -> dict[str, FaultKind]:
    """option -> its kind, for every option holding scheduled entries (the shrinker's atoms)."""
    return {name: kind for kind in KINDS.values() for name in kind.scheduled}


def flag_options() -> dict:
    """option -> its off value, for every fault the shrinker may turn off whole."""
    return {name: off for kind in KINDS.values() for name, off in kind.flags.items()}


def durations() -> dict[str, int]:
    """option -> the index of a length in its entries (the shrinker halves them)."""
    return {name: i for kind in KINDS.values() for name, i in kind.durations.items()}


def off_options(o: dict) -> dict:
    """The options `o` with every fault kind off (what `calm` draws)."""
    for kind in KINDS.values():
        kind.turn_off(o)
    return o
