"""Marker writes under faults (UP-3): in an upgrade, a new node's marker write (its PUT on `leases/`,
the only writes a new node sends there) is lost on the way, held back past its timeout and then
applied, or answered 409 ConditionalRequestConflict (not applied: only while another conditional write to
its key is in flight, and never in an R2 store, issue 47), and its reply is lost once the
bucket applied it. Each leaves the node not knowing whether the marker landed: its acquisition
fails, and the next one must seed from what leases/ then holds ("a crash between the two writes
leaves the marker, from which the next acquisition seeds the same way"). Drawn with the upgrade
(upgrade.py: its `marker_faults` entry, [rate, late_ms_max])."""

from __future__ import annotations

from model.io import PUT
from model.records import LEASES_PREFIX

from . import Entry


def _marker(world, proc, req, f) -> list | None:
    """The entry's [rate, late_ms_max] for a new node's write on leases/ under faults, else None."""
    if req.op != PUT or not str.startswith(req.key, LEASES_PREFIX) or proc.machine[0] == "o":
        return None  # (old binaries run on machines om0.., the retired one on omf)
    if f is not world.fault or world.in_quiet:
        return None  # shielded while a race plays out, or the faults are over
    return world.options["upgrade"]["marker_faults"]


class MarkerWrites(Entry):
    id = "marker_writes"
    title = "in an upgrade, new nodes' marker writes lost, applied past their timeout or answered 409, or their reply lost"
    rules = ("UP-3", "INV-2", "INV-3")
    within, entry = "upgrade", "marker_faults"

    @staticmethod
    def send_early(world, proc, req, f):
        entry = _marker(world, proc, req, f)
        if entry is None:
            return None
        rng = world.rngs["marker_writes"]
        if rng.random() >= entry[0]:
            return None
        k = rng.below(4)  # a quarter lost, half late (the outcome its sender cannot know), a quarter 409
        if k == 0:
            return "lost", 0
        if k == 3:  # answered 409 only if another conditional write to its key is in flight when it reaches the
            return "conflict", world.delay()  # bucket, in an AWS store (World._conflict_at_bucket); else it lands
        return "late", rng.randint(1, entry[1])

    @staticmethod
    def reply_early(world, proc, req, f):
        entry = _marker(world, proc, req, f)
        if entry is not None and world.rngs["marker_writes"].random() < entry[0] / 2:
            return "lost", 0
        return None


KIND = MarkerWrites()
