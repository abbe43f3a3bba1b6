"""Algorithm 1 of Hare (the rounding layer) and the list scheduler it is built on.

Chen et al., *Hare*, HPDC 2022, Section 5.2, Algorithm 1: from the relaxed starts x^_i compute
H_i = max_m (x^_i + T^c_{i,m} / 2); walk the tasks in non-decreasing H_i; a task of round 0 is
available at the job's arrival, a task of round r at the latest finish (training + sync) of the
tasks of round r - 1 (line 10); put it on the GPU with the earliest available time phi_m
(line 12), start at max(available, phi_m) and advance phi_m by the training time only (line 16).

Named variants (docs/errata.md, Seed 002):

- ``h="max"`` (as written) or ``h="assigned"``: H_i over all GPUs, or over the GPU the
  relaxation assigned the task to.
- ``gpu_rule="earliest-available"`` (as written) or ``"earliest-finish"``: the GPU minimizing
  max(available, phi_m) + T^c_{i,m} (heterogeneity-aware).

The functions are pure: no solver calls; ties are broken by the task order (job, round, index)
and by the lowest GPU index, or at random with an explicit ``numpy.random.Generator``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from dlsched.models.hare.instance import HareInstance, Task
from dlsched.models.hare.solution import TaskSchedule

GPU_RULES = ("earliest-available", "earliest-finish")
H_RULES = ("max", "assigned")


class OrderError(ValueError):
    """A priority order puts a task before a task of an earlier round of its job."""


def middle_completion(
    instance: HareInstance,
    x_hat: Mapping[Task, float],
    y_hat: Mapping[Task, int] | None = None,
    h: str = "max",
) -> dict[Task, float]:
    """H_i = max_m (x^_i + T^c_{i,m}/2) (``h="max"``) or x^_i + T^c_{i,y^_i}/2."""
    if h not in H_RULES:
        raise ValueError(f"unknown H rule {h!r} (known: {', '.join(H_RULES)})")
    out = {}
    for i in instance.tasks:
        tc = instance.jobs[i[0]].train_time
        if h == "max":
            out[i] = x_hat[i] + max(tc) / 2
        else:
            if y_hat is None:
                raise ValueError("h='assigned' needs the relaxation's assignment y^")
            out[i] = x_hat[i] + tc[y_hat[i]] / 2
    return out


def priority_order(
    instance: HareInstance,
    key: Mapping[Task, float],
    rng: np.random.Generator | None = None,
) -> list[Task]:
    """Tasks in non-decreasing ``key`` (line 4); ties by (job, round, index), or shuffled by
    ``rng`` before a stable sort."""
    tasks = list(instance.tasks)
    if rng is not None:
        perm = rng.permutation(len(tasks))
        tasks = [tasks[p] for p in perm]
    return sorted(tasks, key=lambda t: key[t])


def list_schedule(
    instance: HareInstance,
    order: Sequence[Task],
    gpu_rule: str = "earliest-available",
    allowed: Mapping[int, Sequence[int]] | None = None,
) -> TaskSchedule:
    """Lines 5-17 of Algorithm 1 for a given task sequence.

    ``allowed`` optionally restricts job n to a subset of GPUs (used by baselines).
    Raises :class:`OrderError` if a task comes before a task of the previous round of its job
    (line 10 then reads a start that does not exist yet).
    """
    if gpu_rule not in GPU_RULES:
        raise ValueError(f"unknown GPU rule {gpu_rule!r} (known: {', '.join(GPU_RULES)})")
    jobs = instance.jobs
    phi = [0.0] * instance.num_gpus  # line 2
    done: dict[tuple[int, int], int] = {}
    round_end: dict[tuple[int, int], float] = {}
    items = []
    for i in order:  # line 5
        n, r, _k = i  # line 6
        job = jobs[n]
        if r == 0:  # line 7
            t = job.arrival  # line 8
        else:
            if done.get((n, r - 1), 0) < job.tasks_per_round:
                raise OrderError(
                    f"task {job.name}/r{r} is ordered before every task of round {r - 1} is"
                )
            t = round_end[(n, r - 1)]  # line 10
        gpus = range(instance.num_gpus) if allowed is None else allowed[n]
        if gpu_rule == "earliest-available":
            g = min(gpus, key=lambda m: (phi[m], m))  # line 12
        else:
            g = min(gpus, key=lambda m: (max(t, phi[m]) + job.train_time[m], m))
        x = max(t, phi[g])  # line 13
        items.append((i, g, x))  # line 14
        fin = x + job.train_time[g] + job.sync_time[g]  # line 15
        round_end[(n, r)] = max(round_end.get((n, r), fin), fin)
        done[(n, r)] = done.get((n, r), 0) + 1
        phi[g] = x + job.train_time[g]  # line 16: sync overlaps the next task
    return TaskSchedule.from_items(items)


def algorithm1(
    instance: HareInstance,
    x_hat: Mapping[Task, float],
    y_hat: Mapping[Task, int] | None = None,
    *,
    h: str = "max",
    gpu_rule: str = "earliest-available",
    rng: np.random.Generator | None = None,
) -> TaskSchedule:
    """Algorithm 1 from a relaxed solution (x^, y^)."""
    key = middle_completion(instance, x_hat, y_hat, h)
    return list_schedule(instance, priority_order(instance, key, rng), gpu_rule)
