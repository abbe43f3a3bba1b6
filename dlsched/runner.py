"""Where the many-instance commands (``dlsched sweep``, ``dlsched verify``) run their tasks: in
this process (``processes=0``), on a Dask LocalCluster of ``processes`` worker processes (the
machine's cores by default) or on an existing scheduler (``scheduler``). Consecutive calls of
one kind are grouped into tasks of about ``task_seconds`` (:class:`Batcher`) and each task's
results are streamed back as it finishes, so the caller (who alone writes the log) appends them
at once.

This module imports neither :mod:`dlsched.bounds` nor :mod:`dlsched.verify`: both import it.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import pickle
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from dlsched.errors import ClusterError, OptionError, first_line
from dlsched.solvers.deadline import Deadline

#: Environment of every worker process: one thread per numerical library (no oversubscription).
SINGLE_THREAD = {
    name: "1"
    for name in (
        "OMP_NUM_THREADS",
        "MKL_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "NUMEXPR_MAX_THREADS",
    )
}

#: Dask configuration of the workers the runner starts: one thread per library. (They are
#: daemonic, Dask's default: work forked under a deadline (:mod:`dlsched.solvers.deadline`)
#: does not need multiprocessing, which refuses children to a daemonic process.)
WORKER_CONFIG = {"distributed.nanny.pre-spawn-environ": SINGLE_THREAD}

#: Wall time a Dask task aims at: consecutive calls of one kind are grouped into one task of
#: about this long, from the times their first calls took (:class:`Batcher`). A task of a few
#: milliseconds costs Dask more than it computes.
TASK_SECONDS = 0.3
#: how long a pool trusts the worker count it last asked the scheduler for
SIZE_SECONDS = 5.0
#: A call may run this many times its time limit, plus :data:`STUCK_SECONDS`, before its task
#: is given up as stuck (:class:`Watchdog`): far past any limit, a solver's own stop included.
STUCK_FACTOR = 10.0
STUCK_SECONDS = 300.0


@dataclass(frozen=True, kw_only=True)
class RunnerOptions:
    """Where tasks run, and whether a progress bar shows it (the same options in every command
    that runs many instances: ``--processes``, ``--scheduler``, ``--task-seconds``,
    ``--quiet``)."""

    processes: int | None = None  # Dask worker processes; None: the machine's cores; 0: here
    scheduler: str | None = None  # address of an existing Dask scheduler
    task_seconds: float = TASK_SECONDS  # a Dask task's aim (calls grouped); 0: one call each
    progress: bool = True  # a tqdm bar on stderr


#: In this process, no progress bar (what a library call does unless told otherwise).
IN_PROCESS = RunnerOptions(processes=0, progress=False)

Call = tuple[Callable[..., Any], tuple[Any, ...]]


@dataclass(frozen=True)
class Watchdog:
    """When a pool gives up a task on Dask, and what its calls return then. A task of n calls
    is given up once it has been in flight for ``seconds`` per call, its own and those of the
    longest task in flight when it was submitted (the most it may wait for in its process);
    each of its calls then returns ``failed(i, message)`` (i: the call's index), the worker
    running it is restarted (when a nanny watches it) and the map goes on. A task in this
    process is never given up (nothing could stop it)."""

    seconds: float
    failed: Callable[[int, str], Any]

    @classmethod
    def past(cls, time_limit: float | None, failed: Callable[[int, str], Any],
             ) -> Watchdog | None:  # fmt: skip
        """The watchdog of calls with ``time_limit`` each: :data:`STUCK_FACTOR` times it plus
        :data:`STUCK_SECONDS`; None (no watchdog) without a limit."""
        if time_limit is None:
            return None
        return cls(STUCK_FACTOR * time_limit + STUCK_SECONDS, failed)

    def message(self, allowed: float | None) -> str:
        return f"StuckTask: given up after {allowed or 0:.0f} s (far past its time limit)"


def run_calls(calls: Sequence[Call]) -> list[tuple[Any, float]]:
    """Each call's result with its own wall time, in order (one task: one or more calls)."""
    out = []
    for fn, args in calls:
        started = Deadline.never()
        result = fn(*args)
        out.append((result, started.elapsed()))
    return out


class Batcher:
    """Which consecutive calls form the next task. Calls of the same kind are grouped until the
    task should last ``target`` seconds, judged from the median time of the last calls of that
    kind that finished; a kind not seen yet goes one call per task. A task never takes more than
    1 / (2 x processes) of the calls not yet submitted, so the last tasks are small and the
    processes finish together. ``target`` 0: one call per task. ``seen``: the times already
    observed per kind (a pool's, shared by its maps, so a search's small batches are grouped
    from the first)."""

    def __init__(self, kinds: Sequence[Any], processes: int, target: float = TASK_SECONDS,
                 seen: dict[Any, list[float]] | None = None) -> None:  # fmt: skip
        self.kinds, self.processes, self.target = list(kinds), max(1, processes), target
        self.next_index = 0
        self.seen: dict[Any, list[float]] = {} if seen is None else seen

    def observe(self, kind: Any, seconds: float) -> None:
        times = self.seen.setdefault(kind, [])
        times.append(seconds)
        del times[:-16]

    def size(self, kind: Any) -> int:
        times = self.seen.get(kind)
        if not times or self.target <= 0:
            return 1
        typical = sorted(times)[len(times) // 2]
        share = (len(self.kinds) - self.next_index) // (2 * self.processes)
        return max(1, min(int(self.target / max(typical, 1e-6)), share))

    def take(self) -> list[int]:
        """The indices of the next task (empty when every call was taken)."""
        start = self.next_index
        if start >= len(self.kinds):
            return []
        kind = self.kinds[start]
        end, limit = start + 1, start + self.size(kind)
        while end < min(limit, len(self.kinds)) and self.kinds[end] == kind:
            end += 1
        self.next_index = end
        return list(range(start, end))


def fork_server(modules: Sequence[str]) -> None:
    """Start multiprocessing's fork server (once per process; later calls do nothing) with
    ``modules`` imported and one thread per numerical library, so that the LocalCluster's worker
    processes, forked from it, start with the families already imported: the imports (seconds,
    a task costs milliseconds) are paid once instead of once per worker, and no worker imports
    while the others compute."""
    import multiprocessing
    from multiprocessing import forkserver

    multiprocessing.get_context("forkserver").set_forkserver_preload(list(modules))
    saved = {name: os.environ.get(name) for name in SINGLE_THREAD}
    os.environ.update(SINGLE_THREAD)
    try:
        forkserver.ensure_running()
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def connect(scheduler: str, timeout: float = 10) -> Any:
    """A Client of the Dask scheduler at ``scheduler``; OptionError naming it if unreachable."""
    from distributed import Client

    try:
        return Client(scheduler, timeout=timeout)
    except (OSError, ValueError, TypeError) as e:
        raise OptionError("--scheduler", scheduler, f"cannot connect: {e}") from None


@contextlib.contextmanager
def cluster_lost(where: str) -> Iterator[None]:
    """A cluster lost while tasks ran (the scheduler killed or unreachable, the tasks cancelled
    with it) as a :class:`ClusterError` naming ``where``, one line, instead of Dask's
    traceback."""
    from distributed.client import FuturesCancelledError
    from distributed.comm.core import CommClosedError

    try:
        yield
    except (FuturesCancelledError, CommClosedError) as e:
        raise ClusterError(
            f"{where}: the Dask cluster was lost ({first_line(e)}); what was written is kept, "
            "and the same command resumes"
        ) from None
    except (TypeError, RuntimeError, pickle.PicklingError) as e:  # the task, (de)serialized
        if "serializ" not in str(e) and "pickle" not in str(e).lower():
            raise
        raise ClusterError(
            f"{where}: a task could not be sent to the workers ({first_line(e)}): a function "
            "given to dlsched must be importable where the workers run, or be defined in the "
            "script, notebook or file named"
        ) from None


class Pool:
    """Where tasks run: in this process (``processes == 0``), or on Dask, the cluster started
    on first use (a LocalCluster of ``processes`` processes, or the client of ``scheduler``)
    and shared by every :meth:`map` until the pool is closed. ``preload``: the modules a worker
    needs (imported once, by the fork server the LocalCluster's workers are forked from, or
    here before the first call when the tasks run in this process)."""

    def __init__(self, options: RunnerOptions, preload: Sequence[str] = ()) -> None:
        self.serial = options.processes == 0 and options.scheduler is None
        self.processes, self.scheduler = options.processes, options.scheduler
        self.target = options.task_seconds
        self.preload = list(dict.fromkeys(["distributed", "numpy", __name__, *preload]))
        self.needed = list(preload)  # in this process: imported before the first call
        self.client: Any = None
        self.cluster: Any = None
        self.seen: dict[Any, list[float]] = {}  # call times per kind, across maps
        self._size: tuple[float, int] | None = None  # (when asked, workers)

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> Any:
        """The Dask client (the cluster started on the first call)."""
        import logging

        import dask
        from distributed import Client, LocalCluster

        if self.client is None:
            with dask.config.set(
                {**WORKER_CONFIG, "distributed.worker.multiprocessing-method": "forkserver"}
            ):
                if self.scheduler is not None:
                    self.client = connect(self.scheduler)
                else:
                    fork_server(self.preload)
                    try:
                        self.cluster = LocalCluster(
                            n_workers=self.processes or os.cpu_count() or 1,
                            threads_per_worker=1, processes=True, dashboard_address=":0",
                            silence_logs=logging.ERROR,
                        )  # fmt: skip
                    except (RuntimeError, OSError) as e:
                        raise ClusterError(
                            f"{self.where()}: the local Dask cluster did not start ({e})"
                        ) from None
                    self.client = Client(self.cluster)
        return self.client

    def size(self) -> int:
        """Worker processes (those connected to the scheduler; 1 in this process)."""
        if self.serial:
            return 1
        now = time.monotonic()
        if self._size is None or now - self._size[0] > SIZE_SECONDS:
            workers = len(self.start().scheduler_info().get("workers", {}))
            self._size = (now, max(1, workers))
        return self._size[1]

    def map(self, calls: Sequence[Call], kinds: Sequence[Any] | None = None,
            watchdog: Watchdog | None = None, until: Deadline | None = None,
            ) -> Iterator[list[tuple[int, Any]]]:  # fmt: skip
        """(index, result) of every call, one list per task as each task finishes; consecutive
        calls of one kind (``kinds``, default all alike) grouped into tasks (:class:`Batcher`).
        A call that raises stops the map with its exception (tasks already yielded stay); on
        Dask, a task stuck past ``watchdog`` gives its calls' ``failed`` results, and once
        ``until`` has passed the map ends without waiting for the tasks still out (dropped)."""
        if not calls:
            return
        batcher = Batcher(kinds if kinds is not None else [0] * len(calls), self.size(),
                          self.target, self.seen)  # fmt: skip
        if self.serial:
            for module in self.needed:
                importlib.import_module(module)
            self.needed = []
            while picked := batcher.take():
                yield self._finished(batcher, picked, run_calls([calls[i] for i in picked]))
            return
        yield from self._stream(calls, batcher, watchdog, until)

    def _stream(self, calls: Sequence[Call], batcher: Batcher, watchdog: Watchdog | None,
                until: Deadline | None = None) -> Iterator[list[tuple[int, Any]]]:  # fmt: skip
        """Dask: two tasks in flight per process, the next submitted as each one finishes (or
        is given up by the watchdog)."""
        client = self.start()
        running: dict[Any, tuple[list[int], Deadline]] = {}  # picked, the watchdog's allowance

        def submit() -> None:
            if picked := batcher.take():
                fut = client.submit(run_calls, [calls[i] for i in picked], pure=False)
                ahead = max((len(p) for p, _ in running.values()), default=0)
                allowed = None if watchdog is None else watchdog.seconds * (len(picked) + ahead)
                running[fut] = (picked, Deadline.after(allowed, time.monotonic))

        try:
            with cluster_lost(self.where()):
                for _ in range(2 * batcher.processes):
                    submit()
                while running and not (until is not None and until.passed()):
                    for fut in self._next(running, until):
                        picked, allowance = running.pop(fut)
                        if fut.done():
                            results = fut.result()
                            submit()  # before the client's own work on these results
                            yield self._finished(batcher, picked, results)
                        elif watchdog is not None:
                            self._give_up(fut)
                            submit()
                            yield [
                                (i, watchdog.failed(i, watchdog.message(allowance.limit)))
                                for i in picked
                            ]
        finally:  # stopped early (an error, or the caller's): nothing left running
            for fut in running:
                fut.cancel()

    @staticmethod
    def _next(running: dict[Any, tuple[list[int], Deadline]], until: Deadline | None = None,
              ) -> list[Any]:  # fmt: skip
        """The tasks that finished, in the order they were submitted; else, once the first
        allowance (or ``until``) has passed, the tasks past theirs."""
        from distributed import wait

        ends = [a for _, a in running.values()] + ([until] if until is not None else [])
        left = [t for a in ends if (t := a.left()) is not None]
        timeout = min(left) if left else None
        with contextlib.suppress(TimeoutError):  # the first allowance passed
            wait(list(running), timeout=timeout, return_when="FIRST_COMPLETED")
        finished = [f for f in running if f.done()]
        return finished or [f for f, (_, a) in running.items() if a.passed()]

    def _give_up(self, fut: Any) -> None:
        """Cancel a stuck task and restart the worker running it (a thread cannot be stopped;
        its forked work dies with the process), when a nanny watches it."""
        client = self.start()
        workers = [w for w, keys in client.processing().items() if fut.key in keys]
        fut.cancel()
        if workers:
            with contextlib.suppress(Exception):  # no nanny: the worker keeps its thread
                client.restart_workers(workers, timeout=60, raise_for_error=False)

    def follow(self, calls: Sequence[Call], then: Callable[[int, Any], Call | None],
               until: Deadline | None = None) -> None:  # fmt: skip
        """Run the lines of calls that start with ``calls``: as call ``i`` of line ``i``
        finishes with result r, ``then(i, r)`` (in this process) gives the line's next call
        (None: the line ends). The lines run side by side, one task per call (each call
        should be a task's worth of work); in this process, in turn. A call that raises stops
        every line with its exception. On Dask, once ``until`` has passed the lines end without
        waiting for the calls still out (their results dropped)."""
        if self.serial:
            for module in self.needed:
                importlib.import_module(module)
            self.needed = []
            queue = list(enumerate(calls))
            while queue:
                i, (fn, args) = queue.pop(0)
                nxt = then(i, fn(*args))
                if nxt is not None:
                    queue.append((i, nxt))
            return
        self._follow_dask(calls, then, until)

    def _follow_dask(self, calls: Sequence[Call], then: Callable[[int, Any], Call | None],
                     until: Deadline | None) -> None:  # fmt: skip
        from distributed import wait

        client = self.start()
        running: dict[Any, int] = {}

        def submit(i: int, call: Call) -> None:
            fut = client.submit(call[0], *call[1], pure=False)
            running[fut] = i

        try:
            with cluster_lost(self.where()):
                for i, call in enumerate(calls):
                    submit(i, call)
                while running and not (until is not None and until.passed()):
                    timeout = None if until is None else until.left()
                    with contextlib.suppress(TimeoutError):
                        wait(list(running), timeout=timeout, return_when="FIRST_COMPLETED")
                    for fut in [f for f in running if f.done()]:
                        i = running.pop(fut)
                        nxt = then(i, fut.result())
                        if nxt is not None:
                            submit(i, nxt)
        finally:
            for fut in running:
                fut.cancel()

    @staticmethod
    def _finished(batcher: Batcher, picked: list[int], results: list[tuple[Any, float]],
                  ) -> list[tuple[int, Any]]:  # fmt: skip
        for i, (_, seconds) in zip(picked, results, strict=True):
            batcher.observe(batcher.kinds[i], seconds)
        return [(i, result) for i, (result, _) in zip(picked, results, strict=True)]

    def where(self) -> str:
        """The cluster as the command line names it."""
        if self.scheduler is not None:
            return f"--scheduler {self.scheduler}"
        return f"--processes {self.processes}"

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()
        self.client = self.cluster = None


def execute(calls: Sequence[Call], options: RunnerOptions) -> Iterator[tuple[int, Any]]:
    """(index, result) of every call, as each finishes, on a pool of its own."""
    with Pool(options) as pool:
        for finished in pool.map(calls):
            yield from finished


def check_scheduler(options: RunnerOptions) -> None:
    """OptionError now, before anything is written, when ``options.scheduler`` is unreachable."""
    if options.scheduler is not None:
        connect(options.scheduler).close()


def progress_bar(total: int, desc: str, options: RunnerOptions, unit: str = "inst") -> Any:
    """A tqdm bar on stderr (disabled unless ``options.progress``)."""
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=not options.progress,
                dynamic_ncols=True, smoothing=0.1)  # fmt: skip


__all__ = [
    "IN_PROCESS",
    "SINGLE_THREAD",
    "STUCK_FACTOR",
    "STUCK_SECONDS",
    "TASK_SECONDS",
    "WORKER_CONFIG",
    "Batcher",
    "Call",
    "Pool",
    "RunnerOptions",
    "Watchdog",
    "check_scheduler",
    "connect",
    "execute",
    "fork_server",
    "progress_bar",
    "run_calls",
]
