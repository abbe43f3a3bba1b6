"""Chronological branch and bound for small Hare_Sched instances (a few jobs, tens of tasks).

Chen et al., *Hare*, HPDC 2022, Section 5.1, model (4)-(8) on the integer data of
:mod:`scaling` (exact scaling only). CP-SAT and the time-indexed LP prove these instances
slowly: the barrier of a round is the *latest* finish of its tasks and every job competes for
the fast GPUs, so the LP relaxations sit 10-15 % below the optimum (benchmarks/READING_hare.md).
This search enumerates schedules task by task in order of start and proves by exhaustion.

**Enumeration.** A node is a prefix of a schedule: the tasks placed so far, each with a GPU and
a start. A child appends one more task of some job (the next one of its current round; tasks of
one round are interchangeable, so only their count matters) on some GPU m, starting at
s = max(free_m, release of its round, start of the previous task). Every schedule is dominated
by one so generated: sort any feasible schedule by start and re-place its tasks in that order
with this rule; by induction every start only moves earlier (each term of the max is no later
than in the schedule), so the result is feasible and no costlier (the objective is
non-decreasing in every finish). An optimal schedule is therefore among the leaves.

**Bound.** The cost of the finished jobs plus, for each unfinished job, w_n times the earliest
completion of that job alone: the rest of its current round on GPUs free from max(free_m,
release), its tasks split over the GPUs in the best way (tasks of the round on one GPU run one
after the other), then each further round at least ``rho_n``, the shortest round of the job
on idle GPUs; at each node, the stronger queue bound (:func:`branch_core.queue_bound`): every
task left takes a distinct place in some GPU's queue, behind the shortest trainings left on
that GPU, and is costed by an assignment. A node whose bound reaches the incumbent is cut.

**Dominance (exact, no loss).** (a) Two prefixes with the same task counts per job: if one has
every GPU free no later, every job's release and partial round finish no later, and no higher
cost of finished jobs, every completion of the other can be replayed from it at no higher
cost; the other is cut. Free times and releases are raised to the current start (nothing can
start earlier any more), and a partial round's latest finish to the alone end of the round
(every completion finishes the round no earlier, so its barrier is unchanged), which makes
more prefixes comparable. (b) Equal starts in a row are
placed in one order only (lower (job, GPU) first): the other order places the first task no
later and the second at the same start. (c) A task put on GPU m at s while another job's next
task could train entirely in the idle time before s on m (and its sync there is no longer than
its shortest training plus sync anywhere) is cut: moving that task into the gap makes it finish
no later wherever it was, and frees its GPU. (d) Identical GPUs (equal columns) with equal free
times are interchangeable: only the first is tried.

Each cut keeps some schedule at least as good among the explored ones (a well-founded argument:
every replacement moves starts earlier on the integer grid), so a search that ends proves its
incumbent optimal. A search stopped by the deadline proves nothing and only its incumbent is
used.

**Where it runs.** :mod:`branch_core` carries the search out over integer arrays, compiled by
numba and run in a thread without the GIL; this module prepares its arrays, watches the
deadline and Ctrl-C (setting the core's stop flag; a search still being compiled or loaded at
the deadline is left behind, unproven) and turns its moves into a schedule.
The first compilation takes tens of seconds and is cached beside the module
(:func:`compile_search`, run by ``make`` after installing). A process that finds no compiled
search for this machine (:func:`search_compiled`; a fresh ``pip install``) does not wait for
it: it starts the compilation in a process of its own (:func:`compile_in_background`) and the
exact route goes on with CP-SAT; the search joins the routes once its cache is written.
"""

from __future__ import annotations

import contextlib
import fcntl
import math
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from dlsched.models.hare.instance import HareInstance
from dlsched.models.hare.solution import TaskSchedule
from dlsched.solvers.deadline import Deadline
from dlsched.solvers.progress import note

from .branch_layout import BEST, COST, FOUND, NODES, STATS, STOPPED
from .scaling import ScaledData

if TYPE_CHECKING:  # the compiled core is imported where it runs: numba takes a second to load
    from . import branch_core as core

#: Largest number of tasks per round the search accepts: the scope it was measured on (its
#: bounds no longer enumerate a round's splits, so they would not need the limit).
MAX_ROUND_TASKS = 4
#: Largest number of task-count vectors (product over jobs of tasks + 1): dominance keys them
#: by one machine integer.
MAX_COUNT_STATES = 2**62
#: The queue bound's float sum, times 1 + this, is taken off before it is rounded up to an
#: integer: far above the rounding error of its terms (entries within a few ulps, a few hundred
#: of them summed) at every magnitude.
FLOAT_SLACK = 1e-9
#: How often (seconds) the caller's thread looks at the deadline while the search runs.
POLL_SECONDS = 0.02


@dataclass(frozen=True)
class BranchResult:
    """``objective``: the best schedule's cost in scaled units (None if none beat ``upper``);
    ``proven``: the search ended, so nothing costs less than min(objective, upper)."""

    schedule: TaskSchedule | None
    objective: int | None
    proven: bool
    nodes: int
    seconds: float


def applicable(instance: HareInstance) -> bool:
    """Rounds of at most :data:`MAX_ROUND_TASKS` tasks and task counts that fit one key."""
    states = math.prod(j.rounds * j.tasks_per_round + 1 for j in instance.jobs)
    return states < MAX_COUNT_STATES and all(
        j.tasks_per_round <= MAX_ROUND_TASKS for j in instance.jobs
    )


def tables(instance: HareInstance, d: ScaledData) -> core.Tables:
    """The instance as the search's arrays (:class:`branch_core.Tables`)."""
    from . import branch_core as core

    jobs = instance.jobs
    tc, ts = np.array(d.tc, dtype=np.int64), np.array(d.ts, dtype=np.int64)
    size = np.array([j.tasks_per_round for j in jobs], dtype=np.int64)
    total = np.array([j.rounds * j.tasks_per_round for j in jobs], dtype=np.int64)
    zero = np.zeros(instance.num_gpus, dtype=np.int64)
    rho = [core.best_end(tc[n], ts[n], zero, int(size[n])) for n in range(len(jobs))]
    fmin = (tc + ts).min(axis=1)
    cols = [(tuple(tc[:, m]), tuple(ts[:, m])) for m in range(instance.num_gpus)]
    twin = [cols.index(c) if cols.index(c) < m else -1 for m, c in enumerate(cols)]
    order = np.argsort(tc.T, axis=1, kind="stable")  # by (training, job) on each GPU
    radix = np.cumprod(np.concatenate(([1], total[:-1] + 1)))
    return core.Tables(
        size,
        np.array([j.rounds for j in jobs], dtype=np.int64),
        total,
        np.array(d.weight, dtype=np.int64),
        tc,
        ts,
        np.array(rho, dtype=np.int64),
        (ts <= fmin[:, None]).astype(np.int64),
        np.array(twin, dtype=np.int64),
        np.take_along_axis(tc.T, order, axis=1).copy(),
        order.astype(np.int64),
        radix.astype(np.int64),
        FLOAT_SLACK,
    )


def _schedule(instance: HareInstance, d: ScaledData, moves: np.ndarray) -> TaskSchedule:
    """The moves (job, GPU, scaled start) as a schedule, tasks numbered in order."""
    placed = [0] * instance.num_jobs
    items = []
    for n, m, s in moves.tolist():
        r, k = divmod(placed[n], instance.jobs[n].tasks_per_round)
        placed[n] += 1
        items.append(((n, r, k), m, s / d.time_scale))
    return TaskSchedule.from_items(items)


def _root(instance: HareInstance, d: ScaledData) -> core.Levels:
    from . import branch_core as core

    levels = core.new_levels(instance.num_jobs, instance.num_gpus, instance.num_tasks)
    levels.rel[0] = d.arrival
    return levels


def _run(
    target: Callable[[], None],
    control: np.ndarray,
    deadline: Deadline | None,
    started: Callable[[], bool],
) -> bool:
    """Run ``target`` in a thread and wait for it; set its stop flag at the deadline or on
    Ctrl-C (raised again once the search has stopped). Returns False when the thread was left
    behind: at the deadline or on Ctrl-C before ``started()`` (numba still compiling or
    loading the search, which no flag can stop; the search stops at its first check once it
    runs). An error in the thread is raised here: a search that failed must not read as one
    that ended."""
    failed: list[BaseException] = []

    def guarded() -> None:
        try:
            target()
        except BaseException as exc:  # re-raised in the caller's thread below
            failed.append(exc)

    worker = threading.Thread(target=guarded, name="branch and bound", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(POLL_SECONDS)
            if deadline is not None and deadline.passed():
                control[0] = 1
                if not started():
                    return False
    except BaseException:
        control[0] = 1
        if started():
            worker.join()
        raise
    if failed:
        raise failed[0]
    return True


def branch_and_bound(
    instance: HareInstance, d: ScaledData, upper: int, deadline: Deadline | None = None
) -> BranchResult:
    """Search for a schedule of scaled cost below ``upper`` (the cost of a known schedule);
    ``proven`` when the search ended before ``deadline`` (None: no limit). Needs exactly
    scaled data and :func:`applicable`."""
    if not d.exact or not applicable(instance):
        raise ValueError("branch_and_bound needs exactly scaled data and small rounds")
    t0 = time.perf_counter()
    stats = np.zeros(STATS, dtype=np.int64)
    stats[BEST] = upper
    control = np.zeros(1, dtype=np.int64)
    moves = np.zeros((instance.num_tasks, 3), dtype=np.int64)
    unit = d.time_scale * d.weight_scale
    note(
        lambda: (
            f"branch and bound: {int(stats[NODES]):,} nodes, "
            f"searching below {int(stats[BEST]) / unit:.10g}"
            if stats[NODES]
            else "branch and bound: loading the compiled search (compiling it the first time "
            "after installing takes about half a minute)"
        )
    )
    if deadline is not None and deadline.passed():
        control[0] = 1

    def search() -> None:  # in the thread: loading numba and the compiled code counts too
        from . import branch_core as core

        core.search(tables(instance, d), _root(instance, d), stats, control, moves)

    if not _run(search, control, deadline, lambda: bool(stats[NODES])):
        return BranchResult(None, None, False, 0, time.perf_counter() - t0)
    found = bool(stats[FOUND])
    return BranchResult(
        _schedule(instance, d, moves) if found else None,
        int(stats[BEST]) if found else None,
        not stats[STOPPED],
        int(stats[NODES]),
        time.perf_counter() - t0,
    )


def prefix_bounds(
    instance: HareInstance, d: ScaledData, moves: list[tuple[int, int, int]]
) -> tuple[int, list[int]]:
    """Along a schedule given as moves (job, GPU, scaled start) in order of start: the cost of
    the last prefix (the schedule's scaled cost once every task is placed) and, at every
    proper prefix, its cost plus the queue bound. A check of the bound: none may exceed the
    cost of an optimal schedule."""
    from . import branch_core as core

    t, lv = tables(instance, d), _root(instance, d)
    seen = []
    for i, (n, m, s) in enumerate(moves):
        core.alone(t, lv.counts[i], lv.free[i], lv.rel[i], lv.pm[i], lv.ends[i], lv.tails[i])
        cost = int(lv.scalars[i, COST])
        bound = core.queue_bound(t, lv.counts[i], lv.free[i], lv.rel[i], lv.ends[i], lv.tails[i])
        seen.append(cost + int(bound))
        lv.scalars[i + 1, COST] = core.child(t, lv, i, n, m, s)
    return int(lv.scalars[len(moves), COST]), seen


def compile_search() -> float:
    """Compile the search (numba caches it beside the module; the first compilation takes
    tens of seconds, later processes load it in well under a second) by solving a tiny
    instance; returns the seconds taken. ``make`` runs it once after installing."""
    from dlsched.models.hare.instance import HareJob
    from dlsched.models.hare.scaling import scale_data

    t0 = time.perf_counter()
    jobs = (
        HareJob("a", 0.0, 1.0, 2, 2, (1.0, 2.0), (0.0, 1.0)),
        HareJob("b", 1.0, 2.0, 1, 1, (2.0, 1.0), (1.0, 0.0)),
    )
    inst = HareInstance("compile", ("g0", "g1"), jobs)
    d = scale_data(inst)
    got = branch_and_bound(inst, d, 10**12)
    if got.schedule is not None:
        moves = [(e.job, e.gpu, round(e.start * d.time_scale)) for e in got.schedule.entries]
        prefix_bounds(inst, d, moves)
    return time.perf_counter() - t0


def search_compiled() -> bool:
    """Whether numba's cache holds the search compiled for this machine, this numba and this
    source (numba's own index, read without compiling anything); False when it cannot tell."""
    try:
        from . import branch_core as core

        magic = core.search.targetctx.codegen().magic_tuple()  # type: ignore[attr-defined]
        index = core.search._cache._cache_file._load_index()  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - an unreadable cache is a cache to build
        return False
    return any(key[1] == magic for key in index)


def compile_in_background() -> None:
    """Compile the search in a detached process (``python -m dlsched.models.hare.branch
    --once``), which outlives this one and writes numba's cache; returns at once."""
    subprocess.Popen(
        [sys.executable, "-m", __name__, "--once"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def _compile_once() -> None:
    """:func:`compile_search` unless another process holds the compile lock (then nothing)."""
    lock = Path(tempfile.gettempdir()) / f"dlsched-branch-{os.getuid()}.lock"
    with open(lock, "w") as f, contextlib.suppress(BlockingIOError):
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if not search_compiled():
            compile_search()


if __name__ == "__main__":
    if sys.argv[1:] == ["--once"]:
        _compile_once()
    else:
        print(f"branch and bound compiled in {compile_search():.1f} s")


__all__ = [
    "MAX_ROUND_TASKS",
    "BranchResult",
    "applicable",
    "branch_and_bound",
    "compile_in_background",
    "compile_search",
    "prefix_bounds",
    "search_compiled",
]
