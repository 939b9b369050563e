"""More peers to fence at once than a node may fence (BD-1): a zone of a large cluster lost together.

A cluster of 11 to 13 nodes loses every machine but one at once (a zone's power, for good), and the one
left, once it has listed them all again, is cut off the bucket for ttl + grace and a period (its own
network, in the same incident), so its lease lapses. Back, it watches every peer afresh from its first acknowledged write
(FN-2) and finds them all lapsed at the same listing: ten to twelve fences due at once, more than the
eight it may run (BD-1: the listing goes on, the rest wait for the next one). For the next while the
bucket answers that node's fence writes slowly (a write of a nodes/ object other than its own: up to an
attempt timeout late, as a bucket under the load of a zone's recovery does), so the fences it sends
together are in flight together and a wrong count shows in the world's count of fence writes in flight
(checkers/bounds.py; broken model `unbounded_fences`). Before that, from its first fence write after it is
back and for a period and an attempt timeout, the bucket loses its fence writes (`request_lost`: never applied,
each timed out after A, then read again and written again, FN-4), so the eight fences of its first pass are
still at work, their requests sent before the next listing, when that listing ends with more peers due
(coverage point "fences due past BD-1's cap across two passes": BD-1's cap counted across passes).

Drawn in the swarm only (a share of its seeds, never with the node count pinned, nor in an upgrade, a
crowd of `mass` or around a lone blip), from its own streams ("draw/fence_crowd", "fence_crowd"). It
grows the cluster (the added nodes start spread over two lease periods like the others, their starts
drawn here) and keeps the node left out of the node faults, and every node out of those from two ttl +
grace before the loss (`faults.keep_node`).
"""

from __future__ import annotations

from model.io import PUT
from model.records import NODES_PREFIX

from . import FaultKind, keep_node, stays_off
from .crash_for_good import KIND as GONE_FOR_GOOD

SHARE = 0.25  # of the swarm's seeds that may draw it (fence_reads_uncounted needs a tenth of them)
NODES = (11, 12, 13)  # the cluster's size: ten to twelve peers lost at once (BD-1's cap is 8)
DELAY_MS_MAX = 5  # the network's delay each way in such a seed


class FenceCrowd(FaultKind):
    id = "fence_crowd"
    title = "a zone of 10 to 12 machines lost at once; the node left, cut off meanwhile, finds them all lapsed together"
    rules = ("BD-1", "FN-2", "FN-3", "FN-5", "NL-11")
    options = {"fence_crowd": []}  # [[node left, at]]
    scheduled = ("fence_crowd",)
    at_field = {"fence_crowd": 1}
    node_field = {"fence_crowd": 0}
    state = {"fences_slow_until": dict,  # node -> until when the bucket answers its fence writes slowly
             "fences_hang": dict}  # node -> [back from its cut at, its first fence write after (None: none yet)]

    def draw_main(self, ctx) -> None:
        rng, tg, o = ctx.rng, ctx.tg, ctx.o
        drawn = rng.random() < SHARE
        if not (drawn and ctx.preset.mix and ctx.pinned.get("nodes") is None and ctx.duration_ms is None
                and not o.get("upgrade")
                and not o.get("mass") and not stays_off(ctx)):
            o["fence_crowd"] = []
            return
        n = ctx.choice(NODES)
        o["starts"] = list(o["starts"]) + [rng.randint(0, 2 * ctx.p.period_ms) for _ in range(n - o["nodes"])]
        o["nodes"] = n
        fault = o["fault_ms"]
        # the zone goes once every node passed its start check (NL-5) and wrote its lease; the faults last
        # until the node left is back, has watched a period and an attempt and fenced them all (a longer run)
        at = rng.randint(3 * tg, max(3 * tg, fault - 4 * tg))
        o["fault_ms"] = max(fault, at + 4 * tg)
        o["fence_crowd"] = [["n0", at]]
        keep_node(ctx, "n0")
        keep_node(ctx, None, since=at - 2 * tg)  # (the zone's: a peer stopped or fenced then would be one less)
        # a quick network (5 ms each way): the node left reads all its peers within a round trip each, so it
        # has seen each one's last write before it is cut off, well before any of them lapses
        o["delay_ms_max"] = DELAY_MS_MAX

    def schedule(self, w, base: int) -> None:
        for node_id, at in filter(None, w.options.get("fence_crowd", ())):
            w.later(base + at, w.fault_step, self.id, "strike", node_id)

    def strike(self, w, left: str) -> None:
        """Every machine but `left`'s is gone for good; `left` is cut off for ttl + grace and a period."""
        if w.disturbs_a_race(None):
            return
        for node_id in w.node_ids:
            if node_id != left:
                GONE_FOR_GOOD.strike(w, node_id)
        # `left` lists them all once more, seeing each one's last write (a listing begins every period and
        # reads the peers one GET after another, each a round trip), then is cut off: its watch restarts
        # after the lapse (FN-2), and every peer's watch counts from that one instant
        listing = len(w.node_ids) * 2 * w.options["delay_ms_max"]
        wait = w.params.period_ms + 2 * listing
        # from now until its fences are done no other fault touches it (World.calm), but this kind's own
        until = w.now + wait + w.tg + w.params.period_ms + 2 * w.tg + 2 * w.params.period_ms
        if not w.in_quiet:
            w.set_calm(left, until)
        w.fences_slow_until[left] = until
        w.later(wait, w.fault_step, self.id, "cut", left)

    def cut(self, w, left: str) -> None:
        """`left`'s machine cut off the bucket (World.cut_off: its calm keeps the drawn outages away, not
        this one) for ttl + grace and a period: its lease lapses."""
        w.cut_off(w.slots[w.node_ids.index(left)].machine, w.tg + w.params.period_ms, "blackhole")
        w.fences_hang[left] = [w.now + w.tg + w.params.period_ms, None]

    def quiet(self, w) -> None:
        w.fences_slow_until.clear()
        w.fences_hang.clear()

    @staticmethod
    def send_early(world, proc, req, f):
        """A fence write of the node left (a PUT of another node's nodes/ object) lost on its way, from its
        first one after the cut for P + A: each fence's write times out and is read and written again (FN-4),
        so its slot stays taken across the next listing (BD-1 counted across passes)."""
        hang = world.fences_hang.get(proc.node_id) if world.fences_hang else None
        if (hang is None or world.now < hang[0] or req.op != PUT or not str.startswith(req.key, NODES_PREFIX)
                or req.key == NODES_PREFIX + proc.node_id):
            return None
        if hang[1] is None:
            hang[1] = world.now
        if world.now < hang[1] + world.params.period_ms + world.params.attempt_timeout_ms:
            return "lost", 0
        return None

    @staticmethod
    def reply_late(world, proc, req, f, delay):
        """A fence write of the node left (a PUT of another node's nodes/ object), answered slowly for a while."""
        until = world.fences_slow_until.get(proc.node_id)
        if (until is not None and world.now < until and req.op == PUT and str.startswith(req.key, NODES_PREFIX)
                and req.key != NODES_PREFIX + proc.node_id):
            return "slow", world.rngs["fence_crowd"].randint(delay, delay + world.params.attempt_timeout_ms)
        return None


KIND = FenceCrowd()
