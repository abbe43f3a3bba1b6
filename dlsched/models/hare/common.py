"""Shared helpers of the hare methods: the typed result of an exact route, the budget of a route
called outside a method or followed by other work, and a repair of solver round-off in
continuous schedules."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dlsched.models.hare.instance import HareInstance
from dlsched.models.hare.solution import TaskSchedule
from dlsched.solvers.certify import Certificate, Proof, certify
from dlsched.solvers.deadline import Deadline

from .budget import CHECK_GRACES


@dataclass(frozen=True)
class RouteResult:
    """What an exact hare route hands to :func:`dlsched.result.verified_outcome`: its best
    schedule, its own objective for that schedule (original units), and what it proved."""

    schedule: TaskSchedule | None
    objective: float | None
    proof: Proof
    info: dict[str, Any] = field(default_factory=dict)

    def certified(self, name: str = "?", route: str = "?") -> Certificate:
        """Status, bound and gap of the route's own numbers (before the checker)."""
        return certify(self.objective, self.proof, instance=name, route=route)


#: A route that ends with less than this share of its time limit left reports that it ran into
#: the limit (status time_limit rather than feasible when nothing is proven).
NEAR_LIMIT = 0.05


def forked(deadline: Deadline) -> Deadline:
    """The budget of a model forked under ``deadline`` (:meth:`Deadline.run`) whose parent has
    work after it, a fallback when it is killed, then checking (:meth:`Deadline.for_fork`)."""
    return deadline.for_fork()


def before_checking(deadline: Deadline) -> Deadline:
    """The budget of a route whose schedule is decoded and checked after it: ending
    :data:`CHECK_GRACES` graces before ``deadline``."""
    return deadline.sooner(CHECK_GRACES * deadline.grace())


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
