"""Restart races (FN-5's read order, issue 39 part 3): a node restarted under its id while another node
reads a record naming its old instance.

FN-5 frees a record naming (A, i) only on a read of nodes/A issued after the read of the record. The
race that rule is about: A's new instance i' writes its first `live` object, and takes the actor back,
between the two reads. The swarm gives an acquisition's two reads a few milliseconds apart, and a
restarted node's first write comes ttl + grace after its start, so without help that never lands
between them. This kind makes it land, with what a supervisor, a client and a network can do:

- at each drawn instant a client asks a node for a few actors, and a while later it crashes that node
  (the supervisor restarts it under its id, after its delay, as for any crash) if a record names it
  (if none does yet, the client asks again, twice at most); and in a seed with the kind on, any
  restart races;
- when the restarted process sends its first `live` write while a record still names its node (an old
  instance: the new one has written nothing yet), the network holds that write back (at most until
  its sender's timeout less a trip) and a client asks another node, the freer, for that actor;
- the held write goes to the bucket when the freer's read of nodes/A leaves (`after` "send": the write
  lands between the freer's record read and its nodes/A read), or once the freer's read of nodes/A was
  applied (`after` "applied": it lands just after that read, whose reply then comes slowly, while a
  client asks A's new instance for the actor: it takes the actor back before the freer reads on).

The correct model reads the record, then nodes/A: with "send" it sees i' live and frees i's record
(i is gone); with "applied" it sees i's object, and decides on it. A model that reads nodes/A first
(broken model `node_read_before_record`) decides, with "applied", on i's object and a record read
after i' took the actor back: it frees a record naming a valid owner (INV-1). Which of the two comes
is drawn per race, from the kind's own stream.

World facts it records (`fault` events): the crash (`restart_race`), the held write (`race_hold`), and
the freer's read of nodes/A applied (`race_read`, detail "after" or "before" the held write landed):
the coverage point "FN-5 read order raced" (checkers/read_order.py) reads them with the applies.
"""

from __future__ import annotations

from model.io import Command
from model.records import NODES_PREFIX, OWNERS_PREFIX, state_line

from . import FaultKind

WORLD = -1
MODES = ("send",) + ("applied",) * 5  # (each race's mode, drawn: the second five times as often)


class RestartRaces(FaultKind):
    id = "restart_races"
    title = "a node restarted under its id while another node reads a record naming it (FN-5's read order)"
    rules = ("FN-5", "OR-3", "NL-5", "NL-7", "INV-1")
    options = {"restart_races": []}  # [at, ...]: a node whose process a record names is crashed then
    scheduled = ("restart_races",)
    at_field = {"restart_races": -1}
    state = {"restart_race_state": dict,  # node -> its race under way: {"stage", "mode", "actor", "freer", ...}
             "idle_actors": dict,  # actor -> until when no client asks for it (the crashed node's, until its restart races)
             "last_lease_ack": dict,  # node -> when its last lease write was acknowledged (a node to ask: its lease valid)
             "lease_valid_until": dict,  # node -> until when its lease is valid by its last acknowledged write (NL-4;
             # -1 once a lease write of its failed since: `on_record_reply`)
             "race_freers": dict,  # node -> the node chosen at its crash to free its records
             "race_shielding": set}  # (node, instance): the restarted processes whose freer is shielded (once each)

    def draw_main(self, ctx) -> None:
        rng, tg, o = ctx.rng, ctx.tg, ctx.o
        on = rng.random() < 0.85 or ctx.force(self.id) == "always"
        count = rng.randint(4, 8) if on else 0
        # the restart's first write (a period and two attempts to acquire, the supervisor's delay, ttl + grace
        # of start check) within the fault phase
        latest = o["fault_ms"] - tg - o["restart_ms_max"] - 3 * ctx.p.period_ms - 2 * ctx.p.attempt_timeout_ms
        o["restart_races"] = sorted(rng.randint(tg, latest) for _ in range(count)) if latest > tg else []
        if ctx.alone or o.get("fence_crowd") or o.get("release_crowd"):
            # (a lone blip's proviso; and a crowd keeps its nodes: a crash there splits the crowd, BD-1..BD-3)
            o["restart_races"] = []

    def schedule(self, w, base: int) -> None:
        for at in filter(lambda x: x is not None, w.options.get("restart_races", ())):
            w.later(base + at, w.fault_step, self.id, "arm")

    def quiet(self, w) -> None:
        for n in sorted(w.restart_race_state):
            self.release(w, n, "quiet")
        w.restart_race_state.clear()

    def arm(self, w, tries: int = 0) -> None:
        """A node is asked for a few actors, then crashed (its supervisor restarts it): its restart will race
        another node's reads of a record naming it (FN-5)."""
        if w.in_quiet or len(w.node_ids) < 2:
            return
        recent = w.now - w.params.period_ms
        nodes = [n for n in w.node_ids if not w.disturbs_a_race(n) and n not in w.restart_race_state
                 and w.last_lease_ack.get(n, -1 << 62) >= recent
                 and (p := w.live_proc(n)) is not None and str.startswith(p.slot.machine, "m")]
        if not nodes:
            if tries < 3:  # no node to ask now (leases lapsed in an outage, races under way): a period later
                w.later(w.params.period_ms, w.fault_step, self.id, "arm", tries + 1)
            return
        rng = w.rngs[self.id]
        holding = [x for x in nodes if x in w.holders.values()]  # a node a record names already, if any
        nodes = holding or nodes
        n = nodes[w.choose("restart_race", "node", rng.randrange, len(nodes)) % len(nodes)]
        free = [a for a in w.actors if a not in w.holders] or list(w.actors)
        first = w.choose("restart_race", "actor", rng.randrange, len(free)) % len(free)
        self.ask(w, n, free, first)
        w.later(self.strike_after(w), w.fault_step, self.id, "strike", n)

    @staticmethod
    def ask(w, n: str, free: list, first: int) -> None:
        """A client asks `n` for up to three actors, each twice (the first may meet a busy record)."""
        for k in range(min(3, len(free))):
            actor = free[(first + k) % len(free)]
            w.ask_new(n, actor)
            w.later(w.params.period_ms // 2, w.ask_new, n, actor)

    @staticmethod
    def strike_after(w) -> int:
        """From the asks to the crash: a period, two attempts and a few trips (its acquisitions done)."""
        p = w.params
        return p.period_ms + 2 * p.attempt_timeout_ms + 4 * w.options["delay_ms_max"]

    def strike(self, w, n: str, tries: int = 0) -> None:
        proc = w.live_proc(n)
        actors = sorted(a for a, m in w.holders.items() if m == n)
        if not w.in_quiet and proc is not None and proc.paused_until > w.now:
            # its process stopped in a pause (pauses.py, issue 47q): the race strikes once it resumed, not a
            # stopped process (whose pause would end in nothing) nor never
            w.later(proc.paused_until - w.now + 1, w.fault_step, self.id, "strike", n, tries)
            return
        if w.in_quiet or proc is None or w.disturbs_a_race(n):
            return
        if not actors:
            # it holds nothing yet (its acquisitions met busy records, or lost writes): asked again, twice at most
            free = [a for a in w.actors if a not in w.holders] or list(w.actors)
            if tries < 2:
                rng = w.rngs[self.id]
                self.ask(w, n, free, w.choose("restart_race", "actor", rng.randrange, len(free)) % len(free))
                w.later(self.strike_after(w), w.fault_step, self.id, "strike", n, tries + 1)
            return
        # the freer-to-be: another node whose lease is valid, past its start check (else any node that runs:
        # its lease may come back); shielded once the restart began (`on_sent`)
        others = [x for x in w.node_ids if x != n and (q := w.live_proc(x)) is not None and not q.draining
                  and q.reading is None and not w.disturbs_a_race(x)]
        freers = [x for x in others if w.lease_valid_until.get(x, -1) > w.now]
        w.fault_event(WORLD, "restart_race", proc.machine, None,
                                  f"{n}/{proc.instance} crashed; its supervisor restarts it under its id")
        # its actors go idle (no client asks for them) until its restart's first write may come: their
        # records still name it then (a client's silence, nothing more)
        until = w.now + w.options["restart_ms_max"] + w.tg + w.tg // 2
        for actor in actors:
            w.idle_actors[actor] = until
        w.crash_node(n)
        freers = freers or others
        if freers:
            freer = freers[w.choose("restart_race", f"freer {n}", w.rngs[self.id].randrange, len(freers)) % len(freers)]
            w.race_freers[n] = freer
        if w.operator is not None:
            # the operator fences the crashed node (`cluster fence`, FN-7: the ADR's remedy for a node that
            # died): peers' views show it fenced, so a request for its actors is acquired where it lands
            # (OR-10) rather than forwarded to it, and the record is read for freeing (FN-5)
            w.later(2 * w.options["delay_ms_max"], w.fault_step, self.id, "fence", n)

    def fence(self, w, n: str) -> None:
        """The operator's `cluster fence` of the crashed node (the race's own step: its calm does not stop it)."""
        if not w.in_quiet and w.operator is not None and w.operator.alive:
            w.record(w.operator.index, "operator", ("cluster_fence", n))
            w.deliver(w.operator, Command("cluster_fence", (n,)))

    # --- the race: the restarted process's first live write, held; the freer's reads ---------------------

    @staticmethod
    def on_sent(w, proc, rid, req, timeout) -> bool:
        """A request leaves `proc`: the first `live` write of a restarted process starts a race (held: True);
        the freer's read of nodes/A lets it go ("send")."""
        if req.op == "GET":
            if w.race_freers and proc.reading is not None and req.key == NODES_PREFIX + proc.node_id \
                    and w.race_freers.get(proc.node_id) is not None:
                KIND.shield_freer(w, proc.node_id, proc.instance)
            if w.restart_race_state and str.startswith(req.key, NODES_PREFIX):
                n = req.key[len(NODES_PREFIX):]
                race = w.restart_race_state.get(n)
                # the freer's read of nodes/A after its read of the record (not its listing's, before it)
                if (race is not None and race["stage"] == "held" and race["record_read"]
                        and proc.node_id == race["freer"] and race["read_req"] is None):
                    race["read_req"] = req
                    if race["mode"] == "send":
                        race["stage"] = "released"
                        w.fault_event(WORLD, "race_read", f"GET {req.key}", None, f"{proc.node_id}: after")
                        KIND.release(w, n, "the freer's read of nodes/ left")
            return False
        if req.op != "PUT" or proc.reading is None or req.key != NODES_PREFIX + proc.node_id:
            return False
        if not str.startswith(state_line(req.body), "live "):
            return False
        return KIND.begin(w, proc, rid, req, timeout)

    def shield_freer(self, w, n: str, instance: str) -> None:
        """The restarted process's start check began (its first read of nodes/<n>): its first write comes ttl +
        grace later. The freer is shielded (no random network fault touches its requests; the scheduled faults
        go on: a calm would hold every fault of the cluster back) from two lease periods before until two after,
        so that its lease is valid then."""
        if (n, instance) in w.race_shielding:
            return
        w.race_shielding.add((n, instance))
        p = w.params
        start = w.now + w.tg - 2 * p.period_ms
        w.later(max(0, start - w.now), w.fault_step, self.id, "shield", w.race_freers[n], w.now + w.tg + 2 * p.period_ms)

    def shield(self, w, node: str, until: int) -> None:
        if not w.in_quiet:
            w.extend_shield(node, until)

    def begin(self, w, proc, rid, req, timeout) -> bool:
        n = proc.node_id
        chosen = w.race_freers.pop(n, None)
        if w.in_quiet or n in w.restart_race_state and w.restart_race_state[n]["held"] is not None or (w.disturbs_a_race(n) and chosen is None):
            return False
        actors = sorted(a for a, m in w.holders.items() if m == n)
        if not actors or _live_in_bucket(w, n):
            return False  # nothing names it; or its old object is live still: a freer's view forwards to it
        # a freer whose lease is valid now, by its last acknowledged write (NL-4, on its clock; shielded, it keeps
        # renewing while the race runs), its process past its start check (one restarted since has no lease, UP-1)
        freers = [x for x in w.node_ids if x != n and (q := w.live_proc(x)) is not None and not q.draining
                  and q.reading is None and (x == chosen or not w.disturbs_a_race(x))
                  and w.lease_valid_until.get(x, -1) > w.now]
        # an outage under way on either machine (it began before the race: the calm stops new ones only)
        # would lose the race's replies: no race then
        if w.cut and w.is_cut(proc.machine):
            return False
        freers = [x for x in freers if not (w.cut and w.is_cut(w.live_proc(x).machine))]
        trip = w.options["delay_ms_max"]
        hold = timeout - trip - 5
        if not freers or hold < 4 * trip:
            return False  # nobody to free it, or no time to hold its write
        rng = w.rngs[self.id]
        actor = actors[w.choose("race_actor", n, rng.randrange, len(actors)) % len(actors)]
        freer = chosen if chosen in freers else freers[w.choose("race_freer", n, rng.randrange, len(freers)) % len(freers)]
        mode = MODES[w.choose("race_mode", n, rng.randrange, len(MODES)) % len(MODES)]
        race = w.restart_race_state[n] = {"stage": "held", "mode": mode, "actor": actor, "freer": freer, "instance": proc.instance,
                           "held": (proc, rid, req, w.now), "slowed": False, "record_read": False, "read_req": None}
        if w.lazy_timeouts:
            w.await_answer(proc, rid, timeout, hold)
        w.fault_event(WORLD, "race_hold", f"PUT {req.key}", hold,
                                  f"{n}/{proc.instance}'s first live write; {freer} asked for {actor} ({mode})")
        # nothing else disturbs the two while the race plays out: the hold, the freer's slow reply, the take-back
        calm = race["until"] = w.now + 3 * w.params.attempt_timeout_ms + 4 * trip
        w.keep_calm(n, calm)
        w.keep_calm(freer, calm)
        w.later(0, w.ask_new, freer, actor)
        w.later(hold, w.fault_step, self.id, "release", n, "its hold ran out")
        return True

    @staticmethod
    def on_answered(w, proc, req, reply) -> None:
        """The bucket answered: the freer's read of the record (then its read of nodes/A is the race's), or its
        read of nodes/A, applied ("applied": the held write goes now)."""
        if not w.restart_race_state or req.op != "GET":
            return
        if str.startswith(req.key, OWNERS_PREFIX):
            actor = req.key[len(OWNERS_PREFIX):]
            for n in sorted(w.restart_race_state):
                race = w.restart_race_state[n]
                if race["stage"] == "held" and race["actor"] == actor and proc.node_id == race["freer"]:
                    race["record_read"] = True
            return
        if not str.startswith(req.key, NODES_PREFIX):
            return
        n = req.key[len(NODES_PREFIX):]
        race = w.restart_race_state.get(n)
        if race is None or race["stage"] != "held" or req is not race["read_req"]:
            return
        w.fault_event(WORLD, "race_read", f"GET {req.key}", None, f"{proc.node_id}: before")
        if race["mode"] == "applied":
            race["stage"] = "released"
            w.later(0, w.fault_step, KIND.id, "release", n, "the freer's read of nodes/ applied")

    @staticmethod
    def reply_early(w, proc, req, f):
        """The freer's read of nodes/A, applied before the held write ("applied"): its reply comes slowly,
        within the freer's attempt timeout (a trip and a little to spare)."""
        if not w.restart_race_state or req.op != "GET" or not str.startswith(req.key, NODES_PREFIX):
            return None
        race = w.restart_race_state.get(req.key[len(NODES_PREFIX):])
        if (race is None or race["mode"] != "applied" or race["slowed"] or req is not race["read_req"]
                or race["stage"] not in ("held", "released")):
            return None
        race["slowed"] = True
        return "slow", max(1, w.params.attempt_timeout_ms - w.options["delay_ms_max"] - 5)

    @staticmethod
    def on_lease_acked(w, proc, sent_ms: int) -> None:
        """The restarted process's first live write acknowledged: a client asks it for the actor (it takes it
        back while the freer's slow reply is on its way)."""
        w.last_lease_ack[proc.node_id] = w.now
        c = proc.clock
        w.lease_valid_until[proc.node_id] = c.true_at(c.local(sent_ms) + w.params.lease_span_ms)
        race = w.restart_race_state.get(proc.node_id)
        if race is None or race["stage"] != "released" or race.get("taken") or proc.instance != race["instance"]:
            return
        race["taken"] = True
        step = max(1, w.params.attempt_timeout_ms // 3)
        for k in range(6):  # up to past the freer's slow reply: a robbed instance still serves (INV-1)
            w.later(k * step, w.ask_new, proc.node_id, race["actor"])

    @staticmethod
    def on_record_reply(w, proc, req, status, serial, named) -> None:
        """A lease write answered with anything but success: its node is no node to ask until its next
        acknowledged write (a failed lease write may end the lease, FN-2, NL-11)."""
        if req.op == "PUT" and status != "ok" and req.key == NODES_PREFIX + proc.node_id:
            w.lease_valid_until[proc.node_id] = -1

    def release(self, w, n: str, why: str) -> None:
        """The held write goes to the bucket now (once)."""
        race = w.restart_race_state.get(n)
        if race is None or race.get("held") is None:
            return
        proc, rid, req, sent = race["held"]
        race["held"] = None
        if race["stage"] == "held":
            race["stage"] = "done"  # the hold ran out: no race
        w.to_bucket(proc, rid, req, None, sent)


def _live_in_bucket(w, n: str) -> bool:
    """Whether the last write of nodes/<n> that took effect was a `live` one (the world's own record of it)."""
    events = w.history.events
    key = NODES_PREFIX + n
    for i in reversed(w.history.of_kind("apply")):
        f = events[i].fields
        if f.key == key:
            return str.startswith(f.state, "live ")
    return False


KIND = RestartRaces()
