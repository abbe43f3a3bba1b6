"""Shared helpers of the hare methods: integer scaling of the data, and turning a schedule into
a verified :class:`~dlsched.result.Outcome` (the objective is always the checker's)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from dlsched.check.hare import HareEvaluation, check_schedule
from dlsched.instances.hare import HareInstance
from dlsched.result import Outcome
from dlsched.schedule.hare import TaskSchedule
from dlsched.solvers.base import SolveResult, Status

#: Largest power of ten tried to make the times (or the weights) integral.
MAX_TIME_SCALE = 10**6
#: Relative agreement demanded between a solver's objective and the checker's.
AGREEMENT = 1e-6


class AgreementError(AssertionError):
    """A solver's objective disagrees with the checker's re-evaluation of its schedule."""


def power_of_ten_scale(values: list[float], cap: int = MAX_TIME_SCALE) -> tuple[int, bool]:
    """Smallest power of ten s <= cap with s * v integral for all v; (cap, False) if none."""
    s = 1
    while s <= cap:
        if all(abs(v * s - round(v * s)) <= 1e-9 * max(1.0, abs(v * s)) for v in values):
            return s, True
        s *= 10
    return cap, False


def time_values(instance: HareInstance) -> list[float]:
    out = [j.arrival for j in instance.jobs]
    for j in instance.jobs:
        out.extend(j.train_time)
        out.extend(j.sync_time)
    return out


def instance_label(instance: HareInstance) -> tuple[str, str]:
    from dlsched.instances import instance_hash

    return instance.name, instance_hash(instance)


def verified_outcome(
    instance: HareInstance,
    method: str,
    schedule: TaskSchedule | None,
    status: Status,
    *,
    wall_time: float,
    bound: float | None = None,
    solver: SolveResult | None = None,
    claimed: float | None = None,
    claimed_is_upper: bool = False,
    details: Mapping[str, Any] | None = None,
) -> Outcome:
    """Check ``schedule`` and wrap it in an Outcome.

    ``claimed`` is the solver's own objective; it must agree with the checker within
    :data:`AGREEMENT` (relative), or be an upper bound of it when ``claimed_is_upper``
    (rounded-up data). Disagreement raises :class:`AgreementError`.
    """
    name, h = instance_label(instance)
    evaluation: HareEvaluation | None = None
    objective = None
    if schedule is not None:
        evaluation = check_schedule(instance, schedule)
        objective = evaluation.objective
        if claimed is not None:
            tol = AGREEMENT * max(1.0, abs(objective))
            ok = claimed >= objective - tol if claimed_is_upper else abs(claimed - objective) <= tol
            if not ok:
                raise AgreementError(
                    f"{method} on {name}: solver objective {claimed!r} != checker {objective!r}"
                )
    if bound is not None and objective is not None and bound > objective * (1 + AGREEMENT) + 1e-9:
        raise AgreementError(f"{method} on {name}: bound {bound} exceeds objective {objective}")
    if bound is not None and not math.isfinite(bound):
        bound = None
    return Outcome(
        method=method,
        instance=name,
        instance_hash=h,
        status=status,
        objective=objective,
        bound=bound,
        wall_time=wall_time,
        solution=schedule,
        evaluation=evaluation,
        solver=solver,
        details=dict(details or {}),
    )


def push_to_feasible(instance: HareInstance, schedule: TaskSchedule) -> tuple[TaskSchedule, float]:
    """Delay starts (never advance them) just enough to satisfy (4), (7) and (8) exactly, in
    order of start. A continuous MILP solution meets its constraints only up to the solver's
    feasibility tolerance; this removes such violations and returns the largest shift."""
    jobs = instance.jobs
    free = [0.0] * instance.num_gpus
    round_end: dict[tuple[int, int], float] = {}
    items, shift = [], 0.0
    for e in sorted(schedule.entries, key=lambda e: (e.start, e.round, e.gpu, e.task)):
        job = jobs[e.job]
        ready = job.arrival if e.round == 0 else round_end[(e.job, e.round - 1)]
        s = max(e.start, ready, free[e.gpu])
        shift = max(shift, s - e.start)
        free[e.gpu] = s + job.train_time[e.gpu]
        f = free[e.gpu] + job.sync_time[e.gpu]
        round_end[(e.job, e.round)] = max(round_end.get((e.job, e.round), f), f)
        items.append((e.task, e.gpu, s))
    return TaskSchedule.from_items(items), shift
