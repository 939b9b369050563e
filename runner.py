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

import sys

from nodelease.cli import main

if __name__ == "__main__":
    sys.exit(main())
