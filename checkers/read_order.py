"""FN-5's read order, raced (issue 39, part 3): the coverage points of a restart landing between a
freer's two reads.

FN-5 frees a record naming (A, i) only on a read of nodes/A issued after the read of the record. The
order matters only when A restarts under its id between the two reads: its new instance's first
`live` write (and its taking the actor back) lands between them. INV-1 judges what a model does then
(a model that reads nodes/A first takes the actor from the new instance, which serves it: two
owners); these points show that the world makes it happen (scenarios/faults/restart_races.py), read
on world facts only: the world's `fault` events of the race (`race_read`: the freer's read of nodes/A
left after, or was applied before, the held write), the applies, and the freer's `record_reply`.

- "FN-5 read order raced": a freer's record read (GET owners/..., answered naming A) came back, then
  A's new instance's first `live` write took effect, then the freer's read of nodes/A was sent: the
  restart fell between the record read and the nodes/A read (FN-5's own order).
- "FN-5 restart after the nodes/ read": the freer's read of nodes/A was applied before A's new
  instance's first `live` write, and that instance then took an actor back (an apply on owners/ by it,
  naming it: `held ...`) within two attempt timeouts: the situation a model that reads nodes/A before
  the record gets wrong.
"""

from __future__ import annotations

from .registry import Context, point


def _races(c: Context) -> tuple[bool, bool]:
    history = c.history
    events = history.events
    procs = history.processes
    reads = c.faults("race_read")
    if not reads:
        return False, False
    first_live: dict[str, list[tuple[int, int]]] = {}  # node -> [(applied at, process)] of first live writes
    seen: set[int] = set()
    for i in c.writes("nodes/"):
        t, q, _k, f = events[i]
        if q >= 0 and q not in seen and f.op == "PUT" and str.startswith(f.state, "live ") \
                and f.key == "nodes/" + procs[q].node_id:
            seen.add(q)
            first_live.setdefault(procs[q].node_id, []).append((t, q))
    between = after_read = False
    span = c.params.attempt_timeout_ms
    for i in reads:
        t, _q, _k, f = events[i]
        freer, _, when = f.detail.partition(": ")
        node = f.target[len("GET nodes/"):]
        if when == "after":
            # the record read's answer (naming the node) came before, the new instance's write landed at once
            lives = [x for x in first_live.get(node, ()) if x[0] <= t]
            if not lives:
                continue
            applied, _ = lives[-1]
            replies = [j for j in history.of_kind("record_reply") if events[j].t_ms <= applied
                       and procs[events[j].proc].node_id == freer and events[j].fields.op == "GET"
                       and str.startswith(events[j].fields.key, "owners/")
                       and str.startswith(events[j].fields.state, f"held {node} ")]
            if replies and applied <= t:
                between = True
        elif when == "before":
            lives = [x for x in first_live.get(node, ()) if x[0] >= t]
            if not lives:
                continue
            applied, q = lives[0]
            if any(events[j].proc == q and applied <= events[j].t_ms <= applied + 2 * span
                   and str.startswith(events[j].fields.state, "held ") for j in c.writes("owners/")):
                after_read = True
    return between, after_read


@point("FN-5 read order raced", "a node restarted under its id between a freer's record read and its read of "
                                "nodes/<id>: the new instance's first live write landed between them (FN-5)",
       topic="ownership")
def _between(c: Context) -> bool:
    return c.scan(_races)[0]


@point("FN-5 restart after the nodes/ read", "a freer's read of nodes/<id> was applied just before the named "
                                             "node's new instance's first live write, which then took an actor "
                                             "back (FN-5: what a model reading nodes/ first gets wrong)",
       topic="ownership")
def _after_read(c: Context) -> bool:
    return c.scan(_races)[1]
