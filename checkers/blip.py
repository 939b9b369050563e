"""INV-9 a bucket blip never restarts a cluster: an outage cutting every node off at once,
for any length, ending for all at once, ends with no process fenced and none exited because
of it (NL-11, FN-2).

Judged only on runs that meet the proviso: around the blip every request is applied and
answered within its attempt timeout (the world's `blip_alone` seeds: no late writes, no slow
or lost replies, no other fault). `judged` says whether this history was one of them.
"""

from __future__ import annotations

from model.params import Params

from history import History, Violation

INVARIANT = "INV-9"


def judged(history: History) -> bool:
    o = history.options
    return bool(o.get("blip_alone") and o.get("blip"))


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
    for i in history.of_kind("apply", "exit"):
        t, proc, kind, f = events[i]
        if not start <= t <= until:
            continue
        fence = kind == "apply" and f[0].startswith("nodes/") and f[6].startswith("fenced ") and proc >= 0
        if fence or (kind == "exit" and f[0] != 0):
            what = f"fenced {f[0][len('nodes/'):]}" if fence else "exited"
            out.append(Violation(
                INVARIANT,
                f"after a global blip of {length / 1000:.3f} s at {start / 1000:.3f} s, "
                f"{history.processes[proc].label} {what} at {t / 1000:.3f} s",
                (i,),
            ))
            break
    return out
