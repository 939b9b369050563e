"""Q-2: the resolver's lock per actor ends at its decision, not at its release's reply (the
narrower reading of OR-9).

OR-9's lock orders acquisitions and the resolver: the ADR has the resolver hold it "from its read
until its release's reply". This variant lets it go once the release is sent: an acquisition of
the same actor may then read the record while the resolver's release is in flight.
"""

from model.node import Model

ADDRESSES = "Q-2"
KIND = "question"
RULES = ("OR-9",)
ADR = ("Section 3: 'an acquisition holds it from its read until its hold is registered (or its failure "
       "recorded), and the resolver holds it from its read until its release's reply.'")
PROPOSED = "'... and the resolver holds it from its read until it decides (its release sent).'"


class LockUntilDecision(Model):
    name = "q2_lock_until_decision"

    def on_reply_resolve_read(self, st, purpose, reply, now, out):
        e = st.unresolved.get(purpose[1])
        st = super().on_reply_resolve_read(st, purpose, reply, now, out)
        if e is not None and purpose[1] not in st.unresolved:
            st = self.unlock_resolver(st, e.actor, now, out)  # decided: the lock goes now
        return st


MODEL = LockUntilDecision()
