"""The step function's machinery, shared by every model here (the node of ADR 0020 and the
old per-actor-lease binary of section 6).

Replies are routed by the purpose recorded when their request was sent
(`on_reply_<purpose[0]>`), timers by their key (`on_timer_<key before ':'>`),
commands by name (`on_command_<name>`): tables built once, so a new kind of
request or timer is one method, and an input nobody handles is a loud error.
"""

from __future__ import annotations

from typing import Any

from . import io
from .frozen import _FIELD_INDEX, FrozenDict, _new_tuple, field_index, replace
from .io import Command, ProcessStarted, ReplyArrived, Send, TimerFired


class ContractError(RuntimeError):
    """A world broke the contract of model.io (an input the model cannot accept)."""


class Dispatch:
    """Subclasses define `on_start(inp, now, out) -> state` and may define
    `after_input(state, now, out) -> state`, run after every input while the process lives."""

    name = "?"

    def __init__(self) -> None:
        self._reply_handlers: dict[str, Any] = {}
        self._timer_handlers: dict[str, Any] = {}
        self._command_handlers: dict[str, Any] = {}
        for attr in dir(self):
            if str.startswith(attr, "on_reply_"):
                self._reply_handlers[attr[len("on_reply_"):]] = getattr(self, attr)
            elif str.startswith(attr, "on_timer_"):
                self._timer_handlers[attr[len("on_timer_"):]] = getattr(self, attr)
            elif str.startswith(attr, "on_command_"):
                self._command_handlers[attr[len("on_command_"):]] = getattr(self, attr)

    def step(self, state, inp: Any, now):  # inp: an io.Input, told apart by its exact type
        """Advance one process by one input, its two clocks reading `now` (io.Now)."""
        out: list = []
        t = type(inp)
        if t is ReplyArrived:
            if state is None or state.exited:
                self._require_running(state, inp)
            rid, reply = inp
            inflight = state.inflight
            purpose = inflight.get(rid)
            if purpose is None:
                raise ContractError(f"reply for unknown request {rid} at node {state.node_id}")
            # replace(state, inflight=inflight.without(rid)), spelled out (every reply)
            rest = dict(inflight)
            del rest[rid]
            cls = type(state)
            values = list(state)
            values[(_FIELD_INDEX.get(cls) or field_index(cls))["inflight"]] = FrozenDict(rest)
            state = self._reply_handlers[purpose[0]](_new_tuple(cls, values), purpose, reply, now, out)
        elif t is TimerFired:
            if state is None or state.exited:
                self._require_running(state, inp)
            key = inp.key
            handler = self._timer_handlers.get(key.split(":", 1)[0])
            if handler is None:
                raise ContractError(f"no handler for timer {key!r}")
            state = handler(state, key, now, out)
        elif t is Command:
            if state is None or state.exited:
                self._require_running(state, inp)
            handler = self._command_handlers.get(inp.name)
            if handler is None:
                raise ContractError(
                    f"unknown command {inp.name!r} (known: {', '.join(sorted(self._command_handlers))})"
                )
            state = handler(state, inp.args, now, out)
        elif t is ProcessStarted:
            if state is not None:
                raise ContractError("ProcessStarted sent to a process that already started")
            state = self.on_start(inp, now, out)
        else:
            raise ContractError(f"not an input: {inp!r}")
        if not state.exited:
            state = self.after_input(state, now, out)
        return state, tuple(out)

    def on_start(self, inp: ProcessStarted, now: int, out: list):
        raise NotImplementedError

    def after_input(self, st, now, out):
        return st

    @staticmethod
    def _require_running(state, inp):
        if state is None:
            raise ContractError(f"{type(inp).__name__} before ProcessStarted")
        if state.exited:
            raise ContractError(f"{type(inp).__name__} after the process exited")

    @staticmethod
    def send(st, purpose: tuple, request: io.Request, out: list, timeout_ms: int | None = None, **changes):
        """Send `request`; its reply goes to on_reply_<purpose[0]>. `changes`: fields of the state the
        handler changes with it, set in the same copy (as `replace(st, **changes)` before the send)."""
        rid = st.next_rid
        # Send(rid, request, timeout), without its __new__
        out.append(_new_tuple(Send, (rid, request, st.params.attempt_timeout_ms if timeout_ms is None else timeout_ms)))
        # replace(st, **changes, next_rid=rid + 1, inflight=...), spelled out (every request)
        cls = type(st)
        index = _FIELD_INDEX.get(cls) or field_index(cls)
        values = list(st)
        for name in changes:
            values[index[name]] = changes[name]
        values[index["next_rid"]] = rid + 1
        values[index["inflight"]] = FrozenDict({**st.inflight, rid: purpose})  # inflight.with_item(rid, purpose)
        return _new_tuple(cls, values)

    def exit(self, st, status, reason, out):
        out.append(io.Exit(status, reason))
        return replace(st, exited=True)
