"""Breaks BD-2: the resolver's release is not counted among the entries at work (the ADR: at most 32 pending
entries worked at once; an unresolved acquire is worked until its release's reply, OR-9's lock held that
long, since a failed release makes it a pending release): with the cap full, a release in flight lets one
more entry go.
Caught by: BD-2 (checkers/pending_entries.py: the background task's requests in flight, the resolver's release
included, more than 32 at once), where a crowd of acquisitions is left unresolved at once and the resolver's
releases are answered slowly (scenarios/faults/acquire_crowd.py): 28 of 200 swarm seeds.
"""

from model.node import Model

RULE = "BD-2"
CATCHES = "BD-2"


class ResolverReleaseUncounted(Model):
    name = "resolver_release_uncounted"

    @staticmethod
    def background_in_flight(st) -> int:
        return sum(1 for e in st.pending.values() if e.rid is not None) + sum(
            1 for e in st.unresolved.values() if e.rid is not None)


MODEL = ResolverReleaseUncounted()
step = MODEL.step
