"""A schedule into and out of the CP-SAT model of Hare_Sched: a known schedule as the
model's hint (relabelled to meet its symmetry breaking), and the schedule of a solution (GPUs
of a pooled class given by start)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from dlsched.models.hare.instance import HareInstance, Task
from dlsched.models.hare.solution import TaskSchedule

if TYPE_CHECKING:  # pragma: no cover
    from .build import CpsatHare


def canonical(
    instance: HareInstance, schedule: TaskSchedule, classes: list[list[int]]
) -> TaskSchedule:
    """The same schedule relabelled to satisfy the model's symmetry breaking: tasks of one
    round by start, then interchangeable GPUs by their first task in task order."""
    by = schedule.as_dict()
    items: dict[Task, tuple[int, float]] = {}
    for n, j in enumerate(instance.jobs):
        for r in range(j.rounds):
            vals = sorted((by[(n, r, k)] for k in range(j.tasks_per_round)), key=lambda v: v[1])
            for k, v in enumerate(vals):
                items[(n, r, k)] = v
    relabel = {m: m for m in range(instance.num_gpus)}
    first = {m: len(instance.tasks) for m in range(instance.num_gpus)}
    for p, i in enumerate(instance.tasks):
        g = items[i][0]
        first[g] = min(first[g], p)
    for cls in classes:
        for new, old in zip(cls, sorted(cls, key=lambda m: (first[m], m)), strict=True):
            relabel[old] = new
    return TaskSchedule.from_items((i, relabel[g], s) for i, (g, s) in items.items())


def add_hint(built: CpsatHare, instance: HareInstance, schedule: TaskSchedule) -> None:
    """Hint a feasible schedule (e.g. a list schedule) to CP-SAT; only when data are exact."""
    if not built.data.exact:
        return
    s = built.data.time_scale
    schedule = canonical(instance, schedule, built.gpu_classes)
    rep = {m: r for r, cls in built.pools.items() for m in cls}
    for e in schedule.entries:
        built.model.add_hint(built.start[e.task], int(round(e.start * s)))
        on = rep.get(e.gpu, e.gpu)
        for m in built.slots:
            built.model.add_hint(built.present[(e.task, m)], int(m == on))


def colour_pools(
    instance: HareInstance, items: list[tuple[Task, int, float]], pools: dict[int, list[int]]
) -> list[tuple[Task, int, float]]:
    """GPUs for a pooled solution: per class, tasks by start go to the GPU of the class that
    became free first (at most |class| trainings overlap, so one is always free)."""
    if not pools:
        return items
    free: dict[int, list[float]] = {rep: [-math.inf] * len(g) for rep, g in pools.items()}
    out = []
    for i, rep, st in sorted(items, key=lambda it: (it[2], it[0])):
        ends = free[rep]
        k = min(range(len(ends)), key=lambda x: (ends[x], x))
        if ends[k] > st + 1e-9:
            raise RuntimeError(f"pooled solution over capacity at {st} on class {pools[rep]}")
        ends[k] = st + instance.tc[i[0], rep]
        out.append((i, pools[rep][k], st))
    return out


def read_schedule(built: CpsatHare, instance: HareInstance, value: Any) -> TaskSchedule:
    """The schedule of a solution, ``value`` a solver's value function: each task's slot and
    start, the GPUs of a pooled class given by :func:`colour_pools`."""
    items = [
        (i, built.placed_on(i, value), value(built.start[i]) / built.data.time_scale)
        for i in instance.tasks
    ]
    return TaskSchedule.from_items(colour_pools(instance, items, built.pools))


__all__ = ["add_hint", "canonical", "colour_pools", "read_schedule"]
