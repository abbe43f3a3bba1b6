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
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.optimize import linear_sum_assignment

from dlsched.models.hare.instance import HareInstance
from dlsched.models.hare.solution import TaskSchedule


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


def _gang(
    instance: HareInstance,
    priority: Callable[[int, float], float],
    fastest: bool,
    strict_order: bool,
) -> TaskSchedule:
    """Event-driven gang scheduler: a job starts when it gets its GPUs and keeps them."""
    jobs = instance.jobs
    num_gpus = instance.num_gpus
    free_at = [0.0] * num_gpus
    waiting = set(range(len(jobs)))
    items = []
    t = 0.0
    arrival_order = sorted(waiting, key=lambda n: (jobs[n].arrival, n))
    while waiting:
        arrived = [n for n in waiting if jobs[n].arrival <= t + 1e-12]
        if strict_order:
            head = next(n for n in arrival_order if n in waiting)
            candidates = [head] if head in arrived else []
        else:
            candidates = sorted(arrived, key=lambda n: (priority(n, t), n))[:1]
        idle = [g for g in range(num_gpus) if free_at[g] <= t + 1e-12]
        if candidates:
            n = candidates[0]
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
                waiting.discard(n)
                continue
        # advance to the next event: a GPU becomes idle or a job arrives
        nxt = [f for f in free_at if f > t + 1e-12] + [
            jobs[n].arrival for n in waiting if jobs[n].arrival > t + 1e-12
        ]
        t = min(nxt)
    return TaskSchedule.from_items(items)


def gavel_fifo(instance: HareInstance) -> TaskSchedule:
    return _gang(instance, lambda n, t: instance.jobs[n].arrival, fastest=True, strict_order=True)


def srtf(instance: HareInstance) -> TaskSchedule:
    jobs = instance.jobs

    def remaining(n: int, t: float) -> float:
        j = jobs[n]
        per_task = min(a + b for a, b in zip(j.train_time, j.sync_time, strict=True))
        waves = -(-j.tasks_per_round // min(j.tasks_per_round, instance.num_gpus))
        return j.rounds * waves * per_task

    return _gang(instance, remaining, fastest=True, strict_order=False)


def sched_homo(instance: HareInstance) -> TaskSchedule:
    jobs = instance.jobs

    def smith(n: int, t: float) -> float:
        j = jobs[n]
        avg = float(np.mean(j.train_time) + np.mean(j.sync_time))
        return j.rounds * j.tasks_per_round * avg / j.weight

    return _gang(instance, smith, fastest=False, strict_order=False)


def sched_allox(instance: HareInstance) -> TaskSchedule:
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
    # slot (m, q): the job is q-th from last on GPU m and delays q jobs (itself included)
    cost = np.zeros((n_jobs, n_gpus * n_jobs))
    for m in range(n_gpus):
        for q in range(1, n_jobs + 1):
            cost[:, m * n_jobs + q - 1] = q * p[:, m]
    rows, cols = linear_sum_assignment(cost)
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


BASELINES: dict[str, Callable[[HareInstance], TaskSchedule]] = {
    "gavel-fifo": gavel_fifo,
    "srtf": srtf,
    "sched-homo": sched_homo,
    "sched-allox": sched_allox,
}
