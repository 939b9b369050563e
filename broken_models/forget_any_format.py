"""Breaks FN-8 (and FN-6): `cluster forget` deletes any stale `nodes/<id>` object, a format-3 one
too (a node gone for good, fenced; a retired one, released), not only a retired old-format
heartbeat. The records naming that id are then freed by nothing (an absent object frees nothing,
FN-5): they stay held until the operator fences the absent object.
Caught by: UP-2 (FN-8's delete judged on the bucket's state: what it removed was no old-format
heartbeat; the world asks forget of every node it knows gone, in the quiet phase).
"""

from model.node import Model
from model.operator import Operator, old_heartbeat_stale
from model.records import NodeRecord, OldHeartbeat

RULE = "FN-8"
CATCHES = "UP-2"


class ForgetAnyFormatOperator(Operator):
    def forgettable(self, st, rec, now) -> bool:
        return isinstance(rec, (OldHeartbeat, NodeRecord)) and old_heartbeat_stale(st.params, rec.written_at_ms,
                                                                                  now.wall_ms)


class ForgetAnyFormat(Model):
    name = "forget_any_format"
    operator = ForgetAnyFormatOperator()


MODEL = ForgetAnyFormat()
step = MODEL.step
