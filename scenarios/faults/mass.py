"""A crowd (BD-1..BD-3): many actors on one node, released into a refusing bucket, and most nodes of a
large cluster gone at once, fenced by the one left.

Drawn in the whole swarm only (3 % of its seeds), never with the node count pinned. The node n0
holds every actor, then releases them all while the bucket refuses it, then does not answer it,
for less than its lease's span in all: the releases pile up as pending entries whose retries meet
refusal after refusal (BD-3), then wait in flight (BD-2). Later the nine other nodes go for good
while n0 is cut off; back, it watches them all afresh (FN-2) and finds every one lapsed at once,
more than it may fence at once (BD-1), with slow replies to node-lease writes so that the fences it
sends together are in flight together.
"""

from __future__ import annotations

from model.io import Command

from . import FaultKind

NODES, ACTORS = 10, 40  # the crowd's size


class Mass(FaultKind):
    id = "mass"
    title = "ten nodes and forty actors: one node's releases pile up against a refusing bucket; nine nodes go at once"
    rules = ("BD-1", "BD-2", "BD-3", "OR-6", "FN-2")
    options = {"mass": []}  # [[node, at]]
    scheduled = ("mass",)
    at_field = {"mass": 1}
    node_field = {"mass": 0}

    def draw_main(self, ctx) -> None:
        rng, tg, o = ctx.rng, ctx.tg, ctx.o
        if not (ctx.preset.mix and rng.random() < 0.03 and ctx.pinned.get("nodes") is None):
            o["mass"] = []
            return
        fault = o["fault_ms"]
        o["nodes"] = NODES
        nodes = ctx.nodes()
        if ctx.pinned.get("actors") is None:
            o["actors"] = ACTORS
        o["mass"] = [["n0", rng.randint(tg, max(tg, fault // 3))]]
        # (early enough that the one left is back, done watching and fencing them before the quiet
        # phase: its faults, slow replies to fence writes among them, stop there)
        gone_at = rng.randint(fault // 3, max(fault // 3, fault - 3 * tg))
        o["crash_for_good"] = [[n, gone_at] for n in nodes[1:]]
        # the one left is cut off meanwhile: back, it watches them all afresh (FN-2) and finds every
        # one of them lapsed at once, more than it may fence at once
        ctx.turn_off("deletes", "stops", "drains", "operator_fences", "crashes", "twins", "blip", "deadline_races",
                     "quiet_stop")
        o.update(outages=[["n0", gone_at + tg // 2, tg, "blackhole"]], request_gap_ms=0, hibernate_gap_ms=0,
                 move_gap_ms=0)
        # the replies to node-lease writes come slowly (faults hit those alone): the fences it sends at
        # once are in flight together, and BD-1's bound binds on the writes too
        # and its reads are quick (5 ms each way): it reads the peers one after another, so the fences it
        # decides fall within a few round trips of each other, all inside one attempt timeout
        o.update(fault_target=["PUT", "nodes/"], p_slow_reply=0.9, delay_ms_max=5)

    def schedule(self, w, base: int) -> None:
        for node_id, at in filter(None, w.options.get("mass", ())):
            w.later(base + at, w.fault_step, self.id, "hold", node_id)

    def hold(self, w, node_id: str) -> None:
        """Many actors on one node, then all released while the bucket refuses that node, then does
        not answer it, for less than its lease's span in all."""
        if w.disturbs_a_race(node_id):
            return
        for actor in w.actors:
            w.ask_new(node_id, actor)
        p = w.params
        at = 2 * w.tg
        third = p.lease_span_ms // 3  # the two cut-offs together stay within the lease's span
        w.later(at, w.outage, node_id, third, "refuse")
        w.later(at + third + 1, w.outage, node_id, third, "blackhole")
        for actor in w.actors:
            w.later(at + 10, w.command_node_any, node_id, Command("hibernate", (actor,)))


KIND = Mass()
