"""Breaks UP-3: the first acquisition seeds the generation from the old lease (or marker)
only, ignoring the generations in the actor's wal/ and snapshot/ keys.

Where the old lease is gone (collected by the old GC) or older than the data, owners/ is
created at a generation that an earlier hold already used.
Caught by: INV-2 (one generation per hold), across the two versions.
"""

from model.node import Model

RULE = "UP-3"
CATCHES = "INV-2"


class SeedFromOldLeaseOnly(Model):
    name = "seed_from_old_lease_only"

    def seed_generation(self, st, old_gen: int, keys_gen: int) -> int:
        return old_gen  # the keys ignored


MODEL = SeedFromOldLeaseOnly()
step = MODEL.step
