"""Pauses (issue 47, part 3): a node's process takes no step for a span (SIGSTOP, a stop-the-world GC pause, a
VM frozen by its host), then resumes, or is killed as it wakes (a watchdog that found it hung; its supervisor
restarts it). The classic hazard of lease protocols: a process decides it is valid, stops for longer than its
lease, and resumes to act.

While paused its clocks run on (both: model.io.Now), its timers come due, its replies and commands queue
(World.pause, World.deliver); on resuming it gets them in the order they arrived, each handler reading its
clocks afresh. Its requests already in flight still land.

Drawn in a share of the swarm's seeds (never around a lone blip or in a preset's race), from its own streams
("draw/pauses" for the entries, "pauses" for what it decides as it strikes). Each entry [node, at, length_ms,
then, aim], `aim` saying where the pause lands:

- "any": at `at`, for `length_ms`, drawn from a few ms to 2 * ttl (log-uniform: most short, a GC pause);
- "long": at `at`, for `length_ms` drawn from ttl - safety to 2 * ttl: past the lease (a frozen VM);
  this and "deadline" strike a node whose records the bucket shows (World.holders), if the drawn one has
  none: the hazard is a process that holds actors, resuming to act for them;
- "deadline": at `at`, for as long as the process's lease still has, give or take a few ms: it resumes within
  a few ms of its lease's end (NL-4, NL-11: the deadline timer came due in the pause, in two of three, or not
  yet);
  with "long", a client request for one of the actors it holds reaches it during the pause, before its lease's
  end (`queue_a_request`): what it resumes to act for;
- "write": armed at `at`, it strikes as the process next sends a write of an owners/ record (an acquisition's,
  a release's: OR-2 checks validity right before the acquire write): the process stops between that check and
  the write, which leaves only when the pause ends (the network holds it: `on_sent`). The bucket's condition
  is what guards such a write (OR-3, OR-5); a hold begins only on its answer, valid or not (OR-4).

- "in flight": armed at `at`, it strikes as the process next sends a request (its lease write, a read of a
  record...), which goes on its way: the reply reaches a stopped process and queues with whatever else comes.

`then`: "resume", or "crash" (killed as it wakes, before any input that waited reaches it). The `fault` event
`pause` names the span and the aim; `resumed` what queued meanwhile (timers, replies, commands).
"""

from __future__ import annotations

from model.io import OK, PUT
from model.records import OWNERS_PREFIX, state_line

from . import FaultKind, stays_off

THEN = ("resume", "resume", "resume", "crash")  # what follows a pause
AIMS = ("any", "long", "deadline", "write", "in flight")
# the draw's weights (issue 47q): a pause of a holder past its lease's end, or to within a few ms of it, is the
# hazard itself (NL-4, OR-4: an act reads the clock), two in seven each; the other aims one in seven each
DRAWN_AIMS = AIMS + ("long", "deadline")
SHARE = 0.6  # of the swarm's seeds
FEW_MS = 5  # "a few ms": the shortest pause, and how near its lease's end a "deadline" pause ends


def _in_restart_race(w, node_id: str) -> bool:
    """Is `node_id` in a restart race under way (restart_races.py): crashed and awaiting its restart, or the
    node chosen to free its records, or either while the race plays out? A pause there stops the race's crash or
    its freer's reads, and the race ends in nothing (broken model `node_read_before_record`, issue 39 part 3)."""
    freers = getattr(w, "race_freers", None)
    if freers and (node_id in freers or any(f == node_id for f in freers.values())):
        return True
    # a race under way: its write held back, or released and not yet taken back (one done, or taken, is over: its
    # entry stays until the quiet phase, seed 5708's plan, tests/plans/sweep-5708-conv1.json)
    for n, race in (getattr(w, "restart_race_state", None) or {}).items():
        if (race["stage"] == "held" or race["stage"] == "released" and not race.get("taken")) \
                and node_id in (n, race.get("freer")):
            return True
    return False


class Pauses(FaultKind):
    id = "pauses"
    title = "a node's process stops for a while (a GC pause, SIGSTOP), then resumes or is killed as it wakes"
    rules = ("NL-4", "NL-10", "NL-11", "FN-3", "OR-2", "OR-3", "OR-4")
    options = {"pauses": []}  # [[node, at, length_ms, "resume" | "crash", aim]]
    scheduled = ("pauses",)
    at_field = {"pauses": 1}
    node_field = {"pauses": 0}
    durations = {"pauses": 2}
    # node -> [length_ms, then]: a "write" pause armed, striking at the node's next owners/ write; process index ->
    # the true instant its lease's validity ends, by its last acknowledged write (a "deadline" pause's aim)
    # the instant its lease's validity ends, by its last acknowledged write (a "deadline" pause's aim); "long" and
    # "deadline" pauses that found no holder, waiting for the next acquisition to land ([length_ms, then, aim])
    state = {"pauses_armed": dict, "pauses_lease_ends": dict, "pauses_waiting": list}

    def draw_main(self, ctx) -> None:
        rng, o = ctx.rng, ctx.o
        n = ctx.force(self.id)
        if n is None:
            n = rng.randint(2, 5) if rng.random() < SHARE and ctx.preset.mix else 0
        if not n or stays_off(ctx):
            o["pauses"] = []
            return
        longest = 2 * ctx.p.ttl_ms
        out = []
        for _ in range(n):
            aim = ctx.choice(DRAWN_AIMS)
            if aim == "long":  # past the lease: a frozen VM
                length = rng.randint(ctx.p.lease_span_ms, longest)
            else:  # from a few ms to 2 ttl, log-uniform (most short: a GC pause)
                length = int(FEW_MS * (longest / FEW_MS) ** rng.random())
            # (a pause past the lease or to its end strikes once the nodes passed their start checks: NL-5's
            # ttl + grace and two periods of starts)
            first = min(o["fault_ms"], ctx.tg + 2 * ctx.p.period_ms) if aim in ("long", "deadline") else 0
            out.append([ctx.choice(ctx.nodes()), rng.randint(first, o["fault_ms"]), length, ctx.choice(THEN), aim])
        o["pauses"] = sorted(out, key=lambda e: (e[1], e[0]))

    def schedule(self, w, base: int) -> None:
        for entry in filter(None, w.options.get("pauses", ())):
            node_id, at, length_ms, then = entry[:4]
            aim = entry[4] if len(entry) > 4 else "any"
            w.later(base + at, w.fault_step, self.id, "strike", node_id, length_ms, then, aim)

    def quiet(self, w) -> None:
        w.pauses_armed.clear()
        w.pauses_waiting.clear()

    def on_record_reply(self, w, proc, req, status: str, serial: int, named) -> None:
        """An acquisition's write of `proc` landed and was acknowledged (its record names it: OR-3, checked valid
        right before it, OR-2): a "long" or "deadline" pause waiting for a holder strikes it, once the model has
        taken the answer (the hold began)."""
        waiting = w.pauses_waiting
        if not waiting or status != OK or req.op != PUT or not str.startswith(req.key, OWNERS_PREFIX) or w.in_quiet:
            return
        if not str.startswith(state_line(req.body), f"held {proc.node_id} {proc.instance} "):
            return
        length_ms, then, aim = waiting.pop(0)
        w.later(0, w.fault_step, self.id, "strike_holder", proc.index, length_ms, then, aim)

    def strike_holder(self, w, index: int, length_ms: int, then: str, aim: str) -> None:
        proc = w.procs[index]
        if proc.alive and not w.in_quiet and proc.paused_until <= w.now:
            self.strike(w, proc.node_id, length_ms, then, aim)

    def strike(self, w, node_id: str, length_ms: int, then: str, aim: str = "any") -> None:
        if w.in_quiet:
            return
        if aim in ("long", "deadline"):
            # the hazard: a process that holds actors stops past its lease and resumes to act for them: a node
            # whose records the bucket shows (World.holders), with a valid lease by its last acknowledged write,
            # is struck (the drawn one if it is such a node), one no race keeps calm (a pause there would wait for
            # the race's end, and the next holder is often the race's own: issue 47q)
            ends = w.pauses_lease_ends
            holders = sorted(n for n in set(w.holders.values())
                             if (q := w.live_proc(n)) is not None and ends.get(q.index, -1) > w.now
                             and not w.disturbs_a_race(n) and not _in_restart_race(w, n))
            if holders and node_id not in holders:
                node_id = holders[w.choose("pause_node", node_id, w.rngs[self.id].randrange, len(holders))
                                  % len(holders)]
            elif not holders and (ends or node_id not in w.holders.values()) and w.choose("pause_wait", node_id, _yes):
                # nobody holds an actor on a valid lease now: the pause waits for the next acquisition to land and
                # strikes its process (on_record_reply; a plan from before issue 47 part 4 strikes the drawn node,
                # as a world that never saw a lease acknowledged does a holder drawn: a script's)
                w.pauses_waiting.append([length_ms, then, aim])
                return
        if w.disturbs_a_race(node_id) or _in_restart_race(w, node_id):
            if aim in ("long", "deadline") and w.choose("pause_wait", node_id, _yes):
                w.pauses_waiting.append([length_ms, then, aim])  # (a race plays out there: the next holder, then)
            return
        proc = w.live_proc(node_id)
        if proc is None:
            return
        if aim in ("write", "in flight"):
            w.pauses_armed[node_id] = [length_ms, then, aim]  # it strikes at the node's next request (on_sent)
            return
        detail = aim
        if aim == "deadline":
            end = w.pauses_lease_ends.get(proc.index)
            if end is None or end <= w.now:
                return  # no valid lease to pause to the end of
            # (two in three past the end: the deadline timer came due in the pause, behind what queued before it)
            off = w.choose("pause_end", node_id, w.rngs[self.id].randint, -FEW_MS, 2 * FEW_MS)
            length_ms, detail = max(1, end - w.now + off), f"to its lease's end {off:+d} ms"
        length_ms = self.pause(w, proc, length_ms, then, detail)
        if aim in ("long", "deadline"):
            self.queue_a_request(w, proc, length_ms)

    def queue_a_request(self, w, proc, length_ms: int) -> None:
        """The hazard's other half: a client request for an actor the stopped process holds reaches it during the
        pause, before its lease's end (a client does not know it stopped). It waits in its socket, and reaches the
        model when it resumes, ahead of the deadline timer, which came due after it (NL-4, OR-4: an act reads the
        clock). Its instant from the kind's stream ("pause_request", ms into the pause; a plan without one: none)."""
        end = w.pauses_lease_ends.get(proc.index)
        held = sorted(actor for actor, node in w.holders.items() if node == proc.node_id)
        last = min(end if end is not None else w.now, w.now + length_ms) - 1  # (before its lease's end)
        if not held or last <= w.now:
            return
        rng = w.rngs[self.id]
        at = w.choose("pause_request", proc.node_id, rng.randint, 1, last - w.now)
        if at is None:
            return
        actor = held[w.choose("pause_actor", proc.node_id, rng.randrange, len(held)) % len(held)]
        w.later(at, w.fault_step, self.id, "ask", proc.node_id, actor)

    def ask(self, w, node_id: str, actor: str) -> None:
        if not w.in_quiet:
            w.ask_new(node_id, actor)

    def pause(self, w, proc, length_ms: int, then: str, detail: str) -> int:
        """`proc` stops for `length_ms` (cut short at the quiet phase); returns how long."""
        if w.quiet_at_ms is not None:  # every pause is over when the quiet phase begins (faults over)
            length_ms = min(length_ms, w.quiet_at_ms - w.now)
        length_ms = max(1, length_ms)
        w.pause(proc, length_ms, detail)
        w.later(length_ms, w.fault_step, self.id, "wake", proc.index, then)
        return length_ms

    def wake(self, w, index: int, then: str) -> None:
        proc = w.procs[index]
        if not proc.alive:
            return
        if then == "crash":  # killed as it wakes: before any input that waited reaches it
            w.crash(proc)
            return
        w.resumed(proc)

    def on_lease_acked(self, w, proc, sent_ms: int) -> None:
        c = proc.clock  # NL-4: valid until its clock reads its send time + ttl - safety
        w.pauses_lease_ends[proc.index] = c.ends_at(c.local(sent_ms) + w.params.lease_span_ms)

    def on_sent(self, w, proc, rid: int, req, timeout: int) -> bool:
        """A write of an owners/ record leaves a node with a "write" pause armed: the process stops right after
        the validity check that let it write (OR-2), and the write leaves when it resumes."""
        armed = w.pauses_armed
        entry = armed.get(proc.node_id) if armed else None
        if entry is None or w.in_quiet:
            return False
        length_ms, then, aim = entry
        if aim == "in flight":  # the request goes on: its reply reaches a stopped process
            del armed[proc.node_id]
            self.pause(w, proc, length_ms, then, f"with its {req.op} {req.key} in flight")
            return False
        if req.op != "PUT" or not str.startswith(req.key, OWNERS_PREFIX):
            return False
        del armed[proc.node_id]
        length_ms = self.pause(w, proc, length_ms, then, f"between its check and its write of {req.key}")
        trip = w.choose("pause_trip", proc.node_id, w.rngs[self.id].randint, 1, w.options["delay_ms_max"])
        w.later(length_ms, w.fault_step, self.id, "send", proc.index, rid, req, timeout, trip)
        return True

    def send(self, w, index: int, rid: int, req, timeout: int, trip: int) -> None:
        """The held write leaves its resumed process: it reaches the bucket a trip later, its timeout counted from
        now (the process sent it now)."""
        proc = w.procs[index]
        if not proc.alive:
            return  # killed as it woke: the write never left
        if req.cond is not None:
            w.flies(proc, rid, req.key, w.now)  # on its way only now: what a 409 may race (World.racing_write)
        if w.lazy_timeouts:
            w.await_answer(proc, rid, timeout, trip)
        w.later(trip, w.to_bucket, proc, rid, req, None, w.now)


def _yes() -> bool:
    return True


KIND = Pauses()
