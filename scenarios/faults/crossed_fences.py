"""Fences crossed, and fences at the cap (issue 37: FN-3, FN-4, FN-7, BD-1, CS-3).

- **Crossed.** A node sends a fence of a peer (a PUT of `nodes/<peer>`, If-Match the version its fresh
  read decided on, FN-3); the operator, who sees the same peer silent, runs `cluster fence` of it at that
  moment (FN-7), and the node's fence is slow on the network: the operator's read and write land first,
  and the node's fence meets them, refused by its condition. FN-3 and FN-4 say what it does then: read
  again, see the peer fenced, and go on; a fence sent again as it was would never land (a fence refused is
  a fence the object outran). What it does next is judged undisturbed: no random network fault on its
  requests until the quiet phase, and no other drawn fault aimed at it for 2 (ttl + grace) (a race plays
  out on it, as a deadline race's does). Left to chance, CONV-1 caught the broken model that sends a
  refused fence again (refused_fence_resent) in 5 of 200 swarm seeds; crossed, in 23.
- **At the cap.** A node whose fences in flight reach BD-1's cap (eight: `fence_sent` counts them) is
  told a drain, or one of its actors is moved, while they are in flight: the drain meets the fence cap
  full (CS-3, BD-1).

Honest: the world sees a fence leave (`fence_sent`: a write of another node's object, which it carries),
holds it back on the network less than its sender's timeout, and lets the operator act on a node it could
see silent; the instant is the world's choice. Drawn in a share of the swarm's seeds (every crowd's, for
the cap) from its own streams ("draw/crossed_fences", "crossed_fences"); off in the quiet phase and while a
race is shielded.
"""

from __future__ import annotations

from model.io import PUT, Command
from model.records import NODES_PREFIX

from . import FaultKind
from .open_entries import drain_or_move

CAP = 8  # BD-1: the fences a node may have in flight at once (the world counts them: `fence_sent`)


class CrossedFences(FaultKind):
    id = "crossed_fences"
    title = ("the operator fences a node a peer is fencing, the peer's fence slow (refused: FN-4); a drain or a "
             "move told while a node's fences fill BD-1's cap")
    rules = ("FN-3", "FN-4", "FN-7", "BD-1", "CS-3")
    # the share of fences the operator crosses (none in a crowd: its slow fence replies are what fill the
    # cap, and a crossing's shield would take them away); a drain or a move told at the cap
    options = {"p_fence_crossed": 0.0, "fence_cap_tells": False}
    rates = ("p_fence_crossed",)
    state = {"fences_held": dict}  # (proc, nodes/ key) -> how long its fence is held back, ms

    def draw_main(self, ctx) -> None:
        rng, o = ctx.rng, ctx.o
        crowd = bool(o.get("mass") or o.get("fence_crowd"))  # (a crossing in a crowd splits it: BD-1 unreached)
        on = ctx.preset.mix and not ctx.alone and (crowd or rng.random() < 0.75)
        o["p_fence_crossed"] = ctx.choice((0.6, 1.0)) if on and not crowd else 0.0
        o["fence_cap_tells"] = on

    @staticmethod
    def on_fence_sent(world, proc, req, in_flight: int) -> None:
        """A fence leaves: the operator may cross it (its own fence of the same node, first), or, at the
        cap, tell the node a drain or a move."""
        if world.in_quiet or proc is world.operator:
            return
        rng = world.rngs["crossed_fences"]
        who = f"{proc.machine} {req.key}"
        if in_flight >= CAP:
            if world.options["fence_cap_tells"] and world.choose("fence_cap_tell", who, rng.happens, 1.0):
                world.later(1, world.fault_step, "crossed_fences", "at_cap", proc.index)
            return
        p = world.fault["p_fence_crossed"]
        if not p or world.shielded(proc.node_id):
            return  # (a race plays out on the node, or a crossing of this kind does)
        a, d = world.params.attempt_timeout_ms, world.options["delay_ms_max"]
        if 4 * d + 2 > a:
            return  # (the operator's read and write could not land first within the fence's timeout)
        hold = world.choose("fence_cross", who, _hold, rng, p, 3 * d + 1, a - d - 1)
        if hold:
            world.fences_held[(proc.index, req.key)] = hold
            # no other fault on the operator's two requests, nor on the node's requests from then to the end
            # of the faults: the refusal is what it must act on, and what it does next (FN-4: read again, and
            # go on) is judged on its own, to the quiet phase's end (CONV-1: a fence sent again and again)
            world.shield_until("operator", world.now + a)
            world.shield_until(proc.node_id, world.quiet_at_ms or world.now + a)
            if world.quiet_at_ms:
                world.keep_calm(proc.node_id, min(world.quiet_at_ms, world.now + 2 * world.tg))
            world.later(0, world.operator_command, Command("cluster_fence", (req.key[len(NODES_PREFIX):],)))

    @staticmethod
    def send_late(world, proc, req, f, delay):
        held = world.fences_held
        if held and req.op == PUT:
            ms = held.pop((proc.index, req.key), None)
            if ms is not None:
                return "ok", ms  # slow on the way, answered before its timeout
        return None

    def at_cap(self, w, index: int) -> None:
        proc = w.procs[index]
        if not w.in_quiet and proc.alive and not proc.draining:
            drain_or_move(w, proc, w.rngs["crossed_fences"], ours=True)

    def quiet(self, w) -> None:
        w.fences_held.clear()


def _hold(rng, p: float, lo: int, hi: int) -> int | None:
    """How long the fence is held back (ms), in a share p of the fences; None: not crossed."""
    return rng.randint(lo, hi) if rng.random() < p else None


KIND = CrossedFences()
