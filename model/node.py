"""The node process as one pure step function.

`step(state, input, now_ms) -> (state, effects)`: the only entry point.
`now_ms` is the node's own clock. Everything concurrent inside a node (the
lease task, later the listing, acquisitions, releases, the resolver) is
state in NodeState, advanced one input at a time. Replies are routed by the
purpose recorded when their request was sent; timers by their key. Both are
tables (`on_reply_<purpose>`, `on_timer_<key>`): a new kind of request or
timer is one method, and an input nobody handles is a loud error.

Must not know: clocks, randomness, I/O, the world. A test enforces that this
package imports none of them.
"""

from __future__ import annotations

from typing import NamedTuple

from .frozen import replace
from typing import Any

from . import io
from .frozen import EMPTY, FrozenDict
from .io import Command, ProcessStarted, ReplyArrived, Send, TimerFired
from .clean_stop import CleanStop, Stop
from .fencing import Fencing
from .node_lease import LeaseState, NodeLease
from .ownership import Ownership
from .params import Params, validate


class NodeState(NamedTuple):
    node_id: str
    instance: str
    params: Params
    lease: LeaseState = LeaseState()
    next_rid: int = 1
    inflight: FrozenDict = EMPTY  # request id -> purpose tuple (its first item names the handler)
    exited: bool = False
    # section 2: the membership view and fences
    view: FrozenDict = EMPTY  # node id -> fencing.Seen
    listing_queue: tuple = ()  # keys the listing still has to read
    listing_busy: bool = False  # a listing is under way (its LIST or one of its GETs)
    fencing: FrozenDict = EMPTY  # node id -> the Seen it was watched at (BD-1)
    watch_from_ms: int | None = None  # FN-2: first acknowledged lease write after any lapse
    # section 3: ownership records
    holds: FrozenDict = EMPTY  # actor -> ownership.Hold
    acquiring: FrozenDict = EMPTY  # actor -> ownership.Acquiring
    locks: FrozenDict = EMPTY  # actor -> "acquire" | "resolve" (OR-9)
    pending: FrozenDict = EMPTY  # (actor, generation, version) -> ownership.Pending (OR-5)
    unresolved: FrozenDict = EMPTY  # (actor, generation) -> ownership.Unresolved (OR-7)
    background_at_ms: int | None = None  # when the background task is due
    refusals: int = 0  # BD-3: refusals in a row
    data_seq: int = 0  # actor data segments written by this process
    # section 4: clean stop and drain
    stop: Stop | None = None
    draining: bool = False
    drained: bool = False


class ContractError(RuntimeError):
    """A world broke the contract of model.io (an input the model cannot accept)."""


class Model(NodeLease, Fencing, Ownership, CleanStop):
    """The correct model. Broken models subclass it and override one decision."""

    name = "correct"

    def __init__(self) -> None:
        self._reply_handlers: dict[str, Any] = {}
        self._timer_handlers: dict[str, Any] = {}
        self._command_handlers: dict[str, Any] = {}
        for attr in dir(self):
            if attr.startswith("on_reply_"):
                self._reply_handlers[attr[len("on_reply_"):]] = getattr(self, attr)
            elif attr.startswith("on_timer_"):
                self._timer_handlers[attr[len("on_timer_"):]] = getattr(self, attr)
            elif attr.startswith("on_command_"):
                self._command_handlers[attr[len("on_command_"):]] = getattr(self, attr)

    # --- the entry point ------------------------------------------------------

    def step(self, state: NodeState | None, inp: io.Input, now_ms: int):
        """Advance one node by one input at its local time `now_ms`."""
        out: list = []
        t = type(inp)
        if t is ReplyArrived:
            state = self._require_running(state, inp)
            purpose = state.inflight.get(inp.request_id)
            if purpose is None:
                raise ContractError(f"reply for unknown request {inp.request_id} at node {state.node_id}")
            state = replace(state, inflight=state.inflight.without(inp.request_id))
            state = self._reply_handlers[purpose[0]](state, purpose, inp.reply, now_ms, out)
        elif t is TimerFired:
            state = self._require_running(state, inp)
            name = inp.key.split(":", 1)[0]
            handler = self._timer_handlers.get(name)
            if handler is None:
                raise ContractError(f"no handler for timer {inp.key!r}")
            state = handler(state, inp.key, now_ms, out)
        elif t is Command:
            state = self._require_running(state, inp)
            handler = self._command_handlers.get(inp.name)
            if handler is None:
                raise ContractError(
                    f"unknown command {inp.name!r} (known: {', '.join(sorted(self._command_handlers))})"
                )
            state = handler(state, inp.args, now_ms, out)
        elif t is ProcessStarted:
            if state is not None:
                raise ContractError("ProcessStarted sent to a process that already started")
            state = NodeState(node_id=inp.node_id, instance=inp.instance, params=validate(inp.params))
            state = self.begin_check(state, now_ms, out)
            state = self.start_listing(state, now_ms, out)
        else:
            raise ContractError(f"not an input: {inp!r}")
        if not state.exited:
            if state.stop is not None:
                state = self.stop_progress(state, now_ms, out)
            elif state.draining and not state.drained:
                state = self.check_drained(state, now_ms, out)
        return state, tuple(out)

    @staticmethod
    def _require_running(state, inp):
        if state is None:
            raise ContractError(f"{type(inp).__name__} before ProcessStarted")
        if state.exited:
            raise ContractError(f"{type(inp).__name__} after the process exited")
        return state

    # --- how the sections meet -----------------------------------------------------

    def on_lease_became_valid(self, st, now_ms, out):
        # FN-2: the watch counts from the first acknowledged lease write after any lapse;
        # OR-6: pending work resumes
        st = replace(st, watch_from_ms=now_ms)
        if st.pending or st.unresolved:
            st = self.kick_background(st, now_ms, out)
        return st

    def on_lease_ran_out(self, st, now_ms, out):
        # NL-11: every hold ends locally, into the pending releases
        return self.hold_to_pending(st, now_ms, "lease ran out", out)

    def drop_all_holds(self, st, now_ms, out):
        return self.drop_holds_lost(st, out)

    # --- shared helpers ---------------------------------------------------------

    @staticmethod
    def send(st: NodeState, purpose: tuple, request: io.Request, out: list, timeout_ms: int | None = None):
        """Send `request`; its reply goes to on_reply_<purpose[0]>."""
        rid = st.next_rid
        out.append(Send(rid, request, st.params.attempt_timeout_ms if timeout_ms is None else timeout_ms))
        return replace(st, next_rid=rid + 1, inflight=st.inflight.with_item(rid, purpose))


MODEL = Model()


def step(state: NodeState | None, inp: io.Input, now_ms: int):
    """The protocol's single entry point (the correct model)."""
    return MODEL.step(state, inp, now_ms)
