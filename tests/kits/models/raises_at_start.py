"""A model of the tests only, not a broken rule: it raises as its process starts, a bug in a model.
Every seed it runs is a tool failure (exit 4), never a violation, and `broken` never counts it
caught. tests/cli/test_cli.py puts this folder on broken_models' path to register it.
"""

from model.node import Model

RULE = "NL-5"
CATCHES = "LEASE-1"


class RaisesAtStart(Model):
    name = "raises_at_start"

    def on_start(self, inp, now_ms, out):
        raise RuntimeError("a bug in the model, met as its process starts")


MODEL = RaisesAtStart()
