"""Baselines of Hare's evaluation (Chen et al., HPDC 2022, Section 7.1), as schedules of the
same tasks so that the same checker evaluates them. The paper describes them in one sentence
each; the readings below are recorded in docs/errata.md (Seed 002).

- ``gavel_fifo``: jobs in arrival order (no overtaking); a job waits until min(|D_r|, |M|)
  GPUs are idle and takes the fastest idle ones (T^c + T^s of that job); it keeps them for all
  its rounds (job-level non-preemption) and runs the tasks of a round on them, several per GPU
  when it has fewer GPUs than tasks.
- ``srtf``: the same gang scheduler, but whenever GPUs free up the arrived job with the shortest
  remaining time (its total time on the fastest GPUs it could get) goes first.
- ``sched_homo``: heterogeneity-oblivious weighted scheduler with intra-job parallelism and
  job-level non-preemption: Smith's rule (weight / estimated work, GPU times averaged over
  GPUs), gang start on the lowest-indexed idle GPUs.
- ``sched_allox``: AlloX's min-cost bipartite matching of jobs to (GPU, position) slots with
  cost position x processing time; each job runs on one GPU only (no intra-job parallelism).

Each baseline takes an optional ``deadline`` (a :class:`~dlsched.solvers.deadline.Deadline`)
and raises :class:`BaselineTimeUp` past it; :func:`baseline_outcome` is a baseline as a method under
``--time-limit`` (no schedule, status time_limit, when cut).
"""

from __future__ import annotations

import heapq
import os
from collections.abc import Callable
from typing import Protocol

import numpy as np

from dlsched.models import MethodOptions
from dlsched.models.hare.instance import HareInstance
from dlsched.models.hare.solution import TaskSchedule
from dlsched.result import Outcome, no_solution, verified_outcome
from dlsched.solvers.deadline import Deadline, call_with_deadline


def _run_job_on(
    instance: HareInstance, n: int, gpus: list[int], start: float
) -> tuple[list[tuple[tuple[int, int, int], int, float]], float]:
    """Run all rounds of job n on ``gpus`` from ``start``; tasks of a round are dealt round-robin
    (fastest GPU first). Returns the task items and the job's completion."""
    job = instance.jobs[n]
    items = []
    t = start
    for r in range(job.rounds):
        free = {g: t for g in gpus}
        end = t
        for k in range(job.tasks_per_round):
            g = min(gpus, key=lambda m: (free[m] + job.train_time[m], m))
            s = free[g]
            items.append(((n, r, k), g, s))
            free[g] = s + job.train_time[g]
            end = max(end, s + job.train_time[g] + job.sync_time[g])
        t = end
    return items, t


class BaselineTimeUp(Exception):
    """A baseline passed its deadline before it had scheduled every job."""


class BaselineTooLarge(Exception):
    """A baseline would need more memory than the machine has free (the reason is the text)."""


def _check(deadline: Deadline | None) -> None:
    if deadline is not None and deadline.passed():
        raise BaselineTimeUp()


def _gang(
    instance: HareInstance,
    priority: Callable[[int], float],
    fastest: bool,
    deadline: Deadline | None,
) -> TaskSchedule:
    """Event-driven gang scheduler: at each event the arrived job of least (priority, index)
    waits for its GPUs (head-of-line: no other job overtakes it); a job keeps its GPUs for all
    its rounds. :class:`BaselineTimeUp` past ``deadline``."""
    jobs = instance.jobs
    num_gpus = instance.num_gpus
    free_at = [0.0] * num_gpus
    arrival_order = sorted(range(len(jobs)), key=lambda n: (jobs[n].arrival, n))
    arrived: list[tuple[float, int]] = []  # heap of (priority, job) of the arrived waiting jobs
    nxt = 0  # arrival_order[nxt:] have not arrived
    items = []
    t = 0.0
    while arrived or nxt < len(jobs):
        _check(deadline)
        while nxt < len(jobs) and jobs[arrival_order[nxt]].arrival <= t + 1e-12:
            n = arrival_order[nxt]
            heapq.heappush(arrived, (priority(n), n))
            nxt += 1
        idle = [g for g in range(num_gpus) if free_at[g] <= t + 1e-12]
        if arrived:
            n = arrived[0][1]
            need = min(jobs[n].tasks_per_round, num_gpus)
            if len(idle) >= need:
                if fastest:
                    tc, ts = jobs[n].train_time, jobs[n].sync_time
                    idle.sort(key=lambda g: (tc[g] + ts[g], g))
                chosen = sorted(idle[:need])
                its, end = _run_job_on(instance, n, chosen, t)
                items.extend(its)
                for g in chosen:
                    free_at[g] = end
                heapq.heappop(arrived)
                continue
        # advance to the next event: a GPU becomes idle or a job arrives
        events = [f for f in free_at if f > t + 1e-12]
        if nxt < len(jobs):
            events.append(jobs[arrival_order[nxt]].arrival)
        t = min(events)
    return TaskSchedule.from_items(items)


def gavel_fifo(instance: HareInstance, deadline: Deadline | None = None) -> TaskSchedule:
    """Arrival order, no overtaking: the arrived job of least (arrival, index) goes first."""
    return _gang(instance, lambda n: instance.jobs[n].arrival, True, deadline)


def srtf(instance: HareInstance, deadline: Deadline | None = None) -> TaskSchedule:
    jobs = instance.jobs

    def remaining(n: int) -> float:
        j = jobs[n]
        per_task = min(a + b for a, b in zip(j.train_time, j.sync_time, strict=True))
        waves = -(-j.tasks_per_round // min(j.tasks_per_round, instance.num_gpus))
        return j.rounds * waves * per_task

    return _gang(instance, remaining, True, deadline)


def sched_homo(instance: HareInstance, deadline: Deadline | None = None) -> TaskSchedule:
    jobs = instance.jobs

    def smith(n: int) -> float:
        j = jobs[n]
        avg = float(np.mean(j.train_time) + np.mean(j.sync_time))
        return j.rounds * j.tasks_per_round * avg / j.weight

    return _gang(instance, smith, False, deadline)


def sched_allox(instance: HareInstance, deadline: Deadline | None = None) -> TaskSchedule:
    jobs = instance.jobs
    n_jobs, n_gpus = len(jobs), instance.num_gpus
    # processing time of the whole job alone on GPU m: per round K T^c back to back (sync of a
    # task overlaps the next task's training), then the last task's sync ends the round.
    p = np.array(
        [
            [
                j.rounds * (j.tasks_per_round * j.train_time[m] + j.sync_time[m])
                for m in range(n_gpus)
            ]
            for j in jobs
        ]
    )
    # slot (m, q): the job is q-th from last on GPU m and delays q jobs (itself included);
    # column m * n_jobs + q - 1
    _check_memory(n_jobs * n_gpus * n_jobs)
    positions = np.arange(1, n_jobs + 1, dtype=float)
    cost = (p[:, :, None] * positions[None, None, :]).reshape(n_jobs, n_gpus * n_jobs)
    rows, cols = _assignment(cost, deadline)
    per_gpu: dict[int, list[tuple[int, int]]] = {m: [] for m in range(n_gpus)}
    for n, c in zip(rows, cols, strict=True):
        per_gpu[c // n_jobs].append((c % n_jobs, n))
    items = []
    for m, lst in per_gpu.items():
        t = 0.0
        for _q, n in sorted(lst, reverse=True):  # largest position-from-last runs first
            its, end = _run_job_on(instance, n, [m], max(t, jobs[n].arrival))
            items.extend(its)
            t = end
    return TaskSchedule.from_items(items)


#: Copies of AlloX's cost table (8-byte entries) alive at the peak: the table, and the
#: contiguous copy the matching makes of it.
ALLOX_TABLE_COPIES = 2


def _check_memory(entries: int) -> None:
    """Refuse, before allocating, a cost table whose copies would not fit in the memory free
    now: allocating it anyway ends in the kernel killing the process (jobs^2 x GPUs entries:
    20,000 jobs on 8 GPUs need 51 GB)."""
    need = ALLOX_TABLE_COPIES * 8 * entries
    free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    if need > free:
        raise BaselineTooLarge(
            f"sched-allox's matching needs {need / 2**30:.1f} GiB for its cost table "
            f"(jobs^2 x GPUs = {entries:,} entries), more than the {free / 2**30:.1f} GiB free"
        )


#: Cost entries (jobs^2 x GPUs) up to which AlloX's matching runs in this process: a few
#: milliseconds (100 jobs on 8 GPUs), less than starting the child that could kill it.
ALLOX_INLINE_ENTRIES = 100_000


def _assignment(cost: np.ndarray, deadline: Deadline | None) -> tuple[np.ndarray, np.ndarray]:
    """linear_sum_assignment(cost), killed at ``deadline`` with no grace (it cannot stop
    itself: seconds on a thousand jobs, and it grows as jobs^3 x GPUs; cut, the baseline has
    no schedule, so nothing is lost by not waiting)."""
    from scipy.optimize import linear_sum_assignment  # only AlloX needs SciPy

    _check(deadline)
    left = None if deadline is None else deadline.left()
    if left is None or cost.size <= ALLOX_INLINE_ENTRIES:
        return linear_sum_assignment(cost)  # type: ignore[no-any-return]
    got = call_with_deadline(linear_sum_assignment, cost, seconds=left, label="AlloX matching")
    if got is None:
        raise BaselineTimeUp()
    return got


def baseline_outcome(name: str, instance: HareInstance, options: MethodOptions) -> Outcome:
    """``BASELINES[name]`` as a method under the method's deadline: its verified schedule, or
    status time_limit with no schedule (why: ``details["reason"]``) when the limit passes
    before every job is scheduled (a partial gang schedule is no schedule; the baselines prove
    nothing, so there is no bound either)."""
    deadline = options.deadline
    try:
        sched = BASELINES[name](instance, deadline)
    except BaselineTimeUp:
        reason = f"time limit of {deadline.limit:g} s reached before {name} had scheduled every job"
        return no_solution(instance, name, reason, wall_time=deadline.elapsed(), hit_limit=True)
    except BaselineTooLarge as e:
        return no_solution(instance, name, str(e), wall_time=deadline.elapsed())
    return verified_outcome(instance, name, sched, wall_time=deadline.elapsed())


class Baseline(Protocol):
    def __call__(
        self, instance: HareInstance, deadline: Deadline | None = None
    ) -> TaskSchedule: ...


BASELINES: dict[str, Baseline] = {
    "gavel-fifo": gavel_fifo,
    "srtf": srtf,
    "sched-homo": sched_homo,
    "sched-allox": sched_allox,
}
