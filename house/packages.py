"""The map of the house: the tool's top-level packages, named once (issue 38).

Everything that lists them reads them here: the build (setup.py: the packages and data files the
wheel carries), the layering test (tests/house/test_architecture.py: who may import whom), the
mutants' lanes (mutants/probe.py: what a lane copies), the docs test (tests/house/test_docs_protocol.py:
the code whose rule ids docs/protocol.md must define), the install tests (tests/cli/test_install.py),
and docs/architecture.md's picture of the layers (the layering test compares the two).

Like house/errors.py, it imports nothing of the project: house/ is the bottom layer, and every layer
imports it.
"""

from __future__ import annotations

# the layers, from the bottom up: each imports only the layers below it (the command line's entry point,
# runner.py, sits above them all). house/, the errors and this map, imports nothing of the project;
# campaign/ is the library the command line (nodelease/) calls: campaigns, reports, validation, two
# reports compared, the compiled-module finder
LAYERS = ("house", "model", "history", "scenarios", "checkers", "counterexamples", "traces", "explore", "mutants",
          "guided", "campaign", "nodelease")

# beside the stack, the registries of models: broken_models/ (one rule wrong each) and amendments/ (the
# variants a finding or an open question proposes). They import only house/ and model/, and
# broken_models' `load_model` knows amendments' variants too; every layer above model/ may use them.
REGISTRIES = ("broken_models", "amendments")

PACKAGES = LAYERS + REGISTRIES  # every top-level package of the tool: the wheel carries each, subpackages too

# the data files the tool reads at run time, per package (globs relative to it): the wheel carries these
DATA = {
    "amendments": ("verdicts.json", "plans/*.json"),  # the recorded verdicts and their counterexample plans
    "traces": ("trace-v1.schema.json",),  # the trace format's JSON schema (the loader validates with it)
    "campaign": ("price_tables/*.json",),  # the providers' price tables, with their billing rules (campaign/prices.py)
}
