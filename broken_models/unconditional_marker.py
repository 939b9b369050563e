"""Breaks UP-3: the upgrade's marker replaces what it read in leases/ without a condition. An old
binary's acquisition or renewal landing between the read and the marker is overwritten: the old
node goes on acting on a lease the new version has already marked and seeded owners/ from.
Caught by: INV-3 (an unconditional write on leases/, whose every write is conditional: the
marker's, and the old binary's own).
"""

from model.io import PUT, Request
from model.node import Model
from model.records import Marker, encode_marker, lease_key

RULE = "UP-3"
CATCHES = "INV-3"


class UnconditionalMarker(Model):
    name = "unconditional_marker"

    def marker_request(self, actor, seed, cond, version):
        return Request(PUT, lease_key(actor), None, None, encode_marker(Marker(seed)))


MODEL = UnconditionalMarker()
step = MODEL.step
