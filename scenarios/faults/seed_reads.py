"""Seeding reads under faults (UP-3): in an upgrade, a new node's first acquisition of an actor reads
`leases/<actor>` and lists the actor's `wal/` keys to seed the generation; either read is lost on
the way or fails fast. A read that failed proves nothing: the acquisition must fail, never seed
from what it did not read (a generation seeded too low reuses one, INV-2). Drawn with the upgrade
(upgrade.py: its `seed_faults` entry, the rate)."""

from __future__ import annotations

from model.actor_data import DATA_PREFIX
from model.io import GET, LIST
from model.records import LEASES_PREFIX

from . import Entry
from .fail_fast import FAIL_FAST_MS_MAX


class SeedReads(Entry):
    id = "seed_reads"
    title = "in an upgrade, new nodes' reads of leases/ and seeding listings of wal/ lost or failed fast"
    rules = ("UP-3", "INV-2")
    # (proc index, actor) -> True: the process read leases/<actor> (a first acquisition), and its
    # listing of the actor's wal/ that seeds the generation has not been sent yet
    state = {"seed_listing_due": dict}
    within, entry = "upgrade", "seed_faults"

    @staticmethod
    def send_early(world, proc, req, f):
        op = req.op
        if (op != GET and op != LIST) or proc.machine[0] == "o":
            return None  # (old binaries run on machines om0..)
        key = req.key
        due = world.seed_listing_due
        if op == GET and str.startswith(key, LEASES_PREFIX):
            due[(proc.index, key[len(LEASES_PREFIX):])] = True
        elif not (op == LIST and str.startswith(key, DATA_PREFIX)
                  and due.pop((proc.index, key[len(DATA_PREFIX):-1]), False)):
            return None
        if f is not world.fault or world.in_quiet:
            return None
        rng = world.rngs["seed_reads"]
        if rng.random() >= world.options["upgrade"]["seed_faults"]:
            return None
        if rng.below(2):
            return "lost", 0
        return "fail_fast", rng.randint(1, FAIL_FAST_MS_MAX)


KIND = SeedReads()
