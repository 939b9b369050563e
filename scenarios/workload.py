"""The workload: clients asking nodes for actors (and retrying), actors hibernating and moving, the
final rounds that ask for every actor before a run ends (INV-4), and the events a served request
runs (they take time, CS-1).

A part of the world core (core.py): drawn from streams of its own (streams.py: "requests",
"hibernations", "moves", "retries", "events", "final_rounds"), or read from a plan's workload
(scenarios/plan.py). No protocol here: a client asks, the model decides.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from model.io import Command

if TYPE_CHECKING:
    from .processes import Proc

WORLD = -1  # the proc index of events the world itself records
FINAL_RETRY_MS = 500  # a final-round request that failed is tried again this much later
IDLE = "idle"  # a plan's ask step the recorded run skipped, its actor kept idle (`keep_idle`)
STRAGGLER_MS_MAX = 30_000  # a straggler event ends by then if no `released` write ends it (CS-1)


class Workload:
    """The world core's workload (a part of World, core.py)."""

    def schedule_workload(self, steps: list) -> None:
        """A plan's workload: [t, "ask", node, actor], [t, "hibernate", actor], [t, "move", actor, target]
        ([t, "ask", node, actor, "idle"]: a step the recorded run skipped, asking nothing).
        Each kind runs as a chain, as the drawn workload does (each step schedules the next), so that
        steps at one instant keep their order among the other events."""
        for what in ("ask", "hibernate", "move"):
            chain = [step for step in steps if step[1] == what]
            if chain:
                self.later(chain[0][0], self._planned_step, chain, 0)

    def _planned_step(self, chain: list, i: int) -> None:
        _t, what, *args = chain[i]
        if not self.workload_step(what, args):
            return
        if i + 1 < len(chain):
            self.later(chain[i + 1][0] - self.now, self._planned_step, chain, i + 1)

    def workload_step(self, what: str, args) -> bool:
        """One step of a planned workload (a plan's, or the explorer's); False: skipped, for
        hibernations and moves stop with the faults, as drawn ones do."""
        if what == "ask":
            if len(args) > 2 and args[2] == IDLE:
                return True  # a step the recorded run skipped (its actor idle): the chain's time goes on
            self._requests += 1
            self._ask(args[0], args[1], self._requests)
        elif self.in_quiet:
            return False
        elif what == "hibernate":
            self._broadcast(Command("hibernate", (args[0],)))
        elif what == "move":
            self.move_to(args[0], args[1])
        return True

    def _forwarded(self, node_id, command) -> None:
        proc = self.live_proc(node_id)
        if proc is not None:
            if self.in_quiet and command.name == "request":
                self.record(proc.index, "arrived", command.args[:2])  # CONV-1 judges its answer
                proc.asked[command.args[1]] = command.args[0]  # its answer is recorded (`answer`)
            self.deliver(proc, command)

    def _client_request(self) -> None:
        rng = self.rngs["requests"]
        if self.options["hot_share"] and rng.random() < self.options["hot_share"]:
            actor = self.actors[0]
        else:
            actor = self.actors[rng.below(len(self.actors))]
        node_id = self.request_ids[rng.below(len(self.request_ids))]
        if self.idle_actors and self.idle_actors.get(actor, -1) > self.now:
            # an idle actor: no client asks for it now (a restart race waits on its record, restart_races.py); the
            # plan notes the step all the same, asking nothing, so that its replay schedules the next ask from
            # this instant, as this run does: two steps at one instant keep their order (before, 2 of swarm
            # seeds 0..149 replayed from their plans as other runs: a client's retry and a new ask swapped)
            if self.choices is not None:
                self.choices.note(self.now, "ask", node_id, actor, IDLE)
        else:
            self._requests += 1  # (numbered once asked: a plan replays the asks it noted, no others)
            if self.choices is not None:
                self.choices.note(self.now, "ask", node_id, actor)
            self._ask(node_id, actor, self._requests)
        self.later(rng.randint(1, 2 * self.options["request_gap_ms"]), self._client_request)

    def _ask(self, node_id: str, actor: str, req: int) -> None:
        """A client request for `actor` reaches `node_id` (lost if no process serves that id)."""
        if self.now >= self.requests_until:
            return
        proc = self.live_proc(node_id)
        if proc is not None:
            self.record(proc.index, "client", (actor, node_id, req))
            if self.in_quiet:
                proc.asked[req] = actor  # its answer is recorded (`answer`: CONV-1)
            self.deliver(proc, Command("request", (actor, req, 0)))

    def ask_new(self, node_id: str, actor: str) -> None:
        self._requests += 1
        self._ask(node_id, actor, self._requests)

    def keep_idle(self, actor: str, until: int) -> None:
        """No client of the workload asks for `actor` until then (a kind's own asks still reach it)."""
        self.idle_actors[actor] = max(self.idle_actors.get(actor, -1), until)

    def ask_proc(self, proc, actor: str) -> None:
        """A client request for `actor` reaches this process: clients reach machines, and a twin runs on a machine of
        its own (scenarios/faults/twin_entries.py), where `ask_new` finds the node's first live process."""
        if self.now >= self.requests_until or not proc.alive:
            return
        self._requests += 1
        req = self._requests
        self.record(proc.index, "client", (actor, proc.node_id, req))
        if self.in_quiet:
            proc.asked[req] = actor  # its answer is recorded (`answer`: CONV-1)
        self.deliver(proc, Command("request", (actor, req, 0)))

    def _client_retry(self, proc, fields) -> None:
        """The client saw its request fail; it may try the same node again soon. A final-round
        request is always tried again, at a node that runs, up to three times."""
        actor, req = fields[0], fields[1]
        if req in self._final_reqs:
            tries = self._retries.get(req, 0)
            live = [n for n in self.node_ids if self.live_proc(n) is not None]
            if tries < 3 and live:
                self._retries[req] = tries + 1
                node_id = self.choose("final_node", actor, self.rngs["final_rounds"].one_of, live)
                self.later(FINAL_RETRY_MS, self._ask, node_id if node_id in live else live[0], actor, req)
            return
        if not self.options["p_client_retry"]:
            return
        tries = self._retries.get(req, 0)
        if tries < 2:
            ms = self.choose("retry", f"{proc.node_id} {actor}", self._retry_after)
            if ms is not None:
                self._retries[req] = tries + 1
                self.later(ms, self._ask, proc.node_id, actor, req)

    def _retry_after(self) -> int | None:
        """Whether the client retries, after how long (None: it does not)."""
        rng = self.rngs["retries"]
        return rng.randint(50, 1_000) if rng.random() < self.options["p_client_retry"] else None

    def _broadcast(self, command) -> None:
        """Hibernations and moves reach every process but those a race plays out on, and those of a
        node draining with busy actors."""
        busy = self._busy
        for slot in self.slots:
            if (slot.proc is not None and slot.proc.alive and not (self._calm and self.calm(slot.node_id))
                    and not (busy and busy.get(slot.node_id, -1) >= self.now)):
                self.deliver(slot.proc, command)

    def _hibernate(self) -> None:
        """An actor goes idle: whoever holds it hibernates it."""
        if self.in_quiet:
            return
        rng = self.rngs["hibernations"]
        actor = self.actors[rng.below(len(self.actors))]
        if self.choices is not None:
            self.choices.note(self.now, "hibernate", actor)
        self._broadcast(Command("hibernate", (actor,)))
        self.later(rng.randint(1, 2 * self.options["hibernate_gap_ms"]), self._hibernate)

    def _move(self) -> None:
        """An actor is moved to another node: whoever holds it hands it over."""
        if self.in_quiet:
            return
        rng = self.rngs["moves"]
        actor = self.actors[rng.below(len(self.actors))]
        # a move hands the actor over: to a node other than the one its record names
        others = [n for n in self.node_ids if n != self.holders.get(actor)] or self.node_ids
        target = others[rng.below(len(others))]
        if self.choices is not None:
            self.choices.note(self.now, "move", actor, target)
        self.move_to(actor, target)
        self.later(rng.randint(1, 2 * self.options["move_gap_ms"]), self._move)

    def move_to(self, actor: str, target: str) -> None:
        self._requests += 1
        self.record(WORLD, "moved", (actor, target))
        self._broadcast(Command("move", (actor, target, self._requests)))

    def _event_begins(self, proc: Proc, fields) -> None:
        """A served request's event runs a while; the world ends it (the model cuts it if its
        lease is lost first). A straggler, served just before a clean stop, runs until the
        process sends its `released` write (or a bound), the worst instant to end."""
        actor, _gen, req = fields
        ms = self.event_ms(proc, actor)
        if ms is None:
            proc.stragglers.append((actor, req))
            ms = STRAGGLER_MS_MAX
        proc.events[(actor, req)] = self.now + ms
        self.later(ms, self._event_end, proc, actor, req)

    def event_ms(self, proc, actor: str) -> int | None:
        """How long the event of a request `proc` just served runs (None: a straggler, which runs until
        its process sends its `released` write): a fault kind may claim it (a clean stop waiting for a
        straggler, stops.py), else it is drawn."""
        for hook in self.event_hooks:
            ms = hook(self, proc)
            if ms is not NotImplemented:
                return ms
        if not self.options.get("event_ms_max"):
            return 0
        ch = self.choices
        return self._event_draw() if ch is None else ch.pick("event", proc.machine, self._event_draw)

    def _event_draw(self) -> int:
        o = self.options
        rng = self.rngs["events"]
        if o["p_long_event"] and rng.random() < o["p_long_event"]:
            return rng.randint(*o["long_event_ms"])
        return rng.randint(0, o["event_ms_max"])

    def _event_end(self, proc: Proc, actor: str, req: int) -> None:
        if proc.events.pop((actor, req), None) is not None and proc.alive:
            self.deliver(proc, Command("event_end", (actor, req)))

    def _released_sent(self, proc: Proc) -> None:
        """The process sent its `released` write: its stragglers end right after."""
        for actor, req in proc.stragglers:
            self.fault_event(proc.index, "straggler", f"{actor} request {req}", None,
                             "the event ends just after `released` was sent")
            proc.events[(actor, req)] = self.now + 1
            self.later(1, self._event_end, proc, actor, req)
        proc.stragglers.clear()

    def _final_round(self) -> None:
        """Every actor is requested once more, at a node that runs, before the end (INV-4)."""
        live = [n for n in self.node_ids if self.live_proc(n) is not None]
        if not self._final_actors:
            # most actors are asked for once more; the rest show whether a record stays held
            # by a live process that no longer serves it (INV-4)
            chosen = self.choose("final_actors", "", self._most_actors)
            self._final_actors = [a for a in self.actors if chosen is None or a in chosen]
        self.record(WORLD, "final_round", (self._final_actors if live else [],))
        for actor in self._final_actors:
            if live:
                self._requests += 1
                self._final_reqs.add(self._requests)
                node_id = self.choose("final_node", actor, self.rngs["final_rounds"].one_of, live)
                self._ask(node_id if node_id in live else live[0], actor, self._requests)

    def _most_actors(self) -> list[str]:
        rng = self.rngs["final_rounds"]
        return [a for a in self.actors if rng.random() < 0.8]
