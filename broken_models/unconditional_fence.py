"""BM-1: the fence is written without `If-Match` (breaks FN-3).

The correct fence is conditioned on the version of the GET it was decided
on, so a write the fenced node landed in between makes it fail. Written
unconditionally, it overwrites that fresh write and keeps the stale
written_at it watched: the fenced node is still valid while its records are
already free by the fence's kept written_at + ttl + grace.
Caught by: INV-3 (the unconditional write replaces a version it did not name:
the chain of `nodes/<id>` forks), in most seeds that fence at all (127 of 200).
Two owners of one actor (INV-1) follow only when a takeover falls in the
window the stale written_at opens; in this world that is rare (0 of 200 swarm
and 0 of 100 `fence` seeds at 6003d18), so INV-1 is not what catches it.
"""

from model.io import PUT, Request
from model.node import Model
from model.records import encode_node, node_key

RULE = "FN-3"
CATCHES = "INV-3"


class UnconditionalFence(Model):
    name = "unconditional_fence"

    def fence_request(self, node, version, fence):
        return Request(PUT, node_key(node), None, None, encode_node(fence))  # no If-Match


MODEL = UnconditionalFence()
step = MODEL.step
