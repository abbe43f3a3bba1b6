"""Hare_Sched (4)-(8) as a native CP-SAT model (the ``exact-cpsat`` route).

Chen et al., *Hare*, HPDC 2022, Section 5.1. One start variable per task; one optional
fixed-size interval of length T^c_{n,m} per (task, GPU) with a presence literal y_{i,m};
exactly one presence per task (5); one NoOverlap per GPU over the training intervals (8); a
barrier variable per (job, round >= 1) at or after the finish (training + sync) of every task of
the previous round (7); C_n after the finish of every last-round task (6); starts at or after
arrival (4). Tasks of one round of one job are interchangeable: their starts are ordered.

CP-SAT needs integers: times are multiplied by the smallest power of ten (<= 1e6) making every
time integral, weights likewise. With integral data some optimal schedule has integral starts
(every start of a semi-active schedule is a sum of data), so the scaled optimum is the optimum.
If no such power exists, durations and arrivals are rounded *up* at resolution 1e-6: the
schedule stays feasible for the true data but optimality is no longer certified.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

from dlsched.instances.hare import HareInstance, Task
from dlsched.schedule.hare import TaskSchedule
from dlsched.solvers.base import OPTIMALITY_GAP, SolveOptions, Status, relative_gap

from .common import MAX_TIME_SCALE, power_of_ten_scale, time_values


@dataclass(frozen=True)
class ScaledData:
    """Integer data for CP-SAT: ``time_scale`` * time, ``weight_scale`` * weight."""

    time_scale: int
    weight_scale: int
    exact: bool
    tc: tuple[tuple[int, ...], ...]
    ts: tuple[tuple[int, ...], ...]
    arrival: tuple[int, ...]
    weight: tuple[int, ...]
    horizon: int


def scale_data(instance: HareInstance) -> ScaledData:
    s, exact_t = power_of_ten_scale(time_values(instance))
    w, exact_w = power_of_ten_scale([j.weight for j in instance.jobs])

    def up(v: float) -> int:
        return int(round(v * s)) if exact_t else math.ceil(v * s - 1e-9)

    tc = tuple(tuple(up(v) for v in j.train_time) for j in instance.jobs)
    ts = tuple(tuple(up(v) for v in j.sync_time) for j in instance.jobs)
    arrival = tuple(up(j.arrival) for j in instance.jobs)
    weight = tuple(max(1, int(round(j.weight * w))) for j in instance.jobs)
    work = sum(
        max(a + b for a, b in zip(tc[n], ts[n], strict=True)) * j.rounds * j.tasks_per_round
        for n, j in enumerate(instance.jobs)
    )
    return ScaledData(s, w, exact_t and exact_w, tc, ts, arrival, weight, max(arrival) + work)


@dataclass
class CpsatHare:
    """The CP-SAT model and its variables (not a Pyomo model: CP-SAT is used natively here)."""

    model: Any
    data: ScaledData
    start: dict[Task, Any]
    present: dict[tuple[Task, int], Any]
    completion: list[Any]


def build_cpsat(instance: HareInstance, data: ScaledData | None = None) -> CpsatHare:
    """Build Hare_Sched (4)-(8) in CP-SAT; never solves."""
    from ortools.sat.python import cp_model

    d = data or scale_data(instance)
    cp = cp_model.CpModel()
    GPUS = range(instance.num_gpus)
    TASKS = instance.tasks
    hz = d.horizon
    start = {i: cp.new_int_var(d.arrival[i[0]], hz, f"x{i}") for i in TASKS}  # (4) in the bounds
    present: dict[tuple[Task, int], Any] = {}
    intervals: dict[int, list[Any]] = {m: [] for m in GPUS}
    finish: dict[Task, Any] = {}
    for i in TASKS:
        n = i[0]
        lits = []
        for m in GPUS:
            lit = cp.new_bool_var(f"y{i},{m}")
            present[(i, m)] = lit
            lits.append(lit)
            intervals[m].append(
                cp.new_optional_fixed_size_interval_var(start[i], d.tc[n][m], lit, f"iv{i},{m}")
            )
        cp.add_exactly_one(lits)  # (5) assign_once
        finish[i] = start[i] + sum((d.tc[n][m] + d.ts[n][m]) * present[(i, m)] for m in GPUS)
    for m in GPUS:
        cp.add_no_overlap(intervals[m])  # (8) training intervals on one GPU never overlap
    completion = []
    for n, job in enumerate(instance.jobs):
        for r in range(1, job.rounds):  # (7) round_barrier through a barrier variable
            b = cp.new_int_var(d.arrival[n], hz, f"b{n},{r}")
            for k in range(job.tasks_per_round):
                cp.add(b >= finish[(n, r - 1, k)])
                cp.add(start[(n, r, k)] >= b)
        c = cp.new_int_var(d.arrival[n], hz, f"C{n}")
        for k in range(job.tasks_per_round):
            cp.add(c >= finish[(n, job.rounds - 1, k)])  # (6) completion
        completion.append(c)
        for r in range(job.rounds):  # identical tasks of one round: ordered starts
            for k in range(job.tasks_per_round - 1):
                cp.add(start[(n, r, k)] <= start[(n, r, k + 1)])
    cp.minimize(sum(d.weight[n] * completion[n] for n in range(instance.num_jobs)))
    return CpsatHare(cp, d, start, present, completion)


def add_hint(built: CpsatHare, instance: HareInstance, schedule: TaskSchedule) -> None:
    """Hint a feasible schedule (e.g. a list schedule) to CP-SAT; only when data are exact."""
    if not built.data.exact:
        return
    s = built.data.time_scale
    for e in schedule.entries:
        built.model.add_hint(built.start[e.task], int(round(e.start * s)))
        for m in range(instance.num_gpus):
            built.model.add_hint(built.present[(e.task, m)], int(m == e.gpu))


def solve_cpsat_native(
    instance: HareInstance, options: SolveOptions, hint: TaskSchedule | None = None
) -> tuple[Status, TaskSchedule | None, float | None, float | None, dict[str, Any]]:
    """Solve; returns (status, schedule, solver objective, bound, info) in original units."""
    from ortools.sat.python import cp_model

    t0 = time.perf_counter()
    built = build_cpsat(instance)
    if hint is not None:
        add_hint(built, instance, hint)
    solver = cp_model.CpSolver()
    p = solver.parameters
    p.random_seed = options.seed
    p.num_workers = max(1, options.threads)
    p.relative_gap_limit = 0.0
    if options.time_limit is not None:
        p.max_time_in_seconds = max(options.time_limit - (time.perf_counter() - t0), 0.01)
    for key, val in options.extra.items():
        setattr(p, key, val)
    code = solver.solve(built.model)
    wall = time.perf_counter() - t0
    d = built.data
    unit = d.time_scale * d.weight_scale
    has_sol = code in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    info: dict[str, Any] = {
        "time_scale": d.time_scale,
        "weight_scale": d.weight_scale,
        "scale_exact": d.exact,
        "horizon": d.horizon / d.time_scale,
        "cpsat_status": solver.status_name(code),
        "solver_wall_time": wall,
    }
    if not has_sol:
        status = Status.INFEASIBLE if code == cp_model.INFEASIBLE else Status.TIME_LIMIT
        if code == cp_model.MODEL_INVALID:
            status = Status.ERROR
        return status, None, None, None, info
    items = []
    for i in instance.tasks:
        g = next(m for m in range(instance.num_gpus) if solver.value(built.present[(i, m)]))
        items.append((i, g, solver.value(built.start[i]) / d.time_scale))
    schedule = TaskSchedule.from_items(items)
    obj = solver.objective_value / unit
    bound: float | None = solver.best_objective_bound / unit
    if code == cp_model.OPTIMAL:
        status = Status.OPTIMAL
    else:
        hit = options.time_limit is not None and wall >= 0.95 * options.time_limit
        status = Status.TIME_LIMIT if hit else Status.FEASIBLE
    gap = relative_gap(obj, bound)
    if status == Status.OPTIMAL and gap is not None and gap > OPTIMALITY_GAP:
        status = Status.FEASIBLE
    if not d.exact:
        status = Status.FEASIBLE if status == Status.OPTIMAL else status
        bound = None  # a bound on rounded-up data does not bound the true optimum
    return status, schedule, obj, bound, info


__all__ = ["MAX_TIME_SCALE", "CpsatHare", "ScaledData", "build_cpsat", "scale_data"]
