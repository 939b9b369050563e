"""The moments a process pause must reach (issue 47, part 3; scenarios/faults/pauses.py): a process that
stops (a GC pause, SIGSTOP) while its clocks run on, its timers come due and its replies queue, then resumes
to act. Each point is read from the world's facts: the `pause` and `resumed` fault events the world recorded,
and the validity windows rebuilt from the bucket's applied writes (checkers/facts.py). The invariants that
judge what a resumed process does are INV-1 (every act inside a valid hold) and LEASE-1; the broken model
`acts_after_pause` (a validity that trusts the lapse timer instead of reading the clock) shows they catch it.

Must not know: the model's claims (a process's own word on its validity).
"""

from __future__ import annotations

from .registry import Context, point

NEAR_MS = 10  # "within a few ms" of the lease's end: the kind aims at +-5 ms; the facts' windows end on the ms


def _pauses(c: Context):
    """(process, from, to) of each pause the world recorded."""
    events = c.history.events
    return [(events[i].proc, events[i].t_ms, events[i].t_ms + (events[i].fields.ms or 0)) for i in c.faults("pause")]


def _resumed(c: Context, what: str) -> int:
    """The most inputs of `what` ("timers", "replies", "commands") queued in one pause."""
    events = c.history.events
    most = 0
    for i in c.faults("resumed"):
        for part in events[i].fields.detail.split(", "):
            name, _, n = part.partition(" ")
            if name == what:
                most = max(most, int(n))
    return most


@point("paused past its lease", "a process was paused longer than ttl - safety (a frozen VM, a long GC pause): "
       "it resumed to find its lease gone by its own clock (NL-4, NL-11)", topic="timing")
def _paused_past_its_lease(c: Context) -> bool:
    span = c.facts.params.lease_span_ms
    return any(end - start >= span for _q, start, end in _pauses(c))


@point("pause ended at the lease's end", "a paused process resumed within a few ms of the end of its lease's "
       "validity (rebuilt from the bucket's facts): valid or not as it acts, by its own clock (NL-4)",
       topic="timing")
def _pause_ended_at_the_lease_s_end(c: Context) -> bool:
    lease = c.facts.lease
    return any(abs(e - end) <= NEAR_MS for q, _start, end in _pauses(c) for _s, e, _i in lease.get(q, ()))


@point("pause between a check and its write", "a process paused right after the validity check that let it write "
       "an owners/ record (OR-2); the write left only when it resumed, its condition the only guard (OR-3)",
       topic="ownership")
def _pause_between_a_check_and_its_write(c: Context) -> bool:
    events = c.history.events
    return any("between its check" in (events[i].fields.detail or "") for i in c.faults("pause"))


@point("timer came due in a pause", "a paused process's timer came due while it was stopped (its lease's deadline, "
       "its cadence): delivered when it resumed, its handler reading the clocks afresh (NL-2, NL-11)",
       topic="timing")
def _timer_came_due_in_a_pause(c: Context) -> bool:
    return _resumed(c, "timers") > 0


@point("reply queued in a pause", "a reply reached a paused process beside another input (a timer, a command), "
       "all delivered when it resumed in the order they arrived", topic="timing")
def _reply_queued_in_a_pause(c: Context) -> bool:
    events = c.history.events
    for i in c.faults("resumed"):
        n = dict(part.split(" ") for part in events[i].fields.detail.split(", "))
        if int(n["replies"]) and int(n["timers"]) + int(n["commands"]):
            return True
    return False
