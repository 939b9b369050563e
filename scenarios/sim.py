"""The SimPy world: the world core (core.py) with simulated time and a simulated bucket.

True time is SimPy's clock, in integer milliseconds. Each process runs on a
machine whose clock is true time plus an offset (and a drift); the model only
ever sees its machine's local time. A request reaches the simulated bucket
(bucket.py) after the delay its fate gave it and takes effect there at one
instant, which the history records with the bucket's serial numbers.

The world's callbacks are entries of SimPy's own event queue, in SimPy's own
order (time, priority, insertion), but not SimPy events: `later` pushes the
call itself and `run` pops and makes it. A SimPy event per callback (created,
given a callback list, stepped, checked for failure) cost more than the
callback's own work (docs/performance.md).
"""

from __future__ import annotations

from heapq import heappop, heappush

import simpy
from simpy.events import NORMAL

from checkers.history import History
from model.actor_data import DATA_PREFIX
from model.io import DELETE, GET, NOT_FOUND, OK, PRECONDITION_FAILED, PUT
from model.params import Params
from model.records import LEASES_PREFIX

from .bucket import SimBucket
from .core import WORLD, World

__all__ = ["SimWorld", "run_seed", "WORLD"]


class SimWorld(World):
    """The core, interpreted in simulated time against a simulated bucket."""

    lazy_timeouts = True  # each reply's instant is known when the bucket answers

    def __init__(self, seed: int, model, scenario: str = "swarm", params: Params | dict | None = None,
                 model_name: str = "correct", options: dict | None = None, choices=None) -> None:
        super().__init__(seed, model, scenario, params, model_name, options, choices)
        o = self.options
        self.env = simpy.Environment()
        self.bucket = SimBucket(o["versioning"], o["absent_if_match"], o["p_conflict"], o["p_alias"], self.rng)
        if choices is not None:  # the bucket's conflicts and aliases are decisions too
            bucket_chance = self.bucket.chance
            self.bucket.chance = lambda site, key, p: choices.pick(site, key, bucket_chance, site, key, p)
        self.kernel_events = 0

    # --- time ------------------------------------------------------------------------

    @property
    def now(self) -> int:
        return self.env._now

    def later(self, delay_ms: int, fn, *args) -> None:
        env = self.env
        heappush(env._queue, (env._now + (delay_ms if delay_ms > 0 else 0), NORMAL, next(env._eid), fn, args))
        self.kernel_events += 1

    def run(self) -> History:
        end = self.schedule()
        env = self.env
        queue = env._queue
        while queue and queue[0][0] < end:  # as env.run(until=end): nothing at `end` itself runs
            env._now, _, _, fn, args = heappop(queue)
            fn(*args)
        env._now = end
        return self.finish(end)

    def counts(self) -> dict:
        return {"kernel_events": self.kernel_events, **super().counts()}

    # --- the bucket ---------------------------------------------------------------------

    def to_bucket(self, proc, rid, req, fate, sent_ms) -> None:
        """The request takes effect now, atomically (the simulated bucket is linearizable)."""
        before = self.bucket.objects.get(req.key)
        reply, prev, serial = self.bucket.apply(req, self.env._now)
        if reply.status == OK:
            if req.op == GET:
                self.learned(proc, req.key, reply.version, serial)
            elif req.op == PUT or req.op == DELETE:
                self.applied(proc, req, reply.version, prev, serial, before.body if before is not None else None,
                             sent_ms)
        elif (reply.status == PRECONDITION_FAILED or reply.status == NOT_FOUND and req.cond is not None) \
                and req.op != GET:
            self.refused(proc, req, before.body if before is not None else None, sent_ms, reply.status)
        self.bucket_answered(proc, rid, req, reply, fate)

    def remove_object(self, key: str) -> None:
        self.bucket.remove(key)

    def read_bucket(self, then) -> None:
        objects = self.bucket.objects
        leases = {k: o.body for k, o in objects.items() if k.startswith(LEASES_PREFIX)}
        then(leases, [k for k in objects if k.startswith(DATA_PREFIX)])


def run_seed(seed: int, model, scenario: str = "swarm", params: Params | dict | None = None,
             model_name: str = "correct") -> History:
    """Run one seed in the simulated world and return its history. `params`: a whole configuration,
    or the values pinned (the rest drawn for the seed), or None (all drawn)."""
    return SimWorld(seed, model, scenario, params, model_name).run()
