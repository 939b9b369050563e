"""Signals at any instant (issue 50): the first SIGINT or SIGTERM stops the run, and every later one
waits until what the first one saves is saved.

Python's own SIGINT handler raises KeyboardInterrupt at whatever instant the signal lands, again for
each signal: a second Ctrl-C a few ms after the first landed in the code that was saving the partial
report, and the run ended with no report or with a traceback. `Guard` raises `Interrupted` for the
first signal only and, in the same handler call (before any other code runs), turns every later one
into a count: the code that catches the first one (a campaign's partial report, an s3 run's prefix)
cannot be interrupted again, and says how many more came. Only a fourth signal (AT_ONCE held) ends
the process at once, with one line, for a person whose save hangs.

Processes the run starts must not take the parent's handler with them: `no_signals_while_starting`
holds SIGINT and SIGTERM off while workers are forked or spawned (a forked worker sets its own
handlers, then `release`s them); a spawned one starts with SIGINT ignored.

Like house/errors.py, it imports nothing of the project.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager

from .errors import SIGNAL_STATUS, Interrupted

STOPPING = (signal.SIGINT, signal.SIGTERM)
AT_ONCE = 3  # held signals after which the process exits at once (an escape from a save that hangs)


class Guard:
    """The process's handler of SIGINT and SIGTERM while a command runs."""

    def __init__(self) -> None:
        self.first: str | None = None  # the signal that stopped the run
        self.again = 0  # signals that came after it (held: counted, never raised)
        self._before: dict = {}

    def install(self) -> "Guard":
        """The handler in place, then the signals let through (runner.py holds them off while the modules
        load: one that came meanwhile is raised here, as Interrupted)."""
        if threading.current_thread() is threading.main_thread():
            for sig in STOPPING:
                self._before[sig] = signal.signal(sig, self._on_signal)
            release()
        return self

    def _on_signal(self, signum, _frame) -> None:
        if self.first is not None:
            self.again += 1
            if self.again >= AT_ONCE and self.first != "exit":  # a person who means it: out, now
                import os
                import sys

                os.write(sys.stderr.fileno(), f"{self.again + 1} signals: stopping at once, nothing more saved\n"
                         .encode())
                os._exit(int(SIGNAL_STATUS.get(self.first, 130)))
            return
        self.first = signal.Signals(signum).name
        raise Interrupted(self.first)

    def later(self) -> str:
        """What to add to the line that reports the stop: the signals that came after the first."""
        if not self.again:
            return ""
        return f" ({self.again} more signal{'s' if self.again > 1 else ''} came while it was saved: held)"

    def restore(self) -> None:
        """The handlers as they were (a command run in-process, by a test)."""
        for sig, handler in self._before.items():
            signal.signal(sig, handler)
        self._before = {}

    def quiet(self) -> None:
        """From now to the process's exit, SIGINT and SIGTERM are ignored: the verdict is said, and the exit
        (joins, finalizers) can neither print a traceback nor be killed by a signal, which would give the
        process another status than the one said. (Ignored, not merely counted: Python sets a handler of its
        own back to the default as it finalizes, and a signal then would kill it.)"""
        self.first = self.first or "exit"
        self._before = {}
        if threading.current_thread() is threading.main_thread():
            for sig in STOPPING:
                signal.signal(sig, signal.SIG_IGN)


@contextmanager
def no_signals_while_starting(spawn: bool = False):
    """SIGINT and SIGTERM held off (blocked: they wait, none is lost) while worker processes start. A forked
    worker inherits the block and `release`s it once it has set its own handlers; for a spawned one
    (`spawn`), which starts a new interpreter, SIGINT is also ignored while it starts (the disposition is
    inherited across exec: it starts ignoring Ctrl-C, as its parent's workers must)."""
    main = threading.current_thread() is threading.main_thread()
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, STOPPING) if hasattr(signal, "pthread_sigmask") else None
    before = signal.signal(signal.SIGINT, signal.SIG_IGN) if spawn and main else None
    try:
        yield
    finally:
        if before is not None:
            signal.signal(signal.SIGINT, before)
        if old_mask is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)


def worker_handlers() -> None:
    """In a worker process: Ctrl-C (sent to the whole process group) is the parent's to handle, SIGTERM
    ends the worker outright; then the signals held off while it started are let through."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    release()


def release() -> None:
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPPING)
