#!/usr/bin/env python3
"""The node-lease model checker's command line, run from a checkout (installed: `nodelease-check`).

    python runner.py --seeds 20000                      # the CI run (`run` is the default subcommand)
    python runner.py run --model unconditional_fence    # a broken model: must fail
    python runner.py broken --seeds 200                 # every broken model must be caught
    python runner.py replay reports/X.json --seed 7
    python runner.py shrink reports/X.json              # its first failing seed shrunk to a counterexample
    python runner.py s3 URL --bucket NAME               # the same model against a real S3 endpoint
    python runner.py --help                             # every subcommand; SUBCOMMAND --help for its options

The command line itself is nodelease/cli.py; exit statuses are house.errors.Exit.
"""

import signal
import sys

if __name__ == "__main__" and hasattr(signal, "pthread_sigmask"):
    # SIGINT and SIGTERM wait (blocked, not lost) until the command line's own handler is in place
    # (house/signals.py, installed first thing in main): a Ctrl-C while the modules load is one line, never a
    # traceback
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})


def _started_too_late() -> int:
    """Ctrl-C while the tool's modules load, where signals cannot be held off: nothing ran; one line."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.stderr.write("runner.py: interrupted by SIGINT while starting: no verdict\n")
    return 130


try:
    from nodelease.cli import main
except KeyboardInterrupt:
    if __name__ != "__main__":
        raise
    sys.exit(_started_too_late())

if __name__ == "__main__":
    try:
        status = main()
    except KeyboardInterrupt:
        status = _started_too_late()
    sys.exit(status)
