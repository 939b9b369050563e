"""Breaks NL-1 (FN-3): a peer's fence names the instance it fences but not that instance's written_at:
it carries 0, so every record naming the fenced node reads as free at once (FN-5 counts from the
fence's written_at), not at the instant the fenced owner's own validity is known to have ended.
Caught by: LEASE-1 (judged on the bucket's applied writes: a fence or a release over a `live`
object keeps its instance and written_at).
"""

from model.node import Model

RULE = "NL-1"
CATCHES = "LEASE-1"


class FenceDatedZero(Model):
    name = "fence_dated_zero"

    def fence_request(self, node, version, fence):
        return super().fence_request(node, version, fence._replace(written_at_ms=0))


MODEL = FenceDatedZero()
step = MODEL.step
