"""HiGHS's one global task scheduler per process: started with the thread count of a run,
restarted when that count changes, and stopped before a fork.

Its own module, importing no other part of :mod:`dlsched.solvers`, so that both the HiGHS
backend (:mod:`dlsched.solvers.highs`, before each run) and forked work
(:func:`dlsched.solvers.deadline.call_with_deadline`, before each fork) reach it without
importing each other; HiGHS itself is imported only when a run needs it.
"""

from __future__ import annotations

import sys

#: The thread count of HiGHS's global task scheduler in this process (None: not started).
_scheduler: dict[str, int | None] = {"threads": None}


def use_threads(threads: int) -> None:
    """Call before a HiGHS run with ``threads`` threads. Every run of a process shares one
    global task scheduler, started with the first run's thread count; in HiGHS 1.13 a later run
    asking for another count fails at once with an error status (a time-indexed LP bound came
    back empty in 0.2 s instead of proved in 6 s). The scheduler is restarted when the count
    changes."""
    import highspy

    if _scheduler["threads"] not in (None, threads):
        highspy.Highs.resetGlobalScheduler(True)
    _scheduler["threads"] = threads


def reset_scheduler() -> None:
    """Stop HiGHS's global task scheduler (the next run starts it anew); nothing if HiGHS was
    never loaded. Before a fork: a child inherits the scheduler without its worker threads, and
    once HiGHS ran multi-threaded here a MIP in the child crawled (the R||sum wC route's
    time-indexed stage after column generation: the 60 s limit instead of a proof in 10 s)."""
    if "highspy" in sys.modules:  # never import HiGHS only to stop it
        sys.modules["highspy"].Highs.resetGlobalScheduler(True)
    _scheduler["threads"] = None


__all__ = ["reset_scheduler", "use_threads"]
