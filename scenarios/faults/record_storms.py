"""Record storms (OR-7..OR-9, BM-3's race): a stretch in which half the `owners/` writes are lost and
most replies to the rest come slowly, while clients retry at once at the same node: an acquire's
outcome is unknown while the same node's next acquisition writes the same generation."""

from __future__ import annotations

from model.io import PUT
from model.records import OWNERS_PREFIX

from . import Stretch

STORM_LOST, STORM_SLOW = 0.5, 0.9  # in a record storm: the share of record writes lost, of their replies slowed


def stormed(world, f: dict, req) -> bool:
    """A record write, in a storm, that no race shields."""
    return world.record_storm and f is world.fault and req.op == PUT and str.startswith(req.key, OWNERS_PREFIX)


class RecordStorms(Stretch):
    id = "record_storms"
    title = "a stretch of 5 to 15 s in which half the record writes are lost and 90 % of the rest answered slowly"
    rules = ("OR-7", "OR-8", "OR-9")
    options = {"record_storms": []}  # [[at, length_ms]]
    scheduled = ("record_storms",)
    at_field = {"record_storms": 0}
    state = {"record_storm": bool}
    flag, what, target, detail = "record_storm", "record_storm", OWNERS_PREFIX, "record writes lost and slow"

    def draw_main(self, ctx) -> None:
        rng, S, o = ctx.rng, ctx.S, ctx.o
        o["record_storms"] = ([[rng.randint(0, o["fault_ms"]), rng.randint(S(5_000), S(15_000))]]
                              if rng.random() < 0.25 and not ctx.alone else [])
        if o["record_storms"]:
            o["p_client_retry"] = 0.9  # clients retry at once: the next acquisition races the unknown one

    @staticmethod
    def send_early(world, proc, req, f):
        if stormed(world, f, req) and world.rngs["record_storms"].random() < STORM_LOST:
            return "lost", 0
        return None

    @staticmethod
    def reply_late(world, proc, req, f, delay):
        if stormed(world, f, req) and world.rngs["record_storms"].random() < STORM_SLOW:
            # the write landed, its reply comes up to a timeout late, while the client's retry at once
            # starts the same node's next acquisition (OR-7, OR-9)
            return "slow", world.rngs["record_storms"].randint(delay, delay + world.params.attempt_timeout_ms)
        return None


KIND = RecordStorms()
