"""A hand-driven world for one node process: feed inputs to `model.step`, read its effects.

Tests play the bucket and the clock themselves: they look at the requests
the node sent (`Send` effects), answer them with `ReplyArrived`, and fire its
timers with `TimerFired` at the local time they were set for. Only the public
contract of model.io is used: request ids come from `Send`, timers from
`SetTimer` / `CancelTimer`, and the node's requests on its own key
`nodes/<id>` are told apart from the rest (listing, fencing, ownership) by
their key.

Every step also checks that `step` left the state it was given untouched
(DESIGN.md: the model never mutates its input state).
"""

from __future__ import annotations

import dataclasses

from model import Params, step as correct_step
from model.io import (
    GET,
    PUT,
    CancelTimer,
    Exit,
    Mark,
    Now,
    Observe,
    ProcessStarted,
    Reply,
    ReplyArrived,
    Send,
    SetTimer,
    TimerFired,
)
from model.observations import KINDS
from model.records import FENCED, LIVE, RELEASED, NodeRecord, decode_node, encode_node, node_key

__all__ = ["Node", "live", "fenced", "released", "fields_of", "plain", "FENCED", "LIVE", "RELEASED"]

T0 = 100_000  # the node's local clock at start: never true time, never zero


def live(instance: str, written_at_ms: int, node_id: str = "n1") -> str:
    return encode_node(NodeRecord(LIVE, instance, written_at_ms, node_id))


def fenced(instance: str | None, written_at_ms: int, node_id: str = "n1") -> str:
    return encode_node(NodeRecord(FENCED, instance, written_at_ms, node_id))


def released(instance: str, written_at_ms: int, node_id: str = "n1") -> str:
    return encode_node(NodeRecord(RELEASED, instance, written_at_ms, node_id))


def fields_of(kind: str, obs: Observe) -> dict:
    """An observation's fields by the names model.observations.KINDS gives them."""
    assert obs.kind == kind
    return dict(zip(KINDS[kind], obs.fields))


def plain(x):
    """A structural copy of a value, made without copy/pickle: for comparing before and after."""
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return (type(x).__name__,) + tuple((f.name, plain(getattr(x, f.name))) for f in dataclasses.fields(x))
    if isinstance(x, dict):
        return ("dict", type(x).__name__) + tuple((plain(k), plain(v)) for k, v in x.items())
    if isinstance(x, (list, tuple)):
        return (type(x).__name__,) + tuple(plain(v) for v in x)
    if isinstance(x, (set, frozenset)):
        return (type(x).__name__,) + tuple(sorted((plain(v) for v in x), key=repr))
    return x


class Node:
    """One process of node `node_id`, driven by hand."""

    def __init__(self, node_id: str = "n1", instance: str = "i-own", params: Params | None = None,
                 now_ms: int = T0, step=correct_step) -> None:
        self.node_id = node_id
        self.key = node_key(node_id)
        self.instance = instance
        self.params = params or Params()
        self.step_fn = step
        self.state = None
        self.now = now_ms
        self.inflight: dict[int, tuple[Send, int]] = {}  # rid -> (send, local time sent)
        self.timers: dict[str, int] = {}  # key -> local at_ms
        self.log: list[tuple[int, object]] = []  # (local time, effect), every effect so far
        self.exit: Exit | None = None
        self.start_effects = self.feed(ProcessStarted(node_id, instance, self.params))
        # UP-1: the bucket check comes first, then the start guard (UP-2) and the start check
        # run together; the bucket here holds no old-format heartbeat, so the guard passes at once
        bucket_check = self.sends(self.start_effects, "nodes/", "LIST")
        assert len(bucket_check) == 1, f"expected the bucket check first, got {self.start_effects}"
        after_check = self.reply(bucket_check[0].request_id, Reply("ok", entries=()))
        guard = self.sends(after_check, "nodes/", "LIST")[0]  # the guard's listing comes first
        self.start_effects = self.start_effects + after_check + self.reply(guard.request_id, Reply("ok", entries=()))

    # --- feeding inputs ---------------------------------------------------------

    def feed(self, inp, at_ms: int | None = None) -> tuple:
        if at_ms is not None:
            assert at_ms >= self.now, f"time runs backwards: {at_ms} < {self.now}"
            self.now = at_ms
        assert self.exit is None, "the process has exited"
        before = plain(self.state)
        state, effects = self.step_fn(self.state, inp, Now(self.now, self.now))  # (clocks that agree)
        assert plain(self.state) == before, f"step mutated its input state on {inp!r}"
        self.state = state
        for e in effects:
            self.log.append((self.now, e))
            t = type(e)
            if t is Send:
                assert e.request_id not in self.inflight, f"request id {e.request_id} reused"
                self.inflight[e.request_id] = (e, self.now)
            elif t is SetTimer:
                self.timers[e.key] = e.at_ms
            elif t is CancelTimer:
                self.timers.pop(e.key, None)
            elif t is Exit:
                self.exit = e
        return effects

    def reply(self, rid: int, reply: Reply, at_ms: int | None = None) -> tuple:
        send, _sent = self.inflight.pop(rid)
        return self.feed(ReplyArrived(rid, reply), at_ms)

    def fire(self, key: str, at_ms: int | None = None) -> tuple:
        """Fire timer `key` at its time (or later, at `at_ms`)."""
        due = self.timers.pop(key)
        return self.feed(TimerFired(key), max(due, self.now) if at_ms is None else at_ms)

    def advance(self, until_ms: int, stop=None) -> list[tuple[int, object]]:
        """Fire every timer due up to `until_ms`, in time order; requests stay unanswered.

        Stops early once `stop(effects)` is true. Returns the (time, effect) pairs produced.
        """
        out = []
        while self.exit is None:
            due = [(at, k) for k, at in self.timers.items() if at <= until_ms]
            if not due:
                break
            at, k = min(due)
            effects = self.fire(k, max(at, self.now))
            out.extend((self.now, e) for e in effects)
            if stop is not None and stop(effects):
                return out
        if self.exit is None:
            self.now = max(self.now, until_ms)
        return out

    # --- reading effects -----------------------------------------------------------

    def own(self, op: str | None = None) -> list[tuple[int, Send]]:
        """In-flight requests on this node's own key nodes/<id> (the lease's), oldest first."""
        return [(rid, s) for rid, (s, _t) in sorted(self.inflight.items())
                if s.request.key == self.key and (op is None or s.request.op == op)]

    def only_own(self, op: str) -> tuple[int, Send]:
        reqs = self.own(op)
        assert len(reqs) == 1, f"expected one {op} of {self.key} in flight, found {reqs}"
        return reqs[0]

    def sent_at(self, rid: int) -> int:
        return self.inflight[rid][1]

    @staticmethod
    def sends(effects, key: str | None = None, op: str | None = None) -> list[Send]:
        return [e for e in effects if type(e) is Send and (key is None or e.request.key == key)
                and (op is None or e.request.op == op)]

    def own_sends(self, effects, op: str | None = None) -> list[Send]:
        return self.sends(effects, self.key, op)

    @staticmethod
    def observed(effects, kind: str) -> list[dict]:
        return [fields_of(kind, e) for e in effects if type(e) is Observe and e.kind == kind]

    @staticmethod
    def marks(effects) -> list[str]:
        return [e.rule for e in effects if type(e) is Mark]

    def logged(self, kind: type, since: int = 0) -> list[tuple[int, object]]:
        return [(t, e) for t, e in self.log[since:] if type(e) is kind]

    # --- the start check, played by the bucket ---------------------------------------

    def answer_check(self, body: str | None, version: str | None = None, delay_ms: int = 5) -> tuple:
        """Answer the check's read of nodes/<id>: `body` None means 404."""
        rid, send = self.only_own(GET)
        at = self.sent_at(rid) + delay_ms
        reply = Reply("not_found") if body is None else Reply("ok", version, body)
        return self.reply(rid, reply, max(at, self.now))

    def run_check(self, body_at, version_at=lambda t: None, limit_ms: int = 200_000) -> Send | None:
        """Play the start check until the first write (returned) or an exit (None).

        `body_at(t)` / `version_at(t)` give what nodes/<id> holds when the bucket
        answers a read at local time t (5 ms after it was sent).
        """
        end = self.now + limit_ms
        while self.exit is None and self.now < end:
            puts = self.own(PUT)
            if puts:
                return puts[0][1]
            gets = self.own(GET)
            if gets:
                rid, _ = gets[0]
                t = max(self.sent_at(rid) + 5, self.now)
                b = body_at(t)
                self.reply(rid, Reply("not_found") if b is None else Reply("ok", version_at(t), b), t)
                continue
            due = [(at, k) for k, at in self.timers.items()]
            assert due, "the check neither reads, writes, waits nor exits"
            at, k = min(due)
            self.fire(k, max(at, self.now))
        return None

    def start_running(self, version: str = '"v1"') -> tuple[Send, int, tuple]:
        """Pass a check that finds no object and acknowledge the first write.

        Returns (the first write, its send time, the effects of its acknowledgement).
        """
        first = self.run_check(lambda t: None)
        assert first is not None
        rid = first.request_id
        sent = self.sent_at(rid)
        effects = self.reply(rid, Reply("ok", version), sent + 20)
        return first, sent, effects

    def written_at(self, send: Send) -> int:
        rec = decode_node(send.request.body)
        assert isinstance(rec, NodeRecord), rec
        return rec.written_at_ms

    def tick(self) -> tuple[int, Send]:
        """Run the clock to the next lease write; return (request id, the write)."""
        before = {rid for rid, _ in self.own(PUT)}
        self.advance(self.now + 10 * self.params.ttl_ms,
                     stop=lambda effects: bool(self.own_sends(effects, PUT)))
        new = [(rid, s) for rid, s in self.own(PUT) if rid not in before]
        assert len(new) == 1, f"expected one new lease write, found {new}"
        return new[0]
