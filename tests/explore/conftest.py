"""The explorations several tests read, each run once a session (an exploration is deterministic:
the same bounds, the same states)."""

from __future__ import annotations

import json

import pytest

from broken_models import load_model
from explore.search import MARGINS, Bounds, Explorer
from model.params import Params

PARAMS = Params(**MARGINS)


@pytest.fixture(scope="session")
def explored():
    """explored(model_name, **bounds) -> (explorer, outcome), run once per model and bounds. Not for a
    test that patches what an exploration calls (it would get an outcome explored without its patch)."""
    done: dict = {}

    def run(model_name: str, **bounds):
        key = (model_name, json.dumps(bounds, sort_keys=True))
        if key not in done:
            explorer = Explorer(load_model(model_name), model_name, PARAMS, Bounds(**bounds))
            done[key] = explorer, explorer.run()
        return done[key]

    return run
