"""Hard time limits for work that cannot stop itself, such as building a large Pyomo model.

A solver honours its own time limit, but building and transforming a model (pyomo.gdp, tens
of thousands of disjunctions) cannot be interrupted. :func:`call_with_deadline` runs such work
in a forked child process and kills it at the deadline, so a route's time limit holds
whatever the model's size. The child's result (or its exception) comes back through a pipe.
"""

from __future__ import annotations

import multiprocessing as mp
import time
from collections.abc import Callable
from typing import Any, TypeVar

from dlsched.solvers.highs import reset_scheduler
from dlsched.solvers.progress import PROGRESS_EVERY, beating, note, say

T = TypeVar("T")


def _child(conn: Any, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    try:
        conn.send((True, fn(*args)))
    except BaseException as e:  # sent back and re-raised in the parent
        conn.send((False, e))
    finally:
        conn.close()


def _wait(recv: Any, seconds: float, label: str) -> bool:
    """Wait up to ``seconds`` for the child's answer, saying on stderr every
    :data:`PROGRESS_EVERY` seconds that the work goes on (unless a heartbeat says it)."""
    t0 = time.perf_counter()
    while True:
        left = seconds - (time.perf_counter() - t0)
        if left <= 0:
            return bool(recv.poll(0))
        if recv.poll(min(left, PROGRESS_EVERY)):
            return True
        elapsed = time.perf_counter() - t0
        if elapsed < seconds and not beating():
            say(f"{label}: {elapsed:.0f} s elapsed of {seconds:.0f} s")


def call_with_deadline(
    fn: Callable[..., T], *args: Any, seconds: float | None, label: str = "solving"
) -> T | None:
    """``fn(*args)`` if it returns within ``seconds`` (no limit if None), else None; the work
    is then killed. Exceptions raised by ``fn`` are raised here. Long waits print a progress
    line on stderr."""
    if seconds is None:
        return fn(*args)
    note(label)
    reset_scheduler()  # the child starts HiGHS's workers anew
    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, fn, args), daemon=True)
    proc.start()
    send.close()
    try:
        if not _wait(recv, seconds, label):
            return None
        ok, value = recv.recv()
    except EOFError:  # the child died without a word (killed by the system)
        return None
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join()
        recv.close()
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]


def passed(deadline: float | None) -> bool:
    """Whether ``deadline`` (a ``time.perf_counter()`` value, None: none) has passed: the
    check of work that stops itself between steps."""
    return deadline is not None and time.perf_counter() >= deadline


#: A child may overrun its time limit (a solver's own stop, then sending its answer) by this
#: share of the limit, and at most :data:`GRACE` seconds, before it is killed: a second at
#: 120 s, a tenth at 1 s (a whole second there more than doubled a run: hare Algorithm 1 on
#: 5,000 jobs at 1 s took 2.3 s).
GRACE, GRACE_SHARE = 1.0, 0.1


def grace(time_limit: float | None) -> float:
    """Seconds a child may run past ``time_limit`` (the method's whole limit; None: none)."""
    return GRACE if time_limit is None else min(GRACE, GRACE_SHARE * time_limit)


def within_time_limit(
    fn: Callable[..., T], *args: Any, time_limit: float | None, t0: float
) -> T | None:
    """``fn(*args)`` under what is left of ``time_limit`` since ``t0`` (a perf_counter value),
    plus :func:`grace`, model building included; None if it was killed at the limit."""
    if time_limit is None:
        return fn(*args)
    left = max(time_limit - (time.perf_counter() - t0), 0.0)
    label = getattr(fn, "__name__", "solving").strip("_").replace("_", " ")
    return call_with_deadline(fn, *args, seconds=left + grace(time_limit), label=label)


__all__ = ["GRACE", "GRACE_SHARE", "call_with_deadline", "grace", "passed", "within_time_limit"]
