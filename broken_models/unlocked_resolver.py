"""BM-3: the resolver runs without the lock per actor (breaks OR-9).

An acquire whose outcome was unknown leaves an unresolved entry at
generation g. A second acquisition of the same actor on this node may write
the record at the same generation g; without the lock, the resolver can read
that record after the second write landed and before its hold is
registered, see "this instance at g, no hold here", and release the live
hold's record: another node then acquires the actor while this one still
acts as its owner.
Caught by: INV-6 (the release lands on the live hold: the record names nobody under a live
owner), and INV-1 once another node acquires the actor meanwhile.
"""

from model.node import Model

RULE = "OR-9"
CATCHES = "INV-6"


class UnlockedResolver(Model):
    name = "unlocked_resolver"

    def resolver_takes_lock(self, st, actor) -> bool:
        return True  # never waits for an acquisition

    def lock_for_resolver(self, st, actor):
        return st  # and never takes the lock


MODEL = UnlockedResolver()
step = MODEL.step
