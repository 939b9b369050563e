"""The network: every request's fate and every reply's, decided in one place (issue 46, part 1).

In the manner of TigerBeetle's packet simulator, one component owns what happens to a message between a
process and the bucket: a machine cut off the bucket (an outage, a race's cut), a write armed to be lost,
a scripted rule (scenarios/script.py), a fault kind's race that holds a request back, and the fate a plan
holds or the seed's streams draw (asking the kinds this seed uses, in faults.ORDER, with shields and calm
applied). Whatever decides it, a fate is one entry of one table (`SEND_FATES`, `REPLY_FATES`), dispatched
once; a fate no entry names is a loud error naming the kind (or the plan, or the script) that gave it.

The interface is small. The world hands it a request (`route`) and gets back a `Route`: the fault to note,
how the sender's timeout waits (`wait`), and what happens `ms` from now (`act`): the request reaches the
bucket (applied there, or answered 409, or applied with its answer lost to an SDK retry), or an answer
comes without it (failed fast, a 5xx), or nothing. For a reply (`reply_route`) it gets back when it is
delivered, or None (lost). The world keeps the bookkeeping and the clock: it schedules what the route
says, in the route's order. Every request's fate and every reply's passes `route` and `reply_route`, the
place where anything that counts them can listen (`observers`); the request ledger (issue 48) is the world
core's own (`World.send`, `World.bucket_answered`: History.requests).

Must not know: any protocol rule, SimPy or boto3; it imports nothing of the world core (the world is
handed to it), so no circle of files.
"""

from __future__ import annotations

from typing import NamedTuple

from model.frozen import _new_tuple
from model.io import CONFLICT, FAILED_FAST, PUT, TIMED_OUT, Reply
from model.records import NODES_PREFIX

from .faults import NO_FAULTS
from .faults.fail_fast import FAIL_FAST_MS_MAX

FAILED = Reply(FAILED_FAST)
CONFLICTED = Reply(CONFLICT)
NO_ANSWER = Reply(TIMED_OUT)

# a scripted network rule's action (scenarios.script) -> the fault it is, named as drawn ones are
SCRIPTED_FAULTS = {"lose_request": "request_lost", "fail_fast": "fail_fast", "delay_apply": "held_back",
                   "lose_reply": "reply_lost", "delay_reply": "slow_reply", "answer_5xx": "fast_5xx"}

# how the sender's timeout waits (with lazy timeouts, a world that knows each answer's instant when the bucket
# answers schedules a timeout only once the answer will not come first):
TIMEOUT = "timeout"  # no answer comes before it: scheduled now (lazy worlds; the others scheduled it at the send)
ALWAYS = "always"  # scheduled now in every world (an SDK retry's answer may come past it)
AWAIT = "await"  # an answer comes `ms` from now (or the bucket's, once applied): the timeout waits for it
NONE = "none"  # nothing (a scripted rule's: scripted worlds schedule their timeouts at the send)

# what happens `ms` from now
BUCKET = "bucket"  # the request reaches the bucket (`arg`: its fate there, None: applied and answered)
ANSWER = "answer"  # an answer comes without the bucket (`arg`: the reply)
CONFLICT_409 = "conflict"  # the bucket answers 409 ConditionalRequestConflict: not applied
NOTHING = None


class Route(NamedTuple):
    """What the network does with one request."""

    fault: tuple | None  # (what, ms, detail) to note as a fault event (faults.FAULT_EVENTS), or None
    wait: str  # TIMEOUT, ALWAYS, AWAIT or NONE
    act: str | None  # BUCKET, ANSWER, CONFLICT_409 or None
    ms: int  # when, from now
    # BUCKET: the bucket's fate (None, ("sdk_retry", the sender's timeout ms) or ("applied_5xx", 0)); ANSWER: the
    # reply; CONFLICT_409: "scripted" for a script's 409 (answered whatever races it), else None
    arg: object = None


# --- one table of request fates: (what, ms, timeout) -> Route ------------------------------------------

def _ok(ms, timeout):  # (every request but a faulted one: made as `_route` makes it, see there)
    return _new_tuple(Route, (None, AWAIT, BUCKET, ms, None))


def _late(ms, timeout):  # applied `ms` after its sender gave up
    return Route(("late", timeout + ms, "applied past its timeout"), TIMEOUT, BUCKET, timeout + ms)


def _lost(ms, timeout):  # lost on the way: never applied, never answered
    return Route(("request_lost", None, ""), TIMEOUT, NOTHING, 0)


def _fail_fast(ms, timeout):
    return Route(("fail_fast", None, ""), AWAIT, ANSWER, ms, FAILED)


def _fast_5xx(ms, timeout):  # a 500/503 at once: never applied; the model cannot know that
    return Route(("fast_5xx", ms, "answered 5xx at once, never applied"), AWAIT, ANSWER, ms, NO_ANSWER)


def _applied_5xx(ms, timeout):  # applied `ms` from now, and answered 500/503 (issue 47): the model cannot know
    return Route(("applied_5xx", ms, "applied, answered 5xx at once"), AWAIT, BUCKET, ms, ("applied_5xx", 0))


def _conflict(ms, timeout):  # answered 409 ConditionalRequestConflict after `ms`: never applied
    return Route(None, AWAIT, CONFLICT_409, ms)


def _sdk_retry(ms, timeout):  # applied `ms` from now, its answer lost; the SDK's retry answers it, unless its
    # back-off outlasts the sender's attempt timeout (carried: core.World.sdk_retried)
    return Route(None, ALWAYS, BUCKET, ms, ("sdk_retry", timeout))


SEND_FATES = {"ok": _ok, "late": _late, "lost": _lost, "fail_fast": _fail_fast, "fast_5xx": _fast_5xx,
              "applied_5xx": _applied_5xx, "conflict": _conflict, "sdk_retry": _sdk_retry}

# a scripted rule's action -> its route (scripted worlds keep their timeouts at the send: NONE)
SCRIPTED = {
    "lose_request": lambda ms: Route(("request_lost", None, "scripted"), NONE, NOTHING, 0),
    "fail_fast": lambda ms: Route(("fail_fast", None, "scripted"), NONE, ANSWER, 1, FAILED),
    "delay_apply": lambda ms: Route(("held_back", ms, "scripted"), NONE, BUCKET, ms),
    "answer_5xx": lambda ms: Route(("fast_5xx", None, "scripted"), NONE, ANSWER, max(ms, 1), NO_ANSWER),
    "conflict": lambda ms: Route(None, NONE, CONFLICT_409, max(ms, 1), "scripted"),
    "sdk_retry": lambda ms: Route(None, NONE, BUCKET, max(ms, 1), ("sdk_retry", 0)),
}
REPLY_FATES = ("ok", "lost", "slow")


class UnknownFate(ValueError):
    """A fate no entry of the network's table names."""


class Network:
    """The network of one world (the world hands itself over; the network keeps no state of its own but the
    observers: cut-offs, shields, calm and armed losses are the world's, what faults share)."""

    def __init__(self, world) -> None:
        self.w = world
        # callables (proc, req, route) and (proc, req, reply, ms | None): every request's route and every
        # reply's fate, for a ledger (empty: nothing is asked)
        self.observers: list = []
        self.reply_observers: list = []
        self._given_by = None  # who gave the last drawn fate (a kind's id): named by an unknown fate

    def for_world(self, world) -> "Network":
        """The same network for a copy of its world (the explorer's branches), its observers kept."""
        net = Network(world)
        net.observers, net.reply_observers = list(self.observers), list(self.reply_observers)
        return net

    # --- a request -------------------------------------------------------------------------------------

    def route(self, proc, rid: int, req, timeout: int) -> Route | None:
        """What happens to request `rid` of `proc` (its timeout: `timeout` true ms): a Route, or None when a
        kind's race holds it back in the network (the kind lets it go: restart_races.py)."""
        w = self.w
        if w.sent_hooks:
            for hook in w.sent_hooks:
                if hook(w, proc, rid, req, timeout):
                    return None
        route = self._route(proc, req, timeout)
        if self.observers:
            for observe in self.observers:
                observe(proc, req, route)
        return route

    def _route(self, proc, req, timeout: int) -> Route:
        w = self.w
        cuts = w.cut
        cut = (cuts.get(proc.machine) or cuts.get("*")) if cuts else None
        if cut == "blackhole" or cut == "lease" and req.op == PUT and req.key == NODES_PREFIX + proc.node_id:
            return Route(None, TIMEOUT, NOTHING, 0)  # ("lease": only the node's own lease writes are lost)
        carried = None  # a scripted rule's fate for the reply, which the request carries to the bucket
        if w.net_rules:
            fate = w.scripted_fate(proc, req)
            if fate is not None:
                action, ms = fate
                make = SCRIPTED.get(action)
                if make is not None:
                    return make(ms)
                if action not in ("lose_reply", "delay_reply"):
                    raise UnknownFate(f"a scripted network rule gave the fate {action!r}: the network knows "
                                      f"{', '.join(SCRIPTED)}, lose_reply, delay_reply")
                # noted as it leaves, and again when the bucket answers (`reply_route`): the scripts' findings
                # were written against both
                w.note_fault(proc, SCRIPTED_FAULTS[action], req, ms if action == "delay_reply" else None, "scripted")
                carried = fate
        lose = w._lose
        if lose and req.op == PUT and lose.get(proc.node_id) and str.startswith(req.key, lose[proc.node_id]):
            del lose[proc.node_id]
            return Route(("request_lost", None, "the write lost just before a drain"), TIMEOUT, NOTHING, 0)
        if cut == "refuse":
            ms = w.choose("refused", proc.machine, w.rngs["refused"].randint, 1, FAIL_FAST_MS_MAX)
            return Route(("fail_fast", None, "refused: cut off"), AWAIT, ANSWER, ms, FAILED)
        if self._given_by is not None:
            self._given_by = None
        # (`send_fate`, inlined: a call less for every request)
        what, ms = self._drawn(w.send_early, w.send_late, proc, req, True) if w._drawn else \
            w._fate("send", self.send_fate, proc, req)
        if what == "ok":  # `_ok`, inlined: most requests (Route's own __new__ is interpreted Python)
            route = _new_tuple(Route, (None, AWAIT, BUCKET, ms, None))
        else:
            make = SEND_FATES.get(what)
            if make is None:
                raise UnknownFate(f"{self.giver()} gave request {req.op} {req.key} the fate {what!r}: the network "
                                  f"knows {', '.join(SEND_FATES)}")
            route = make(ms, timeout)
        return route if carried is None or route.act != BUCKET or route.arg is not None else route._replace(arg=carried)

    def send_fate(self, proc, req) -> tuple[str, int]:
        """A request's fate, drawn: (ok, delay), (fail_fast, ms to the answer), (lost, 0), (conflict, ms to its
        409), (late, ms past its timeout), (fast_5xx, ms), (applied_5xx, ms), (sdk_retry, ms). The fault kinds this seed uses are
        asked in turn (faults.ORDER): those before its delay is drawn, then those after."""
        return self._drawn(self.w.send_early, self.w.send_late, proc, req, True)

    def _drawn(self, early: list, late: list, proc, req, upload: bool) -> tuple[str, int]:
        """The kinds' hooks before the delay, the delay (a segment's upload time with it), the hooks after."""
        w = self.w
        f = w.fault if not (w._calm or w._shield) or not w.shielded(proc.node_id) else NO_FAULTS
        for hook in early:
            fate = hook(w, proc, req, f)
            if fate is not None:
                self._given_by = hook
                return fate
        delay = w.delay()
        if upload and w._upload_ms_max and req.body is not None and len(req.body) >= 1024:
            delay += w.rngs["uploads"].randint(0, w._upload_ms_max)  # a segment upload takes its time (bandwidth)
        for hook in late:
            fate = hook(w, proc, req, f, delay)
            if fate is not None:
                self._given_by = hook
                return fate
        return "ok", delay

    def giver(self) -> str:
        """Who gave the last fate: the fault kind whose hook returned it, or the plan (a fate read from it)."""
        from .faults import KINDS

        hook = self._given_by
        if hook is None:
            return "the plan" if self.w.choices is not None else "the network's draw"
        for kind in KINDS.values():
            if hook in (kind.send_early, kind.send_late, kind.reply_early, kind.reply_late):
                return f"the fault kind {kind.id}"
        return f"the hook {hook!r}"

    # --- a reply ---------------------------------------------------------------------------------------

    def reply_route(self, proc, req, reply, fate) -> int | None:
        """When the bucket's `reply` to `req` reaches `proc`, from now (None: lost on the way), with the fault
        noted; `fate`: the scripted rule's the request carried, or None."""
        w = self.w
        if fate is not None:
            action = fate[0]
            if action in SCRIPTED_FAULTS:
                w.note_fault(proc, SCRIPTED_FAULTS[action], req, fate[1] if str.startswith(action, "delay") else None,
                             "scripted")
            if action == "lose_reply":
                return self._replied(proc, req, reply, None)
            if action == "delay_reply":
                return self._replied(proc, req, reply, fate[1])
        if self._given_by is not None:
            self._given_by = None
        # (`reply_fate`, inlined: a call less for every reply)
        what, ms = self._drawn(w.reply_early, w.reply_late, proc, req, False) if w._drawn else \
            w._fate("reply", self.reply_fate, proc, req)
        if what == "ok":
            return self._replied(proc, req, reply, ms) if self.reply_observers else ms
        if what == "lost":
            w.note_fault(proc, "reply_lost", req, None, reply.status)
            return self._replied(proc, req, reply, None)
        if what == "slow":
            w.note_fault(proc, "slow_reply", req, ms)
            return self._replied(proc, req, reply, ms)
        raise UnknownFate(f"{self.giver()} gave the reply to {req.op} {req.key} the fate {what!r}: the network "
                          f"knows {', '.join(REPLY_FATES)}")

    def _replied(self, proc, req, reply, ms):
        if self.reply_observers:
            for observe in self.reply_observers:
                observe(proc, req, reply, ms)
        return ms

    def reply_fate(self, proc, req) -> tuple[str, int]:
        """A reply's fate, drawn: (ok, delay), (lost, 0) or (slow, delay), the kinds asked in turn."""
        return self._drawn(self.w.reply_early, self.w.reply_late, proc, req, False)

    def cut_on_arrival(self, proc, reply) -> bool:
        """A reply reaching a machine cut off the bucket (a blackhole, a refusal) is lost on the way; a fast
        failure is the cut-off's own answer."""
        cuts = self.w.cut
        if not cuts or reply.status == FAILED_FAST:
            return False
        return (cuts.get(proc.machine) or cuts.get("*")) in ("blackhole", "refuse")
