"""The operator's commands (FN-7 `cluster fence <node>`, FN-8 `cluster forget <node>`) as a process.

The operator is a process of its own with the same `step` contract as a
node: its commands arrive as Command inputs, and it answers each with an
`operator_done` observation. It runs no lease and holds nothing.
Must not know: clocks or the world.
"""

from __future__ import annotations

from typing import NamedTuple

from .frozen import replace

from . import io
from .frozen import EMPTY, FrozenDict
from .io import DELETE, GET, IF_MATCH, IF_NONE_MATCH, PUT, Command, Mark, Observe, ProcessStarted, ReplyArrived, Send
from .dispatch import ContractError
from .params import Params, validate
from .records import FENCED, LIVE, NodeRecord, OldHeartbeat, decode_node, encode_node, node_key


def old_heartbeat_stale(params: Params, written_at_ms: int, wall_ms: int) -> bool:
    """UP-2's test: an old-format heartbeat is stale once written horizon + ttl + grace ago (on the wall
    clock, `wall_ms`: a stored time). The horizon is the old readiness horizon, three heartbeat periods."""
    return wall_ms - written_at_ms >= 3 * params.heartbeat_period_ms + params.takeover_ms


class OperatorState(NamedTuple):
    params: Params
    next_rid: int = 1
    inflight: FrozenDict = EMPTY  # rid -> (command, node, stage)


class Operator:
    name = "operator"

    def step(self, st, inp, now):
        out: list = []
        t = type(inp)
        if t is ProcessStarted:
            return OperatorState(validate(inp.params)), ()
        if t is Command:
            if inp.name not in ("cluster_fence", "cluster_forget"):
                raise ContractError(f"unknown operator command {inp.name!r} (known: cluster_fence, cluster_forget)")
            (node,) = inp.args
            st = self._send(st, (inp.name, node, "read"), io.Request(GET, node_key(node)), out)
        elif t is ReplyArrived:
            purpose = st.inflight.get(inp.request_id)
            if purpose is None:
                raise ContractError(f"operator: reply for unknown request {inp.request_id}")
            st = replace(st, inflight=st.inflight.without(inp.request_id))
            st = self._on_reply(st, purpose, inp.reply, now, out)
        else:
            raise ContractError(f"operator: unexpected input {inp!r}")
        return st, tuple(out)

    @staticmethod
    def _send(st, purpose, req, out):
        out.append(Send(st.next_rid, req, st.params.attempt_timeout_ms))
        return replace(st, next_rid=st.next_rid + 1, inflight=st.inflight.with_item(st.next_rid, purpose))

    def _on_reply(self, st, purpose, reply, now, out):
        command, node, stage = purpose
        if stage == "read":
            if command == "cluster_fence":
                return self._fence(st, node, reply, now, out)
            return self._forget(st, node, reply, now, out)
        outcome = "done" if reply.status == io.OK else reply.status
        out.append(Observe("operator_done", (command, node, outcome)))
        return st

    def _fence(self, st, node, reply, now, out):
        """FN-7: fence over the current object without a watch; created when absent."""
        out.append(Mark("FN-7"))
        if reply.status == io.NOT_FOUND:
            fence = NodeRecord(FENCED, None, self.absent_fence_written_at(now), node)  # no instance
            req = io.Request(PUT, node_key(node), IF_NONE_MATCH, None, encode_node(fence))
            return self._send(st, ("cluster_fence", node, "write"), req, out)
        if reply.status != io.OK:
            out.append(Observe("operator_done", ("cluster_fence", node, "read " + reply.status)))
            return st
        rec = decode_node(reply.body)
        if not isinstance(rec, NodeRecord) or rec.state != LIVE:
            # nothing over a fence, a release or an old format
            out.append(Observe("operator_done", ("cluster_fence", node, "nothing to fence")))
            return st
        fence = NodeRecord(FENCED, rec.instance, rec.written_at_ms, node)
        req = io.Request(PUT, node_key(node), IF_MATCH, reply.version, encode_node(fence))
        return self._send(st, ("cluster_fence", node, "write"), req, out)

    def absent_fence_written_at(self, now) -> int:
        """Decision (FN-7): a fence created over an absent object carries the operator's (wall) clock as its
        written_at, so the records it frees are free ttl + grace later."""
        return now.wall_ms

    def forgettable(self, st, rec, now) -> bool:
        """Decision (FN-8): only a retired old-format heartbeat, stale by the start guard's test (UP-2)."""
        return isinstance(rec, OldHeartbeat) and old_heartbeat_stale(st.params, rec.written_at_ms, now.wall_ms)

    def _forget(self, st, node, reply, now, out):
        """FN-8: delete a retired old-format heartbeat once stale by the start guard's test."""
        out.append(Mark("FN-8"))
        if reply.status != io.OK:
            out.append(Observe("operator_done", ("cluster_forget", node, "nothing to forget")))
            return st
        if not self.forgettable(st, decode_node(reply.body), now):
            out.append(Observe("operator_done", ("cluster_forget", node, "refused: not a stale old-format heartbeat")))
            return st
        req = io.Request(DELETE, node_key(node), IF_MATCH, reply.version)
        return self._send(st, ("cluster_forget", node, "write"), req, out)


OPERATOR = Operator()
