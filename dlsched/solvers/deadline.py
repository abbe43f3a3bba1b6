"""Hard time limits for work that cannot stop itself, such as building a large Pyomo model.

A solver honours its own time limit, but building and transforming a model (pyomo.gdp, tens
of thousands of disjunctions) cannot be interrupted. :func:`call_with_deadline` runs such work
in a forked child process and kills it at the deadline, so a route's time limit holds
whatever the model's size. The child's result (or its exception) comes back through a pipe,
pickled behind its length.

The child is forked with ``os.fork``, not ``multiprocessing``: multiprocessing refuses to start
a child from a daemonic process, and the worker processes of a Dask cluster started with its
defaults are daemonic. A child never outlives its parent: on Linux the kernel kills it when the
parent dies (``PR_SET_PDEATHSIG``), elsewhere a thread of the child watches the parent's pid.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import pickle
import select
import signal
import struct
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from dlsched.solvers.base import SolveOptions, SolverSettings
from dlsched.solvers.highs_scheduler import reset_scheduler
from dlsched.solvers.progress import PROGRESS_EVERY, beating, note, say

T = TypeVar("T")

#: The header of a child's answer: the length of the pickled (ok, value) that follows.
_HEADER = struct.Struct("!Q")
#: Linux's prctl option asking for a signal when the parent dies.
PR_SET_PDEATHSIG = 1
#: Seconds between two looks of a child's watcher at its parent's pid (where prctl is missing).
ORPHAN_POLL = 1.0


def _die_with(parent: int) -> None:
    """In the child: be killed when ``parent`` dies (PDEATHSIG on Linux, else a watcher
    thread), and exit now if it already has."""
    armed = False
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    if os.getppid() != parent:  # died before the signal was asked for
        os._exit(1)
    if not armed:

        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(ORPHAN_POLL)
            os._exit(1)

        threading.Thread(target=watch, name="dlsched-orphan-watch", daemon=True).start()


def _answer(fn: Callable[..., Any], args: tuple[Any, ...]) -> bytes:
    """The child's answer: (True, result) or (False, exception), pickled behind its length (an
    exception that does not pickle comes back as a RuntimeError naming it)."""
    try:
        value: tuple[bool, Any] = (True, fn(*args))
    except BaseException as e:  # sent back and re-raised in the parent
        value = (False, e)
    try:
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as e:  # noqa: BLE001 - the parent gets a one-line reason instead
        data = pickle.dumps((False, RuntimeError(f"forked work's answer: {type(e).__name__}: {e}")))
    return _HEADER.pack(len(data)) + data


def _child(write: int, parent: int, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    """The forked child: answer through ``write`` and exit without running the parent's exit
    handlers (a Dask worker's, pytest's)."""
    code = 1
    try:
        _die_with(parent)
        data = memoryview(_answer(fn, args))
        while data:
            data = data[os.write(write, data) :]
        code = 0
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


class _Child:
    """A forked child running ``fn(*args)`` and the parent's end of its pipe."""

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        read, write = os.pipe()
        parent = os.getpid()
        self.pid = os.fork()
        if self.pid == 0:  # pragma: no cover - the child (exits in _child)
            os.close(read)
            _child(write, parent, fn, args)
        os.close(write)
        self.read = read
        self.buffer = bytearray()
        self.exited = False  # no more will come: end of file, or the child is gone
        self.reaped = False  # its pid is free again: never signal it

    def complete(self) -> bool:
        if len(self.buffer) < _HEADER.size:
            return False
        return len(self.buffer) >= _HEADER.size + _HEADER.unpack_from(self.buffer)[0]

    def _read(self, seconds: float) -> bool:
        """Read what is there within ``seconds``: whether anything (or the end) came."""
        if not select.select([self.read], [], [], seconds)[0]:
            return False
        chunk = os.read(self.read, 1 << 20)
        self.buffer += chunk
        self.exited = self.exited or not chunk
        return True

    def wait(self, seconds: float) -> bool:
        """Read what the child sends for up to ``seconds``: whether the whole answer came
        (else it is late, or :attr:`exited` without it). The end of the pipe is not waited
        for (a child forked meanwhile by another thread may hold a copy of its write end)."""
        end = time.perf_counter() + max(seconds, 0.0)
        while not self.complete() and not self.exited:
            left = end - time.perf_counter()
            if self._read(max(min(left, 0.1), 0.0)):
                continue
            if self._gone():  # dead (killed by the system): what it wrote is all there is
                while not self.exited and self._read(0.0):
                    pass
                self.exited = True
            elif left <= 0:
                break
        return self.complete()

    def answer(self) -> tuple[bool, Any]:
        return pickle.loads(bytes(self.buffer[_HEADER.size :]))  # type: ignore[no-any-return]

    def _gone(self, block: bool = False) -> bool:
        """Whether the child has ended (reaped now; ``block``: wait for it to end)."""
        if not self.reaped:
            try:
                pid, _ = os.waitpid(self.pid, 0 if block else os.WNOHANG)
            except ChildProcessError:  # reaped already (by someone else)
                pid = self.pid
            self.reaped = pid == self.pid
        return self.reaped

    def end(self) -> None:
        """Kill the child (if it still runs) and reap it."""
        if not self._gone():
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            self._gone(block=True)
        os.close(self.read)


def _wait(child: _Child, seconds: float, label: str) -> bool:
    """Wait up to ``seconds`` for the child's answer, saying on stderr every
    :data:`PROGRESS_EVERY` seconds that the work goes on (unless a heartbeat says it)."""
    t0 = time.perf_counter()
    while True:
        left = seconds - (time.perf_counter() - t0)
        if child.wait(min(max(left, 0.0), PROGRESS_EVERY)):
            return True
        if child.exited or left <= PROGRESS_EVERY:
            return False
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
    started = time.perf_counter()  # the setup counts against ``seconds``
    reset_scheduler()  # if HiGHS ran here, the child starts its workers anew
    note(label)
    child = _Child(fn, args)
    try:
        if not _wait(child, seconds - (time.perf_counter() - started), label):
            return None
        ok, value = child.answer()
    finally:
        child.end()
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]


#: A child may overrun its time limit (a solver's own stop, then sending its answer) by this
#: share of the limit, and at most :data:`GRACE` seconds, before it is killed: a second at
#: 120 s, a tenth at 1 s (a whole second there more than doubled a run: hare Algorithm 1 on
#: 5,000 jobs at 1 s took 2.3 s).
GRACE, GRACE_SHARE = 1.0, 0.1

#: Graces by which forked work ends before its parent's deadline (:meth:`Deadline.for_fork`).
FORK_GRACES = 2.0

#: The shortest limit handed to a solver: a solver given 0 s may read it as "no limit".
MIN_SOLVER_SECONDS = 0.01


def grace(time_limit: float | None) -> float:
    """Seconds a child may run past ``time_limit`` (the method's whole limit; None: none)."""
    return GRACE if time_limit is None else min(GRACE, GRACE_SHARE * time_limit)


Clock = Callable[[], float]

#: Where Linux shows a process's start (field 22 of its stat line, in clock ticks since boot).
PROC_STAT = "/proc/self/stat"


def process_age() -> float | None:
    """Seconds since this process started, read from the operating system (None where it
    does not say): the time the interpreter, the imports and the loading took before any
    code of the package ran. A start rounded to a clock tick makes the age at most a tick
    longer, never shorter."""
    try:
        with open(PROC_STAT) as f:
            stat = f.read()
        ticks = int(stat.rpartition(")")[2].split()[19])  # after the name, which may hold ")"
        since_boot = ticks / os.sysconf("SC_CLK_TCK")
        return max(time.clock_gettime(time.CLOCK_BOOTTIME) - since_boot, 0.0)
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def process_start(clock: Clock = time.perf_counter) -> float:
    """The reading of ``clock`` when this process started (now, where the system does not
    say when): where a command's time limit counts from, so that its whole process, start-up
    included, keeps the limit."""
    now = clock()
    age = process_age()
    return now if age is None else now - age


@dataclass(frozen=True)
class Deadline:
    """A method's time limit, started when the method starts: the one object a route receives,
    asks (:meth:`left`, :meth:`passed`), splits into stage budgets and hands to the solver
    (:meth:`solve_options`). No other module adds a limit to a clock.

    The budget-cutting operations are named by what they cut: :meth:`share_of_rest` (of what
    is left now), :meth:`share_from_start` (of the whole limit, counted from its start),
    :meth:`share_of_limit` (of the whole limit, counted from now, capped), :meth:`sooner`
    (ending some seconds sooner) and :meth:`for_fork` (the budget of a forked child).

    ``limit`` is this budget's seconds (None: no limit) from ``start``; ``whole`` is the
    method's whole limit, which a stage keeps (the grace of a forked child is a share of it);
    ``clock`` is injectable, so tests make time pass without waiting for it.
    """

    limit: float | None
    start: float
    whole: float | None
    clock: Clock = field(default=time.perf_counter, repr=False, compare=False)

    @classmethod
    def after(
        cls, limit: float | None, clock: Clock = time.perf_counter, start: float | None = None
    ) -> Deadline:
        """A deadline ``limit`` seconds from now (None: never), or from ``start`` (a reading
        of ``clock`` already past, e.g. :func:`process_start`)."""
        return cls(limit, clock() if start is None else start, limit, clock)

    @classmethod
    def never(cls, clock: Clock = time.perf_counter) -> Deadline:
        return cls.after(None, clock)

    @property
    def unlimited(self) -> bool:
        return self.limit is None

    def elapsed(self) -> float:
        """Seconds since this budget started."""
        return self.clock() - self.start

    def left(self) -> float | None:
        """Seconds left (never negative); None without a limit."""
        if self.limit is None:
            return None
        return max(self.limit - self.elapsed(), 0.0)

    def passed(self) -> bool:
        """Whether the limit has passed: the check of work that stops itself between steps."""
        return self.limit is not None and self.elapsed() >= self.limit

    def almost_passed(self, share: float) -> bool:
        """Whether less than ``share`` of this budget's limit is left (a stage stops early
        enough for the next step to finish in time)."""
        left = self.left()
        return left is not None and self.limit is not None and left <= share * self.limit

    def share_of_rest(self, share: float) -> Deadline:
        """A stage's budget: ``share`` of what is left now (all of it at 1; never past this
        deadline)."""
        left = self.left()
        return Deadline(
            None if left is None else share * left, self.clock(), self.whole, self.clock
        )

    def share_from_start(self, share: float) -> Deadline:
        """The budget that ends ``share`` of this budget's limit after its start (a stage
        planned from the start, e.g. "the hint may use the first 30 %")."""
        if self.limit is None:
            return self
        return Deadline(share * self.limit, self.start, self.whole, self.clock)

    def share_of_limit(self, share: float, cap: float | None = None) -> Deadline:
        """A stage's budget of ``share`` of this budget's limit (at most ``cap`` seconds) from
        now, never past this deadline (a stage sized from the whole budget, wherever it
        starts); without a limit, ``cap`` seconds (None: none)."""
        left = self.left()
        planned = None if self.limit is None else share * self.limit
        sizes = [s for s in (planned, cap, left) if s is not None]
        return Deadline(min(sizes) if sizes else None, self.clock(), self.whole, self.clock)

    def seconds(self, cap: float | None = None) -> float | None:
        """Seconds to hand a solver: what is left (at least :data:`MIN_SOLVER_SECONDS`),
        capped at ``cap``; None when there is neither a limit nor a cap."""
        left = self.left()
        if left is None:
            return cap
        left = max(left, MIN_SOLVER_SECONDS)
        return left if cap is None else min(left, cap)

    def solve_options(self, settings: SolverSettings | SolveOptions) -> SolveOptions:
        """The options of a solver call: ``settings`` with the time limit set to what is left
        of this deadline (the one place a solver call's limit is made). A
        :class:`SolveOptions` is read for its settings only: its own limit is ignored."""
        if isinstance(settings, SolveOptions):
            settings = settings.settings
        return settings.limited(self.seconds())

    def grace(self) -> float:
        """Seconds a forked child may run past this deadline: :func:`grace` of the whole
        limit."""
        return grace(self.whole)

    def sooner(self, seconds: float) -> Deadline:
        """This budget ending ``seconds`` sooner (at its start at the earliest): the time kept
        after it for work that must follow (a fallback, decoding, checking)."""
        if self.limit is None:
            return self
        return Deadline(max(self.limit - seconds, 0.0), self.start, self.whole, self.clock)

    def for_fork(self) -> Deadline:
        """This budget ending :data:`FORK_GRACES` graces sooner: the deadline of work forked
        by :meth:`run` (and of the solver in it) when the parent has work left after it (a
        fallback if it is killed, decoding, checking). It is killed a grace before the limit
        (at its own deadline plus the grace), which leaves the parent a grace for that work
        and a grace to spare on a loaded machine."""
        return self.sooner(FORK_GRACES * self.grace())

    def run(self, fn: Callable[..., T], *args: Any, label: str | None = None) -> T | None:
        """``fn(*args)`` under what is left of this deadline plus :meth:`grace`, model
        building included (in a forked child when there is a limit); None if it was killed at
        the limit, or not started when nothing was left."""
        left = self.left()
        if left is None:
            return fn(*args)
        if left <= 0:  # nothing left to run it in: not started (as if killed at once)
            return None
        label = label or getattr(fn, "__name__", "solving").strip("_").replace("_", " ")
        return call_with_deadline(fn, *args, seconds=left + self.grace(), label=label)


@dataclass(frozen=True)
class Allowance:
    """A deadline handed to a worker's task: the seconds ``left`` of it (None: no limit) when
    the task was handed out, at ``handed`` on ``clock``. Where the task starts,
    :meth:`deadline` counts the time it waited for a worker: a task queued behind another
    ends when the deadline it was handed ends, not that long after it starts. ``clock`` must
    read alike in every process of the pool (wall time, on a cluster of several hosts)."""

    left: float | None
    handed: float
    clock: Clock = time.time

    @classmethod
    def of(cls, deadline: Deadline) -> Allowance:
        """``deadline`` handed out now (it reads ``deadline.clock``)."""
        return cls(deadline.left(), deadline.clock(), deadline.clock)

    def deadline(self) -> Deadline:
        """The deadline where the task starts: what was left, less the time it waited."""
        if self.left is None:
            return Deadline.never(self.clock)
        waited = min(max(self.clock() - self.handed, 0.0), self.left)
        return Deadline.after(self.left - waited, self.clock)


#: No limit: the allowance of work handed out without a deadline.
UNLIMITED = Allowance(None, 0.0)


#: No time limit: the default of work that may be given a :class:`Deadline`.
NEVER = Deadline.never()


__all__ = [
    "UNLIMITED",
    "Allowance",
    "GRACE",
    "GRACE_SHARE",
    "FORK_GRACES",
    "MIN_SOLVER_SECONDS",
    "NEVER",
    "Deadline",
    "call_with_deadline",
    "grace",
    "process_age",
    "process_start",
]
