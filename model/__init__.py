"""The node-lease protocol of ADR 0020 as a pure state machine.

One entry point: `step(state, input, now) -> (state, effects)`.
`state` is None before ProcessStarted. See model.io for the vocabulary.
"""

from .io import *  # noqa: F401,F403  (the vocabulary is the package's interface)
from .node import MODEL, ContractError, Model, NodeState, step
from .params import DEFAULT as DEFAULT_PARAMS, Params, ParamsError, validate

__all__ = ["step", "Model", "MODEL", "NodeState", "ContractError", "Params", "ParamsError", "validate", "DEFAULT_PARAMS"]
