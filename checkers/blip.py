"""INV-9 a bucket blip never restarts a cluster: an outage cutting every node off at once,
for any length, ending for all at once, ends with no process fenced and none exited because
of it (NL-11, FN-2).

Judged only on runs that meet the proviso: around the blip every request is applied and
answered within its attempt timeout (the world's `blip_alone` seeds: no late writes, no slow
or lost replies, no other fault). `judged` says whether this history was one of them; a
report counts them (`blip_judged`). A run its environment cut short is not judged: the blip's
aftermath may lie past its end. Its coverage point: a judged blip that met the nodes' lease writes
out of lockstep (finding F-4's situation).
"""

from __future__ import annotations

from model.params import Params

from history import History, Violation

from .registry import Context, Measure, invariant, point

INVARIANT = "INV-9"


def judged(history: History) -> bool:
    o = history.options
    return bool(o.get("blip_alone") and o.get("blip"))


def _judged_runs(history: History) -> int:
    return 1 if judged(history) else 0


@invariant(INVARIANT, "a bucket blip never restarts a cluster", kind="safety", rules=("NL-11", "FN-2"),
           whole_run=True, measure=Measure("blip_judged", _judged_runs, unjudged=int))
def check(history: History) -> list[Violation]:
    if not judged(history):
        return []
    p = Params(**history.params)
    start, length, _mode = history.options["blip"]
    up = history.options.get("upgrade")
    start += up["new_at"] if up else 0  # the new nodes' faults count from their start
    until = start + length + p.ttl_ms + p.grace_ms + p.period_ms + p.attempt_timeout_ms
    out = []
    events = history.events
    # every fence and every failed exit in the span, each its own violation: a known finding explains a
    # fence and the exit it causes (checkers/findings.py), never a second exit that happens beside them
    for i in history.of_kind("apply", "exit"):
        t, proc, kind, f = events[i]
        if not start <= t <= until:
            continue
        fence = kind == "apply" and str.startswith(f.key, "nodes/") and str.startswith(f.state, "fenced ") and proc >= 0
        if fence or (kind == "exit" and f.status != 0):
            what = f"fenced {f.key[len('nodes/'):]}" if fence else "exited"
            out.append(Violation(
                INVARIANT,
                f"after a global blip of {length / 1000:.3f} s at {start / 1000:.3f} s, "
                f"{history.processes[proc].label} {what} at {t / 1000:.3f} s",
                (i,),
            ))
    return out


@point("blip with cadences apart", "a global blip, judged by INV-9, while the nodes' lease writes were not in lockstep",
       topic="blip")
def _blip_with_cadences_apart(c: Context) -> bool:
    """The nodes' last lease writes before a judged blip spread over a quarter period or more: the
    blip meets some with their validity nearly spent and others with it fresh (finding F-4)."""
    history, fx = c.history, c.facts
    if not judged(history):
        return False
    start = history.options["blip"][0] + (history.options["upgrade"]["new_at"] if history.options.get("upgrade") else 0)
    period = fx.params.period_ms
    phases = []
    for ws in fx.live_writes.values():
        before = [w.sent_ms for w in ws if w.sent_ms < start]
        if before:
            phases.append(before[-1] % period)
    if len(phases) < 2:
        return False
    phases.sort()
    gaps = [b - a for a, b in zip(phases, phases[1:])] + [phases[0] + period - phases[-1]]
    return period - max(gaps) >= period // 4  # the writes spread over a quarter period or more
