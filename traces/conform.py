"""Conformance by replay: each process's inputs, as its trace logs them, through `model.step`.

One pass over a trace, no search. The model starts as the process did (its node id, instance and
timing, at its header's wall clock); then, in the order of the trace's clock:

- a `command` line (a client request, a hibernation, a stop, an event's end) is given to the model as
  the same Command;
- a `timer` line synchronises the model's timer of that name (its key before ':'): a timer the
  trace logs fires when the implementation's did (a process paused by SIGSTOP wakes late, and so does
  its model), any other at the instant the model set it for;
- a request the model sends is paired with the implementation's request of the same op and key (and
  for a write, the same condition, If-Match token and record state, written_at within the tolerance)
  sent within `tolerance_ms` of it; the model gets that request's answer when the implementation got
  it. A read or a listing the implementation did not make is answered from the bucket's facts
  (traces/bucket.py: the version current then); a data segment's write is paired with the
  implementation's segment of the same actor and generation.

The first effect that differs is reported and the replay of that process stops there: a protocol
write (nodes/, owners/, leases/) the model sent and the implementation did not, or the reverse; a
request served by one and not the other; an exit with another status. Reads, listings, timings within
the tolerance and the model's own bookkeeping are not compared.
"""

from __future__ import annotations

import heapq
import os
from bisect import bisect_right
from dataclasses import dataclass

from model import MODEL, Params
from model.io import (
    CancelTimer,
    Command,
    Exit,
    Forward,
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
from model.records import state_line

from .bucket import Bucket, Placement, schedule
from .load import ProcTrace, Request, TraceSet

PROTOCOL = ("nodes/", "owners/", "leases/")
DATA = "wal/"
TOLERANCE_MS = 150
LATE = 1 << 40  # an input with no line of the implementation's, after those of its millisecond
READ_TOLERANCE_MS = 30
DEBUG = bool(os.environ.get("NODELEASE_REPLAY_DEBUG"))


@dataclass
class Replay:
    label: str
    file: str
    divergence: str | None = None  # the first effect that differs, said in one sentence
    at_ms: int | None = None  # its wall clock reading
    line: int | None = None  # its trace line, when it is the implementation's
    matched_writes: int = 0
    matched_acts: int = 0
    inputs: int = 0
    stopped: str | None = None  # the replay could not go on (the model refused an input), and why

    def summary(self) -> str:
        if self.divergence:
            where = f"{self.file}:{self.line}" if self.line else f"{self.file}, at wall {self.at_ms}"
            return f"first divergent effect ({where}): {self.divergence}"
        if self.stopped:
            return f"replay stopped after {self.inputs} inputs: {self.stopped}"
        return (f"conforms: {self.inputs} inputs replayed; {self.matched_writes} protocol writes and "
                f"{self.matched_acts} requests served, each matched")

    def to_json(self) -> dict:
        return {"process": self.label, "file": self.file, "divergence": self.divergence, "wall_ms": self.at_ms,
                "line": self.line, "matched_writes": self.matched_writes, "matched_acts": self.matched_acts,
                "inputs": self.inputs, "stopped": self.stopped}


class _Diverged(Exception):
    pass


def replay_all(ts: TraceSet, bucket: Bucket, placement: Placement, tolerance_ms: int = TOLERANCE_MS) -> list[Replay]:
    view = _BucketView(ts, bucket, placement)
    return [replay(ts, pt, view, tolerance_ms) for pt in ts.procs]


class _BucketView:
    """The bucket's state at an instant of a process's clock (for the reads the model makes alone): each
    key's versions at the instants the centre placement gives them."""

    def __init__(self, ts: TraceSet, bucket: Bucket, placement: Placement) -> None:
        self.ts = ts
        self.off = {m: ts.base_ms + o for m, o in placement.offsets.items()}
        applies, _ = schedule(ts, bucket, placement)
        self.keys: dict[str, tuple[list[int], list]] = {}
        for key, chain in bucket.chains.items():
            times = [(applies or {}).get(id(v), -(1 << 62)) if v.write is not None else -(1 << 62) for v in chain]
            self.keys[key] = (times, chain)

    def at(self, key: str, wall: int, machine: str):
        """The version of `key` current when `machine`'s clock read `wall`, or None."""
        c = self.keys.get(key)
        if c is None:
            return None
        k = bisect_right(c[0], wall - self.off.get(machine, self.ts.base_ms)) - 1
        if k < 0 or c[1][k].deleted:
            return None
        return c[1][k]

    def answer(self, op: str, key: str, wall: int, machine: str) -> Reply:
        if op == "GET":
            v = self.at(key, wall, machine)
            return Reply("not_found") if v is None else Reply("ok", v.etag, v.body)
        if op == "LIST":
            entries = []
            for k in sorted(self.keys):
                if k.startswith(key):
                    v = self.at(k, wall, machine)
                    if v is not None:
                        entries.append((k, v.etag))
            return Reply("ok", entries=tuple(entries))
        return Reply("ok")


def _same_state(a: str, b: str, tol: int) -> bool:
    """Two record states alike but for a node lease's written_at, within `tol` ms."""
    if a == b:
        return True
    pa, pb = a.split(" "), b.split(" ")
    if len(pa) == len(pb) == 3 and pa[:2] == pb[:2] and pa[0] in ("live", "fenced", "released"):
        try:
            return abs(int(pa[2]) - int(pb[2])) <= tol
        except ValueError:
            return False
    return False


def _describe(op: str, key: str, cond, version, body) -> str:
    c = {"if-match": f" If-Match {version}", "if-none-match": " If-None-Match: *"}.get(cond, " unconditional")
    st = state_line(body) if body else ""
    return f"{op} {key}{c}" + (f' ("{st}")' if st else "")


def replay(ts: TraceSet, pt: ProcTrace, view: _BucketView, tol: int = TOLERANCE_MS) -> Replay:
    out = Replay(f"{pt.node_id}/{pt.instance}", os.path.basename(pt.path))
    reqs = sorted(pt.requests.values(), key=lambda r: r.send_line)
    matched: dict[int, int] = {}  # implementation request id -> model request id
    served_impl: list[tuple[int, tuple, int]] = []  # (wall, (actor, request), line)
    served_model: dict[tuple, int] = {}
    timer_names = {line["name"] for line in pt.lines if line["kind"] == "timer"}
    timers: dict[str, int] = {}  # the model's timers: key -> due (its clock)
    heap: list = []
    seq = 0

    def push(t: int, what: str, data, line: int = LATE) -> None:
        """An input (or a check) at `t` on the trace's clock. Inputs in the same millisecond go in the order of
        the implementation's lines (`line`: its index; an answer arrives, a stop command is read, and
        which came first decides whether an acquisition's write goes out); the model's own at the end."""
        nonlocal seq
        seq += 1
        heapq.heappush(heap, (t, line, seq, what, data))

    def diverged(msg: str, wall: int, line: int | None = None) -> None:
        out.divergence, out.at_ms, out.line = msg, wall, line
        raise _Diverged()

    def pair(send: Send, now: int) -> Request | None:
        req = send.request
        # a read pairs only with one sent about when the model sent it (both follow the same input: an answer,
        # a timer the trace logs); the model makes reads the implementation may not (they are answered from the
        # bucket's facts), and a loose window would pair one with the implementation's next read of that key
        near = tol if req.op in ("PUT", "DELETE") else min(tol, READ_TOLERANCE_MS)
        for r in reqs:
            if r.id in matched or abs(r.send_wall - now) > near or r.op != req.op:
                continue
            if req.key.startswith(DATA) and req.op == "PUT":
                # a segment: the same actor and generation (the key's last part: <generation>-<instance>-<seq>)
                if r.key.rsplit("/", 1)[0] == req.key.rsplit("/", 1)[0] and \
                        r.key.rsplit("/", 1)[1].split("-")[:2] == req.key.rsplit("/", 1)[1].split("-")[:2]:
                    return r
                continue
            if r.key != req.key:
                continue
            if req.op not in ("PUT", "DELETE") and any(
                    (w.key == r.key or r.op == "LIST" and w.key.startswith(r.key)) and w.op in ("PUT", "DELETE")
                    and w.id not in matched and w.send_line < r.send_line
                    for w in reqs):
                # the implementation wrote the key (a listing: a key under its prefix) before that read, and the model
                # has not yet: not its read. (A restarted process's first listing, the model's guard, paired with the
                # implementation's listing after its first write waited for that answer and wrote 150 ms late: a
                # divergence of the replay, not of the implementation; tests/check_trace/data/restart_listing)
                continue
            if req.op in ("PUT", "DELETE"):
                if r.cond != req.cond or (r.cond == "if-match" and r.version != req.version):
                    continue
                if not _same_state(state_line(r.body), state_line(req.body), tol):
                    continue
            return r
        return None

    def instead(req, now: int) -> str:
        """What the implementation wrote on that key about then, if anything."""
        near = [r for r in reqs if r.id not in matched and r.key == req.key and r.op in ("PUT", "DELETE")
                and abs(r.send_wall - now) <= tol]
        if not near:
            return ""
        r = min(near, key=lambda r: abs(r.send_wall - now))
        return f"; it sent {_describe(r.op, r.key, r.cond, r.version, r.body)} instead (line {pt.lines[r.send_line]['_line']})"

    exited: list[int] = []

    def resumed(p) -> int:
        """The wall instant of the process's first line after the pause `p` (it may go on a little after the
        environment let it go), or the pause's end if it wrote nothing more."""
        after = next((x for x in pt.lines if x["mono_ms"] >= p.to_mono_ms), None)
        return p.to_mono_ms - mono_ahead if after is None else after["wall_ms"]

    cur = [LATE]  # the line of the input the model is taking (an answer it gets at once comes right after it)
    # the replay's timeline is the process's wall clock; its monotonic clock reads this much more (the header's
    # two readings: the trace's wall clock is taken not to step while it runs)
    mono_ahead = pt.header["mono_ms"] - pt.header["wall_ms"]

    def seen_last(req, now: int) -> Reply | None:
        best = None
        for r in reqs:
            if (r.op == req.op and r.key == req.key and r.status in ("ok", "not_found") and r.answer_wall is not None
                    and 0 <= now - r.answer_wall <= tol and (best is None or r.answer_wall > best.answer_wall)):
                best = r
        if best is None:
            return None
        return Reply(best.status, best.answer_version, best.answer_body,
                     tuple(tuple(e) for e in best.entries or ()) if best.op == "LIST" else None)

    def effects(effs, now: int) -> None:
        for eff in effs:
            t = type(eff)
            if t is Send:
                req = eff.request
                r = pair(eff, now)
                protocol = req.op in ("PUT", "DELETE") and req.key.startswith(PROTOCOL)
                if r is not None:
                    matched[r.id] = eff.request_id
                    if protocol:
                        out.matched_writes += 1
                    if r.status is not None:
                        push(r.answer_wall, "reply", (eff.request_id, Reply(r.status, r.answer_version, r.answer_body,
                                                                           tuple(tuple(e) for e in r.entries or ())
                                                                           if r.op == "LIST" else None)),
                             LATE if r.answer_line is None else r.answer_line)
                elif protocol:
                    diverged(f"the model sent {_describe(req.op, req.key, req.cond, req.version, req.body)}; the "
                             f"implementation sent no such write within {tol} ms{instead(req, now)}", now)
                elif req.op in ("PUT", "DELETE"):
                    push(now, "reply", (eff.request_id, Reply("ok")), cur[0])  # a data write it did not make: done
                else:
                    # a read the implementation did not make: what its own last read of that key saw, if that came
                    # within the tolerance (the model reads twice where it read once); else the bucket's facts
                    last = seen_last(req, now)
                    reply = last if last is not None else view.answer(req.op, req.key, now, pt.machine)
                    push(now, "reply", (eff.request_id, reply), cur[0])  # (at once: before the next line)
            elif t is SetTimer:
                due = eff.at_ms - mono_ahead  # (on the monotonic clock: its wall instant, this replay's timeline)
                timers[eff.key] = due
                if eff.key.split(":", 1)[0] not in timer_names:
                    # a timer the trace does not log fires when the model set it for, but not while the process
                    # was stopped (the faults log's pauses): it ran nothing then, and fires after the inputs of the
                    # millisecond it went on in (an overdue answer or command may come first, as it did there)
                    stopped = next((p for p in pt.pauses if p.from_mono_ms < eff.at_ms < p.to_mono_ms), None)
                    if stopped is not None:
                        due = timers[eff.key] = resumed(stopped)
                    push(due, "timer", (eff.key, due))
            elif t is CancelTimer:
                timers.pop(eff.key, None)
            elif t is Observe:
                if eff.kind == "served":
                    actor, gen, request = eff.fields
                    served_model[(actor, request)] = gen
                    push(now + tol, "check_model_served", ((actor, request), gen, now))
            elif t is Exit:
                ex = pt.exit_line
                if ex is None or ex["status"] != eff.status:
                    what = "no exit" if ex is None else f"exit {ex['status']} ({ex.get('reason')})"
                    diverged(f"the model exits {eff.status} ({eff.reason}) here; the implementation: {what}", now)
                exited.append(now)  # no more inputs; the checks still due are still made
            elif t in (Mark, Forward):
                pass

    # the implementation's lines as inputs and as effects to check
    for k, line in enumerate(pt.lines):
        kind, wall = line["kind"], line["wall_ms"]
        if kind == "command":
            push(wall, "command", line, k)
        elif kind == "timer":
            push(wall, "impl_timer", line, k)
        elif kind == "send" and line["op"] in ("PUT", "DELETE") and line["key"].startswith(PROTOCOL):
            push(wall + tol, "check_impl_write", line)
        elif kind == "served":
            served_impl.append((wall, (line["actor"], line["request"]), line["_line"]))
            push(wall + tol, "check_impl_served", line)
    state = None
    try:
        params = Params(**ts.params.to_dict())
        # the model starts when the process's first line was written (its header comes before its setup)
        t0 = pt.lines[0]["wall_ms"] if pt.lines else pt.header["wall_ms"]
        state, effs = MODEL.step(None, ProcessStarted(pt.node_id, pt.instance, params), Now(t0 + mono_ahead, t0))
        effects(effs, t0)
        end = pt.last_wall
        while heap:
            t, cur[0], _s, what, data = heapq.heappop(heap)
            if t > end + tol:
                break
            inp = None
            if exited and not what.startswith("check_"):
                continue
            if what == "reply":
                inp = ReplyArrived(*data)
            elif what == "timer":
                key, due = data
                if timers.get(key) == due:
                    del timers[key]
                    inp = TimerFired(key)
            elif what == "impl_timer":
                name = data["name"]
                for key, due in sorted(timers.items(), key=lambda kv: kv[1]):
                    if key.split(":", 1)[0] == name and due <= t + tol:
                        del timers[key]
                        inp = TimerFired(key)
                        break
            elif what == "command":
                inp = Command(data["name"], tuple(data.get("args") or ()))
            elif what == "check_impl_write":
                rid = data["id"]
                if rid not in matched:
                    diverged(f"the implementation sent {_describe(data['op'], data['key'], data.get('cond'), data.get('version'), data.get('body'))}; "
                             f"the model sent no such write within {tol} ms", data["wall_ms"], data["_line"])
                continue
            elif what == "check_impl_served":
                key = (data["actor"], data["request"])
                if key not in served_model:
                    diverged(f"the implementation served request {data['request']} for {data['actor']} at generation "
                             f"{data['generation']}; the model did not serve it", data["wall_ms"], data["_line"])
                if served_model[key] != data["generation"]:
                    diverged(f"the implementation served request {data['request']} for {data['actor']} at generation "
                             f"{data['generation']}; the model at generation {served_model[key]}", data["wall_ms"],
                             data["_line"])
                out.matched_acts += 1
                continue
            elif what == "check_model_served":
                key, gen, at = data
                if not any(k == key for _w, k, _l in served_impl):
                    diverged(f"the model served request {key[1]} for {key[0]} at generation {gen}; the implementation "
                             f"did not", at)
                continue
            if inp is None:
                continue
            out.inputs += 1
            if DEBUG:
                print(f"  {t - pt.header['wall_ms']:>7} in  {inp}")
            state, effs = MODEL.step(state, inp, Now(t + mono_ahead, t))
            if DEBUG:
                for e in effs:
                    if type(e) is not Mark:
                        print(f"  {t - pt.header['wall_ms']:>7} out {e}")
            effects(effs, t)
    except _Diverged:
        if DEBUG and state is not None:
            print(f"  model state: holds {dict(state.holds)} pending {dict(state.pending)} "
                  f"unresolved {dict(state.unresolved)} inflight {dict(state.inflight)}")
    except Exception as e:  # the model refused an input (a ContractError): the replay cannot go on
        out.stopped = f"{type(e).__name__}: {e}"
    return out

