"""Breaks OR-4's acknowledgement rule (Replica::put): a data write is acknowledged when the
bucket acknowledges it, without re-checking is_valid.

A write that lands late, after the hold lost its validity and a new owner restored, is
then acknowledged to the client but missing from the new owner's data.
Caught by: INV-8 (nothing lost).
"""

from model.node import Model

RULE = "OR-4"
CATCHES = "INV-8"


class UncheckedDataAck(Model):
    name = "unchecked_data_ack"

    def data_write_valid(self, st, actor, gen, now) -> bool:
        return True  # no is_valid after the bucket's acknowledgement


MODEL = UncheckedDataAck()
step = MODEL.step
