"""The node process as one pure step function.

`step(state, input, now) -> (state, effects)`: the only entry point.
`now` is the node's two clocks (io.Now: the monotonic one for every duration, the
wall one for written_at and comparisons against stored times). Everything concurrent inside a node (the
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

from . import io
from .clean_stop import CleanStop, Stop
from .dispatch import ContractError, Dispatch  # noqa: F401 - ContractError: model/__init__.py takes it from here
from .fencing import Fencing
from .frozen import EMPTY, FrozenDict, replace
from .node_lease import LeaseState, NodeLease
from .ownership import Ownership
from .params import Params, validate
from .upgrade import Upgrade


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
    background_parked: bool = False  # BD-2: the task waits for a slot of its full cap (no timer armed for it)
    refusals: int = 0  # BD-3: refusals in a row
    data_seq: int = 0  # actor data segments written by this process
    events: FrozenDict = EMPTY  # (actor, request) -> generation: events still running (CS-1: they take time)
    after_events: FrozenDict = EMPTY  # actor -> why it is released once its events end (OR-5)
    # section 4: clean stop and drain
    stop: Stop | None = None
    draining: bool = False
    drained: bool = False
    # section 6: the start guard
    guard_queue: tuple | None = None  # keys the guard's round still has to read
    guard_seen: FrozenDict = EMPTY  # key -> upgrade.OldSeen
    guard_waiting: bool = False
    guard_passed: bool = False
    check_ready: bool = False  # the start check ended while the guard still waited


class Model(Dispatch, Upgrade, NodeLease, Fencing, Ownership, CleanStop):
    """The correct model. Broken models subclass it and override one decision."""

    name = "correct"

    def on_start(self, inp, now, out):
        st = NodeState(node_id=inp.node_id, instance=inp.instance, params=validate(inp.params))
        return self.begin_start(st, now, out)  # UP-1

    def after_input(self, st, now, out):
        if st.background_parked:  # BD-2: the input may have freed a slot of the background task's cap
            st = self.wake_background(st, now, out)
        if st.stop is not None:
            return self.stop_progress(st, now, out)
        if st.draining and not st.drained:
            return self.check_drained(st, now, out)
        return st

    # --- how the sections meet -----------------------------------------------------

    def on_lease_became_valid(self, st, now, out):
        # FN-2: the watch counts from the first acknowledged lease write after any lapse;
        # OR-6: pending work resumes
        st = replace(st, watch_from_ms=self.watch_from(st, now))
        if st.pending or st.unresolved:
            st = self.kick_background(st, now.mono_ms, out)
        return st

    def watch_from(self, st, now):
        """Decision (FN-2): the fence watch counts from this node's first acknowledged lease write
        after any lapse of its own: it restarts now (a duration follows: the monotonic clock)."""
        return now.mono_ms

    def on_lease_ran_out(self, st, now, out):
        # NL-11: every hold ends locally, into the pending releases
        return self.hold_to_pending(st, now, "lease ran out", out)

    def drop_all_holds(self, st, now, out):
        return self.drop_holds_lost(st, out)

MODEL = Model()


def step(state: NodeState | None, inp: io.Input, now: io.Now):
    """The protocol's single entry point (the correct model)."""
    return MODEL.step(state, inp, now)
