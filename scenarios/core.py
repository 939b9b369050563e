"""The world core: everything the two worlds do the same way.

A world executes the model. The core delivers inputs to `step` and carries
out its effects (the interpreter, here), runs the processes (processes.py),
drives the workload (workload.py), asks the fault kinds (scenarios/faults/) to
schedule their faults and to give each request its fate, ends the faults in a
quiet phase (quiet.py), and keeps the bookkeeping of applied writes that INV-3
needs. It records all of it in the history. Every random decision comes from
the stream of the part that makes it (streams.py: the network's delays, the
client requests, each fault kind's fates, ... each derived from the seed and the
part's name), or from a plan (scenarios/plan.py).

Two interpreters subclass it, as Stateright's checker and its real runtime
interpret one actor vocabulary: the SimPy world (sim.py: true time is SimPy's
clock, the bucket is simulated) and the real-S3 world (s3.py: true time is
the monotonic clock, the bucket a real endpoint). They supply only what
differs:

- `now` (true time in ms) and `later(delay_ms, fn, *args)`;
- `to_bucket(proc, rid, req, fate)`: the request reaches the bucket now; the
  world applies it and hands the outcome to `bucket_answered`;
- `remove_object(key)`, an operator's mistaken delete, and
  `read_bucket(then)`, the old garbage collection's look at the bucket.

What faults share lives here too: a machine cut off the bucket (`cut_off`,
the outages' and the races' mechanism), a node shielded from random network
faults or kept calm while a race plays out on it, a write armed to be lost.

Must not know: any protocol rule (model/ decides; the world keeps its own
notes of what it did, such as which processes it told to drain), SimPy or
boto3.
"""

from __future__ import annotations

from collections import Counter

from history import Clock, History
from history.schema import FIELDS, Event, Sent, event
from model.actor_data import DATA_PREFIX
from model.io import (
    CONFLICT,
    FAILED_FAST,
    GET,
    IF_MATCH,
    IF_NONE_MATCH,
    LIST,
    NOT_FOUND,
    OK,
    PRECONDITION_FAILED,
    PUT,
    CancelTimer,
    Command,
    Exit,
    Forward,
    Mark,
    Now,
    Observe,
    Reply,
    ReplyArrived,
    Send,
    SetTimer,
    TIMED_OUT,
    TimerFired,
)
from model.params import Params
from model.records import LEASES_PREFIX, NODE_HEADER_3, NODES_PREFIX, OWNERS_PREFIX, RELEASED, state_line

from .faults import FAULT_EVENTS, KINDS, RATES, defaults, steps
from .network import ALWAYS, ANSWER, AWAIT, BUCKET, CONFLICT_409, CONFLICTED, NO_ANSWER, TIMEOUT, Network
from .processes import Proc, Processes, Slot
from .quiet import QuietPhase
from .streams import Streams
from .swarm import draw, draw_params
from .workload import Workload

WORLD = -1  # the proc index of events the world itself records
FENCES_AT_ONCE = 8  # BD-1's cap (docs/protocol.md): a listing's end is recorded only while a process has
# that many fences' requests in flight (`listing_ended`)

# a `released` node lease: the state line, the second of the body, within its first bytes
RELEASED_LINE = "\n" + RELEASED + " "
RELEASED_AT = len(NODE_HEADER_3) + len(RELEASED_LINE)
# The pace of an SDK's retry (issue 47 part 4): truncated binary exponential back-off with full jitter, the
# n-th retry after rand(0, 1) * min(base * 2 ** (n - 1), 20 s), the SDKs' standard retry mode with at most 3
# attempts. The AWS SDK for Rust (the ADR's implementation): `RetryConfig::standard()`, "max attempts of three",
# `initial_backoff` 1 s ("the first retry will occur after 0 to 1 seconds, the second retry will occur after 0
# to 2 seconds"), `max_backoff` 20 s (docs.rs/aws-smithy-types, retry::RetryConfig). boto3 / botocore's
# "standard" mode: the same formula, base 1 s, MAX_BACKOFF 20 s (botocore/retries/standard.py,
# ExponentialBackoff, 1.43.11; boto3's guide, "Retries": "exponential backoff by a base factor of 2" with "a
# maximum backoff time of 20 seconds"); with botocore's opt-in AWS_NEW_RETRIES_2026, a base of 50 ms for a
# non-throttling error (a 5xx, a closed connection), the pace this world drew before issue 47.
SDK_BACKOFF_MS_MAX = 20_000
SDK_MAX_ATTEMPTS = 3


def sdk_backoff_ms(rng, base_ms: int) -> int:
    """The gap from a write's first attempt reaching the bucket to the SDK's retry that meets it: the second
    attempt (its back-off, rand(0, 1) * base), or in a quarter the third (the second failed without landing:
    a 503 at once; both back-offs, the second's bound twice the first's)."""
    gap = rng.randint(0, min(base_ms, SDK_BACKOFF_MS_MAX))
    if SDK_MAX_ATTEMPTS >= 3 and rng.randrange(4) == 0:
        gap += rng.randint(0, min(2 * base_ms, SDK_BACKOFF_MS_MAX))
    return max(gap, 1)
STEPS = tuple(steps())  # the order of the run's schedule: the world's own steps and the fault kinds'
SentFields = FIELDS["sent"]
OFF_OPTIONS = defaults()  # every fault kind's options at their off values, its settings at their defaults


_new_tuple = tuple.__new__  # a named tuple made from a tuple of its fields in one call (the hot paths)
_ARITY = {kind: (cls, len(cls._fields)) for kind, cls in FIELDS.items()}  # kind -> (its fields' type, how many)


# the bucket's answer (a Reply's status) as the ledger counts it (history.schema.Sent.answer): a timed-out answer
# from the bucket is a 5xx (the simulated bucket gives one only as a fast 5xx; a real one, for a 5xx or a lost call)
ANSWERS = {OK: "2xx", NOT_FOUND: "404", PRECONDITION_FAILED: "412", CONFLICT: "409", TIMED_OUT: "5xx",
           FAILED_FAST: "never_arrived"}


def _written_state(req) -> str | None:
    """The state a write of a protocol record carries (`state_line`), None for a read or a data write."""
    if req.op != PUT or str.startswith(req.key, DATA_PREFIX):
        return None
    return state_line(req.body)


class World(Processes, Workload, QuietPhase):
    """The core of a world; a subclass supplies time, the bucket and the transport."""

    # schedule a request's timeout only once its reply will not come first (it answers nothing
    # otherwise): a world that knows each reply's instant when the bucket answers (the SimPy world)
    lazy_timeouts = False

    def __init__(self, seed: int, model, scenario: str = "swarm", params: Params | dict | None = None,
                 model_name: str = "correct", options: dict | None = None, choices=None, **draw_overrides) -> None:
        self.seed = seed
        # faults as data (scenarios/plan.py): a Choices that records every decision drawn, or a plan
        # to read them from (then nothing is drawn: every stream refuses)
        self.choices = choices
        # one random stream per part (streams.py): rngs[part], made on first use
        self.rngs = Streams(seed, planned=choices is not None and not choices.recording)
        # the network's delays (`delay`, every request and reply) go through getrandbits, as Random's own draws do
        self._net_bits = self.rngs["network"].getrandbits
        # fates drawn straight from the streams (no Choices to note or read them, no world of its own deciding)
        self._drawn = choices is None and type(self)._fate is World._fate
        # the configuration: given whole (a Params), or drawn for this seed around the pinned values
        if isinstance(params, Params):
            self.params, config = params, "given"
        else:
            self.params, config = draw_params(self.rngs, params or {}, scenario)
        self.model = model
        self.options = draw(self.rngs, scenario, self.params, **draw_overrides) if options is None else options
        self.options.setdefault("config", config)
        o = self.options
        self._delay_ms_max = o["delay_ms_max"]
        self._upload_ms_max = o.get("upload_ms_max", 0)
        self.tg = self.params.ttl_ms + self.params.grace_ms  # T-5's takeover span: the world's schedule scales with it
        self.net_rules: list = []  # scripted network faults (scenarios.script); none in drawn worlds
        self.network = Network(self)  # every request's fate and every reply's (scenarios/network.py)
        # the fault rates in force: the drawn ones, zero once the quiet phase begins
        self.fault = {k: o.get(k, 0.0) for k in RATES}
        # losses and delays hit only requests of this [op, key prefix] (None: every request; op None: any op)
        self.fault_target = o.get("fault_target")
        self.in_quiet = False
        self.history = History(seed, model_name, scenario, self.params.to_dict(), o)
        self.history.off_options = OFF_OPTIONS  # (not hashed at their off values: a kind added leaves the hash)
        self.history.requests = []  # the request ledger: every request sent and its fate (`send`, `_fated`)
        self._sent_at: dict[tuple[int, int], int] = {}  # (process, request id) -> its row in the ledger, until its fate
        self.rules: Counter = Counter()
        self.bucket_requests = 0
        self.procs: list[Proc] = []
        self.clocks = {m: Clock(off, drift) for m, (off, drift) in o["clocks"].items()}
        self.cut: dict[str, str] = {}  # machine or "*" -> mode, while an outage lasts
        # node ids and actors: n0.. and a0.., or as a plan names them (a shrunk plan drops some)
        ids = o.get("node_ids") or [f"n{i}" for i in range(o["nodes"])]
        self.slots = [Slot(n, "m" + n[1:]) for n in ids]
        self.node_ids = [slot.node_id for slot in self.slots]
        self.request_ids = list(self.node_ids)  # where clients send requests (old ids too, in an upgrade)
        self.old_slots: list[Slot] = []
        self.actors = o.get("actor_ids") or [f"t{k % 2}/c/a{k}" for k in range(o["actors"])]
        self._timer_seq = 0
        self._requests = 0
        self._retries: dict[int, int] = {}  # client request -> retries so far
        self._final_actors: list[str] = []
        self._final_reqs: set[int] = set()  # request ids of the final rounds (membership only)
        self.requests_until = 1 << 62
        self.operator: Proc | None = None
        self.holders: dict[str, str] = {}  # actor -> the node its record names, as the bucket applied it
        # the store the bucket answers as (swarm.STORES; issue 47): "aws" answers 409 only to a conditional write
        # racing another in flight, "r2" never; a plan from before the option has none: "aws"
        self.store = o.get("store", "aws")
        # key -> (process, request id) -> [sent_ms, end_ms | None]: the conditional writes in flight to it, from
        # their send until their answer reaches the sender (or is lost on the way): what a 409 races (`racing_write`)
        self._cond_flight: dict[str, dict[tuple[int, int], list]] = {}
        # what faults share (see `cut_off`, `shielded`, `calm`, `lose_next`)
        self._calm: dict[str, int] = {}  # node -> until when no other fault touches it (a race plays out)
        self._shield: dict[str, int] = {}  # node -> until when no random network fault touches its requests
        self._busy: dict[str, int] = {}  # node -> until when its actors stay busy (no hibernation or move reaches it)
        self._lose: dict[str, str] = {}  # node -> key prefix: its next write there is lost on the way
        self.quiet_at_ms: int | None = None  # when the quiet phase begins (`schedule` sets it)
        self.settle_from_ms = 1 << 62  # from when requests sent are recorded: the quiet phase's last span
        self.liveness_ms = o.get("liveness_ms", self.tg)  # the quiet phase's span: its schedule scales with it
        # the fault kinds: each one's state on this world, and the hooks of those this seed uses
        for kind in KINDS.values():
            for attr, factory in kind.state.items():
                setattr(self, attr, factory())
        active = [kind for kind in KINDS.values() if kind.active(o)]
        self.send_early = [k.send_early for k in active if k.send_early is not None]
        self.send_late = [k.send_late for k in active if k.send_late is not None]
        self.reply_early = [k.reply_early for k in active if k.reply_early is not None]
        self.reply_late = [k.reply_late for k in active if k.reply_late is not None]
        # the event hooks: each kind's that overrides the base's (FaultKind), in ORDER
        self.acked_hooks = [k.on_lease_acked for k in active if k.overrides("on_lease_acked")]
        self.released_hooks = [k.on_released_sent for k in active if k.overrides("on_released_sent")]
        self.event_hooks = [k.on_event_begins for k in active if k.overrides("on_event_begins")]
        self.answered_hooks = [k.on_answered for k in active if k.overrides("on_answered")]
        # a request leaving a process, which a kind's race may hold back in the network (restart_races.py)
        self.sent_hooks = [k.on_sent for k in active if k.overrides("on_sent")]
        self.record_hooks = [k.on_record_reply for k in active if k.overrides("on_record_reply")]
        self.fence_hooks = [k.on_fence_sent for k in active if k.overrides("on_fence_sent")]
        self.quiet_acts = [k.quiet_acts for k in KINDS.values() if k.overrides("quiet_acts")]

    # --- what a world supplies ----------------------------------------------------------

    @property
    def now(self) -> int:
        raise NotImplementedError

    def later(self, delay_ms: int, fn, *args) -> None:
        """Call fn(*args) `delay_ms` from now (true time)."""
        raise NotImplementedError

    def to_bucket(self, proc: Proc, rid: int, req, fate, sent_ms: int) -> None:
        """The request (sent at true time `sent_ms`) reaches the bucket now: apply it, then call
        bucket_answered()."""
        raise NotImplementedError

    def remove_object(self, key: str) -> None:
        raise NotImplementedError

    def read_bucket(self, then) -> None:
        """then(leases, data_keys): every `leases/` key with its body, every `wal/` key."""
        raise NotImplementedError

    def choose(self, site: str, who: str, draw, *args):
        """A decision of the world's own (not a request's fate): drawn by `draw(*args)`, or noted
        or read by the run's Choices (faults as data, scenarios/plan.py)."""
        ch = self.choices
        return draw(*args) if ch is None else ch.pick(site, who, draw, *args)

    def delay(self) -> int:
        """randint(1, delay_ms_max) from the network's stream: a request's or a reply's way to the bucket
        (every request and reply: the hot path's most called draw, `Stream.randint` inlined)."""
        n = self._delay_ms_max
        k = n.bit_length()
        getrandbits = self._net_bits
        r = getrandbits(k)
        while r >= n:
            r = getrandbits(k)
        return 1 + r

    # --- the run's schedule -------------------------------------------------------------

    def schedule(self) -> int:
        """Schedule everything the drawn options say, in STEPS order: the world's own steps and each
        fault kind's; returns the run's end (true time)."""
        o = self.options
        # the new nodes start here (an upgrade's switch, or 0); their faults count from here
        base = max(kind.base_ms(o) for kind in KINDS.values())
        end = base + o["fault_ms"]
        quiet = o.get("quiet_ms", 0)
        # the run ends on a quiet moment: no new request in its last 4/15 of ttl + grace
        # the quiet phase's schedule scales with its liveness span (ttl + grace, or a floor)
        live = self.liveness_ms
        self.requests_until = end + quiet - 4 * live // 15 if quiet else end
        self.quiet_at_ms = end if quiet else None
        if quiet:
            self.settle_from_ms = end + quiet - live
        for step in STEPS:
            if step == "@starts":
                starts = o.get("starts") or [0] * len(self.node_ids)
                for slot, start in zip(self.slots[: len(self.node_ids)], starts):
                    # nodes start spread over a period, so that their lease cadences are not in lockstep
                    if base + start:
                        self.later(base + start, self._start_slot, slot)
                    else:
                        self.start_process(slot)
            elif step == "@operator":
                self.start_operator()
            elif step == "@workload":
                ch = self.choices
                if ch is not None and not ch.recording:
                    self.schedule_workload(ch.workload)
                else:
                    # drawn from `until` on; a branching plan's (scenarios/plan.py) kept before it, or whole
                    until = 0 if ch is None else ch.until_ms
                    if ch is not None and ch.kept:
                        self.schedule_workload(ch.kept)
                    if until is not None:
                        rngs = self.rngs
                        if o["request_gap_ms"]:
                            self.later(until + rngs["requests"].randint(0, o["request_gap_ms"]), self._client_request)
                        if o["hibernate_gap_ms"]:
                            self.later(until + rngs["hibernations"].randint(0, 2 * o["hibernate_gap_ms"]),
                                       self._hibernate)
                        if o["move_gap_ms"]:
                            self.later(until + rngs["moves"].randint(0, 2 * o["move_gap_ms"]), self._move)
            elif step == "@script":
                self.schedule_script()
            elif step == "@quiet":
                if quiet:
                    self.later(end, self._quiet_begins)
            elif step == "@final_rounds":
                if quiet:
                    self.later(end + quiet - 4 * live // 5, self._final_round)
                    self.later(end + quiet - 2 * live // 5, self._final_round)
            else:
                KINDS[step].schedule(self, base)
        return end + quiet

    def fault_step(self, kind_id: str, method: str, *args) -> None:
        """A fault kind's own step, scheduled with `later` (a world's own method, as the explorer
        needs every callback to be)."""
        getattr(KINDS[kind_id], method)(self, *args)

    def schedule_script(self) -> None:
        """Scripted worlds (scenarios.script) schedule their steps here."""

    def finish(self, end: int) -> History:
        h = self.history
        h.end_ms = end
        h.rules = dict(sorted(self.rules.items()))
        h.counts = self.counts()
        return h

    def close(self) -> None:
        """Let go of all this world holds, its history taken: its processes, network, timers and fault kinds
        refer back to it (`Network.w`, bound methods in the queue and the hooks), a graph of cycles that the
        cyclic collector frees only at its next full pass, tens of seeds later in a campaign's worker, and the
        history with it. Closed, the world is freed at once, by reference counting; it cannot be used again."""
        self.__dict__.clear()

    def counts(self) -> dict:
        return {"bucket_requests": self.bucket_requests, "processes": len(self.procs),
                "client_requests": self._requests}

    def record(self, proc: int, kind: str, fields: tuple = ()) -> None:
        # `event(self.now, proc, kind, fields)`, inlined for the usual case (all of the kind's fields given, as
        # a plain tuple): about 2,000 a seed; anything else goes through `event`, which names what is wrong
        arity = _ARITY.get(kind)
        if arity is not None and len(fields) == arity[1] and type(fields) is tuple:
            self.history.events.append(_new_tuple(Event, (self.now, proc, kind, _new_tuple(arity[0], fields))))
        else:
            self.history.events.append(event(self.now, proc, kind, fields))

    # --- the model's side ------------------------------------------------------------------

    def deliver(self, proc: Proc, inp) -> None:
        if not proc.alive:
            return
        now = self.now
        if proc.paused_until > now:  # paused (World.pause): the input waits until it resumes, in order
            ti = type(inp)
            proc.waited[0 if ti is TimerFired else 1 if ti is ReplyArrived else 2] += 1
            self.later(proc.paused_until - now, self.deliver, proc, inp)
            return
        # what the input is to the background task (BD-2..BD-4): its timer, or the answer to one of its requests
        ti = type(inp)
        ctx = None
        answering = None
        if ti is ReplyArrived:
            if proc.keyed:
                answering = self._answering(proc, inp)
                if answering is not None and len(proc.fences) >= FENCES_AT_ONCE \
                        and str.startswith(answering[1], NODES_PREFIX):
                    self._listing_ended(proc, answering, inp[1])  # BD-1's cap full as a pass ends (issue 45)
            if proc.fences:
                fence = proc.fences.pop(inp[0], None)
                if fence is not None:  # a fence's request answered (its reply, or its timeout): BD-1, SLOT-1
                    self.record(proc.index, "fence_answered", (fence[0], fence[1], inp[1].status, fence[2]))
            if proc.background:
                asked = proc.background.pop(inp[0], None)
                if asked is not None:
                    self._background_answered(proc, asked, inp[1])
                    ctx = asked
        elif ti is TimerFired:
            if inp[0] == "background":
                ctx = "timer"
        elif ti is Command:
            ctx = "told"
        outer = proc.bg_ctx
        proc.bg_ctx = ctx
        outer_answering = proc.answering
        proc.answering = answering
        # the process's two clocks (model.io.Now): its monotonic one (Clock.mono) and its wall one (Clock.local),
        # inlined (the hottest call of all)
        c = proc.clock
        mono = now + now * c.mono_ppm // 1_000_000 if c.mono_ppm else now
        state, effects = proc.step(proc.state, inp,
                                   _new_tuple(Now, (mono, now + c.offset_ms + now * c.drift_ppm // 1_000_000)))
        proc.state = state
        for eff in effects:
            t = type(eff)
            if t is Send:
                self.send(proc, eff)
            elif t is Mark:
                self.rules[eff[0]] += 1
            elif t is SetTimer:
                self.set_timer(proc, eff)
            elif t is Observe:
                kind, fields = eff
                # `record`, inlined: the fields named by the kind (history/schema.py; a model that observes
                # a kind with fields other than the schema's fails here, loudly)
                cls = FIELDS[kind]
                self.history.events.append(_new_tuple(Event, (self.now, proc.index, kind, _new_tuple(cls, fields)
                                                              if len(fields) == len(cls._fields) else cls(*fields))))
                if kind == "served":
                    self._event_begins(proc, fields)
                    if proc.asked:
                        self._client_answered(proc, fields[0], fields[2], "served")
                elif kind == "request_failed":
                    if proc.asked:
                        self._client_answered(proc, fields[0], fields[1], "failed")
                    if self.options["p_client_retry"] or self._final_reqs:
                        self._client_retry(proc, fields)
                elif kind == "drained" and proc.resume_when_drained:
                    self.later(0, self._resume_drained, proc)  # the quiet phase resumes it once drained
            elif t is CancelTimer:
                proc.timers.pop(eff.key, None)
            elif t is Forward:
                if proc.asked and eff.command.name == "request":
                    self._client_answered(proc, eff.command.args[0], eff.command.args[1], "forwarded to " + eff.node_id)
                self.later(self.choose("forward", proc.machine, self.rngs["forward"].randint, 1,
                                       self.options["delay_ms_max"]),
                           self._forwarded, eff.node_id, eff.command)
            elif t is Exit:
                self.record(proc.index, "exit", (eff.status, eff.reason))
                self.end_process(proc, eff.status)
            else:
                raise TypeError(f"not an effect: {eff!r}")
        proc.bg_ctx = outer
        proc.answering = outer_answering

    @staticmethod
    def _answering(proc: Proc, inp) -> tuple[int, str] | None:
        """The request (its id and key) on nodes/ or owners/ whose answer `inp` delivers; a LIST of nodes/
        answered by the listing's chain sets the keys it will read one after another (BD-1: those reads are
        the listing's, not fences)."""
        rid = inp[0]
        key = proc.keyed.pop(rid, None)
        if key is None:
            return None
        if key == NODES_PREFIX:
            chain = proc.chain
            if chain is not None and chain[0] == rid:
                reply = inp[1]
                own = NODES_PREFIX + proc.node_id
                keys = tuple(k for k, _v in reply.entries or () if k != own)
                proc.chain = [rid, keys, chain[2], keys] if reply.status == OK else None
        return rid, key

    def _listing_ended(self, proc: Proc, answering: tuple[int, str], reply) -> None:
        """The answer that ends a listing of nodes/ (its chain's last GET's, or the LIST's when it listed no
        peer) is being delivered: the model decides its fences now (FN-2, FN-3, BD-1). Recorded (`listing_ended`)
        only while the process has BD-1's cap of fences' requests in flight (a pass at the cap: issue 45), so
        that no other run records one: the peers listed, the fences' requests in flight (this pass's not yet
        sent), and when the LIST was sent."""
        chain = proc.chain
        if answering[1] == NODES_PREFIX:
            if reply.status != OK or chain is None or chain[1]:
                return  # failed (no pass: the model decides nothing), or its chain of reads begins
            listed, sent = (), chain[2]
        elif chain is not None and chain[0] == answering[0] and chain[1] == ():
            listed, sent = chain[3], chain[2]
        else:
            return
        self.record(proc.index, "listing_ended", ([k[len(NODES_PREFIX):] for k in listed], len(proc.fences), sent))

    def _is_fence(self, proc: Proc, rid: int, req) -> bool:
        """A request on another node's nodes/ object is a fence's (FN-3's read, or a fence write: BD-1) unless
        it is a read of the listing's chain (one GET per listed key, each sent on the answer to the chain's
        previous request), the read of a node's lease that follows a read of a record (FN-5, OR-3), or the
        operator's."""
        if req.op != GET:
            return True
        if proc is getattr(self, "operator", None):
            return False  # the operator's reads (FN-7, FN-8): each command its own, no task of fences (BD-1)
        answering = proc.answering
        if answering is None:
            return True
        if str.startswith(answering[1], OWNERS_PREFIX):
            return False  # FN-5: the read of nodes/A issued after the read of a record naming A
        chain = proc.chain
        if chain is not None and chain[0] == answering[0] and chain[1] and req.key in chain[1]:
            chain[0] = rid
            chain[1] = tuple(k for k in chain[1] if k != req.key)
            return False
        return True

    def background_or_release(self, proc: Proc, rid: int, req, timeout: int, now: int) -> None:
        """A request on `owners/` leaves: the world notes what it knows of it for BD-2..BD-4, from the input
        it was sent on. When the process's `background` timer fired: a write naming nobody is a pending
        release's retry, a read the resolver's; on the answer to such a retry: the read of its key that
        follows its refusal (OR-5). Those three are the background task's entries at work, counted in
        flight (`background_sent`). A write naming nobody sent otherwise is a release (`release_sent`),
        "told" when the world had just told the process to hibernate, move, stop or drain, or an event of
        its had ended (a foreground release: BD-4), with the time the process gave it."""
        ctx = proc.bg_ctx  # None, "timer", "told", or the background request whose answer is being delivered
        nobody = req.op == PUT and req.body is not None and "\nnobody " in req.body
        version = req.version
        if ctx == "timer":
            if nobody:
                what = "write"
            elif req.op == GET:
                what = "resolve"
            else:
                return
        elif type(ctx) is tuple and ctx[0] == "write" and req.op == GET and req.key == ctx[2]:
            what, version = "read", ctx[3]  # (the retry's token: the read is that entry's)
        elif type(ctx) is tuple and ctx[0] == "resolve" and nobody and req.key == ctx[2]:
            # the resolver's release, sent on its read's answer (OR-8): the entry is worked until its reply (OR-9:
            # the lock is held until then), so it holds its slot (BD-2). No token: it is no pending release's
            # retry (BD-3 judges those), and a failure makes it one (keyed on that read's version)
            what, version = "release", None
        else:
            if nobody:
                self.record(proc.index, "release_sent", (req.key, "told" if ctx == "told" else "", timeout))
            return
        proc.background[rid] = (what, req.op, req.key, version, now)
        self.record(proc.index, "background_sent", (req.op, req.key, version, state_line(req.body), timeout,
                                                    len(proc.background)))

    def _background_answered(self, proc: Proc, asked: tuple, reply) -> None:
        """A request of the background task is answered (its reply, or its timeout): recorded with the state
        a read found and when it was sent (BD-3: the refusals in a row, OR-6: the back-off that follows)."""
        _what, op, key, version, sent = asked
        state = state_line(reply.body) if op == GET and reply.status == OK else ""
        self.record(proc.index, "background_answered", (op, key, version, reply.status, state, sent))

    def _client_answered(self, proc: Proc, actor: str, req: int, how: str) -> None:
        """The process answered a request the world delivered to it in the quiet phase: the world passes the
        answer on (served, failed) or carries the request on (forwarded), and records it (CONV-1)."""
        if proc.asked.get(req) == actor:
            del proc.asked[req]
            self.record(proc.index, "answer", (actor, req, how))

    def set_timer(self, proc: Proc, eff: SetTimer) -> None:
        self._timer_seq += 1
        token = self._timer_seq
        key, at_ms = eff
        proc.timers[key] = token
        # on the monotonic clock (a step of the wall clock does not move it); without its slew, true time
        c = proc.clock
        self.later(max(0, (c.mono_true_at(at_ms) if c.mono_ppm else at_ms) - self.now), self._timer_fires, proc,
                   key, token)

    def _timer_fires(self, proc, key, token) -> None:
        if proc.timers.get(key) == token:
            del proc.timers[key]
            self.deliver(proc, _new_tuple(TimerFired, (key,)))  # TimerFired(key), without its __new__

    # --- requests: their fate, the bucket's answer, the reply --------------------------------

    def is_cut(self, machine: str) -> str | None:
        if not self.cut:
            return None
        return self.cut.get(machine) or self.cut.get("*")

    def send(self, proc: Proc, eff: Send) -> None:
        """A request leaves a process: the fault plan draws its fate; the timeout answers it
        if nothing else does (on the sender's clock)."""
        self.bucket_requests += 1
        rid, req, timeout = eff
        now = self.now
        proc.pending[rid] = now  # its send time
        # the ledger's row (issue 48): the world saw it leave; the model's in-flight entry says why (its word,
        # checked by the cost checks against the request itself)
        purpose = proc.state.inflight.get(rid) or ("?",)
        detail = purpose[1] if len(purpose) > 1 else None
        ledger = self.history.requests
        self._sent_at[(proc.index, rid)] = len(ledger)
        ledger.append(_new_tuple(Sent, (now, proc.index, req.op, req.key, purpose[0], None, False, None, False,
                                         detail if type(detail) is str else None)))
        key = req.key
        if str.startswith(key, OWNERS_PREFIX):
            proc.keyed[rid] = key
            self.background_or_release(proc, rid, req, timeout, now)
        elif str.startswith(key, NODES_PREFIX) and key[6:] != proc.node_id:
            proc.keyed[rid] = key
            if key == NODES_PREFIX:
                if req.op == LIST:
                    # a listing (or the guard's round) begins its chain: [its request in flight, the keys left to
                    # read, when the LIST was sent, the keys listed]
                    proc.chain = [rid, None, now, None]
            elif self._is_fence(proc, rid, req):
                proc.fences[rid] = (req.op, key, now)
                if req.op == GET:
                    self.record(proc.index, "fence_read_sent", (key, len(proc.fences)))
        # what a process still sends once the faults are over (CONV-1), and what a draining one sends
        # (the entries a drain waits on: F-2's cause)
        if now >= self.settle_from_ms or proc.draining:
            self.history.events.append(_new_tuple(Event, (now, proc.index, "sent", _new_tuple(SentFields, (req.op, req.key)))))
        key = req.key
        if str.startswith(key, OWNERS_PREFIX) or str.startswith(key, NODES_PREFIX) and key[6:] == proc.node_id:
            proc.record_reqs[rid] = req  # answered (or timed out), it is a `record_reply` (CONV-2)
        reading = proc.reading
        if reading is not None and req.op == GET and str.startswith(req.key, NODES_PREFIX):
            reading[rid] = req.key  # answered, it is a `read` (UP-1, UP-2)
        if req.op == PUT:
            key = req.key
            if str.startswith(key, DATA_PREFIX):
                proc.watched[rid] = key  # a segment: its failure, when answered, is a world fact (OR-5)
            elif str.startswith(key, NODES_PREFIX) and key != NODES_PREFIX + proc.node_id:
                # a fence (FN-3, FN-7): the world counts the fences' requests the process has in flight, their
                # reads and writes (BD-1)
                proc.watched[rid] = key
                n = len(proc.fences)
                self.record(proc.index, "fence_sent", (key, n))
                for hook in self.fence_hooks:  # the kinds that act when a fence leaves (before its fate)
                    hook(self, proc, req, n)
            elif RELEASED_LINE in req.body[:RELEASED_AT] and str.startswith(state_line(req.body), "released "):
                self.record(proc.index, "released_sent", ())  # its own node lease released (CS-1, CS-2)
                if proc.stragglers:
                    self._released_sent(proc)
                for hook in self.released_hooks:
                    hook(self, proc)
        c = proc.clock
        if c.mono_ppm:  # (`timeout` ms on the sender's monotonic clock; without its slew, `timeout` true ms)
            timeout = c.mono_true_at(c.mono(now) + timeout) - now
        lazy = self.lazy_timeouts
        if not lazy:
            self.later(timeout, self._timed_out, proc, rid)
        # the network decides the request's fate (scenarios/network.py); the world notes it and keeps the clock
        route = self.network.route(proc, rid, req, timeout)
        if route is None:
            # held back by a kind, which lets it go: in the network by a race's (restart_races.py), in flight
            # from now; in its own process by a pause between OR-2's check and the write (pauses.py), not in
            # flight until it leaves (the kind says when: `flies`): a 409 races only writes on their way (issue
            # 47 part 4; seed 12614 of the 20,000 met a 409 racing a write its paused sender never sent)
            if req.cond is not None and proc.paused_until <= now:
                self.flies(proc, rid, req.key, now)
            return
        fault, wait, act, ms, arg = route
        if req.cond is not None and (act is BUCKET or act is CONFLICT_409):
            self.flies(proc, rid, req.key, now)  # it reaches the bucket: in flight until its answer is back
        if fault is not None:
            self.note_fault(proc, fault[0], req, fault[1], fault[2])
        if act is None:
            self._fated(proc, rid, "never_arrived")  # lost on the way (a cut-off, an armed loss, a drawn loss)
        elif act is ANSWER:
            self._fated(proc, rid, ANSWERS[arg.status])  # failed fast (never arrived), or a 5xx at once
        if wait is AWAIT:
            if lazy:  # _await, inlined
                if ms >= timeout:
                    self.later(timeout, self._timed_out, proc, rid)
                else:
                    proc.deadlines[rid] = now + timeout
        elif wait is TIMEOUT:
            if lazy:
                self.later(timeout, self._timed_out, proc, rid)
        elif wait is ALWAYS:
            self.later(timeout, self._timed_out, proc, rid)
        if act is BUCKET:
            self.later(ms, self.to_bucket, proc, rid, req, arg, now)
        elif act is ANSWER:
            self.later(ms, self._reply, proc, rid, arg)
        elif act is CONFLICT_409:
            self.later(ms, self._conflict_at_bucket, proc, rid, req, now, arg)

    def flies(self, proc: Proc, rid: int, key: str, now: int) -> None:
        """A conditional write of `key` is in flight from `now` (the entries of its key already answered go)."""
        flying = self._cond_flight.get(key)
        if flying is None:
            flying = self._cond_flight[key] = {}
        elif flying:
            for k in [k for k, (_s, end) in flying.items() if end is not None and end <= now]:
                del flying[k]
        flying[(proc.index, rid)] = [now, None]

    def flight_ends(self, proc: Proc, rid: int, key: str, end_ms: int) -> None:
        """The answer to a conditional write reaches its sender at `end_ms` (or was lost: now)."""
        flying = self._cond_flight.get(key)
        entry = flying.get((proc.index, rid)) if flying else None
        if entry is not None:
            entry[1] = end_ms

    def racing_write(self, p: int, rid: int, key: str) -> tuple[int, int] | None:
        """Another conditional write to `key` in flight now than request `rid` of process index `p` (sent, its
        answer not yet back at its sender nor lost): (its process index, its send time), the earliest sent;
        None if there is none. AWS answers 409 ConditionalRequestConflict only then (issue 47 part 4)."""
        flying = self._cond_flight.get(key)
        if not flying:
            return None
        now = self.now
        for (q, r), (sent, end) in flying.items():  # (insertion order: the order they were sent)
            if (q != p or r != rid) and sent <= now and (end is None or end > now):
                return q, sent
        return None

    def sdk_retried(self, proc: Proc, rid: int, req, sent_ms: int, fate=None) -> None:
        """A write the bucket just applied (fate `sdk_retry`) lost its answer (a 5xx, a closed connection):
        the client's SDK sends it again after its back-off (`sdk_backoff_ms`: the SDKs' standard retry, the
        seed's base), and that retry's answer is the one the process gets. The retry is a request of its own
        at the bucket: its condition meets the write's own object (412; a DELETE's meets no object: 404 or
        412 by the flavour), unless it names it again. A back-off that ends past the sender's attempt timeout
        (the fate's second field, from the send; 0: none known) sends nothing: the process gave up the call,
        dropping the SDK's future in its sleep; the write applied, its answer lost (the timeout answers)."""
        base_ms = self.options.get("sdk_retry_base_ms", 1_000)
        gap = self.choose("sdk_retry", proc.machine, sdk_backoff_ms, self.rngs["sdk_retry_412"], base_ms)
        timeout = fate[1] if fate is not None and len(fate) > 1 else 0
        if timeout and self.now + gap >= sent_ms + timeout:
            self.note_fault(proc, "reply_lost", req, None, "applied; its answer lost; the SDK's retry cancelled "
                                                         "by the attempt timeout")
            self.flight_ends(proc, rid, req.key, self.now)
            i = self._sent_at.get((proc.index, rid))
            if i is not None:
                ledger = self.history.requests
                ledger[i] = ledger[i]._replace(answer="2xx", reply_lost=True)
            return
        self.note_fault(proc, "sdk_retry", req, gap, "applied; its answer lost; the SDK sent it again")
        # the ledger: the first call was applied (its answer lost on the way); the retry is a request of its own,
        # whose answer is the one the process gets (`_fated` fills it)
        i = self._sent_at.get((proc.index, rid))
        if i is not None:
            ledger = self.history.requests
            first = ledger[i]
            ledger[i] = first._replace(answer="2xx", reply_lost=True)
            self._sent_at[(proc.index, rid)] = len(ledger)
            ledger.append(first._replace(sent_ms=self.now + gap, sdk_retry=True))
        self.later(gap, self.to_bucket, proc, rid, req, None, sent_ms)

    def _conflict_at_bucket(self, proc: Proc, rid: int, req, sent_ms: int, given=None) -> None:
        """A request given the fate `conflict` reaches the bucket: answered 409, as AWS answers a conditional
        write racing another, not applied and its condition not judged (a fault kind's: conflict_any.py,
        marker_writes.py), but only while another conditional write to its key is in flight and the store is
        AWS (issue 47 part 4: AWS documents it for a conflicting operation, R2 none); else it is applied as any
        other, no fault. A scripted rule's 409 (`given` "scripted": a test's hand-made world) is answered as
        scripted, its race named if there is one."""
        racing = self.racing_write(proc.index, rid, req.key) if self.store != "r2" or given == "scripted" else None
        if racing is None and given != "scripted":
            self.to_bucket(proc, rid, req, None, sent_ms)
            return
        self.note_fault(proc, "conflict", req, None, "answered 409, not applied")
        self.conflicted(proc, req, sent_ms, racing)
        self.bucket_answered(proc, rid, req, CONFLICTED, None)

    def await_answer(self, proc: Proc, rid: int, timeout: int, answered_in: int) -> None:
        """Lazy timeouts: schedule the timeout now if the answer comes no sooner; else note when it
        would fire, for the reply's path to schedule it if the reply is lost or comes too late."""
        if answered_in >= timeout:
            self.later(timeout, self._timed_out, proc, rid)
        else:
            proc.deadlines[rid] = self.now + timeout

    def _deadline_due(self, proc: Proc, rid: int, answered_at: int | None) -> None:
        """The reply of a request with a noted deadline is lost (answered_at None) or comes at
        `answered_at`: the timeout is scheduled if it must answer first."""
        deadline = proc.deadlines.get(rid)
        if deadline is not None and (answered_at is None or answered_at >= deadline):
            del proc.deadlines[rid]
            self.later(deadline - self.now, self._timed_out, proc, rid)

    def _fate(self, site: str, draw, proc: Proc, req) -> tuple[str, int]:
        """A request's or a reply's fate: drawn, or noted or read by the run's Choices, keyed by the
        sender's machine and the request (scenarios/plan.py)."""
        ch = self.choices
        return draw(proc, req) if ch is None else ch.pick(site, f"{proc.machine} {req.op} {req.key}", draw, proc, req)

    def targeted(self, req) -> bool:
        """The request is of the [op, key prefix] the seed's losses and delays aim at (fault_target)."""
        op, prefix = self.fault_target
        return (op is None or req.op == op) and str.startswith(req.key, prefix)

    def scripted_fate(self, proc, request):
        """(action, ms) for a request a scripted rule matches; None otherwise."""
        return None

    def learned(self, proc: Proc, key: str, version: str, serial: int) -> None:
        """`proc` read (or wrote) `version` of `key`, known to the world as `serial` (INV-3)."""
        proc.learned[(key, version)] = serial

    def applied(self, proc: Proc, req, version: str | None, prev_serial: int, serial: int,
                prev_body: str | None, sent_ms: int) -> None:
        """A write or delete of `proc`, sent at `sent_ms`, took effect: `prev_serial` is the object it
        replaced (0: none), `serial` the new one (0: deleted). Records it with the version its
        condition named, as this process knew it before this write (INV-3), and its send time
        (the checkers rebuild validity from it)."""
        key = req.key
        if req.cond == IF_MATCH:
            named = proc.learned.get((key, req.version), -1)
        elif req.cond == IF_NONE_MATCH:
            named = 0
        else:
            named = None
        if req.op == PUT:
            proc.learned[(key, version)] = serial
        state = state_line(req.body)
        self.record(proc.index, "apply", (key, req.op, req.cond, prev_serial, named, serial,
                                          state, state_line(prev_body), sent_ms))
        if proc.reading is not None and str.startswith(state, "live ") and key == NODES_PREFIX + proc.node_id:
            proc.reading = None  # its first live write took effect: its start is over (UP-1)
        if str.startswith(key, OWNERS_PREFIX):
            parts = state.split(" ")
            if parts[0] == "held":
                self.holders[key[len(OWNERS_PREFIX):]] = parts[1]
            else:
                self.holders.pop(key[len(OWNERS_PREFIX):], None)

    def refused(self, proc: Proc, req, met_body: str | None, sent_ms: int, status: str = PRECONDITION_FAILED) -> None:
        """The bucket refused a conditional write of `proc` (412, or 404 for an If-Match on an absent
        object): the world records what it met (INV-10: a process whose write met a fence naming it
        stops)."""
        code = 404 if status == NOT_FOUND else 412
        named = proc.learned.get((req.key, req.version), -1) if req.cond == IF_MATCH else 0 if req.cond else None
        self.record(proc.index, "refused", (req.key, req.op, req.cond, state_line(met_body), sent_ms, code, named))

    def conflicted(self, proc: Proc, req, sent_ms: int, racing: tuple[int, int] | None = None) -> None:
        """The bucket answered a conditional write of `proc` 409: not applied, its condition not judged
        (CS-2: a conflict on the `released` write is followed by NL-9's re-read, like a 412); `racing`: the
        conditional write to that key in flight meanwhile (its process index, its send time), None if none."""
        q, at = racing if racing is not None else (None, None)
        self.record(proc.index, "conflicted", (req.key, req.op, sent_ms, _written_state(req), q, at))

    def bucket_answered(self, proc: Proc, rid: int, req, reply: Reply, fate) -> None:
        """The bucket answered `req`: the kinds that act on an answer see it (`on_answered`: the old garbage
        collection racing a new node's read), then the fault plan draws what happens to the reply."""
        if fate is not None and fate[0] == "applied_5xx":
            reply, fate = NO_ANSWER, None  # applied, and answered 500/503 (fast_5xx.py): outcome unknown to it
        if self.answered_hooks:
            for hook in self.answered_hooks:
                hook(self, proc, req, reply)
        ms = self.network.reply_route(proc, req, reply, fate)
        if req.cond is not None and req.key in self._cond_flight:
            self.flight_ends(proc, rid, req.key, self.now + ms if ms is not None else self.now)
        self._fated(proc, rid, ANSWERS[reply.status], ms is None,
                    len(reply.entries) if reply.entries is not None and reply.status == OK else None)
        if ms is None:
            if proc.deadlines:
                self._deadline_due(proc, rid, None)
            return
        if proc.deadlines:
            self._deadline_due(proc, rid, self.now + ms)
        self.later(ms, self._reply, proc, rid, reply, req)

    def _fated(self, proc: Proc, rid: int, answer: str, reply_lost: bool = False, entries: int | None = None) -> None:
        """The ledger's row of request `rid` of `proc` gets its fate: the bucket's answer (or never_arrived), and
        whether that answer was lost on the way back."""
        i = self._sent_at.get((proc.index, rid))
        if i is not None:
            ledger = self.history.requests
            r = ledger[i]  # (r._replace(answer=..., reply_lost=..., entries=...), spelled out: every request)
            ledger[i] = _new_tuple(Sent, (r[0], r[1], r[2], r[3], r[4], answer, reply_lost, entries, r[8], r[9]))
            if reply_lost or answer == "never_arrived":
                del self._sent_at[(proc.index, rid)]

    def _reply(self, proc, rid, reply, req=None) -> None:
        if proc.paused_until > self.now:  # paused (World.pause): the reply waits in its socket until it resumes
            if proc.alive:
                proc.waited[1] += 1
            self.later(proc.paused_until - self.now, self._reply, proc, rid, reply, req)
            return
        i = self._sent_at.pop((proc.index, rid), None)
        sent = proc.pending.pop(rid, None)
        if sent is None:
            return  # timed out already, or the process is gone
        if self.cut and self.network.cut_on_arrival(proc, reply):
            proc.pending[rid] = sent  # the reply is lost on the way: the timeout answers
            if i is not None:
                ledger = self.history.requests
                ledger[i] = ledger[i]._replace(reply_lost=True)
            if req is not None:  # a world fact like any lost reply (F-3: a first write its writer never learnt of)
                self.note_fault(proc, "reply_lost", req, None, "cut off")
            if proc.deadlines:
                self._deadline_due(proc, rid, None)
            return
        if proc.deadlines:
            proc.deadlines.pop(rid, None)
        if proc.watched:
            self._unwatch(proc, rid, reply.status)
        if proc.reading:
            self._read(proc, rid, reply, sent)
        if proc.record_reqs:
            self._record_reply(proc, rid, reply, sent)
        if req is not None and req.op == LIST and reply.status == OK and str.startswith(req.key, DATA_PREFIX):
            # what a restore saw: the world knows the listing it delivered (INV-8)
            cut = len(req.key)
            self.record(proc.index, "listed", (req.key, [k[cut:] for k, _v in reply.entries], sent))
        elif (req is not None and req.op == LIST and reply.status == OK and req.key == NODES_PREFIX
              and proc.reading is not None):
            # what a starting process's start guard could see (UP-2): a key no listing showed it is one
            # no round of its read
            self.record(proc.index, "listed", (req.key, [k[len(NODES_PREFIX):] for k, _v in reply.entries], sent))
        elif req is not None and str.startswith(req.key, LEASES_PREFIX):
            # what a first acquisition learned of leases/ (UP-3): the world knows the answer it delivered
            self.record(proc.index, "leases_reply", (req.key, req.op, reply.status,
                                                     state_line(reply.body if req.op == GET else req.body), sent))
        self.deliver(proc, _new_tuple(ReplyArrived, (rid, reply)))  # ReplyArrived(rid, reply), without its __new__
        if (self.acked_hooks and reply.status == OK and req is not None and req.op == PUT
                and req.key == NODES_PREFIX + proc.node_id):
            for hook in self.acked_hooks:  # an acknowledged lease write: the moment some races strike
                hook(self, proc, sent)

    def _timed_out(self, proc, rid) -> None:
        if proc.paused_until > self.now:  # paused: its timeout fires when it resumes
            self.later(proc.paused_until - self.now, self._timed_out, proc, rid)
            return
        sent = proc.pending.pop(rid, None)
        if sent is None:
            return
        if proc.watched:
            self._unwatch(proc, rid, NO_ANSWER.status)
        if proc.reading:
            self._read(proc, rid, NO_ANSWER, sent)
        if proc.record_reqs:
            self._record_reply(proc, rid, NO_ANSWER, sent)
        self.deliver(proc, ReplyArrived(rid, NO_ANSWER))

    def _read(self, proc, rid, reply, sent: int) -> None:
        """A GET of nodes/ by a process whose own live write has not taken effect yet is answered: the
        world records what it read (the serial, 0: absent, -1: no answer) and when it was sent (UP-1: the
        start check's reads; UP-2: the first read of an old heartbeat)."""
        key = proc.reading.pop(rid, None)
        if key is not None:
            status = reply.status
            serial = proc.learned.get((key, reply.version), -1) if status == OK else 0 if status == NOT_FOUND else -1
            self.record(proc.index, "read", (key, serial, sent))

    def _record_reply(self, proc, rid, reply, sent: int) -> None:
        """A request on an ownership record, or on the process's own node lease, is answered (by the bucket,
        or by its timeout): the world records what the process sent and what it learned (CONV-2)."""
        req = proc.record_reqs.pop(rid, None)
        if req is None:
            return
        status = reply.status
        learned = proc.learned
        if req.op == PUT:
            state = state_line(req.body)
            serial = learned.get((req.key, reply.version), -1) if status == OK else -1
            named = learned.get((req.key, req.version), -1) if req.cond == IF_MATCH else 0 if req.cond else None
        else:
            state = state_line(reply.body) if status == OK else ""
            serial = learned.get((req.key, reply.version), -1) if status == OK else 0 if status == NOT_FOUND else -1
            named = None
        self.record(proc.index, "record_reply", (req.key, req.op, status, state, serial, named, sent))
        for hook in self.record_hooks:  # the kinds that act on what a process learned of a record
            hook(self, proc, req, status, serial, named)

    def _unwatch(self, proc, rid, status: str) -> None:
        """A watched request (a segment upload, a fence) is answered, by the bucket or its timeout: a fence
        is no longer in flight (BD-1), and a segment that failed is a world fact (OR-5)."""
        key = proc.watched.pop(rid, None)
        if key is not None and status != OK and str.startswith(key, DATA_PREFIX):
            self.record(proc.index, "upload_failed", (key, status))

    def note_fault(self, proc: Proc, kind: str, req, ms: int | None = None, detail: str = "") -> None:
        """A fault of `kind` (scenarios/faults.py names them) hit the request `req` of `proc`; a write of a
        protocol record carries its state (which write was struck: an acquisition or a release, F-2)."""
        self.fault_event(proc.index, kind, f"{req.op} {req.key}", ms, detail, _written_state(req))

    def fault_event(self, proc: int, what: str, target: str, ms: int | None = None, detail: str = "",
                    state: str | None = None) -> None:
        """A `fault` event: `what` struck (one of faults.FAULT_EVENTS: anything else is a loud error, naming it),
        `target` (a request "OP key", a machine, "*"), a length or delay in ms, a word for people, and for a
        write of a protocol record the state it carried. `proc`: the process it struck (-1: the world's)."""
        if what not in FAULT_EVENTS:
            raise ValueError(f"a fault event {what!r} that scenarios/faults FAULT_EVENTS does not name (register "
                             f"it there, with what it means)")
        self.record(proc, "fault", (what, target, ms, detail, state))

    # --- what faults share: cut-offs, shields, calm, armed losses --------------------------

    def outage(self, who, length_ms, mode) -> None:
        """Cut the bucket off from node `who`'s machine, or from everyone ("*")."""
        if who != "*" and str.startswith(who, "n"):
            who = "m" + who[1:]
        if self.disturbs_a_race(None if who == "*" else "n" + who[1:]):
            return
        self.cut_off(who, length_ms, mode)

    def cut_off(self, who, length_ms, mode) -> None:
        self.cut[who] = mode
        self.record(WORLD, "outage", (who, self.now + length_ms))
        self.fault_event(WORLD, "outage", who, length_ms, mode)
        self.later(length_ms, self._outage_ends, who)

    def _outage_ends(self, who) -> None:
        self.cut.pop(who, None)

    def keep_calm(self, node_id: str, until: int) -> None:
        """No fault but a race's own touches this node until `until` (or later, if calm longer already)."""
        calm = self._calm
        calm[node_id] = max(calm.get(node_id, 0), until)

    def set_calm(self, node_id: str, until: int) -> None:
        """The node is calm until exactly `until` (a race's span, set anew)."""
        self._calm[node_id] = until

    def set_shield(self, node_id: str, until: int) -> None:
        """No random network fault touches this node's requests until exactly `until` (any phase)."""
        self._shield[node_id] = until

    def extend_shield(self, node_id: str, until: int) -> None:
        """The node's shield lasts at least until `until` (any phase; `shield_until` outside the quiet phase)."""
        self._shield[node_id] = max(self._shield.get(node_id, 0), until)

    def lose_next(self, node_id: str, prefix: str) -> None:
        """The node's next write under `prefix` is lost on the way (a drain's lost acquire, F-2)."""
        self._lose[node_id] = prefix

    def shield_until(self, node_id: str, until: int) -> None:
        if not self.in_quiet:
            self._shield[node_id] = max(self._shield.get(node_id, 0), until)

    def busy_until(self, node_id: str, until: int) -> None:
        if not self.in_quiet:
            self._busy[node_id] = max(self._busy.get(node_id, 0), until)

    def shielded(self, node_id: str) -> bool:
        """No random network fault touches this node's requests now: a race plays out on it."""
        if self._calm and self.calm(node_id):
            return True
        until = self._shield.get(node_id)
        return until is not None and self.now < until

    def calm(self, node_id: str) -> bool:
        """No fault but the race's own touches this node now (a deadline race plays out on it)."""
        until = self._calm.get(node_id)
        return until is not None and self.now < until

    def disturbs_a_race(self, node_id: str | None) -> bool:
        """A drawn fault aimed at `node_id` (None: at every node) waits for no race: it is skipped."""
        if not self._calm:
            return False
        return any(self.calm(n) for n in self._calm) if node_id is None else self.calm(node_id)
