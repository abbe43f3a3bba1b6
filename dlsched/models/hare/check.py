"""Checker of the hare family (Hare_Sched (4)-(8), seed 002): feasibility and objective
re-computed from the raw instance with plain arithmetic (no model, no solver values).

Chen et al., *Hare*, HPDC 2022, Section 5.1. Training time occupies the GPU (8); the
synchronization that follows it does not (Algorithm 1, line 16) but delays the next round (7)
and the job's completion (6).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dlsched.errors import InfeasibleSolutionError

if TYPE_CHECKING:  # pragma: no cover
    from dlsched.models.hare.instance import HareInstance, Task
    from dlsched.models.hare.solution import TaskSchedule

#: Absolute tolerance per unit of horizon for comparisons of times.
REL_TOL = 1e-9


@dataclass(frozen=True)
class HareEvaluation:
    """What (4)-(8) say about one schedule."""

    objective: float  # sum_n w_n C_n
    completion: tuple[float, ...]  # C_n (6), per job
    makespan: float
    busy: tuple[float, ...]  # training time per GPU
    tol: float


def check_schedule(instance: HareInstance, schedule: TaskSchedule) -> HareEvaluation:
    """Verify (4), (5), (7) and (8) and evaluate the objective with C_n from (6).

    Raises :class:`InfeasibleSolutionError` naming the violated constraint.
    """
    tol = REL_TOL * max(1.0, instance.horizon())
    placed = placements(instance, schedule)  # (5)
    completion = completions(instance, placed, tol)  # (4), (7), (6)
    busy = gpu_busy(instance, placed, tol)  # (8)
    objective = sum(j.weight * c for j, c in zip(instance.jobs, completion, strict=True))
    return HareEvaluation(
        objective=objective,
        completion=tuple(completion),
        makespan=max(completion),
        busy=tuple(busy),
        tol=tol,
    )


def placements(instance: HareInstance, schedule: TaskSchedule) -> dict[Task, tuple[int, float]]:
    """(5): every task of the instance exactly once, on an existing GPU, at a finite start;
    each task's (GPU, start)."""
    jobs = instance.jobs
    m_count = instance.num_gpus
    seen: dict[Task, tuple[int, float]] = {}
    for e in schedule.entries:
        t = (e.job, e.round, e.index)
        if not (0 <= e.job < len(jobs)):
            raise InfeasibleSolutionError(f"task {t}: job index {e.job} does not exist")
        job = jobs[e.job]
        if not (0 <= e.round < job.rounds and 0 <= e.index < job.tasks_per_round):
            raise InfeasibleSolutionError(f"task {t} does not exist in job {job.name}")
        if t in seen:
            raise InfeasibleSolutionError(
                f"task {job.name}/r{e.round}/t{e.index} is scheduled twice (5)"
            )
        if not isinstance(e.gpu, int) or not (0 <= e.gpu < m_count):
            raise InfeasibleSolutionError(
                f"task {job.name}/r{e.round}/t{e.index} is on GPU {e.gpu!r}, "
                f"not one of 0..{m_count - 1} (5)"
            )
        if not math.isfinite(e.start):
            raise InfeasibleSolutionError(f"task {t} has start {e.start!r}")
        seen[t] = (e.gpu, e.start)
    # every key of seen is a distinct existing task: none is missing iff there are as many
    if len(seen) != instance.num_tasks:
        missing = [t for t in instance.tasks if t not in seen]
        n, r, k = missing[0]
        raise InfeasibleSolutionError(
            f"task {jobs[n].name}/r{r}/t{k} is not scheduled ({len(missing)} missing) (5)"
        )
    return seen


def completions(
    instance: HareInstance, placed: dict[Task, tuple[int, float]], tol: float
) -> list[float]:
    """(4) round 0 starts at or after the arrival, (7) round r after round r - 1 finishes
    (training + sync); C_n per job, the finish of its last round (6)."""
    completion = []
    for n, job in enumerate(instance.jobs):
        prev_end = job.arrival
        tc, ts = job.train_time, job.sync_time
        for r in range(job.rounds):
            end = -math.inf
            for k in range(job.tasks_per_round):
                g, s = placed[(n, r, k)]
                if r == 0 and s < job.arrival - tol:
                    raise InfeasibleSolutionError(
                        f"task {job.name}/r0/t{k} starts at {s} before the job arrives at "
                        f"{job.arrival} (4)"
                    )
                if r > 0 and s < prev_end - tol:
                    raise InfeasibleSolutionError(
                        f"task {job.name}/r{r}/t{k} starts at {s} before round {r - 1} "
                        f"finishes (training + sync) at {prev_end} (7)"
                    )
                end = max(end, s + tc[g] + ts[g])  # training then synchronization
            prev_end = end
        completion.append(prev_end)  # (6): the last round finishes last by (7)
    return completion


def gpu_busy(
    instance: HareInstance, placed: dict[Task, tuple[int, float]], tol: float
) -> list[float]:
    """(8) trainings on one GPU never overlap (synchronization does not occupy it); the
    training time per GPU."""
    jobs = instance.jobs
    on_gpu: list[list[tuple[float, Task]]] = [[] for _ in range(instance.num_gpus)]
    for t, (g, s) in placed.items():  # one pass over the tasks, then a sort per GPU
        on_gpu[g].append((s, t))
    busy = []
    for m in range(instance.num_gpus):
        mine = sorted(on_gpu[m])
        total = 0.0
        for (s1, t1), (s2, t2) in zip(mine, mine[1:], strict=False):
            end1 = s1 + jobs[t1[0]].train_time[m]
            if s2 < end1 - tol:
                raise InfeasibleSolutionError(
                    f"GPU {instance.gpus[m]}: task {jobs[t2[0]].name}/r{t2[1]}/t{t2[2]} starts "
                    f"at {s2} while {jobs[t1[0]].name}/r{t1[1]}/t{t1[2]} trains until {end1} (8)"
                )
        for _s, t in mine:
            total += jobs[t[0]].train_time[m]
        busy.append(total)
    return busy
