"""Pauses: a node's process stops for a while (SIGSTOP, a long stop-the-world GC pause, a VM frozen by its
host), then resumes, or is killed as it wakes (a watchdog that found it hung; its supervisor restarts it).

Written from the world's port alone (scenarios/port.py: `live_proc`, `pause`, `crash`, `later`,
`fault_step`, `disturbs_a_race`), as the recipe's demonstration of a kind that acts on processes. While paused,
every input waits (a reply, a timer, a command) and the process's clock runs on: it wakes to find its lease
older than it thought it could be, which NL-4's local-clock validity answers. Drawn only where a preset forces
it (issue 47's pauses build on it); a plan or a test sets its entries.
"""

from __future__ import annotations

from . import FaultKind, stays_off

THEN = ("resume", "crash")  # what follows a pause


class Pauses(FaultKind):
    id = "pauses"
    title = "a node's process stops for a while (a GC pause, SIGSTOP), then resumes or is killed as it wakes"
    rules = ("NL-4", "NL-10", "NL-11", "FN-3", "OR-3")
    options = {"pauses": []}  # [[node, at, length_ms, "resume" | "crash"]]
    scheduled = ("pauses",)
    at_field = {"pauses": 1}
    node_field = {"pauses": 0}
    durations = {"pauses": 2}

    def draw_main(self, ctx) -> None:
        n = ctx.force(self.id) or 0  # (no preset forces it yet: off in every drawn seed)
        ctx.o["pauses"] = [] if not n or stays_off(ctx) else [
            [ctx.choice(ctx.nodes()), ctx.rng.randint(0, ctx.o["fault_ms"]), ctx.S(ctx.rng.randint(1_000, 20_000)),
             ctx.choice(THEN)] for _ in range(n)]

    def schedule(self, w, base: int) -> None:
        for node_id, at, length_ms, then in filter(None, w.options.get("pauses", ())):
            w.later(base + at, w.fault_step, self.id, "strike", node_id, length_ms, then)

    def strike(self, w, node_id: str, length_ms: int, then: str) -> None:
        if w.in_quiet or w.disturbs_a_race(node_id):
            return
        proc = w.live_proc(node_id)
        if proc is None:
            return
        w.pause(proc, length_ms)
        if then == "crash":  # killed as it wakes: before any input that waited reaches it
            w.later(length_ms, w.fault_step, self.id, "kill", proc.index)

    def kill(self, w, index: int) -> None:
        proc = w.procs[index]
        if proc.alive:
            w.crash(proc)


KIND = Pauses()
