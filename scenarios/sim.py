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
from simpy.events import NORMAL, URGENT

from history import History
from model.actor_data import DATA_PREFIX
from model.io import CONFLICT, DELETE, GET, NOT_FOUND, OK, PRECONDITION_FAILED, PUT
from model.params import Params
from model.records import LEASES_PREFIX

from .bucket import SimBucket
from .core import WORLD, World

__all__ = ["SimWorld", "run_seed", "WORLD"]


class SimWorld(World):
    """The core, interpreted in simulated time against a simulated bucket."""

    lazy_timeouts = True  # each reply's instant is known when the bucket answers

    def __init__(self, seed: int, model, scenario: str = "swarm", params: Params | dict | None = None,
                 model_name: str = "correct", options: dict | None = None, choices=None, kinds_off: tuple = ()) -> None:
        super().__init__(seed, model, scenario, params, model_name, options, choices,
                         **({"kinds_off": kinds_off} if kinds_off else {}))
        o = self.options
        self.env = simpy.Environment()
        self._queue = self.env._queue
        self._next_eid = self.env._eid.__next__
        # a conflict is the `conflict` kind's fault, drawn from its stream; an alias a behaviour of the bucket's
        self.bucket = SimBucket(o["versioning"], o["absent_if_match"], o["p_conflict"], o["p_alias"],
                                self.rngs["conflict"], alias_rng=self.rngs["aliases"])
        if choices is not None:  # the bucket's conflicts and aliases are decisions too
            bucket_chance = self.bucket.chance
            self.bucket.chance = lambda site, key, p: choices.pick(site, key, bucket_chance, site, key, p)
        self.kernel_events = 0

    # --- time ------------------------------------------------------------------------

    # true time: a plain attribute the run loop sets before each call (it is read about 8,000 times a
    # seed); SimPy's own clock is set at the end
    now = 0

    def later(self, delay_ms: int, fn, *args) -> None:
        # (counted by SimPy's insertion counter: see `run`)
        now = self.now
        heappush(self._queue, (now + delay_ms if delay_ms > 0 else now, NORMAL, self._next_eid(), fn, args))

    def run(self) -> History:
        end = self.schedule()
        env = self.env
        queue = env._queue
        # as env.run(until=end): nothing at `end` itself runs. The end is an entry of the queue that
        # comes before every call due at `end` (SimPy's order: time, priority, insertion), so that the
        # loop tests nothing else
        heappush(queue, (end, URGENT - 1, -1, None, None))
        while True:
            t, _, _, fn, args = heappop(queue)
            if fn is None:
                break
            self.now = t
            fn(*args)
        self.now = env._now = end
        # every call scheduled took one number from SimPy's insertion counter, and nothing else takes one
        self.kernel_events += next(env._eid)
        return self.finish(end)

    def counts(self) -> dict:
        return {"kernel_events": self.kernel_events, **super().counts()}

    # --- the bucket ---------------------------------------------------------------------

    def to_bucket(self, proc, rid, req, fate, sent_ms) -> None:
        """The request takes effect now, atomically (the simulated bucket is linearizable)."""
        bucket = self.bucket
        before = bucket.objects.get(req.key)
        # a 409 races another conditional write in flight to the key (issue 47 part 4), in an AWS store only
        racing = self.racing_write(proc.index, rid, req.key) \
            if req.cond is not None and bucket.p_conflict and self.store != "r2" else None
        reply, prev, serial = bucket.apply(req, self.now, racing is not None)
        if reply.status == OK:
            if req.op == GET:
                proc.learned[(req.key, reply.version)] = serial  # `learned`, inlined (every read)
            elif req.op == PUT or req.op == DELETE:
                self.applied(proc, req, reply.version, prev, serial, before.body if before is not None else None,
                             sent_ms)
        elif (reply.status == PRECONDITION_FAILED or reply.status == NOT_FOUND and req.cond is not None) \
                and req.op != GET:
            self.refused(proc, req, before.body if before is not None else None, sent_ms, reply.status)
        elif reply.status == CONFLICT:
            self.conflicted(proc, req, sent_ms, racing)
        if fate is not None and fate[0] == "sdk_retry":
            self.sdk_retried(proc, rid, req, sent_ms, fate)  # this answer is lost; the SDK's retry's comes instead
            return
        self.bucket_answered(proc, rid, req, reply, fate)

    def remove_object(self, key: str) -> None:
        self.bucket.remove(key)

    def read_bucket(self, then) -> None:
        objects = self.bucket.objects
        leases = {k: o.body for k, o in objects.items() if str.startswith(k, LEASES_PREFIX)}
        then(leases, [k for k in objects if str.startswith(k, DATA_PREFIX)])


def run_seed(seed: int, model, scenario: str = "swarm", params: Params | dict | None = None,
             model_name: str = "correct") -> History:
    """Run one seed in the simulated world and return its history. `params`: a whole configuration,
    or the values pinned (the rest drawn for the seed), or None (all drawn)."""
    return SimWorld(seed, model, scenario, params, model_name).run()
