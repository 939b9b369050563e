"""S3's other answers (issue 39 part 4): the coverage points of the fault kinds fast_5xx, sdk_retry_412
and conflict_any (scenarios/faults/), read from what the world recorded.

No invariant of its own: under these answers the model's existing branches are judged by the
invariants they serve (NL-7, NL-9: the lease's writes; OR-5, OR-7: a release, an acquisition; FN-3:
a fence; CS-2: the `released` write). These points say the swarm put each answer where a branch
reads it: a write answered 500/503 at once (the sender sees `timed_out`, outcome unknown: NL-9's
re-read, OR-7's read-back), an SDK retry refused by its own write that applied (412, or 404 for a
DELETE: NL-9 adopts, OR-7 reads back, OR-5's pending entry ends), a 409 on a conditional write that
raced another in flight to its key (not a marker's: those the upgrade answers 409 already; issue 47: a
store answers 409 only then), and a write applied and answered 500/503 at once.
"""

from __future__ import annotations

from .registry import Context, point


@point("fast 5xx on a write", "a write was answered 500/503 at once, never applied: its sender saw timed_out "
       "early (NL-9, OR-7: outcome unknown)", topic="timing")
def _fast_5xx_on_a_write(c: Context) -> bool:
    events = c.history.events
    return any(str.startswith(events[i].fields.target, ("PUT ", "DELETE ")) for i in c.faults("fast_5xx"))


@point("SDK retry met its own write", "a conditional write applied, its answer lost, and the SDK's retry was "
       "refused by that very write (412 or 404: NL-9, OR-5, OR-7)", topic="timing")
def _sdk_retry_met_its_write(c: Context) -> bool:
    """World facts (issue 44): the SDK retry of a write the world struck (`sdk_retry`, carrying the write's
    state) refused by that very write: a PUT's retry met the state the struck write carried, a DELETE's met no
    object (404). A retry refused by another writer's change is not one."""
    history = c.history
    events = history.events
    struck: dict[tuple[int, str], list[tuple[int, str | None]]] = {}  # (process, key) -> (event, state) of each
    for i in c.faults("sdk_retry"):
        _t, p, _kind, f = events[i]
        struck.setdefault((p, f.target.split(" ", 1)[1]), []).append((i, f.state))
    if not struck:
        return False
    for i in history.of_kind("refused"):
        _t, p, _kind, f = events[i]
        for j, state in struck.get((p, f.key), ()):
            if j < i and (f.met == state if f.op == "PUT" else f.status == "not_found"):
                return True
    return False


@point("409 on a racing conditional write", "a conditional write other than a marker's was answered 409 "
       "ConditionalRequestConflict, never applied, while another conditional write to its key was in flight "
       "(NL-9, OR-7, CS-2: read again)", topic="timing")
def _conflict_on_a_racing_write(c: Context) -> bool:
    """World facts: a `conflicted` answer naming the write it raced (issue 47), on a key other than a marker's."""
    events = c.history.events
    return any(events[i].fields.racing_proc is not None and not str.startswith(events[i].fields.key, "leases/")
               for i in c.history.of_kind("conflicted"))


@point("fast 5xx on an applied write", "a write was applied, and answered 500/503 at once: its sender saw "
       "timed_out early for a write that landed (NL-9's re-read adopts it, OR-7's read-back holds it)",
       topic="timing")
def _fast_5xx_on_an_applied_write(c: Context) -> bool:
    """World facts: an `applied_5xx` fault on a write (noted as it was sent), and the bucket's `apply` of that very
    write: the same process and key, sent at that instant (a failed condition answered 5xx applies nothing)."""
    history = c.history
    events = history.events
    struck = {(events[i].proc, events[i].fields.target.split(" ", 1)[1], events[i].t_ms)
              for i in c.faults("applied_5xx")}
    if not struck:
        return False
    return any((events[i].proc, events[i].fields.key, events[i].fields.sent_ms) in struck
               for i in history.of_kind("apply"))
