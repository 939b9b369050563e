"""The contract between the model and the worlds that execute it.

Inputs are past-tense facts a world hands to `step`; effects are commands
`step` hands back; observations are facts for the history. Everything here
is immutable data made of ints, strings, None and tuples, so that a history
can be hashed with a stable encoding and a state can be compared by value.

This module must not know any protocol rule: it is only the vocabulary.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Union

# --- bucket requests (carried by the Send effect) ---------------------------

GET = "GET"
PUT = "PUT"
DELETE = "DELETE"
LIST = "LIST"

# conditions
IF_MATCH = "if-match"
IF_NONE_MATCH = "if-none-match"  # If-None-Match: *


class Request(NamedTuple):
    """One bucket request. `version` is the If-Match token when cond is IF_MATCH."""

    op: str
    key: str  # the key, or the prefix for LIST
    cond: str | None = None
    version: str | None = None
    body: str | None = None


# --- replies (carried by the ReplyArrived input) -----------------------------

OK = "ok"
NOT_FOUND = "not_found"  # 404
PRECONDITION_FAILED = "precondition_failed"  # 412
CONFLICT = "conflict"  # 409 ConditionalRequestConflict: not applied
TIMED_OUT = "timed_out"  # no reply within the attempt timeout: outcome unknown
FAILED_FAST = "failed_fast"  # connection refused / reset before sending: not applied

REPLY_STATUSES = (OK, NOT_FOUND, PRECONDITION_FAILED, CONFLICT, TIMED_OUT, FAILED_FAST)


class Reply(NamedTuple):
    """A bucket's answer. GET ok: version and body; PUT ok: version; LIST ok: entries.

    `entries` is a tuple of (key, version) sorted by key.
    """

    status: str
    version: str | None = None
    body: str | None = None
    entries: tuple[tuple[str, str], ...] | None = None


# --- inputs -------------------------------------------------------------------


class ProcessStarted(NamedTuple):
    """A process was started under `node_id` with a fresh `instance` token."""

    node_id: str
    instance: str
    params: Any  # model.params.Params
    # a binary's own configuration beyond the cluster's timing (None: its defaults): the old binary's
    # cadence (model.old_lease.OldTiming, section 6); the new model reads none
    config: Any = None


class TimerFired(NamedTuple):
    key: str


class ReplyArrived(NamedTuple):
    request_id: int
    reply: Reply


class Command(NamedTuple):
    """An instruction from outside the protocol: a client request, an operator
    command, a stop. `name` says which; `args` are its arguments."""

    name: str
    args: tuple = ()


Input = Union[ProcessStarted, TimerFired, ReplyArrived, Command]


class Now(NamedTuple):
    """A process's two clocks, read as an input is delivered (T-1; issue 47), as a real node has them
    (Rust's `Instant` and `SystemTime`).

    `mono_ms`: its monotonic clock (NTP may slew it, never step it; its origin is the machine's, not true
    time's). Every duration the ADR states runs on it: the cadence (NL-2), attempt timeouts and retries
    (NL-3), the start check's wait (NL-5), the fence watch (FN-2), back-offs (OR-6), CS-2's window, the start
    guard's re-reads and UP-2's lapse of a heartbeat dated ahead ("measured on this node's monotonic clock").
    Every SetTimer is on it.

    `wall_ms`: its wall clock, within max_skew of true time, skewed, drifting and stepped (T-1): it dates what
    the node writes (`written_at`, NL-4; an old lease's `expires_at`) and is compared against stored times
    (NL-4's validity, FN-3's and FN-5's written_at + ttl + grace, NL-5's shortcut, UP-2's age test, UP-3's old
    lease, FN-8's staleness)."""

    mono_ms: int
    wall_ms: int

    def mono_at(self, wall_ms: int) -> int:
        """The monotonic reading at which the wall clock will read `wall_ms`, if it runs on as it reads now (a
        wait until a wall instant is a duration from here: a step of the wall clock meanwhile does not move
        it, so a handler woken by it reads the wall clock again)."""
        return self.mono_ms + wall_ms - self.wall_ms

# --- effects ------------------------------------------------------------------


class Send(NamedTuple):
    """Send `request`; the world answers with ReplyArrived(request_id, ...) once,
    at the latest `timeout_ms` after sending (TIMED_OUT): a duration, on the node's monotonic
    clock (a step of its wall clock, T-1, does not move it)."""

    request_id: int
    request: Request
    timeout_ms: int


class SetTimer(NamedTuple):
    """Fire TimerFired(key) when the node's monotonic clock reads `at_ms` (`Now.mono_ms`: a step of
    the wall clock does not move it, T-1). Replaces any pending timer with the same key."""

    key: str
    at_ms: int


class CancelTimer(NamedTuple):
    key: str


class Exit(NamedTuple):
    """The process exits now: nothing more is sent, no timer fires."""

    status: int
    reason: str


class Observe(NamedTuple):
    """A fact for the history. `kind` is one of model.observations.KINDS and
    `fields` its values, in the order that table gives."""

    kind: str
    fields: tuple = ()


class Mark(NamedTuple):
    """The model exercised protocol rule `rule` (an id from docs/protocol.md)."""

    rule: str


class Forward(NamedTuple):
    """Hand `command` to the live process of node `node_id` (OR-10: a request
    reaching another node is forwarded to the named owner)."""

    node_id: str
    command: Command


Effect = Union[Send, SetTimer, CancelTimer, Exit, Observe, Mark, Forward]
