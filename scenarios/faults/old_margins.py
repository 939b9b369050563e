"""An old binary's renewals failing until the margins of its lease's expiry, while a new node reads that lease
(UP-3; issue 45 part 3: "an old lease at the margins of its expiry").

After the switch an old binary may still run beside the new nodes (a straggler whose heartbeat stalled, one
started again) and renew its per-actor leases. Its renewals to the bucket fail for a while (a flaky path of
its own: each lost on the way, retried after its timeout and a quarter second, model/old_lease.py), until
its clock nears the end of the last one that landed (`expires_at - safety`, where its hold ends); the last
try before then is held back past its timeout and applied late. Meanwhile a client asks a new node for that
actor, timed so that the node's first acquisition reads the old lease within safety before or grace after
its `expires_at` on the new node's clock: live by the old rules (UP-3: until `expires_at + grace`), so the
new node must refuse it, and the renewal lands after that read.

Honest: it does what a network (requests lost, a write held back and applied late, as `request_lost` and
`late` do) and a client can do, on what the world knows: the old lease's `expires_at` from the old binary's
own writes the bucket acknowledged (their bodies), the machines' clocks (the world's own), never a model's
state. Drawn in upgrade seeds only, from its own streams ("draw/old_margins", "old_margins"), a few strikes
a run; off in the quiet phase and on shielded nodes.
"""

from __future__ import annotations

from model.io import OK, PUT
from model.records import LEASES_PREFIX, OldLease, decode_lease

from . import FaultKind, stays_off

SHARE = 0.8  # of the upgrade seeds (in the swarm and the upgrade scenario)
RETRY_MS = 250  # an old binary tries a failed renewal again this long after its answer (model/old_lease.py)


def _old(proc) -> bool:
    return str.startswith(proc.machine, "om")


class OldMargins(FaultKind):
    id = "old_margins"
    title = "an old binary's renewals fail until its lease's expiry nears, as a new node reads that lease"
    rules = ("UP-3", "UP-4")
    options = {"old_margins": 0}  # how many renewals it may strike in a run (0: off)
    flags = {"old_margins": 0}
    # (proc index, leases/ key) -> the expires_at of the old binary's last write there the bucket acknowledged;
    # -> [the old clock's reading from which the renewals go again, the true instant the last one lands]; and
    # the strikes so far
    # the strikes so far; and process index -> the true instant a new node's lease, by its last acknowledged write,
    # ends (NL-4: a node that may acquire, the reader to ask)
    # and (proc index, leases/ key) -> the fate of its write just sent
    state = {"margin_expiry": dict, "margin_races": dict, "margin_strikes": list, "margin_valid": dict,
             "margin_fates": dict}

    def draw_main(self, ctx) -> None:
        """In a share of upgrade seeds: a few strikes, and an old binary renewing beside the new nodes: the upgrade's
        straggler (drawn here if the upgrade drew none), its heartbeat stalled (so the new nodes' guards pass, UP-2)
        and running on until the new nodes have served a while (section 6's hazard: an old node not stopped)."""
        rng, o, p, tg = ctx.rng, ctx.o, ctx.p, ctx.tg
        up = o.get("upgrade")
        on = bool(up) and not stays_off(ctx) and rng.random() < SHARE
        o["old_margins"] = rng.randint(3, 6) if on else 0
        if not on:
            return
        if up["straggler"] is None:
            up["straggler"] = rng.randrange(o["nodes"])
        up["stall"] = True
        # the new nodes serve once the stalled heartbeat is stale (UP-2: three periods and ttl + grace) and their
        # start checks passed (NL-5: ttl + grace); the straggler renews beside them for one to three ttl more
        horizon = 3 * p.heartbeat_period_ms + 2 * tg
        up["straggle_ms"] = max(up["straggle_ms"], horizon + tg + rng.randint(p.ttl_ms, 3 * p.ttl_ms))
        o["fault_ms"] = max(o["fault_ms"], up["old_ms"] + up["straggle_ms"] - up["new_at"] + tg)

    def quiet(self, w) -> None:
        w.margin_races.clear()
        w.margin_fates.clear()

    def on_lease_acked(self, w, proc, sent_ms: int) -> None:
        c = proc.clock  # NL-4: valid until its clock reads its send time + ttl - safety
        w.margin_valid[proc.index] = c.ends_at(c.local(sent_ms) + w.params.lease_span_ms)

    def on_answered(self, w, proc, req, reply) -> None:
        """An old binary's write of its lease acknowledged by the bucket: its expires_at is the one to near."""
        if _old(proc) and req.op == PUT and str.startswith(req.key, LEASES_PREFIX) and reply.status == OK:
            rec = decode_lease(req.body)
            if isinstance(rec, OldLease) and rec.expires_at_ms > 0:
                w.margin_expiry[(proc.index, req.key)] = rec.expires_at_ms

    def on_sent(self, w, proc, rid: int, req, timeout: int) -> bool:
        """An old binary's write of its lease leaves: struck, or the next of a struck stretch (its fate noted for
        `send_early`; a planned run reads it from its plan)."""
        if not _old(proc) or req.op != PUT or not str.startswith(req.key, LEASES_PREFIX) or w.in_quiet:
            return False
        k = (proc.index, req.key)
        race = w.margin_races.get(k)
        if race is not None:
            if proc.clock.local(w.now) < race[0]:
                w.margin_fates[k] = ("lost", 0)  # still failing
            else:  # the last try before its hold ends: applied after the new node's read
                del w.margin_races[k]
                w.margin_fates[k] = ("late", max(1, race[1] - w.now - w.params.attempt_timeout_ms))
            return False
        expires = w.margin_expiry.get(k)
        if expires is not None and len(w.margin_strikes) < w.options.get("old_margins", 0) \
                and not w.shielded(proc.node_id) and self.strike(w, proc, req.key, expires):
            w.margin_fates[k] = ("lost", 0)
        return False

    @staticmethod
    def send_early(world, proc, req, f):
        fates = world.margin_fates
        return fates.pop((proc.index, req.key), None) if fates and _old(proc) else None

    def strike(self, w, proc, key: str, expires: int) -> bool:
        """Renewals of `key` by `proc` fail from now until its clock reads expires_at - safety less a try's span;
        a new node is asked for the actor to read the lease within its margins. False: not struck (half the
        chances, or no new node to ask, or too late to ask one in time)."""
        p = w.params
        # a new node whose lease is valid (by its last acknowledged write): it may acquire
        new = [q for q in (w.live_proc(n) for n in w.node_ids)
               if q is not None and not _old(q) and w.margin_valid.get(q.index, -1) > w.now]
        if not new:
            return False
        pick = w.choose("old_margin", f"{proc.machine} {key}", _draw, w.rngs[self.id], (p.safety_ms + p.grace_ms) // 2)
        if pick is None:
            return False
        reader = new[pick[0] % len(new)]
        # the read aimed within safety before or grace after expires_at on the reader's clock, its first half
        read_at = reader.clock.ends_at(expires - p.safety_ms + pick[1])
        trip = 2 * w.options["delay_ms_max"]
        ask_at = read_at - 2 * trip  # (a routing read and the acquisition's read of owners/ before leases/)
        if ask_at <= w.now:
            return False
        w.margin_strikes.append(w.now)
        w.margin_races[(proc.index, key)] = [expires - p.safety_ms - p.attempt_timeout_ms - RETRY_MS,
                                             read_at + 2 * trip + p.attempt_timeout_ms // 2]
        w.fault_event(proc.index, "old_margin", "PUT " + key, read_at - w.now,
                      f"renewals lost until its expiry nears; {reader.node_id} asked for it then")
        w.later(ask_at - w.now, w.fault_step, self.id, "ask", reader.node_id, key[len(LEASES_PREFIX):])
        return True

    def ask(self, w, node_id: str, actor: str) -> None:
        if not w.in_quiet:
            w.ask_new(node_id, actor)


def _draw(rng, span: int):
    """Half the chances: [the new node asked (an index), ms into the margins its read aims at]; else None."""
    if rng.random() >= 0.5:
        return None
    return [rng.below(1 << 16), rng.randint(0, span)]


KIND = OldMargins()
