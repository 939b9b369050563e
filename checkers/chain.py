"""INV-3: conditional writes form a chain.

For each key, every write that took effect named (by its condition) the
version it replaced, as the writer knew it: the versions form one path,
never a fork. A stale `If-Match` that succeeds because identical bytes got
the same ETag (A-B-A) names an older version than the one it replaced, and
is reported. Writes to protocol keys (`nodes/` in format 3, `owners/` and
`leases/`) must be conditional at all: an unconditional one names no predecessor.
"""

from __future__ import annotations

import networkx as nx

from history import History, Violation

from .records import old_heartbeat
from .registry import invariant

INVARIANT = "INV-3"

# keys whose every write the protocol makes conditional (NL-7, NL-8, FN-3, OR-3, OR-5; UP-3's
# marker, and the old binary's per-actor lease, which it acquires and renews conditionally)
CONDITIONAL_PREFIXES = ("nodes/", "owners/", "leases/")


@invariant(INVARIANT, "conditional writes are a chain", kind="safety",
           rules=("NL-7", "NL-8", "FN-3", "OR-3", "OR-5", "UP-3"))
def check(history: History) -> list[Violation]:
    # each key's versions as edges source -> target (event that made it); a version with two
    # successors is a fork. Plain dicts on the hot path; networkx reads out a fork's shape.
    edges: dict[str, dict[int, list[tuple[int, int]]]] = {}  # key -> source -> [(target, event)]
    where: dict[tuple[str, int], int] = {}  # (key, serial) -> event index that wrote it
    out: list[Violation] = []
    absent: dict[str, int] = {}  # key -> the node standing for "no object" now (0: never written)
    current: dict[str, int] = {}  # key -> the serial of its current version (0: none)
    forked: list[tuple[str, int]] = []
    procs = history.processes

    def add(key: str, source: int, target: int, i: int) -> None:
        succ = edges.setdefault(key, {}).setdefault(source, [])
        succ.append((target, i))
        if len(succ) == 2:
            forked.append((key, source))

    events = history.events
    for i in history.of_kind("fault_delete", "apply"):
        t, p, kind, f = events[i]
        if kind == "fault_delete":
            key = f.key
            if current.get(key):  # the version the mistake deleted
                add(key, current[key], -(i + 1), i)
                current[key] = 0
                absent[key] = -(i + 1)
            continue
        key, op, cond, state = f.key, f.op, f.cond, f.state
        prev, named, serial = f.prev_serial, f.named_serial, f.serial
        # a delete ends a path in a leaf of its own; the next write after it starts from that leaf
        source = prev if prev else absent.get(key, 0)
        target = serial if serial else -(i + 1)
        add(key, source, target, i)
        current[key] = serial
        if serial:
            where[(key, serial)] = i
        else:
            absent[key] = target
        if cond is None:
            if str.startswith(key, CONDITIONAL_PREFIXES) and not old_heartbeat(state):
                out.append(Violation(INVARIANT, f"{key}: unconditional {op} by {procs[p].label} "
                                     f"replaced version #{prev} without naming it", (i,)))
            continue
        if named != prev:
            ev = (where[(key, named)],) if (key, named) in where else ()
            named_s = "no object" if named == 0 else (f"version #{named}" if named and named > 0 else "a version it never read")
            out.append(Violation(INVARIANT, f"{key}: {op} {cond} by {procs[p].label} named {named_s} "
                                 f"but replaced version #{prev}: a fork in the chain", ev + (i,)))
    for key, source in forked:
        g = nx.DiGraph()
        for s, succ in edges[key].items():
            for target, i in succ:
                g.add_edge(s, target, event=i)
        evs = tuple(sorted(d["event"] for _, _, d in g.out_edges(source, data=True)))
        longest = nx.dag_longest_path(g) if nx.is_directed_acyclic_graph(g) else []
        out.append(Violation(INVARIANT, f"{key}: version #{source} has {g.out_degree(source)} successors "
                                        f"(the longest chain runs through {len(longest)} versions)", evs))
    return out
