"""A counterexample told in the terminal, for someone who has read ADR 0020 (issue 13).

Four parts, before the full timeline: who ran (each process, its machine and its clock's
offset from true time), the faults in the order they struck, what happened (the bucket writes
and the acts, with the lease renewals that change nothing folded into one line, the proving
events marked), and the violation. Every time is true time; times a process read on its own
clock are marked @local.
"""

from __future__ import annotations

# the events a reader follows; the rest (reads, timers, the model's bookkeeping) stay in the timeline
TOLD = ("start", "crash", "exit", "twin", "operator", "fault_delete", "fault_put", "told", "client", "apply", "refused",
        "check_passed", "check_refused", "lease_ran_out", "lease_lost", "lease_invalidated", "fenced", "served",
        "data_acked", "event_cut", "hold_began", "hold_ended", "released", "release_pending", "release_dropped",
        "acquire_unresolved", "resolver_release", "unresolved_ended", "restored", "drained", "request_failed",
        "operator_done", "old_version_running", "old_retired", "quiet", "moved")
FAULTS = ("fault", "crash", "twin", "fault_delete", "fault_put", "operator")


def _s(ms: int) -> str:
    return f"{ms / 1000:8.3f} s"


def fault_phrase(f) -> str:
    """A `fault` event's fields for people: its kind, what it hit, its length, its word."""
    what = f.what.replace("_", " ")
    ms = f", {f.ms} ms" if f.ms is not None else ""
    detail = f": {f.detail}" if f.detail else ""
    return f"fault {what} ({f.target}{ms}){detail}"


def phrase(history, i: int) -> str:
    """One event as a sentence (a fallback: its kind and fields)."""
    _t, _p, kind, f = history.events[i]
    if kind == "apply":
        cond = {"if-match": f"if-match #{f.named_serial}", "if-none-match": "if-none-match", None: "unconditional"}
        what = "deleted" if f.op == "DELETE" else f'wrote "{f.state}"' if f.state else "wrote"
        return (f"{what} to {f.key} ({cond.get(f.cond, f.cond)}, sent at {f.sent_ms / 1000:.3f} s): "
                f"#{f.prev_serial} -> #{f.serial}" + (f', was "{f.prev_state}"' if f.prev_state else ""))
    if kind == "refused":
        met = f': it met "{f.met}"' if f.met else ": the object is absent"
        return f"{f.op} {f.key} ({f.cond}) refused with {f.status}{met}"
    if kind == "fault":
        return fault_phrase(f)
    if kind == "fault_delete":
        return f"fault: {f.key} deleted by mistake (outside the protocol)"
    if kind == "start":
        return f"starts on {f.machine}"
    if kind == "crash":
        return "crashes (no write on the way out)"
    if kind == "exit":
        return f"exits ({f.status}): {f.reason}"
    if kind == "client":
        return f"a client asks for {f.actor} (request {f.request})"
    named = f._asdict()  # the kind's fields by name, in its order (model/observations.py)
    if kind in ("served", "data_acked", "hold_began", "hold_ended", "released", "release_pending", "release_dropped",
                "acquire_unresolved", "resolver_release", "unresolved_ended", "restored", "event_cut"):
        if isinstance(named.get("segments"), (list, tuple)) and len(named["segments"]) > 3:
            named["segments"] = f"{len(named['segments'])}, the last {named['segments'][-1]}"
        rest = ", ".join(f"{k} {v}" for k, v in named.items() if k not in ("actor", "generation", "version"))
        return f"{kind.replace('_', ' ')} {f.actor} at generation {f.generation}" + (f" ({rest})" if rest else "")
    return kind.replace("_", " ") + (" " + ", ".join(f"{k} {v}" for k, v in named.items()) if named else "")


def _renewal(history, i: int) -> bool:
    """A lease write that changes nothing a reader needs: `live` over `live` of the same instance."""
    _t, _p, kind, f = history.events[i]
    return (kind == "apply" and f.key.startswith("nodes/") and f.state.startswith("live ")
            and f.prev_state.startswith("live ") and f.state.split(" ")[1] == f.prev_state.split(" ")[1])


def tell(plan: dict | None, history, violation, limit: int = 60) -> str:
    """The story of one violation in `history`."""
    lines = []
    model = history.model
    lines.append(f"COUNTEREXAMPLE: model {model} breaks {violation.invariant}"
                 + (f" (seed {history.seed}, shrunk)" if plan is not None and plan.get("shrunk") else f" (seed {history.seed})"))
    lines.append("")
    lines.append("Who runs (clock offset from true time; every time below is true time):")
    starts = {p: t for t, p, kind, _f in history.events if kind == "start"}
    ends = {}
    for t, p, kind, f in history.events:
        if kind in ("crash", "exit") and p not in ends:
            ends[p] = (t, "crashed" if kind == "crash" else f"exited: {f.reason}")
    base = history.options.get("clock_base", 0)  # the reading of true time: offsets count from it
    for p, proc in enumerate(history.processes):
        if proc.node_id == "operator":
            continue
        end = ends.get(p)
        lines.append(f"  {proc.label:<20} on {proc.machine:<4} clock {proc.offset_ms - base:+6d} ms"
                     + (f" drift {proc.drift_ppm:+d} ppm" if proc.drift_ppm else "")
                     + f"  from {starts.get(p, 0) / 1000:.3f} s"
                     + (f" until {end[0] / 1000:.3f} s ({end[1]})" if end else " to the end"))
    p = history.params
    lines.append(f"  timing: ttl {p['ttl_ms']} ms, grace {p['grace_ms']}, safety {p['safety_ms']}, max_skew "
                 f"{p['max_skew_ms']}, heartbeat {p['heartbeat_period_ms']}, attempt timeout {p['attempt_timeout_ms']}")
    lines.append("")
    faults = [i for i, e in enumerate(history.events) if e.kind in FAULTS]
    kinds: dict[str, int] = {}
    for i in faults:
        word = _fault_word(history.events[i])
        kinds[word] = kinds.get(word, 0) + 1
    lines.append(f"The faults ({len(faults)}, each in its place below, marked !): "
                 + ", ".join(f"{w} x{n}" if n > 1 else w for w, n in kinds.items()) if faults else "No fault struck.")
    lines.append("")
    lines.append("What happened (>> marks the events that prove the violation, ! a fault):")
    proving = set(violation.events)
    told = [i for i, e in enumerate(history.events) if e.kind in TOLD or e.kind in FAULTS or i in proving]
    folded = _fold_routine(history, told, proving)
    inside = {j for _key, run in folded.values() for j in run[1:]}
    shown = 0
    for k, i in enumerate(told):
        if i in inside:
            continue
        if i in folded:
            lines.append(f"  {_s(history.events[i].t_ms)}  {_who(history, i):<16} {_run_phrase(history, *folded[i])}")
        else:
            mark = ">>" if i in proving else " !" if history.events[i].kind in FAULTS else "  "
            lines.append(f"{mark}{_s(history.events[i].t_ms)}  {_who(history, i):<16} {phrase(history, i)}")
        shown += 1
        if shown >= 4 * limit:
            rest = sum(1 for j in told[k + 1:] if j not in inside)
            if rest:
                lines.append(f"  ... {rest} more (see the timeline)")
            break
    lines.append("")
    lines.append("The violation:")
    lines.append(violation.explain(history))
    return "\n".join(lines) + "\n"


def _routine(history, i: int):
    """(family, key) of an event a node repeats without news, or None.

    The families: its lease renewals; and, per actor, its serving (a client's request, served,
    its segment written to wal/ and acknowledged, at one generation) or its refusing (a
    client's request failed for one reason)."""
    _t, _p, kind, f = history.events[i]
    if _renewal(history, i):
        return "lease", ("renews",)
    if kind in ("served", "data_acked"):
        return f.actor, ("serves", f.generation)
    if kind == "request_failed":
        return f.actor, ("refuses", f.reason)
    if kind == "client":
        return f.actor, None  # a request reaching the node: it joins the run it opens or continues
    if kind == "apply" and f.key.startswith("wal/") and f.cond is None:
        actor, segment = f.key[len("wal/"):].rsplit("/", 1)
        return actor, ("serves", int(segment.split("-")[0]))
    return None


def _fold_routine(history, told: list[int], proving: set[int]) -> dict[int, tuple[tuple, list[int]]]:
    """Each node's runs of routine events (see _routine), first event -> (key, the run).

    A run is one process's events of one family and key with nothing else of its own between
    them: it ends at that process's next other event, at a fault that strikes it (or the whole
    world), and at an event that proves the violation. Other processes' events may come
    between: a node renewing every 3 s beside another is one line, not one line per renewal."""
    open_runs: dict[int, dict[str, list]] = {}  # proc -> family -> [key, indices]
    runs: dict[int, list] = {}
    for i in told:
        _t, p, kind, _f = history.events[i]
        if kind in FAULTS and p < 0:  # a fault of the world ends every run
            open_runs.clear()
            continue
        routine = _routine(history, i) if i not in proving else None
        mine = open_runs.setdefault(p, {})
        if routine is None:
            mine.clear()
            continue
        family, key = routine
        run = mine.get(family)
        if run is not None and (key is None or run[0] is None or run[0] == key):
            run[0] = run[0] or key
            run[1].append(i)
        else:
            mine[family] = runs[i] = [key, [i]]
    out = {}
    for first, (key, run) in runs.items():
        repeats = sum(1 for j in run if history.events[j].kind in ("served", "request_failed") or key == ("renews",))
        if key is not None and repeats > 1:
            out[first] = (key, run)
    return out


def _run_phrase(history, key: tuple, run: list[int]) -> str:
    until = f"until {history.events[run[-1]].t_ms / 1000:.3f} s"
    kinds = [history.events[j].kind for j in run]
    if key[0] == "renews":
        return f"renews its node lease {len(run)} times, {until}"
    actor = history.events[run[-1]].fields.actor if kinds[-1] != "apply" else \
        history.events[run[-1]].fields.key[len("wal/"):].rsplit("/", 1)[0]
    if key[0] == "serves":
        return (f"serves {kinds.count('served')} requests for {actor} at generation {key[1]}, {until} "
                f"({kinds.count('apply')} segments written to wal/, {kinds.count('data_acked')} acknowledged)")
    return f"refuses {kinds.count('request_failed')} requests for {actor}, {until}: {key[1]}"


def _fault_word(e) -> str:
    """A fault's kind in two words: "reply lost", "outage", "crash"."""
    if e.kind == "fault":
        return e.fields.what.replace("_", " ")
    return {"fault_delete": "object deleted", "fault_put": "object overwritten"}.get(e.kind, e.kind)


def _who(history, i: int) -> str:
    p = history.events[i].proc
    return history.processes[p].label if p >= 0 else "world"
