"""An operator's mistaken delete of `nodes/<id>` (FN-6 says nothing deletes one while a record names
that id; an operator still can), and in half of those seeds a replacement process started under
that id soon after, thinking the machine gone (FN-7, NL-5).

A delete race strikes right after the node's next acknowledged lease write while it owns actors,
so that it still runs, and acts, for up to a period: the operator fences the absent object soon
after, takeover attempts begin at once at the other nodes and at the deleted one, or a
replacement starts at once under its id.
"""

from __future__ import annotations

from model.io import Command
from model.records import NODES_PREFIX

from . import FaultKind


class Deletes(FaultKind):
    id = "deletes"
    title = "an operator deletes nodes/<id> by mistake; half the time a replacement starts under that id"
    rules = ("FN-5", "FN-6", "FN-7", "NL-5", "NL-7")
    options = {"deletes": []}  # [[node, at, a replacement started, takeover attempts and a fence soon after]]
    scheduled = ("deletes",)
    at_field = {"deletes": 1}
    node_field = {"deletes": 0}
    # node -> (follow-ups, a replacement at once, a replacement at all, give up at): a delete armed to
    # strike right after the node's next acknowledged lease write
    state = {"delete_races": dict}

    def draw_main(self, ctx) -> None:
        rng = ctx.rng
        nodes = ctx.nodes()
        ctx.o["deletes"] = [[ctx.choice(nodes), rng.randint(0, ctx.o["fault_ms"]), rng.random() < 0.5, rng.random() < 0.7]
                            for _ in range(1 if rng.random() < 0.35 else 0)]

    def schedule(self, w, base: int) -> None:
        tg = w.tg
        for k, delete in enumerate(w.options.get("deletes", ())):
            if not delete:
                continue
            node_id, at, replacement, *then = delete
            follow = bool(then and then[0])
            soon = replacement and w.choose("soon", f"delete{k}", w.rngs[self.id].happens, 0.5)
            if follow or soon:
                w.later(base + at, w.fault_step, self.id, "arm", node_id, follow, soon, replacement)
            else:
                w.later(base + at, w.delete_record, NODES_PREFIX + node_id)
                if replacement:
                    # the operator, thinking the machine gone, starts a replacement under that id
                    after = w.choose("later", "replacement " + node_id, w.rngs[self.id].randint, 0, tg // 3)
                    w.later(base + at + after, w.start_twin, node_id, "r0", 4 * tg)

    def quiet(self, w) -> None:
        w.delete_races.clear()

    def arm(self, w, node_id: str, follow: bool, soon: bool, replacement: bool) -> None:
        if w.in_quiet:
            return
        if w.disturbs_a_race(node_id):  # a deadline race plays out there: after it
            w.later(w.tg // 3, w.fault_step, self.id, "arm", node_id, follow, soon, replacement)
            return
        w.delete_races[node_id] = (follow, soon, replacement, w.now + 2 * w.tg)
        for actor in w.actors:  # so that it owns some when the delete strikes
            w.ask_new(node_id, actor)
        w.later(2 * w.tg, w.fault_step, self.id, "due", node_id)

    def due(self, w, node_id: str) -> None:
        """No acknowledged write while it owned something: the delete strikes anyway."""
        race = w.delete_races.get(node_id)
        if race is not None and w.disturbs_a_race(node_id):
            w.later(w.tg // 3, w.fault_step, self.id, "due", node_id)
        elif race is not None and w.now >= race[3]:
            proc = w.live_proc(node_id)
            if proc is not None:
                self.strike(w, proc, anyway=True)
            else:
                del w.delete_races[node_id]

    @staticmethod
    def on_lease_acked(w, proc, sent_ms: int) -> None:
        if proc.node_id in w.delete_races:
            KIND.strike(w, proc)

    def strike(self, w, proc, anyway: bool = False) -> None:
        """The delete strikes right after an acknowledged lease write of `proc` (its whole period
        ahead of it)."""
        node = proc.node_id
        if w.in_quiet or w.disturbs_a_race(node) or not anyway and (
                proc.slot is not w.slots[w.node_ids.index(node)]
                or not any(n == node for n in w.holders.values())):
            return  # a twin, it owns nothing yet, or a deadline race plays out there: a later write
        follow, soon, replacement, _ = w.delete_races.pop(node)
        w.delete_record(NODES_PREFIX + node)
        P = w.params.period_ms
        # the race plays out undisturbed by random network faults: its own moves, then the
        # deleted node's next lease write, within a period and an attempt
        for n in [node, "operator"] + w.node_ids:
            w.set_shield(n, w.now + P + w.params.attempt_timeout_ms)
        if follow:
            if not soon:  # (a replacement at once meets the absent object, not the operator's fence)
                w.later(w.choose("later", "fence " + node, w.rngs[self.id].randint, 1, P // 8), w.operator_command,
                        Command("cluster_fence", (node,)))
            mine = [a for a in w.actors if w.holders.get(a) == node][:3]
            for k in range(16):
                w.later(k * P // 16 + w.choose("later", "ask " + node, w.rngs[self.id].randint, 1, P // 16),
                        w.fault_step, self.id, "ask_around", node, mine)
        if replacement:
            # the operator, thinking the machine gone, starts a replacement under that id
            lo, hi = (1, P // 8) if soon else (0, w.tg // 3)
            w.later(w.choose("later", "replacement " + node, w.rngs[self.id].randint, lo, hi), w.start_twin, node,
                    "r0", 4 * w.tg)

    def ask_around(self, w, node_id: str, actors: list[str]) -> None:
        """Requests for `actors` (its own when the race began), at `node_id` and at another node."""
        others = [n for n in w.node_ids if n != node_id]
        for actor in actors:
            w.ask_new(node_id, actor)
            if others:
                other = w.choose("around", node_id, w.rngs["deletes"].one_of, others)
                w.ask_new(other if other in others else others[0], actor)


KIND = Deletes()
