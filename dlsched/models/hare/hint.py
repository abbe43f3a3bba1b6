"""The exact route's hint: quick feasible schedules of the instance (list schedules by several
priorities, then the baselines), the best of them by the checker's objective. Its objective
bounds the CP-SAT model from above, and it is returned when nothing better is found."""

from __future__ import annotations

from dlsched.models.hare.check import check_schedule
from dlsched.models.hare.instance import HareInstance
from dlsched.models.hare.solution import TaskSchedule
from dlsched.solvers.deadline import Deadline


def hint_candidates(
    instance: HareInstance, deadline: Deadline | None = None
) -> list[tuple[str, TaskSchedule]]:
    """Quick feasible schedules: list schedules by several priorities (both GPU rules), then
    the baselines, until ``deadline`` (the first list schedule always runs)."""
    from .baselines import BASELINES, BaselineTimeUp, BaselineTooLarge
    from .rounding import list_schedule

    jobs = instance.jobs
    tc = instance.tc
    ts = instance.ts
    fast = (tc + ts).min(axis=1)
    keys = {
        "arrival": lambda i: (jobs[i[0]].arrival, i[1], -jobs[i[0]].weight, i[0], i[2]),
        "smith": lambda i: (
            -jobs[i[0]].weight / (fast[i[0]] * jobs[i[0]].rounds),
            i[0],
            i[1],
            i[2],
        ),
        "release-smith": lambda i: (
            jobs[i[0]].arrival + i[1] * fast[i[0]] - jobs[i[0]].weight / fast[i[0]],
            i[0],
            i[1],
            i[2],
        ),
        "chain-mid": lambda i: (
            jobs[i[0]].arrival + i[1] * fast[i[0]] + tc[i[0]].max() / 2,
            i[0],
            i[1],
            i[2],
        ),
    }
    out: list[tuple[str, TaskSchedule]] = []

    def late() -> bool:
        return bool(out) and deadline is not None and deadline.passed()

    for name, key in keys.items():
        if late():
            return out
        order = sorted(instance.tasks, key=key)
        for rule in ("earliest-finish", "earliest-available"):
            if late():
                return out
            try:
                out.append((f"{name}/{rule}", list_schedule(instance, order, rule)))
            except ValueError:  # an order breaking the round sequence (cannot happen here)
                continue
    for name, fn in BASELINES.items():
        try:
            out.append((name, fn(instance, deadline)))
        except BaselineTimeUp:
            break
        except BaselineTooLarge:  # AlloX's table on a huge instance: the others still run
            continue
    return out


def best_hint(
    instance: HareInstance, deadline: Deadline | None = None
) -> tuple[str, TaskSchedule, float]:
    """The best of :func:`hint_candidates` (until ``deadline``) by the checker's objective."""
    best = None
    for name, sched in hint_candidates(instance, deadline):
        obj = check_schedule(instance, sched).objective
        if best is None or obj < best[2]:
            best = (name, sched, obj)
    assert best is not None
    return best


__all__ = ["best_hint", "hint_candidates"]
