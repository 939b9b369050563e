"""INV-10 a fenced process stops (NL-10, FN-7): once a fence naming instance i is in the
bucket, i never writes `live` again; and once one of i's writes met that fence (the bucket
refused it), i acts no more, sends no write that takes effect, and exits, within its reply
and one re-read (2 A: the reply within one attempt timeout, NL-9's re-read within another).
All three are judged from each fence's first meeting (a new fence, a new occurrence) that no fault
touched from the write's send to the end of that time (a write held back past its timeout, a lost reply or re-read delays what the
process learns).

World facts only: the fence is an applied `fenced i` state on `nodes/<id>`, whoever wrote it
(a peer, FN-3, or the operator, FN-7); the meeting is the bucket's refusal (`refused`, with the
state it met); acts are the process's (checkers/facts.py).
"""

from __future__ import annotations

from history import History, Violation

from .facts import Facts, facts, sent_ms
from .registry import invariant

INVARIANT = "INV-10"


@invariant(INVARIANT, "a fenced process stops", kind="safety", rules=("NL-10", "FN-7"))
def check(history: History, fx: Facts | None = None) -> list[Violation]:
    fx = facts(history) if fx is None else fx
    procs = history.processes
    by_label = {(p.node_id, p.instance): k for k, p in enumerate(procs)}
    bound = 2 * fx.params.attempt_timeout_ms
    events = history.events
    out = []
    fenced: dict[int, int] = {}  # proc -> event index of the first fence naming it
    # (proc, the fence's state) -> event index of its first write refused by that fence, cleanly: each fence is
    # its own occurrence (issue 44: only a process's first meeting was judged, so a finding that explained
    # it hid a later, independent fence)
    met: dict[tuple[int, str], int] = {}
    for i in history.of_kind("apply", "refused"):
        t, p, kind, f = events[i]
        if kind == "apply" and str.startswith(f.key, "nodes/"):
            parts = f.state.split(" ")
            node = f.key[len("nodes/"):]
            if parts[0] == "fenced" and len(parts) == 3:
                q = by_label.get((node, parts[1]))
                if q is not None and q not in fenced:
                    fenced[q] = i
            elif parts[0] == "live" and p in fenced and p >= 0:
                j = fenced.pop(p)
                out.append(Violation(
                    INVARIANT,
                    f"{procs[p].label} wrote its node lease live at {t / 1000:.3f} s over the fence naming it "
                    f"(landed at {events[j].t_ms / 1000:.3f} s): a fenced process writes live no more", (j, i)))
        elif kind == "refused" and p >= 0 and (p, f.met) not in met and f.key == "nodes/" + procs[p].node_id:
            parts = f.met.split(" ")
            # from the write's send: a write held back past its timeout meets the fence after its
            # sender gave up on it (its refusal reaches nobody), and that fault is noted at the send
            if (parts[0] == "fenced" and len(parts) == 3 and parts[1] == procs[p].instance
                    and not _disturbed(history, p, sent_ms(events[i]), t + bound)):
                met[(p, f.met)] = i  # a meeting whose write, reply and re-read no fault delayed: it must stop now
    for (p, _fence), j in sorted(met.items(), key=lambda kv: kv[1]):
        since = events[j].t_ms + bound
        late = next(((t, what, k) for t, q, _a, what, k in fx.acts if q == p and t > since), None)
        late_write = next((k for k in history.of_kind("apply") if k > j and events[k].proc == p
                           and sent_ms(events[k]) > since), None)
        if late is not None:
            out.append(Violation(
                INVARIANT,
                f"{procs[p].label} {late[1]} at {late[0] / 1000:.3f} s, after its write met the fence naming it "
                f"at {events[j].t_ms / 1000:.3f} s (bound {bound / 1000:.3f} s): a fenced process acts no more",
                (j, late[2])))
        elif since < history.end_ms and fx.ended.get(p, (since + 1,))[0] > since:
            out.append(Violation(
                INVARIANT,
                f"{procs[p].label} was still running {bound / 1000:.3f} s after its write met the fence naming it "
                f"at {events[j].t_ms / 1000:.3f} s, with no fault around it: a fenced process exits (NL-10)", (j,)))
        elif late_write is not None:
            out.append(Violation(
                INVARIANT,
                f"{procs[p].label} sent a write at {sent_ms(events[late_write]) / 1000:.3f} s (it took effect at "
                f"{events[late_write].t_ms / 1000:.3f} s), after its write met the fence naming it at "
                f"{events[j].t_ms / 1000:.3f} s: a fenced process writes no more",
                (j, late_write)))
    return out


def _disturbed(history: History, p: int, start: int, end: int) -> bool:
    """A fault the world gave process p, or an outage of its machine, in [start, end]."""
    machine = history.processes[p].machine
    events = history.events
    for i in history.of_kind("outage", "fault"):  # in time order: the first past `end` ends the search
        t, q, kind, f = events[i]
        if t > end:
            break
        if kind == "outage" and (f.machine == "*" or f.machine == machine) and f.until_ms >= start:
            return True
        if q == p and kind == "fault" and t >= start:
            return True
    return False
