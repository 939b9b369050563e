"""The errors the tool names, and the exit status each one ends a run with, named once.

Every layer may raise these (this module imports nothing of the project); only the command
line turns them into an exit status and one line on stderr. An outcome the protocol expects
(a violation) is not an error: it is a verdict, exit 1. A bug in a model, a world or a checker
is a `ToolFailure`: never reported as a violation, never counted as a broken model caught.
"""

from __future__ import annotations

from enum import IntEnum


class Exit(IntEnum):
    """What a run's exit status means (the README's table follows it: tests/cli/test_cli.py checks)."""

    PASSED = 0  # every seed judged passed (or, for `broken`, every broken model was caught)
    VIOLATION = 1  # an invariant was violated (or a broken model was not caught)
    USAGE = 2  # bad usage, input or setup: nothing was judged
    ENVIRONMENT = 3  # the environment failed during the run (a real bucket stopped answering)
    TOOL = 4  # the tool itself failed: an exception in a model, a world or a checker

    @property
    def meaning(self) -> str:
        return _MEANING[self]


_MEANING = {
    Exit.PASSED: "passed: every seed held every invariant (broken: every broken model caught by its invariant)",
    Exit.VIOLATION: "a violation: an invariant failed (broken: a broken model not caught, or the control failed)",
    Exit.USAGE: "bad usage, input or setup: nothing was judged",
    Exit.ENVIRONMENT: "the environment failed (a real bucket stopped answering): no verdict",
    Exit.TOOL: "the tool itself failed (an exception in a model, a world or a checker): no verdict",
}


class ToolError(Exception):
    """An error the command line reports in one line (`<prog>: <what>: <message>`), ending the run
    with `status`."""

    status = Exit.TOOL
    what = "error"


class UsageError(ToolError):
    """Bad usage or input: one line, exit status 2."""

    status = Exit.USAGE


class EnvironmentFailure(ToolError):
    """The environment (a real endpoint) failed: no verdict, exit status 3."""

    status = Exit.ENVIRONMENT
    what = "environment failure"


class ToolFailure(ToolError):
    """The tool failed (an exception in a model, a world or a checker): exit status 4."""

    status = Exit.TOOL
    what = "tool failure"
