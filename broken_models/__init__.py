"""Deliberately broken models: each differs from model/ in exactly one rule.

Every module states the rule it breaks (RULE) and the invariant that must
catch it (CATCHES); `python runner.py --broken` runs them all and a test pins
that each is caught.
"""

from __future__ import annotations

import importlib

# name -> module path; each module exposes MODEL, step, RULE, CATCHES and a docstring
BROKEN = {
    "unconditional_fence": "broken_models.unconditional_fence",  # BM-1
    "reused_generation": "broken_models.reused_generation",  # BM-2
    "unlocked_resolver": "broken_models.unlocked_resolver",  # BM-3
    "adopt_any_instance": "broken_models.adopt_any_instance",
    "drain_with_pending": "broken_models.drain_with_pending",
    "unchecked_data_ack": "broken_models.unchecked_data_ack",
    "dropped_pending_release": "broken_models.dropped_pending_release",
    "instant_start_check": "broken_models.instant_start_check",
}


def load(name: str):
    """The broken model's module."""
    return importlib.import_module(BROKEN[name])
