"""Run N seeds of the default swarm campaign in process, for counting a seed's instructions.

    PYTHONHASHSEED=0 valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
        $(python -c 'import sys; print(sys.executable)') benchmarks/instr_seeds.py 20

minus the same with 0 seeds (the imports), divided by N: instructions a seed, a figure the machine's load
does not move (docs/performance.md). Seeds 0..N-1, as a campaign's worker runs them (its GC settings too);
every module a seed needs is imported before the first, so the 0-seed run subtracts the imports whole.
`--profile` prints cProfile's top entries instead (run it with NODELEASE_PURE=1 to see Python's hotspots).
"""

import gc
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from campaign import compiled  # noqa: E402

compiled.install()

import checkers.result  # noqa: E402, F401  (imported by run_one at its first seed)
import counterexamples.necessity  # noqa: E402, F401
import scenarios.sim  # noqa: E402, F401  (the simulated world: imported at the first seed too)
from campaign.run import _worker_init, resolve, run_one  # noqa: E402


def main(argv: list[str]) -> None:
    count = int(argv[0]) if argv else 20
    spec = resolve("correct", "swarm")
    # the collector's counts start from nothing, whatever resolving the spec allocated: otherwise when its
    # passes fall moves with every change to the imports or the validation, by as much as 1 % of a seed
    gc.collect()
    _worker_init(spec)
    if "--profile" in argv:
        import cProfile
        import pstats

        with cProfile.Profile() as prof:
            for seed in range(count):
                run_one(seed, spec)
        pstats.Stats(prof).sort_stats("tottime").print_stats(40)
        return
    for seed in range(count):
        run_one(seed, spec)
    print(compiled.status())


if __name__ == "__main__":
    main(sys.argv[1:])
