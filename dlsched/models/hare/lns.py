"""Large-neighbourhood search around the CP-SAT model: a better schedule before the final stage.

Each step frees the tasks of a window of jobs consecutive in arrival order (as many as fit in
``window_tasks`` tasks, at least one job; the first job of the window drawn at random with a
fixed seed), keeps every other task on its GPU class at its start, and re-solves the model of
:func:`cpsat_model.build_cpsat` for a few seconds with the current schedule as hint and its
objective as upper bound. A better schedule replaces the current one. Every schedule it keeps
satisfies the model, so it is feasible; the final stage checks it like any hint. When every
window of the current size is proven without a gain (a local optimum for that size), the size
doubles, as long as a window still leaves some job fixed.

Why windows by arrival: jobs that arrive together compete for the same GPUs, so moving them
together is what a single-task move cannot do, and a window of about two dozen tasks is
re-solved (often proven) in seconds. Why wider windows after that: with a few large jobs (a
dozen tasks or more each) a window holds one job, and a schedule can be optimal for every job
re-placed alone, and for every pair, while three jobs moved together still gain. Measured
against the whole model in the same time in benchmarks/READING_hare.md (section 2, third
table).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from dlsched.models.hare.instance import HareInstance
from dlsched.models.hare.solution import TaskSchedule
from dlsched.solvers.base import SolverSettings
from dlsched.solvers.cpsat import run_cpsat
from dlsched.solvers.deadline import Deadline

from .budget import BUILD_SHARE
from .cpsat_model import BuildTimeUp, build_cpsat
from .cpsat_model.hints import add_hint, canonical, read_schedule
from .scaling import ScaledData, scale_data, scaled_objective

#: Tasks freed per step, seconds per step, CP-SAT workers per step.
WINDOW_TASKS, STEP_SECONDS, STEP_WORKERS = 24, 3.0, 2
#: No step starts with less time than this left: it could not re-solve a window.
MIN_STEP_SECONDS = 0.2


@dataclass(frozen=True)
class LnsResult:
    schedule: TaskSchedule
    start_objective: int  # scaled units
    objective: int  # scaled units, <= start_objective
    steps: int
    improvements: int
    seconds: float
    window_tasks: int  # the widest window size searched


def arrival_order(instance: HareInstance) -> list[int]:
    """Job indices by arrival (then index)."""
    return sorted(range(instance.num_jobs), key=lambda n: (instance.jobs[n].arrival, n))


def job_window(
    instance: HareInstance, first: int, window_tasks: int, order: list[int] | None = None
) -> set[int]:
    """Jobs consecutive in arrival order (``order``, default :func:`arrival_order`) from
    position ``first`` (wrapping never), as many as fit in ``window_tasks`` tasks, at least
    one."""
    order = arrival_order(instance) if order is None else order
    out: set[int] = set()
    tasks = 0
    for n in order[first:]:
        size = instance.jobs[n].rounds * instance.jobs[n].tasks_per_round
        if out and tasks + size > window_tasks:
            break
        out.add(n)
        tasks += size
    return out


def reoptimize(
    instance: HareInstance,
    d: ScaledData,
    schedule: TaskSchedule,
    free: set[int],
    settings: SolverSettings,
    deadline: Deadline,
    step_seconds: float | None = None,
) -> tuple[TaskSchedule | None, bool]:
    """The model with every task of a job outside ``free`` fixed to its class and start, and at
    most the schedule's objective: its best schedule (None if it found none), and whether
    CP-SAT proved that neighbourhood (optimal, or nothing at most as costly). The model is
    built in :data:`BUILD_SHARE` of what is left to ``deadline`` (else :class:`BuildTimeUp`);
    CP-SAT runs for ``step_seconds`` (None: no cap), and not past ``deadline``."""
    schedule = canonical(instance, schedule, [])  # the model orders the tasks of a round
    upper = scaled_objective(d, instance, schedule)
    built = build_cpsat(instance, d, upper=upper, deadline=deadline.share_of_rest(BUILD_SHARE))
    add_hint(built, instance, schedule)
    rep = {m: r for r, cls in built.pools.items() for m in cls}
    for e in schedule.entries:
        if e.job not in free:
            built.model.add(built.start[e.task] == round(e.start * d.time_scale))
            built.model.add(built.present[(e.task, rep.get(e.gpu, e.gpu))] == 1)
    step = deadline.share_of_limit(1.0, cap=step_seconds)  # what is left, at most step_seconds
    run = run_cpsat(built.model, step.solve_options(settings), label=f"lns on {instance.name}")
    proven = run.proven_optimal or run.infeasible
    if not run.has_solution:
        return None, proven
    return read_schedule(built, instance, run.value), proven


def improve(
    instance: HareInstance,
    schedule: TaskSchedule,
    deadline: Deadline,
    *,
    settings: SolverSettings | None = None,
    window_tasks: int = WINDOW_TASKS,
    step_seconds: float = STEP_SECONDS,
    workers: int = STEP_WORKERS,
) -> LnsResult:
    """Steps of the module docstring until ``deadline``, or until every window was proven
    without a gain since the last improvement and a wider one would free every job (the
    schedule is then optimal for each of them: more steps of this search cannot help), or until
    a step's model cannot be built in time (:func:`reoptimize`); exact data only. Each step's
    CP-SAT run gets ``step_seconds``, never past ``deadline`` (its model built), ``workers``
    CP-SAT workers and the seed of ``settings`` plus the step's number (its gap and extra
    parameters too)."""
    t0 = time.perf_counter()
    settings = settings or SolverSettings()
    d = scale_data(instance)
    rng = random.Random(settings.seed)
    best = schedule
    start = value = scaled_objective(d, instance, schedule)
    steps = improvements = 0
    windows = all_windows(instance, window_tasks)
    settled: set[frozenset[int]] = set()  # proven without a gain since the last improvement
    while _room_for_a_step(deadline):
        if settled == windows:  # a local optimum for this size: wider windows, if any
            size, wider = _wider(instance, window_tasks, windows)
            if wider is None:
                break
            window_tasks, windows, settled = size, wider, set()
        free = frozenset(job_window(instance, rng.randrange(instance.num_jobs), window_tasks))
        step = settings.with_(
            seed=settings.seed + steps, extra={**settings.extra, "num_workers": workers}
        )
        try:
            got, proven = reoptimize(instance, d, best, set(free), step, deadline, step_seconds)
        except BuildTimeUp:  # every step builds the whole model: none fits in what is left
            break
        steps += 1
        if got is not None and (v := scaled_objective(d, instance, got)) < value:
            best, value, improvements = got, v, improvements + 1
            settled.clear()
        elif proven:
            settled.add(free)
    seconds = time.perf_counter() - t0
    return LnsResult(best, start, value, steps, improvements, seconds, window_tasks)


def _room_for_a_step(deadline: Deadline) -> bool:
    left = deadline.left()
    return left is None or left > MIN_STEP_SECONDS


def all_windows(instance: HareInstance, window_tasks: int) -> set[frozenset[int]]:
    """Every window of :func:`job_window` of that size."""
    order = arrival_order(instance)
    return {
        frozenset(job_window(instance, f, window_tasks, order)) for f in range(instance.num_jobs)
    }


def _wider(
    instance: HareInstance, window_tasks: int, windows: set[frozenset[int]]
) -> tuple[int, set[frozenset[int]] | None]:
    """The next doubled size whose windows differ from ``windows``, and those windows (None
    once a window would free every job: that is the whole model, the route's next stage)."""
    while True:
        window_tasks *= 2
        wider = all_windows(instance, window_tasks)
        if any(len(w) == instance.num_jobs for w in wider):
            return window_tasks, None
        if wider != windows:
            return window_tasks, wider


__all__ = ["LnsResult", "improve", "job_window", "reoptimize", "all_windows"]
