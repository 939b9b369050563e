"""Clean stops (CS-1, CS-2): a node told to stop, started again after a while (a deploy).

Most stops come with a straggler (CS-1): the node's next event outlasts the stop's bounded wait
and the stop follows it at once, so the event is still running when the node makes its lease
locally invalid and writes `released`; the world ends it just after that write leaves (the worst
instant). Some stops are silenced (CS-2's margin): as their `released` write leaves, the node's own
lease writes are lost for 3 A + 2 s, past the A + 1 s a stop retries them for.
"""

from __future__ import annotations

from model.records import NODES_PREFIX

from . import FaultKind

SILENCE_MS = 2_000  # a silenced stop's lease writes are lost for 3 A + this
HOLD_WAITS = 12  # a silenced stop waits up to this many sixths of a lease span for the node to hold its lease
SILENCED = 0.6  # the share of stops silenced (issue 45 part 4: 0.3 before; stop_retries_forever is caught by them)


class Stops(FaultKind):
    id = "stops"
    title = "a node stops cleanly and is started again later; most with a straggling event, some silenced"
    rules = ("CS-1", "CS-2", "NL-5")
    # [[node, at, restarted after (0: at once)]]; the indices of the stops with a straggler, of those silenced
    options = {"stops": [], "stragglers": [], "stop_silences": []}
    switches = ("stops",)  # (the index lists only say which stops straggle or are silenced)
    scheduled = ("stops",)
    at_field = {"stops": 1}
    node_field = {"stops": 0}
    state = {"silenced_releases": dict, "stop_stragglers": dict}


    def draw_main(self, ctx) -> None:
        rng, S = ctx.rng, ctx.S
        # stops and drains are switched on together (drains.py reads the switch)
        ctx.on["stops"] = rng.random() < 0.5 or ctx.force(self.id) == "always"
        nodes = ctx.nodes()
        ctx.o["stops"] = [[ctx.choice(nodes), rng.randint(0, ctx.o["fault_ms"]),
                           ctx.choice((0, S(1_000), S(10_000), S(30_000)))]
                          for _ in range(rng.randint(1, 2) if ctx.on["stops"] else 0)]

    def draw_minimum(self, ctx) -> None:
        """The `stops` scenario promises a stop in every seed."""
        if ctx.force(self.id) == "always" and not ctx.o["stops"]:
            ctx.o["stops"] = [[ctx.nodes()[0], ctx.o["fault_ms"] // 2, ctx.S(1_000)]]

    def draw_stragglers(self, ctx) -> None:
        share = 0.9 if ctx.force(self.id) == "always" else 0.6
        ctx.o["stragglers"] = [k for k in range(len(ctx.o["stops"])) if ctx.rng.random() < share]

    def draw_silences(self, ctx) -> None:
        ctx.o["stop_silences"] = [k for k in range(len(ctx.o["stops"])) if ctx.rng.random() < SILENCED]

    def schedule(self, w, base: int) -> None:
        o = w.options
        stragglers = o.get("stragglers", ())
        for k, stop in enumerate(o.get("stops", ())):
            if not stop:
                continue
            node_id, at, restart_after_ms = stop
            if k in o.get("stop_silences", ()):
                # CS-2's margin: the stop's first `released` write and its retries are lost for a while
                w.later(base + at, w.fault_step, self.id, "silence_next_release", node_id)
            if k in stragglers:
                # CS-1: the stop comes right after the node begins an event that outlasts its wait
                w.later(base + at, w.fault_step, self.id, "arm_straggler", node_id, restart_after_ms)
            elif k in o.get("stop_silences", ()):
                # CS-2: a silenced stop comes once the node holds its lease (a stop in its start check writes no
                # `released`, and nothing is silenced)
                w.later(base + at, w.fault_step, self.id, "stop_holding", node_id, restart_after_ms, HOLD_WAITS)
            else:
                w.later(base + at, w.stop_node, node_id, restart_after_ms)

    def quiet(self, w) -> None:
        w.silenced_releases.clear()
        w.stop_stragglers.clear()  # a straggler armed for a stop the quiet phase skips is not drawn

    # --- CS-2: a silenced stop ------------------------------------------------------------------

    def silence_next_release(self, w, node_id: str) -> None:
        """The node's next `released` write (its clean stop's, CS-1) begins an outage of its machine's
        own lease writes, 3 A + 2 s long: the write and its retries are lost past A + 1 s, the span a
        clean stop retries them for (CS-2); then it exits, its lease left live for peers to fence."""
        if not w.in_quiet:
            w.silenced_releases[node_id] = True

    @staticmethod
    def on_released_sent(w, proc) -> None:
        if w.silenced_releases and w.silenced_releases.pop(proc.node_id, False):
            w.cut_off(proc.machine, 3 * w.params.attempt_timeout_ms + SILENCE_MS, "lease")

    def stop_holding(self, w, node_id: str, restart_after_ms: int, waits: int) -> None:
        """A silenced stop (CS-2) told once the node's live process holds its lease: one still in its start check
        (restarted a moment ago) writes no `released`. Until then, up to `waits` times, the node is asked for the
        actors it holds (or the hot one) again a sixth of a lease span later (issue 45 part 4:
        stop_retries_forever is caught only by a stop whose `released` write is silenced)."""
        if w.in_quiet:
            return
        if waits > 0 and not self.leased(w, node_id):
            self.ask_holder(w, node_id)
            w.later(w.tg // 6, w.fault_step, self.id, "stop_holding", node_id, restart_after_ms, waits - 1)
            return
        w.stop_node(node_id, restart_after_ms)

    @staticmethod
    def leased(w, node_id: str) -> bool:
        """The node's live process holds its node lease, as the bucket applied it: nodes/<id> live under its
        instance."""
        proc = w.live_proc(node_id)
        if proc is None:
            return False
        key = NODES_PREFIX + node_id
        for e in reversed(w.history.events):
            if e.kind == "apply" and e.fields.key == key:
                return str.startswith(e.fields.state, f"live {proc.instance} ")
        return False

    # --- CS-1: a straggler ----------------------------------------------------------------------

    def arm_straggler(self, w, node_id: str, restart_after_ms: int, give_up: int | None = None) -> None:
        """A clean stop with a straggler (CS-1): the node's next event outlasts the stop's bounded
        wait, and the stop follows it at once; clients ask the node until it serves one (or, past
        2 (ttl + grace), the stop comes anyway)."""
        if give_up is None:
            w.stop_stragglers[node_id] = (restart_after_ms, w.now + 2 * w.tg)
        elif node_id not in w.stop_stragglers:
            return  # it served: the stop is on its way
        elif w.now >= give_up or w.in_quiet:
            del w.stop_stragglers[node_id]
            w.stop_node(node_id, restart_after_ms)
            return
        give_up = w.stop_stragglers[node_id][1]
        self.ask_holder(w, node_id)
        w.later(w.tg // 10, w.fault_step, self.id, "arm_straggler", node_id, restart_after_ms, give_up)

    @staticmethod
    def on_event_begins(w, proc):
        """The event `proc` just began: a straggler (None) if a stop waits for one there, else NotMine."""
        # (never in the quiet phase, where the stop it would bring is skipped: World.stop_node; the event would
        # run STRAGGLER_MS_MAX, 30 s, with no stop to end it: seed 5708 of the 20,000, an event that began as a
        # pause ended at the quiet phase's start kept its actor releasing into the last span, CONV-1)
        if w.stop_stragglers and not w.in_quiet and proc.node_id in w.stop_stragglers \
                and str.startswith(proc.slot.machine, "m"):
            restart_after_ms, _ = w.stop_stragglers.pop(proc.node_id)
            w.later(w.choose("later", "straggler " + proc.node_id, w.rngs["stops"].randint, 1, w.tg // 30),
                    w.stop_node, proc.node_id, restart_after_ms)
            return None
        return NotImplemented

    def ask_holder(self, w, node_id: str) -> None:
        """Requests for the actors whose records name `node_id` (as the bucket applied them), or
        for the hot actor if none does."""
        for actor in [a for a in w.actors if w.holders.get(a) == node_id][:2] or w.actors[:1]:
            w.ask_new(node_id, actor)


KIND = Stops()
