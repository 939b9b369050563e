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
    VIOLATION = 1  # an invariant was violated (or a broken model was not caught; diff: something got worse)
    USAGE = 2  # bad usage, input or setup: nothing was judged
    ENVIRONMENT = 3  # the environment failed during the run (a bucket stopped answering, stalled, refused every
    # write; memory ran out), or gave it no work to judge (no acquisition)
    TOOL = 4  # the tool itself failed: an exception in a model, a world or a checker
    REPLAY_DIFFERS = 5  # a replay ran, but its history hash differs from the one its report or counterexample holds
    INTERRUPTED = 130  # SIGINT (Ctrl-C) stopped the run (128 + 2, as a shell says): the seeds finished are saved
    PIPE_CLOSED = 141  # stdout was closed before the output was written (`list | head`): quiet, output cut (128 + 13)
    TERMINATED = 143  # SIGTERM (a CI timeout) stopped the run (128 + 15): the seeds finished are saved

    @property
    def meaning(self) -> str:
        return _MEANING[self]


_MEANING = {
    Exit.PASSED: "passed: every seed held every invariant (broken: every broken model caught by its invariant)",
    Exit.VIOLATION: "a violation: an invariant failed (broken: a broken model not caught, or the control failed; "
                    "diff: something got worse beyond its tolerance)",
    Exit.USAGE: "bad usage, input or setup: nothing was judged",
    Exit.ENVIRONMENT: "the environment failed (a real bucket stopped answering, stalled past ttl + grace or "
                      "refused every write; memory ran out) or gave the run no work (no acquisition judged): "
                      "no verdict",
    Exit.TOOL: "the tool itself failed (an exception in a model, a world or a checker): no verdict",
    Exit.REPLAY_DIFFERS: "a replay whose history hash differs from its report's or counterexample's: the run "
                         "changed since it was written (a fault kind added since leaves it the same run: held off "
                         "in a report's seed, off in a counterexample)",
    Exit.INTERRUPTED: "interrupted by SIGINT (Ctrl-C): the seeds finished are in a report marked partial "
                      "(`run --resume REPORT` continues it); no verdict",
    Exit.TERMINATED: "terminated by SIGTERM (a CI timeout): the seeds finished are in a report marked partial "
                     "(`run --resume REPORT` continues it); no verdict",
    Exit.PIPE_CLOSED: "stdout was closed early (a pipe into head): the output was cut, quietly",
}

# the signals a run stops on, and the status each ends it with
SIGNAL_STATUS = {"SIGINT": Exit.INTERRUPTED, "SIGTERM": Exit.TERMINATED}


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


class Interrupted(KeyboardInterrupt):
    """A signal stopped the run: SIGINT (Ctrl-C; Python's own KeyboardInterrupt says the same) or
    SIGTERM (what a CI timeout sends), turned into this exception by the command line. A
    KeyboardInterrupt, not an Exception: nothing that catches a model's or a world's exceptions
    (a seed's tool failure) may swallow it."""

    def __init__(self, signal_name: str = "SIGINT") -> None:
        super().__init__(signal_name)
        self.signal_name = signal_name


def signal_name(interrupt: BaseException) -> str:
    """Which signal a KeyboardInterrupt stands for (Python raises a bare one on SIGINT)."""
    return getattr(interrupt, "signal_name", "SIGINT")


class Stopped(ToolError):
    """A signal stopped the run after its work was saved (a partial report): one line saying where,
    and the signal's status (130 for SIGINT, 143 for SIGTERM)."""

    what = "interrupted"

    def __init__(self, message: str, signal: str = "SIGINT") -> None:
        super().__init__(message)
        self.signal = signal
        self.status = SIGNAL_STATUS.get(signal, Exit.INTERRUPTED)


class ReplayDiffers(ToolError):
    """A replay ran, but its history hash is not the one recorded: exit status 5."""

    status = Exit.REPLAY_DIFFERS
    what = "replay differs"


class ToolFailure(ToolError):
    """The tool failed (an exception in a model, a world or a checker): exit status 4."""

    status = Exit.TOOL
    what = "tool failure"
