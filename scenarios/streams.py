"""One random stream per part of a world (issue 38), each derived from the seed and the part's name.

A seed's draw and its run take their random decisions from many streams, not one: the timing,
each stage of the world's own draw (the cluster, the bucket, the network, the workload, the
clocks...), each fault kind's draw and the fates its hooks give requests, the network's delays,
the client requests, hibernations and moves, the events' lengths, the instance tokens, the
supervisor's delays. Each is a `random.Random` seeded with the sha256 of "<seed>/<part>" (never
Python's `hash()`, which PYTHONHASHSEED salts), made the first time the part draws. So a part that
draws more, less or nothing at all moves no other part's numbers: a fault kind added, removed or
changed moves only its own draws (TigerBeetle's VOPR gives each component a seed of its own), and
a seed's clocks, timing and workload stay what they were.

The names: "draw/<stage>" for the draw (swarm.py: "draw/params", "draw/cluster", "draw/<kind id>",
...), the bare part for a run ("network", "requests", "<kind id>", ...). A planned run (plan.py)
draws nothing: its streams refuse every draw.
"""

from __future__ import annotations

import hashlib
import random


def derive(seed: int, part: str) -> int:
    """The seed of `part`'s stream: stable across processes, machines and Python versions."""
    return int.from_bytes(hashlib.sha256(f"{seed}/{part}".encode()).digest(), "big")


class Stream(random.Random):
    """One part's stream: a `random.Random`, with the draws the world makes most, inlined over
    `getrandbits` (the same numbers as `randint` and `randrange`, tests/scenarios/test_world_core.py
    compares them) and named for what they decide."""

    def randint(self, a: int, b: int) -> int:
        """`Random.randint(a, b)`, drawing exactly the same numbers, without its argument checks:
        CPython's `Random._randbelow_with_getrandbits` inlined."""
        n = b - a + 1
        k = n.bit_length()
        getrandbits = self.getrandbits
        r = getrandbits(k)
        while r >= n:
            r = getrandbits(k)
        return a + r

    def below(self, n: int) -> int:
        """`Random.randrange(n)` for an int n, drawing exactly the same numbers (as `randint`)."""
        if n <= 0:
            raise ValueError("empty range for randrange()")
        k = n.bit_length()
        getrandbits = self.getrandbits
        r = getrandbits(k)
        while r >= n:
            r = getrandbits(k)
        return r

    def happens(self, p: float) -> bool:
        """True with probability p."""
        return self.random() < p

    def one_of(self, items):
        """One of `items` (a sequence), each as likely."""
        return items[self.below(len(items))]


class Refusing:
    """A planned run's stream: it has every method a stream has (so that `world.rngs[part].randint` can
    be handed to a decision the plan reads, plan.py), and any draw is a bug (a decision not routed
    through the run's Choices)."""

    def __init__(self, part: str) -> None:
        self.part = part

    def __getattr__(self, name):
        if str.startswith(name, "__"):
            raise AttributeError(name)
        return self._refuse

    def _refuse(self, *_args):
        raise RuntimeError(f"a random draw ({self.part}) in a planned run: every decision must come from the plan")


class Streams(dict):
    """A seed's streams, part -> Stream, each made on first use; `planned`: every one refuses."""

    def __init__(self, seed: int, planned: bool = False) -> None:
        super().__init__()
        self.seed = seed
        self.planned = planned

    def __missing__(self, part: str):
        s = self[part] = Refusing(part) if self.planned else Stream(derive(self.seed, part))
        return s

    def __repr__(self) -> str:
        return f"<streams of seed {self.seed}{' (planned: refused)' if self.planned else ''}: {', '.join(self)}>"
