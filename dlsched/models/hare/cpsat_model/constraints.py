"""The constraints of the CP-SAT model of Hare_Sched, one function per group, named after the
paper's equations (Chen et al., HPDC 2022, Section 5.1); :func:`add_constraints` is the list.
(4), a task starts at or after its job's arrival, is stated in the start variables' domains
(:mod:`.variables`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dlsched.models.hare.instance import HareInstance
from dlsched.solvers.deadline import NEVER, Deadline

from ..scaling import ScaledData
from .variables import Variables, gpu_classes, in_time


@dataclass(frozen=True)
class Classes:
    """The classes of identical GPUs: all of them (``pools``: representative -> its GPUs,
    when pooled) and those whose symmetry is cut by ordering (``ordered``: unpooled only)."""

    pooled: bool
    all: list[list[int]]
    ordered: list[list[int]]


def add_constraints(
    cp: Any,
    d: ScaledData,
    instance: HareInstance,
    v: Variables,
    classes: Classes,
    redundant: bool,
    deadline: Deadline = NEVER,
) -> None:
    """Every constraint of the model, in the paper's order where it has one."""
    assign_once(cp, instance, v)  # (5)
    gpu_capacity(cp, v, classes)  # (8)
    if redundant:
        redundant_cumulatives(cp, d, instance, v, classes.pooled)  # implied by (8)
    round_barrier(cp, instance, v, deadline)  # (7)
    completion_after_last_round(cp, instance, v)  # (6)
    identical_tasks_in_order(cp, instance, v)  # symmetry of a round's tasks
    identical_gpus_in_order(cp, instance, v, classes.ordered, deadline)  # symmetry of GPUs


def assign_once(cp: Any, instance: HareInstance, v: Variables) -> None:
    """(5) assign_once: every task on exactly one slot."""
    for i in instance.tasks:
        cp.add_exactly_one(v.present[(i, m)] for m in v.slots)


def gpu_capacity(cp: Any, v: Variables, classes: Classes) -> None:
    """(8) training intervals on one GPU never overlap; pooled identical GPUs: at most
    |class| trainings at a time, the same thing (fixed intervals of depth <= c colour with c)."""
    size = {cls[0]: len(cls) for cls in classes.all}
    for m, ivs in v.intervals.items():
        if classes.pooled and size[m] > 1:
            cp.add_cumulative(ivs, [1] * len(ivs), size[m])
        else:
            cp.add_no_overlap(ivs)


def redundant_cumulatives(
    cp: Any, d: ScaledData, instance: HareInstance, v: Variables, pooled: bool
) -> None:
    """Implied by (8): a cumulative of capacity |M| over every task at its minimum training
    time, and one per class of identical GPUs over the tasks placed in the class."""
    ivs = [
        cp.new_fixed_size_interval_var(v.start[i], min(d.tc[i[0]]), f"ivmin{i}")
        for i in instance.tasks
        if min(d.tc[i[0]]) > 0
    ]
    if ivs:
        cp.add_cumulative(ivs, [1] * len(ivs), instance.num_gpus)
    for cls in [] if pooled else gpu_classes(instance):
        if len(cls) < 2:
            continue
        ivs = []
        for i in instance.tasks:
            lit = cp.new_bool_var(f"in{i},{cls[0]}")
            cp.add(lit == sum(v.present[(i, m)] for m in cls))
            if d.tc[i[0]][cls[0]] > 0:
                size = d.tc[i[0]][cls[0]]
                ivs.append(cp.new_optional_fixed_size_interval_var(v.start[i], size, lit, ""))
        if ivs:
            cp.add_cumulative(ivs, [1] * len(ivs), len(cls))


def round_barrier(cp: Any, instance: HareInstance, v: Variables, deadline: Deadline) -> None:
    """(7) round_barrier: round r of a job starts after every task of round r - 1 finished
    (training + sync), through the barrier variable of (job, r)."""
    for n, job in enumerate(instance.jobs):
        in_time(deadline)
        for r in range(1, job.rounds):
            b = v.barrier[(n, r)]
            for k in range(job.tasks_per_round):
                cp.add(b >= v.finish[(n, r - 1, k)])
                cp.add(v.start[(n, r, k)] >= b)


def completion_after_last_round(cp: Any, instance: HareInstance, v: Variables) -> None:
    """(6) C_n at or after the finish of every task of the job's last round."""
    for n, job in enumerate(instance.jobs):
        for k in range(job.tasks_per_round):
            cp.add(v.completion[n] >= v.finish[(n, job.rounds - 1, k)])


def identical_tasks_in_order(cp: Any, instance: HareInstance, v: Variables) -> None:
    """The tasks of one round of one job are interchangeable: their starts are ordered."""
    for n, job in enumerate(instance.jobs):
        for r in range(job.rounds):
            for k in range(job.tasks_per_round - 1):
                cp.add(v.start[(n, r, k)] <= v.start[(n, r, k + 1)])


def identical_gpus_in_order(
    cp: Any, instance: HareInstance, v: Variables, classes: list[list[int]], deadline: Deadline
) -> None:
    """For identical GPUs m < m', the first task (in task order) on m' comes after the first
    task on m (swapping two such GPUs' schedules keeps the cost; starts are unchanged, so this
    agrees with :func:`identical_tasks_in_order`)."""
    tasks = instance.tasks
    for cls in classes:
        for m, m2 in zip(cls, cls[1:], strict=False):
            for p, i in enumerate(tasks):
                in_time(deadline)
                cp.add(v.present[(i, m2)] <= sum(v.present[(t, m)] for t in tasks[:p]))


__all__ = ["Classes", "add_constraints"]
