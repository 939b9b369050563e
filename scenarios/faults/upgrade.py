"""An upgrade from per-actor leases (section 6): old binaries (model/old_lease.py) serve first and stop
at old_ms; new nodes start at new_at, after a gap the procedure says must be long enough.

What can go wrong around the switch, each drawn: an old node still running after the switch (a
straggler), its heartbeat stalled while its renewals go on (a stalled listing); an old binary
started again after the switch (it must meet the new nodes' markers, UP-3, UP-4); a retired node
whose clock was far ahead, so its last heartbeats are dated in the future (UP-2); the old garbage
collection deleting released leases of idle actors at the switch; `cluster forget` (FN-8) after it,
then a fence (F-6's remedy); and a guard storm (guard_storms.py).

The races around the switch, drawn last (`draw_races`, swarm.DRAW_ORDER's "upgrade.races", so that
every other option of a seed stays as it was): the straggler's stalled heartbeat beating again while
the new nodes' guards run (UP-2); the old garbage collection deleting a released old lease between
a new node's read of it and its marker write, whose If-Match then meets no object (UP-3); a twin
under a new node's id and an old binary started again, during the switch (UP-1, UP-2, UP-4); and,
drawn here for kinds of their own, lost, late and 409 marker writes (marker_writes.py) and lost or
failed seeding reads (seed_reads.py).
"""

from __future__ import annotations

from model.io import GET, OK, Command
from model.old_lease import OLD_HEARTBEAT_MS, OLD_MODEL, gc_collectable
from model.records import LEASES_PREFIX, OldLease, decode_lease

from ..processes import Slot
from . import FaultKind


class Upgrade(FaultKind):
    id = "upgrade"
    title = "old per-actor-lease binaries serve first, then stop; new nodes start after a gap (section 6)"
    rules = ("UP-1", "UP-2", "UP-3", "UP-4", "FN-8", "INV-2")
    options = {"upgrade": None}
    flags = {"upgrade": None}
    # the races drawn last, each an entry of the upgrade's options the shrinker may remove alone
    races = ("beat_resume", "gc_race", "switch_twin", "switch_restart", "late_old")

    def draw_main(self, ctx) -> None:
        o = ctx.o
        forced = ctx.force(self.id) == "focused"
        drawn = forced or (ctx.preset.mix and ctx.rng.random() < 0.15)
        o["upgrade"] = draw_upgrade(ctx, o["nodes"], forced) if drawn else None
        if o["upgrade"]:
            o["blip_alone"] = False  # old binaries around a blip are faults of their own (INV-9's proviso)

    def draw_races(self, ctx) -> None:
        """The races around the switch (drawn after every other stage: no other option moves)."""
        up = ctx.o["upgrade"]
        if up:
            up.update(draw_races(ctx, up, ctx.o["nodes"], ctx.force(self.id) == "focused"))

    def atoms(self, o: dict) -> list:
        up = o.get("upgrade")
        return super().atoms(o) + [("upgrade", name) for name in self.races if up and up.get(name)]

    def remove(self, o: dict, atom) -> None:
        """The whole upgrade, or one of its races (the upgrade stays, unless removed with it)."""
        if atom[1] is None:
            super().remove(o, atom)
        elif o.get("upgrade"):
            o["upgrade"][atom[1]] = None

    def draw_clock(self, ctx) -> None:
        up = ctx.o["upgrade"]
        if up and up["future_ms"]:
            # a retired node (machine omf) whose clock was far ahead: its last heartbeats are
            # dated in the future (UP-2); it serves nothing and is gone before the switch
            ctx.o["clocks"]["omf"] = [ctx.o["clocks"]["m0"][0] + up["future_ms"], 0]

    def base_ms(self, o: dict) -> int:
        """The instant the new nodes start: every other fault's times count from it."""
        up = o.get("upgrade")
        return up["new_at"] if up else 0

    def schedule(self, w, base: int) -> None:
        """Old nodes (model/old_lease.py) serve first and stop at old_ms; new ones start at new_at."""
        up = w.options.get("upgrade")
        if not up:
            return
        tg = w.tg
        n = len(w.node_ids)
        machines = old_machines(n)
        w.old_slots = []
        for i in range(n):
            slot = Slot(w.node_ids[i] if up["same_ids"] else f"o{i}", machines[i])
            slot.wanted = False  # no supervisor restarts an old binary here
            w.slots.append(slot)
            w.old_slots.append(slot)
            w.start_process(slot, OLD_MODEL.step)
            if slot.node_id not in w.request_ids:
                w.request_ids.append(slot.node_id)
            stop_at = up["old_ms"] + (up["straggle_ms"] if up["straggler"] == i else 0)
            if up["straggler"] == i and up["stall"]:
                w.later(up["old_ms"] - tg // 3, w.fault_step, self.id, "old_command", slot, Command("stall_heartbeats"))
            if up["old_stop"][i] == "clean":
                w.later(stop_at, w.fault_step, self.id, "old_command", slot, Command("stop"))
            else:
                w.later(stop_at, w.fault_step, self.id, "old_crash", slot)
        if up["future_ms"]:
            slot = Slot("retired", "omf")
            slot.wanted = False
            w.slots.append(slot)
            w.old_slots.append(slot)
            w.start_process(slot, OLD_MODEL.step)
            w.later(min(2 * tg // 3, up["old_ms"]), w.fault_step, self.id, "old_crash", slot)
        if up["old_restart"]:
            i, after = up["old_restart"]
            w.later(up["new_at"] + after, w.fault_step, self.id, "old_restart", w.old_slots[i])
        w.later(up["new_at"], w.fault_step, self.id, "old_gc", up["p_gc"])
        if up.get("beat_resume") is not None and up["straggler"] is not None:
            # the straggler's stalled listing recovers: its heartbeat beats again while the guards run (UP-2)
            w.later(up["new_at"] + up["beat_resume"], w.fault_step, self.id, "old_command",
                    w.old_slots[up["straggler"]], Command("resume_heartbeats"))
        if up.get("switch_twin"):
            i, after, life_ms = up["switch_twin"]
            w.later(up["new_at"] + after, w.start_twin, w.node_ids[i], SWITCH_TWIN, life_ms)
        if up.get("switch_restart"):
            i, after = up["switch_restart"]
            w.later(up["new_at"] + after, w.fault_step, self.id, "switch_restart", w.old_slots[i])
        if up.get("late_old"):
            i, after = up["late_old"]
            w.later(up["new_at"] + after, w.fault_step, self.id, "late_old", i)
        for node_id, after, then_fence in filter(None, up.get("forgets", ())):
            # FN-8, then F-6's remedy: a fence of the forgotten id (FN-7) a lease period later
            w.later(up["new_at"] + after, w.operator_command, Command("cluster_forget", (node_id,)))
            if then_fence:
                w.later(up["new_at"] + after + tg // 3, w.operator_command, Command("cluster_fence", (node_id,)))

    def old_command(self, w, slot, command) -> None:
        if slot.proc is not None and slot.proc.alive:
            w.deliver(slot.proc, command)

    def old_crash(self, w, slot) -> None:
        if slot.proc is not None and slot.proc.alive:
            w.crash(slot.proc)

    def old_restart(self, w, slot) -> None:
        """An old binary started again after the switch (it must find its id taken, or be refused):
        once a new node runs, so that it meets the new nodes' markers (UP-3, UP-4)."""
        if not any(kind == "guard_passed" for _, _, kind, _ in w.history.events):
            if not w.in_quiet:
                w.later(w.tg // 3, w.fault_step, self.id, "old_restart", slot)
            return
        if slot.proc is None or not slot.proc.alive:
            w.start_process(slot, OLD_MODEL.step)
            w.later(4 * w.tg // 3, w.fault_step, self.id, "old_command", slot, Command("stop"))

    def late_old(self, w, i: int) -> None:
        """An old binary started under new node i's id on old machine i once that id's format-3 object landed
        (UP-4): a new node uses the id, so the binary's start check must report it taken and exit; it is
        stopped a while later if it does not."""
        key = "nodes/" + w.node_ids[i]
        if not any(kind == "apply" and f.key == key and str.startswith(f.state, "live ")
                   for _, _, kind, f in w.history.events):
            if not w.in_quiet:
                w.later(w.tg // 3, w.fault_step, self.id, "late_old", i)
            return
        slot = Slot(w.node_ids[i], old_machines(len(w.node_ids))[i])
        slot.wanted = False  # no supervisor restarts it
        w.slots.append(slot)
        w.start_process(slot, OLD_MODEL.step)
        w.later(4 * w.tg // 3, w.fault_step, self.id, "old_command", slot, Command("stop"))

    def switch_restart(self, w, slot) -> None:
        """An old binary started again during the switch, while the new nodes' start guards run (no
        waiting for a guard to pass, as `old_restart` does): its heartbeat must hold every guard that
        has not passed (UP-2), its start check meet a new node's id (UP-4); it stops a while later."""
        if not w.in_quiet and (slot.proc is None or not slot.proc.alive):
            w.start_process(slot, OLD_MODEL.step)
            w.later(4 * w.tg // 3, w.fault_step, self.id, "old_command", slot, Command("stop"))

    def on_answered(self, w, proc, req, reply) -> None:
        """The old garbage collection races a new node's first acquisition (UP-3): the bucket answered
        a new node's read of a released old lease; the collection, running now, deletes it if it may
        (`gc_collectable`), before the node's marker write (its If-Match then meets no object). A
        decision of the world's own, noted by a plan (`gc`)."""
        if req.op != GET or reply.status != OK or not str.startswith(req.key, LEASES_PREFIX) or proc.machine[0] == "o":
            return
        p = (w.options["upgrade"] or {}).get("gc_race")
        if not p or w.in_quiet:
            return
        rec = decode_lease(reply.body)
        if isinstance(rec, OldLease) and rec.expires_at_ms == 0 and w.choose("gc", req.key, w.rngs[self.id].happens, p):
            w.later(1, w.fault_step, self.id, "gc_race", req.key)

    def gc_race(self, w, key) -> None:
        w.read_bucket(lambda leases, data_keys: self.gc_delete(w, key, leases, data_keys))

    def gc_delete(self, w, key, leases, data_keys) -> None:
        """The collection's look at the bucket now: the lease is deleted if it may still be collected."""
        if key in leases and gc_collectable({key: leases[key]}, data_keys):
            w.delete_record(key)

    def old_gc(self, w, p_gc) -> None:
        """The old garbage collection runs once at the switch (model.old_lease.gc_collectable
        says what it may delete); it deletes each collectable lease at the drawn rate."""
        if p_gc:
            w.read_bucket(lambda leases, data_keys: self.gc_deletes(w, p_gc, leases, data_keys))

    def gc_deletes(self, w, p_gc, leases, data_keys) -> None:
        for key in gc_collectable(leases, data_keys):
            if w.choose("gc", key, w.rngs["upgrade"].happens, p_gc):
                w.delete_record(key)


def old_machines(nodes: int) -> list[str]:
    """The machines the old binaries run on, one per node (`schedule`)."""
    return [f"om{i}" for i in range(nodes)]


def calm_upgrade(old_ms: int, gap_ms: int, old_stop: list, same_ids: bool = False, p_gc: float = 0.0) -> dict:
    """An upgrade with none of `draw_upgrade`'s hazards: the old binaries stop at old_ms as `old_stop`
    says (per node: "clean" or "crash"), the new nodes start gap_ms after; no straggler, no old
    binary started again, no retired node, no forget, no guard storm, none of the switch's races; the old garbage collection at
    the switch at rate p_gc. The exhaustive explorer's (explore/search.py), which branches over what
    happens around it itself. Every key `draw_upgrade` draws is here (a test holds it)."""
    return {"old_ms": old_ms, "new_at": old_ms + gap_ms, "same_ids": same_ids, "old_stop": list(old_stop),
            "straggler": None, "straggle_ms": 0, "stall": False, "old_restart": None, "future_ms": 0,
            "p_gc": p_gc, "forgets": [], "guard_storm": None,
            # the races of the `upgrade.races` stage, every one off (the explorer branches itself)
            "beat_resume": None, "marker_faults": None, "seed_faults": None, "gc_race": None,
            "switch_twin": None, "switch_restart": None, "old_timing": None}


def draw_upgrade(ctx, nodes: int, focused: bool = False) -> dict:
    """Old nodes run actors first; they stop (cleanly or not); new nodes start after a gap.
    `focused` (the upgrade scenario): old binaries beside new ones (a straggler, a restart) are
    likelier, so old binaries meet new markers (UP-3, UP-4) in most seeds."""
    rng, S, pick = ctx.rng, ctx.S, ctx.choice
    old_ms = rng.randint(S(25_000), S(50_000))
    gap = pick((0, S(2_000), S(10_000), S(20_000)))  # the procedure says: once no old node is live
    up = {
        "old_ms": old_ms,
        "new_at": old_ms + gap,
        "same_ids": rng.random() < 0.5,  # node ids reused across the switch
        "old_stop": [pick(("clean", "crash")) for _ in range(nodes)],
        # an old node still running after the switch, stopping later; its heartbeat may stall
        # while its renewals go on (a stalled listing)
        "straggler": rng.randrange(nodes) if rng.random() < (0.6 if focused else 0.3) else None,
        "straggle_ms": rng.randint(S(10_000), S(60_000)),
        "stall": rng.random() < 0.5,
        # an old binary started again after the switch, for a while
        "old_restart": ([rng.randrange(nodes), rng.randint(S(5_000), S(30_000))]
                        if rng.random() < (0.5 if focused else 0.2) else None),
        "future_ms": pick((0, 0, 0, rng.randint(S(20_000), S(120_000)))),
        "p_gc": pick((0.0, 0.5)),  # the old GC deleted released leases/ of idle actors
    }
    up["forgets"] = _draw_forgets(ctx, nodes, up["same_ids"], bool(up["future_ms"]), focused)
    # UP-2's margin: as the new nodes start (or while a straggler still beats), half their `nodes/`
    # reads are lost for a stretch, so that a guard round meets a failed read of a heartbeat that
    # is still fresh (a failed read proves nothing: the guard must hold)
    up["guard_storm"] = ([rng.randint(0, S(1_000) if up["straggler"] is None or rng.random() < 0.5
                                      else up["straggle_ms"]), rng.randint(S(6_000), S(20_000))]
                         if rng.random() < (0.7 if focused else 0.6) else None)
    return up


SWITCH_TWIN = "tu"  # the machine of the twin started during the switch (its clock drawn with it)


def draw_races(ctx, up: dict, nodes: int, focused: bool = False) -> dict:
    """The races around the switch, each on or off (likelier in the upgrade scenario, `focused`):

    - `beat_resume`: the straggler's stalled heartbeat beats again, ms after the switch (UP-2);
    - `marker_faults`: [p, late_ms_max], a new node's marker write struck at rate p (a quarter lost, half
      applied up to late_ms_max past its timeout, a quarter answered 409), its reply lost at p / 2
      (marker_writes.py, UP-3);
    - `seed_faults`: p, a new node's old-lease read or seeding listing lost or failed (seed_reads.py);
    - `gc_race`: p, the old garbage collection deletes a released old lease a new node just read, before
      its marker write (UP-3's If-Match meets no object);
    - `switch_twin`: [node, ms after the switch, life ms], a twin under a new node's id while its guard
      and check run (UP-1, NL-6), on a machine of its own (SWITCH_TWIN);
    - `switch_restart`: [old node, ms after the switch], an old binary started again while the guards
      run (UP-2, UP-4);
    - `late_old`: [new node, ms after the switch], an old binary started under that new node's id once a
      new node runs (UP-4: its start check must find the id taken; old_restart does so only when the ids
      are reused across the switch)."""
    rng, S, pick = ctx.rng, ctx.S, ctx.choice

    def often(p_focused: float, p_swarm: float) -> bool:
        return rng.random() < (p_focused if focused else p_swarm)

    out: dict = {}
    out["beat_resume"] = (rng.randint(0, S(3_000)) if up["straggler"] is not None and up["stall"] and often(0.7, 0.5)
                          else None)
    if ctx.o.get("old_margins"):  # (its straggler renews beside the new nodes: its heartbeat stays stalled)
        out["beat_resume"] = None
    out["marker_faults"] = [pick((0.2, 0.5)), pick((S(500), S(3_000)))] if often(0.75, 0.4) else None
    out["seed_faults"] = pick((0.2, 0.5)) if often(0.5, 0.4) else None
    out["gc_race"] = pick((0.5, 1.0)) if often(0.6, 0.4) else None
    out["switch_twin"] = ([rng.randrange(nodes), rng.randint(0, S(3_000)), rng.randint(S(5_000), S(30_000))]
                          if often(0.4, 0.3) else None)
    if out["switch_twin"]:
        skew = ctx.p.max_skew_ms
        at = rng.randint(-skew, skew)
        if ctx.o.get("clock_bound"):  # every clock at an end of the band (swarm._at_bound, T-1): the twin's too
            at = skew if at >= 0 else -skew
        ctx.o["clocks"][SWITCH_TWIN] = [ctx.o["clock_base"] + at, 0]
    others = [i for i in range(nodes) if i != up["straggler"]]
    out["switch_restart"] = [pick(others), rng.randint(0, S(3_000))] if others and often(0.4, 0.3) else None
    out["old_timing"] = draw_old_timing(rng, ctx.p)
    # UP-4 (issue 45): an old binary started after the switch under a new node's id, once a new node runs: its
    # start check must report the id as taken. Drawn after every other race, and left out of the options when
    # off, so that a seed without it keeps its options and its run
    if often(0.6, 0.5):
        out["late_old"] = [rng.randrange(nodes), rng.randint(0, S(20_000))]
    return out


def draw_old_timing(rng, p) -> list | None:
    """The old binaries' own cadence (model/old_lease.py, OldTiming; ADR Context, section 6): their heartbeat
    period and renewal interval are their own configuration, not the new nodes' drawn timing. In 60 % of
    upgrade seeds: a heartbeat every 3 s whatever the new timing (the ADR's default, kept when T-3 made the
    operator lower the cluster's period: in ttl-2 s seeds about one old beat per guard span), at the new
    nodes' period, or at three of them (a beat UP-2's horizon barely covers); renewals a third of the ttl
    after the previous one returned (the ADR's), or a quarter. Else None: the ADR's defaults."""
    if rng.random() >= 0.6:
        return None
    hb = p.heartbeat_period_ms
    beat = (OLD_HEARTBEAT_MS, hb, 3 * hb)[rng.randrange(3)]
    renew = (None, p.ttl_ms // 4)[rng.randrange(2)]
    return [beat, renew]


def _draw_forgets(ctx, nodes: int, same_ids: bool, future: bool, focused: bool) -> list:
    """`cluster forget` (FN-8) after the switch: [node, ms after new_at, then fence it (FN-7)]. The
    node is mostly an old id (its heartbeat stale or still fresh by UP-2's test: forget must refuse
    a fresh one), the retired one, or a new node's (a format-3 object: refused). Forget then fence
    is F-6's remedy for an old heartbeat left over a new node's id."""
    rng, S, pick = ctx.rng, ctx.S, ctx.choice
    if rng.random() >= (0.7 if focused else 0.5):
        return []
    old = [f"n{i}" if same_ids else f"o{i}" for i in range(nodes)] + (["retired"] if future else [])
    new = [f"n{i}" for i in range(nodes)]
    # half of them soon after the switch, while an old heartbeat may still be fresh
    return [[pick(new if rng.random() < 0.2 else old),
             rng.randint(0, S(5_000) if rng.random() < 0.5 else S(40_000)), rng.random() < 0.5]
            for _ in range(rng.randint(1, 2))]


KIND = Upgrade()
