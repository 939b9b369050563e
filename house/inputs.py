"""The one reading of every number a user types (issue 50): an option's value, a `KEY=MS` pin, a
`local:W`. Each reader refuses, in words that name the value, what no run could mean: text that is no
number, NaN and infinity (a budget of NaN seconds never ends, and NaN in a report is not JSON),
a value below the option's least (zero and negative budgets alike: a budget is positive), and a
worker count above what the machine can run (`max_workers`).

The readers come two ways: `integer` and `number` raise UsageError (one line, exit 2) where a
command reads a value itself; `count`, `seconds`, `amount` and `workers` are argparse types (the
command line turns their refusal into the same one line). Like house/errors.py, this module
imports nothing of the project.
"""

from __future__ import annotations

import argparse
import math
import os

from .errors import UsageError

WORKERS_PER_CORE = 4  # more worker processes than this per core only queue for the cores, and each costs memory


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def max_workers() -> int:
    """The most worker processes a run starts: WORKERS_PER_CORE per core (each is a whole interpreter
    with its share of the seeds; more would only wait for a core)."""
    return WORKERS_PER_CORE * max(cores(), os.cpu_count() or 1)


def integer(text: str, what: str, least: int | None = None, most: int | None = None) -> int:
    """`text` as an integer in [least, most] (UsageError naming `what` otherwise)."""
    try:
        v = int(str(text).strip())
    except ValueError:
        raise UsageError(f"{what}: {text!r} is not an integer") from None
    _bounds(v, what, least, most)
    return v


def number(text: str, what: str, least: float | None = None, above: float | None = None,
           most: float | None = None) -> float:
    """`text` as a finite number, at least `least` or above `above`, at most `most` (UsageError
    naming `what` otherwise). NaN and infinity are never numbers here."""
    try:
        v = float(str(text).strip())
    except ValueError:
        raise UsageError(f"{what}: {text!r} is not a number") from None
    if not math.isfinite(v):
        raise UsageError(f"{what}: {text!r} is not a finite number")
    if above is not None and not v > above:
        raise UsageError(f"{what}: must be positive, got {text}" if above == 0 else
                         f"{what}: must be above {above:g}, got {text}")
    _bounds(v, what, least, most)
    return v


def _bounds(v, what: str, least, most) -> None:
    if least is not None and v < least:
        raise UsageError(f"{what}: must be at least {least}, got {v:g}")
    if most is not None and v > most:
        raise UsageError(f"{what}: must be at most {most}, got {v:g}")


def worker_count(text, what: str = "--workers") -> int:
    """A number of worker processes: at least 1, at most `max_workers()`."""
    n = integer(text, what, least=1)
    cap = max_workers()
    if n > cap:
        raise UsageError(f"{what}: {n} worker processes on {cores()} cores is more than the {cap} this machine "
                         f"runs at once ({WORKERS_PER_CORE} per core)")
    return n


# --- as argparse types (a refusal becomes `argument --x: <why>`, one line, exit 2) -----------------------


def _as_type(read, name: str):
    def parse(text: str):
        try:
            return read(text)
        except UsageError as e:
            raise argparse.ArgumentTypeError(str(e).split(": ", 1)[-1]) from None

    parse.__name__ = name  # (argparse names the type in some messages)
    return parse


def count(least: int = 1, most: int | None = None):
    """An integer option of at least `least` (1: a count of things; 0: a count that may be none)."""
    return _as_type(lambda t: integer(t, "value", least, most), "integer")


def seconds():
    """A duration or budget in seconds: a finite number above 0."""
    return _as_type(lambda t: number(t, "value", above=0), "seconds")


def amount(least: float = 0.0):
    """A finite number of at least `least` (a tolerance, an instant)."""
    return _as_type(lambda t: number(t, "value", least=least), "number")


def workers():
    """A number of worker processes (`worker_count`)."""
    return _as_type(lambda t: worker_count(t, "value"), "workers")
