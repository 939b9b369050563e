"""Hand-made histories of world facts, for the checker tests.

The checkers judge what the world recorded (checkers/facts.py): writes the bucket applied, with
when their writer sent them; listings delivered; each process's clock, exit and crash; its acts
(`served`, `data_acked`). This kit writes such histories without bookkeeping: events may be
added in any order; `finish` puts them in true-time order (stably: events at one instant keep
the order they were added in) and fills every `apply`'s chain fields (condition, the serial
it replaced and named, its own serial, the state it replaced) from the writes before it, as
the bucket would. Indices returned before `finish` are remapped by it (pass them in a dict).

Fields follow model.observations.KINDS, so a field added at the end of a kind breaks nothing.
"""

from __future__ import annotations

from history import History, Process, event
from model.observations import KINDS
from model.params import Params

WORLD = -1
AUTO = "auto"  # a protocol write's condition: If-None-Match on no object, else If-Match on the current one
LAG_MS = 20  # a write's default time from send to taking effect


def fields(kind: str, **values) -> tuple:
    """The fields of an event of `kind`, in KINDS order; names not given default to ''."""
    unknown = set(values) - set(KINDS[kind])
    assert not unknown, f"{kind} has no fields {unknown}"
    return tuple(values.get(name, "") for name in KINDS[kind])


def history(*procs: tuple, params: Params | None = None, options: dict | None = None, end_ms: int = 0) -> History:
    """procs: (node_id, instance), on a machine of its own whose clock reads true time; or
    (node_id, instance, machine, offset_ms, drift_ppm). end_ms 0: `finish` ends the run 1 s after its
    last event. Params: the defaults (T-1) unless given."""
    h = History(seed=0, model="hand", scenario="hand", params=(params or Params()).to_dict(),
                options=dict(options or {}))
    for k, pr in enumerate(procs):
        node_id, instance, machine, offset_ms, drift_ppm = pr if len(pr) == 5 else (*pr, f"m{k}", 0, 0)
        h.processes.append(Process(node_id=node_id, instance=instance, machine=machine, offset_ms=offset_ms,
                                   drift_ppm=drift_ppm))
    h.end_ms = end_ms
    return h


def ev(h: History, t_ms: int, proc: int, kind: str, **values) -> int:
    """Append an event; its index (until `finish` reorders)."""
    h.add(t_ms, proc, kind, fields(kind, **values))
    return len(h.events) - 1


def put(h: History, t_ms: int, proc: int, key: str, state: str, sent: int | None = None, cond=AUTO,
        op: str = "PUT") -> int:
    """A write that took effect at t_ms, sent at `sent` (default: t_ms - LAG_MS). Its chain fields are
    filled by `finish`; `cond` AUTO is the protocol's condition, None unconditional."""
    sent = t_ms - LAG_MS if sent is None else sent
    return ev(h, t_ms, proc, "apply", key=key, op=op, cond=cond, prev_serial=None, named_serial=None, serial=None,
              state=state, prev_state=None, sent_ms=sent)


def local(h: History, proc: int, t_ms: int) -> int:
    """Process `proc`'s clock at true time t_ms."""
    return h.processes[proc].clock.local(t_ms)


def live(h: History, sent: int, proc: int, lag: int = LAG_MS, written_at: int | None = None,
         answered: bool = False) -> int:
    """A `live` write of proc's node lease, sent at true time `sent`, taking effect `lag` later; its
    written_at is the sender's clock at send (NL-4) unless given. `answered`: its answer (`record_reply`,
    ok) comes back `lag` after it took effect, as the worlds record it (INV-7 counts a node able to act
    from that answer; off by default, so that the indices of older hand-made histories stay)."""
    pr = h.processes[proc]
    key = "nodes/" + pr.node_id
    state = f"live {pr.instance} {local(h, proc, sent) if written_at is None else written_at}"
    i = put(h, sent + lag, proc, key, state, sent=sent)
    if answered:
        ev(h, sent + 2 * lag, proc, "record_reply", key=key, op="PUT", status="ok", state=state, serial=-1,
           named_serial=None, sent_ms=sent)
    return i


def heartbeats(h: History, proc: int, start: int, stop: int, every: int | None = None, lag: int = LAG_MS,
               answered: bool = False) -> list[int]:
    """proc's lease writes every P (NL-2), sent from `start`, each taking effect before `stop` (`answered`:
    each with its answer, `live`)."""
    every = every or Params(**h.params).period_ms
    return [live(h, s, proc, lag, answered=answered) for s in range(start, stop - lag, every)]


def record(h: History, t_ms: int, proc: int, actor: str, generation: int, sent: int | None = None) -> int:
    """proc's write of owners/<actor> naming itself at `generation` (OR-3), taking effect at t_ms."""
    pr = h.processes[proc]
    return put(h, t_ms, proc, "owners/" + actor, f"held {pr.node_id} {pr.instance} {generation}", sent=sent)


def release(h: History, t_ms: int, proc: int, actor: str, generation: int, sent: int | None = None) -> int:
    """proc's release of owners/<actor> (nobody, generation kept, OR-5), taking effect at t_ms."""
    return put(h, t_ms, proc, "owners/" + actor, f"nobody {generation}", sent=sent)


def fence(h: History, t_ms: int, proc: int, node: str, instance: str, written_at: int, sent: int | None = None) -> int:
    """proc's fence of nodes/<node> naming `instance`, keeping its written_at (FN-3), taking effect at t_ms."""
    return put(h, t_ms, proc, "nodes/" + node, f"fenced {instance} {written_at}", sent=sent)


def segment(h: History, t_ms: int, proc: int, actor: str, name: str, sent: int | None = None) -> int:
    """proc's data write wal/<actor>/<name> (unconditional), taking effect at t_ms."""
    return put(h, t_ms, proc, f"wal/{actor}/{name}", "", sent=sent, cond=None)


def listed(h: History, t_ms: int, proc: int, actor: str, keys: list[str], sent: int) -> int:
    """A listing of wal/<actor>/ sent by proc at `sent`, delivered at t_ms (a restore)."""
    return ev(h, t_ms, proc, "listed", prefix=f"wal/{actor}/", keys=list(keys), sent_ms=sent)


def read(h: History, t_ms: int, proc: int, key: str, sent: int | None = None, serial=AUTO) -> int:
    """proc's GET of `key`, sent at `sent` (default t_ms - LAG_MS), answered at t_ms (the world's `read`):
    `serial` AUTO is the object there at t_ms (0: none), filled by `finish`; -1: the read failed."""
    sent = t_ms - LAG_MS if sent is None else sent
    return ev(h, t_ms, proc, "read", key=key, serial=serial, sent_ms=sent)


def refused(h: History, t_ms: int, proc: int, key: str, cond: str, named: int, sent: int | None = None,
            status: int = 412) -> int:
    """proc's conditional write of `key`, sent at `sent` (default t_ms - LAG_MS), refused at t_ms; `named`
    the serial its condition named (0: If-None-Match)."""
    sent = t_ms - LAG_MS if sent is None else sent
    return ev(h, t_ms, proc, "refused", key=key, op="PUT", cond=cond, met="", sent_ms=sent, status=status,
              named_serial=named)


def finish(h: History, ix: dict | None = None) -> History:
    """True-time order (stable), chain fields filled, `ix`'s indices remapped; the history."""
    order = sorted(range(len(h.events)), key=lambda i: h.events[i].t_ms)
    new_of = {old: new for new, old in enumerate(order)}
    events = [h.events[i] for i in order]
    objects: dict[str, tuple[int, str]] = {}  # key -> (serial, state)
    serial = 0
    for k, (t, p, kind, f) in enumerate(events):
        if kind == "fault_delete":
            objects.pop(f.key, None)
        elif kind == "read" and f.serial == AUTO:
            events[k] = event(t, p, kind, f._replace(serial=objects.get(f.key, (0, ""))[0]))
        elif kind == "apply" and f.prev_serial is None:
            prev, prev_state = objects.get(f.key, (0, ""))
            cond = ("if-match" if prev else "if-none-match") if f.cond == AUTO else f.cond
            if f.op == "DELETE":
                new = 0
                objects.pop(f.key, None)
            else:
                serial += 1
                new = serial
                objects[f.key] = (new, f.state)
            named = None if cond is None else prev
            events[k] = event(t, p, kind, f._replace(cond=cond, prev_serial=prev, named_serial=named, serial=new,
                                                     prev_state=prev_state))
        elif kind == "apply":
            if f.serial:
                objects[f.key] = (f.serial, f.state)
                serial = max(serial, f.serial)
            else:
                objects.pop(f.key, None)
    h.events = events
    h.cache.clear()
    h._sha = None
    if h.end_ms == 0 and events:
        h.end_ms = events[-1].t_ms + 1_000  # a run ends after its last event
    if ix is not None:
        for name, i in ix.items():
            ix[name] = new_of[i] if isinstance(i, int) else i
    return h
