"""The one worker pool: tasks run in forked worker processes, their results come back in task order.

Campaigns (campaign/run.py: chunks of seeds), the explorer (explore/search.py: clock combinations) and
anything else that spreads runs over processes use it. Each worker owns a pipe; there is no queue
shared between them. (A multiprocessing.Pool's shared task queue has a lock that an idle worker holds
while it waits: a worker killed from outside in that instant left its siblings, and the campaign joining
them, waiting for ever; seen in CI, stop 34, and reproduced by tests/cli/test_reliability.py.) The parent
waits on the pipes and the processes' sentinels together, so a worker that dies holding tasks is seen at
once and is the tool's failure (ToolFailure, exit 4, naming what it held); one that dies idle loses
nothing; a stopped run (the consumer gone, a signal, a failure) kills its workers outright, which is safe,
as none holds anything a sibling needs.

A worker may send notes up its pipe while it works (`note(payload)`: the explorer's progress); the parent
hands each to `on_note`, and calls `on_tick` when nothing came for `tick_s` seconds. Like house/errors.py,
this imports nothing of the project but the errors: every layer may use it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator

from .errors import ToolFailure

DEPTH = 2  # tasks a worker holds at once: the next one waits in its pipe while it sends the last one's result

_conn = None  # a worker's own end of its pipe (None in the parent): `note` writes to it


def note(payload) -> bool:
    """From inside a task: send `payload` to the parent's `on_note` now (False: not in a pool's worker)."""
    if _conn is None:
        return False
    try:
        _conn.send(("note", payload))
    except (BrokenPipeError, OSError):
        return False
    return True


def _serve(conn, work, init, init_args) -> None:
    """A worker process: tasks come down its own pipe and their results go back up it, until None or the
    parent is gone. Signals are the parent's to handle: Ctrl-C (sent to the whole process group) is ignored
    here, and SIGTERM ends the process outright."""
    from .signals import worker_handlers

    global _conn
    worker_handlers()  # (the parent's handlers came with the fork, held off until now: house/signals.py)
    _conn = conn
    if init is not None:
        init(*init_args)
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return  # the parent is gone
        if task is None:
            return
        try:
            answer = ("done", True, work(task))
        except Exception as e:  # (a task's own failures are the task's to keep; this is the worker's)
            answer = ("done", False, f"{type(e).__name__}: {e}")
        try:
            conn.send(answer)
        except (BrokenPipeError, OSError):
            return


def run_tasks(tasks: Iterable, work: Callable, workers: int, *, init: Callable | None = None, init_args: tuple = (),
              describe: Callable[[list], str] = lambda held: f"{len(held)} tasks", on_note: Callable | None = None,
              on_tick: Callable | None = None, tick_s: float | None = None, what: str = "the run",
              hint: str = "") -> Iterator:
    """Yield `work(task)` for each task, in the tasks' order, computed in `workers` forked processes (in this
    process with one worker, `init` called first). `tasks` may be endless (a run bounded by time): they are
    taken as they are handed out. `describe(held)` names the tasks a dead worker held, `hint` says what to do
    then (the error's words). Never more workers than the machine runs at once (house/inputs.py: a command
    refuses more where it reads the count; here, whoever calls, they are capped)."""
    from .inputs import max_workers
    from .signals import no_signals_while_starting

    workers = min(workers, max_workers())
    if workers <= 1:
        if init is not None:
            init(*init_args)
        for task in tasks:
            yield work(task)
        return
    import multiprocessing as mp
    from multiprocessing.connection import wait

    # forked workers inherit the compiled modules' finder (campaign/compiled.py), the imports and `work` itself
    ctx = mp.get_context("fork") if hasattr(os, "fork") else mp.get_context()
    source = enumerate(tasks)
    procs, conns = [], []
    finished = False
    try:
        for _ in range(workers):
            mine, theirs = ctx.Pipe()
            p = ctx.Process(target=_serve, args=(theirs, work, init, init_args), daemon=True)
            with no_signals_while_starting():  # (a signal in the fork would land in the worker, as the parent's)
                p.start()
            theirs.close()
            procs.append(p)
            conns.append(mine)
        held: list[list[tuple[int, object]]] = [[] for _ in procs]  # per worker, in the order sent
        done: dict[int, object] = {}
        following = 0

        def give(w: int) -> None:
            item = next(source, None)
            if item is not None:
                try:
                    conns[w].send(item[1])
                except OSError:
                    _lost(procs[w], [item, *held[w]], describe, what, hint)
                held[w].append(item)

        for _ in range(DEPTH):
            for w in range(workers):
                give(w)
        while any(held):
            busy = [w for w in range(workers) if held[w]]
            ready = set(wait([conns[w] for w in busy] + [procs[w].sentinel for w in busy], timeout=tick_s))
            if not ready and on_tick is not None:
                on_tick()
            for w in busy:
                if conns[w] in ready or (procs[w].sentinel in ready and conns[w].poll()):
                    while True:  # its notes, then (at most) one result
                        try:
                            message = conns[w].recv()
                        except (EOFError, OSError):
                            _lost(procs[w], held[w], describe, what, hint)
                        if message[0] == "note":
                            if on_note is not None:
                                on_note(message[1])
                            if conns[w].poll():
                                continue
                            break
                        _done, ok, answer = message
                        if not ok:
                            raise ToolFailure(f"a worker process of {what} failed: {answer}")
                        k, _task = held[w].pop(0)
                        done[k] = answer
                        give(w)
                        break
                elif procs[w].sentinel in ready:  # (a worker that died after its notes: seen on the next wait)
                    _lost(procs[w], held[w], describe, what, hint)
            while following in done:
                yield done.pop(following)
                following += 1
        finished = True
    finally:
        # done: each worker is told to finish and exits on its own; stopped: each is killed
        for c in conns:
            if finished:
                try:
                    c.send(None)
                except OSError:
                    pass
        for p in procs:
            if not finished:
                p.kill()
            p.join(timeout=10)
            if p.is_alive():
                p.kill()
                p.join()
        for c in conns:
            c.close()


def _lost(proc, held, describe, what, hint) -> None:
    """A worker died holding tasks (killed from outside, out of memory): they are lost. The tool's failure,
    never a verdict."""
    proc.join(timeout=1)
    how = (f"killed by signal {-proc.exitcode}" if proc.exitcode is not None and proc.exitcode < 0
           else f"exit status {proc.exitcode}")
    raise ToolFailure(f"a worker process of {what} died (pid {proc.pid}, {how}) holding "
                      f"{describe([task for _k, task in sorted(held, key=lambda kt: kt[0])])}: they are lost"
                      + (f"; {hint}" if hint else ""))
