"""Hare_Sched (4)-(8) as a native CP-SAT model (the ``exact-cpsat`` route).

Chen et al., *Hare*, HPDC 2022, Section 5.1. One start variable per task; one optional
fixed-size interval of length T^c_{n,m} per (task, GPU) with a presence literal y_{i,m};
exactly one presence per task (5); one NoOverlap per GPU over the training intervals (8); a
barrier variable per (job, round >= 1) at or after the finish (training + sync) of every task of
the previous round (7); C_n after the finish of every last-round task (6); starts at or after
arrival (4). Tasks of one round of one job are interchangeable: their starts are ordered.

GPUs with identical (T^c, T^s) columns form a class. By default (``pooled``) the model picks a
class, not a GPU: one optional interval per (task, class) and one cumulative of capacity
|class| per class. This is exact: fixed intervals of which at most c overlap at any time can be
given c GPUs (interval graphs are perfect; :func:`colour_pools` does it greedily by start), and
every schedule on the GPUs gives such intervals. It removes the |class|! symmetric copies of each
schedule instead of cutting them with ordering constraints, and halves the literals on the
generator's instances (2 GPUs per type). On random-8gpu-18tasks-s110 it proves the optimum in
10.1 s where one NoOverlap per GPU (with symmetry breaking) stops at an 8.5 % gap after 60 s
(benchmarks/RESULTS_hare.md, section 2).

CP-SAT needs integers: times are multiplied by the smallest power of ten (<= 1e6) making every
time integral, weights likewise. With integral data some optimal schedule has integral starts
(every start of a semi-active schedule is a sum of data), so the scaled optimum is the optimum.
If no such power exists, durations and arrivals are rounded *up* at resolution 1e-6: the
schedule stays feasible for the true data but optimality is no longer certified.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from dlsched.models.hare.instance import HareInstance, Task
from dlsched.models.hare.solution import TaskSchedule
from dlsched.solvers.base import SolveOptions
from dlsched.solvers.certify import ContradictionError, Proof
from dlsched.solvers.cpsat import run_cpsat

from .common import RouteResult
from .relaxation import combinatorial_bound
from .scaling import ScaledData, objective_unit, scale_data, scaled_objective

# the job-subset bound is tried above this many tasks: below it one segment (max_tasks = 30 in
# decompose.subset_bound) would be the whole instance, and its 0.3 share of the time limit
# delayed the proof on hetero-4gpu-6jobs (17 tasks) past 60 s
SUBSET_MIN_TASKS = 30
#: Seconds of budget below which the time-indexed LP bound is not attempted (see solve).
LP_MIN_BUDGET = 1.0


@dataclass
class CpsatHare:
    """The CP-SAT model and its variables (not a Pyomo model: CP-SAT is used natively here)."""

    model: Any
    data: ScaledData
    start: dict[Task, Any]
    present: dict[tuple[Task, int], Any]
    completion: list[Any]
    gpu_classes: list[list[int]] = field(default_factory=list)
    pools: dict[int, list[int]] = field(default_factory=dict)  # representative -> its GPUs
    slots: list[int] = field(default_factory=list)  # the GPUs, or the classes' representatives

    def placed_on(self, task: Task, value: Any) -> int:
        """The GPU (or, when pooled, the representative of the class) ``task`` is on, given
        ``value`` (a solver's value function)."""
        return next(m for m in self.slots if value(self.present[(task, m)]))


def gpu_classes(instance: HareInstance) -> list[list[int]]:
    """GPUs grouped by identical (T^c, T^s) columns over all jobs (interchangeable GPUs)."""
    groups: dict[tuple[tuple[float, ...], tuple[float, ...]], list[int]] = {}
    for m in range(instance.num_gpus):
        key = (tuple(instance.tc[:, m]), tuple(instance.ts[:, m]))
        groups.setdefault(key, []).append(m)
    return list(groups.values())


def job_lower_bounds(d: ScaledData, instance: HareInstance) -> list[int]:
    """Per-job fastest round time min_m (T^c + T^s) (scaled); round r starts after
    a_n + r * this, and C_n >= a_n + R_n * this."""
    return [min(a + b for a, b in zip(d.tc[n], d.ts[n], strict=True)) for n in range(len(d.tc))]


def build_cpsat(
    instance: HareInstance,
    data: ScaledData | None = None,
    *,
    upper: int | None = None,
    lower: int | None = None,
    symmetry: bool = True,
    job_bounds: bool = True,
    redundant: bool = False,
    pooled: bool = True,
    partial: Sequence[tuple[Sequence[int], int]] = (),
) -> CpsatHare:
    """Build Hare_Sched (4)-(8) in CP-SAT; never solves.

    ``upper``: the (scaled) objective of a known schedule. Then the model keeps only schedules
    of objective <= upper, which contain every optimal one; it gives each job a deadline
    C_n <= (upper - sum_{k != n} w_k LB_k) / w_n with LB_k = a_k + R_k min_m (T^c + T^s).
    ``lower``: a proven lower bound on the (scaled) optimum, e.g. from
    :func:`lowerbound.time_indexed_bound`; stated as objective >= lower.
    ``job_bounds``: start and completion domains from the per-job chain bound.
    ``redundant``: also a cumulative of capacity |M| over all tasks with their minimum training
    time, and one per class of identical GPUs (capacity = class size) over the tasks placed in
    the class (both implied by the NoOverlaps; they give CP-SAT's LP energy reasoning).
    ``symmetry``: for GPUs with identical columns m < m', the first task (in task order) on m'
    comes after the first task on m (swapping two such GPUs' schedules maps schedules to
    schedules of equal cost, and starts are unchanged, so this is compatible with the ordered
    starts of the identical tasks of one round). Unused when ``pooled``.
    ``partial``: (jobs, bound) pairs, each a proven bound on sum_{n in jobs} w_n C_n (scaled).
    ``pooled``: one cumulative per class of identical GPUs instead of a NoOverlap per GPU (see
    the module docstring); ``present`` is then keyed by (task, first GPU of the class).
    """
    from ortools.sat.python import cp_model

    d = data or scale_data(instance)
    cp = cp_model.CpModel()
    GPUS = range(instance.num_gpus)
    TASKS = instance.tasks
    jobs = instance.jobs
    hz = d.horizon
    fast = job_lower_bounds(d, instance)
    lbc = [d.arrival[n] + j.rounds * fast[n] for n, j in enumerate(jobs)]
    deadline = [hz] * len(jobs)
    if upper is not None:
        total_lb = sum(d.weight[n] * lbc[n] for n in range(len(jobs)))
        for n in range(len(jobs)):
            slack = upper - (total_lb - d.weight[n] * lbc[n])
            deadline[n] = max(lbc[n], min(hz, slack // d.weight[n]))
    start = {}
    for i in TASKS:
        n, r, _ = i
        lo = d.arrival[n] + (r * fast[n] if job_bounds else 0)
        hi = deadline[n] - ((jobs[n].rounds - r) * fast[n] if job_bounds else 0)
        start[i] = cp.new_int_var(lo, max(lo, hi), f"x{i}")  # (4) in the bounds
    present: dict[tuple[Task, int], Any] = {}
    classes_all = gpu_classes(instance)
    pool_size = {cls[0]: len(cls) for cls in classes_all}
    slots = [cls[0] for cls in classes_all] if pooled else list(GPUS)
    intervals: dict[int, list[Any]] = {m: [] for m in slots}
    finish: dict[Task, Any] = {}
    for i in TASKS:
        n = i[0]
        lits = []
        for m in slots:
            lit = cp.new_bool_var(f"y{i},{m}")
            present[(i, m)] = lit
            lits.append(lit)
            intervals[m].append(
                cp.new_optional_fixed_size_interval_var(start[i], d.tc[n][m], lit, f"iv{i},{m}")
            )
        cp.add_exactly_one(lits)  # (5) assign_once
        finish[i] = start[i] + sum((d.tc[n][m] + d.ts[n][m]) * present[(i, m)] for m in slots)
    for m in slots:
        if pooled and pool_size[m] > 1:
            # identical GPUs pooled: at most |class| trainings at a time, which is the same as
            # a NoOverlap per GPU (fixed intervals of depth <= c colour with c colours)
            cp.add_cumulative(intervals[m], [1] * len(intervals[m]), pool_size[m])
        else:
            cp.add_no_overlap(intervals[m])  # (8) training intervals on one GPU never overlap
    if redundant:
        ivs, dem = [], []
        for i in TASKS:
            pmin = min(d.tc[i[0]])
            if pmin > 0:
                ivs.append(cp.new_fixed_size_interval_var(start[i], pmin, f"ivmin{i}"))
                dem.append(1)
        if ivs:
            cp.add_cumulative(ivs, dem, instance.num_gpus)
        for cls in [] if pooled else gpu_classes(instance):
            if len(cls) < 2:
                continue
            ivs = []
            for i in TASKS:
                lit = cp.new_bool_var(f"in{i},{cls[0]}")
                cp.add(lit == sum(present[(i, m)] for m in cls))
                size = d.tc[i[0]][cls[0]]
                if size > 0:
                    ivs.append(cp.new_optional_fixed_size_interval_var(start[i], size, lit, ""))
            if ivs:
                cp.add_cumulative(ivs, [1] * len(ivs), len(cls))
    completion = []
    for n, job in enumerate(jobs):
        for r in range(1, job.rounds):  # (7) round_barrier through a barrier variable
            lo = d.arrival[n] + (r * fast[n] if job_bounds else 0)
            b = cp.new_int_var(lo, max(lo, deadline[n]), f"b{n},{r}")
            for k in range(job.tasks_per_round):
                cp.add(b >= finish[(n, r - 1, k)])
                cp.add(start[(n, r, k)] >= b)
        lo = lbc[n] if job_bounds else d.arrival[n]
        c = cp.new_int_var(lo, max(lo, deadline[n]), f"C{n}")
        for k in range(job.tasks_per_round):
            cp.add(c >= finish[(n, job.rounds - 1, k)])  # (6) completion
        completion.append(c)
        for r in range(job.rounds):  # identical tasks of one round: ordered starts
            for k in range(job.tasks_per_round - 1):
                cp.add(start[(n, r, k)] <= start[(n, r, k + 1)])
    classes = gpu_classes(instance) if symmetry and not pooled else []
    for cls in classes:
        for m, m2 in zip(cls, cls[1:], strict=False):
            for p, i in enumerate(TASKS):
                cp.add(present[(i, m2)] <= sum(present[(t, m)] for t in TASKS[:p]))
    for group, bound in partial:  # proven: sum over the group of w C >= bound (decompose.py)
        cp.add(sum(d.weight[n] * completion[n] for n in group) >= bound)
    objective = sum(d.weight[n] * completion[n] for n in range(instance.num_jobs))
    if upper is not None:
        cp.add(objective <= upper)
    if lower is not None:
        cp.add(objective >= lower)
    cp.minimize(objective)
    pools = {cls[0]: cls for cls in classes_all} if pooled else {}
    return CpsatHare(cp, d, start, present, completion, classes, pools, slots)


def _near(deadline: float | None, limit: float | None) -> bool:
    """The route used at least 95 % of its time limit."""
    return (
        deadline is not None
        and limit is not None
        and time.perf_counter() >= deadline - 0.05 * limit
    )


def _scaled_bound(value: float, unit: int) -> int:
    """A proven bound in the original units as a bound in integer objective units (the value
    times ``unit`` is an integer up to round-off when it comes from a CP-SAT run or a rounded-up
    LP bound of a sub-instance, whose units divide ``unit``)."""
    v = value * unit
    return math.ceil(v - 1e-6 * max(1.0, abs(v)))


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


def canonical(instance: HareInstance, schedule: TaskSchedule, classes: list[list[int]]):
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


def hint_candidates(instance: HareInstance) -> list[tuple[str, TaskSchedule]]:
    """Quick feasible schedules: list schedules by several priorities (both GPU rules),
    Algorithm 1 on per-job chain starts, and the baselines."""
    from .baselines import BASELINES
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
    out = []
    for name, key in keys.items():
        order = sorted(instance.tasks, key=key)
        for rule in ("earliest-finish", "earliest-available"):
            try:
                out.append((f"{name}/{rule}", list_schedule(instance, order, rule)))
            except ValueError:  # an order breaking the round sequence (cannot happen here)
                continue
    for name, fn in BASELINES.items():
        out.append((name, fn(instance)))
    return out


def best_hint(instance: HareInstance) -> tuple[str, TaskSchedule, float]:
    """The best of :func:`hint_candidates` by the checker's objective."""
    from dlsched.models.hare.check import check_schedule

    best = None
    for name, sched in hint_candidates(instance):
        obj = check_schedule(instance, sched).objective
        if best is None or obj < best[2]:
            best = (name, sched, obj)
    assert best is not None
    return best


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


def solve_cpsat_native(
    instance: HareInstance,
    options: SolveOptions,
    hint: TaskSchedule | None = None,
    *,
    use_upper: bool = True,
    symmetry: bool = True,
    job_bounds: bool = True,
    lp_bound: bool = True,
    redundant: bool = False,
    lp_options: dict[str, Any] | None = None,
    pooled: bool = True,
    subsets: bool = True,
    subset_options: dict[str, Any] | None = None,
) -> RouteResult:
    """Solve; returns the best schedule, its objective and what was proved (original units).

    With a ``hint`` (and exact scaling) its objective is an upper bound of the model
    (``use_upper``); the hint is returned if CP-SAT finds nothing at least as good.
    ``redundant``: add the redundant cumulatives of :func:`build_cpsat` and set
    ``linearization_level = 2`` (unless ``options.extra`` sets it). Off by default: it helped
    on an 8-GPU, 18-task instance and hurt on hetero-4gpu-6jobs (benchmarks/READING_hare.md,
    development measurements).
    ``lp_bound``: first solve the time-indexed LP of :mod:`lowerbound` (HiGHS, at most a
    fifth of the time limit) and state objective >= its value; the reported bound is the
    larger of it and CP-SAT's. ``lp_options``: keyword arguments for
    :func:`lowerbound.time_indexed_bound` (``grid``, ``max_slots``, ``strong``, ``time_limit``
    overriding the fifth of the limit). ``pooled``: see :func:`build_cpsat`.
    ``subsets``: on instances of more than ``SUBSET_MIN_TASKS`` tasks, first the job-subset
    bound of :mod:`decompose` (at most 0.3 of the time limit):
    groups of jobs by arrival solved exactly, their optima summed. Its merged schedule replaces
    the hint when better; if the hint meets the bound it is returned as proven optimal without
    a search; otherwise the bound joins the LP's in objective >= lower, and each group's optimum
    is stated for the group's weighted completions. ``subset_options``: keyword arguments for
    :func:`decompose.subset_bound` (``block_tasks``, ``max_tasks``), and ``min_tasks`` to
    replace ``SUBSET_MIN_TASKS``.
    """
    t0 = time.perf_counter()
    d = scale_data(instance)
    unit = d.time_scale * d.weight_scale
    sub = None
    sub_kw = dict(subset_options or {})
    if subsets and d.exact and instance.num_tasks > sub_kw.pop("min_tasks", SUBSET_MIN_TASKS):
        from .decompose import subset_bound

        share = None if options.time_limit is None else 0.3 * options.time_limit
        sub = subset_bound(instance, replace(options, time_limit=share), **sub_kw)
    hint_obj = None if hint is None or not d.exact else scaled_objective(d, instance, hint)
    if sub is not None and sub.schedule is not None:
        merged = scaled_objective(d, instance, sub.schedule)
        if hint_obj is None or merged < hint_obj:
            hint, hint_obj = sub.schedule, merged
    sub_lower = None if sub is None or not sub.partition else _scaled_bound(sub.bound, unit)
    upper = None
    if hint is not None and hint_obj is not None and use_upper:
        upper = hint_obj
        span = max(
            e.start + instance.tc[e.job, e.gpu] + instance.ts[e.job, e.gpu] for e in hint.entries
        )
        d = replace(d, horizon=max(d.horizon, math.ceil(span * d.time_scale)))
    info: dict[str, Any] = {
        "time_scale": d.time_scale,
        "weight_scale": d.weight_scale,
        "scale_exact": d.exact,
        "horizon": d.horizon / d.time_scale,
        "subset_bound": None if sub is None else sub.bound,
        "subset_bound_seconds": None if sub is None else sub.seconds,
        "subset_partition": None if sub is None else [list(g.jobs) for g in sub.partition],
    }
    lattice = objective_unit(d.time_scale, d.weight_scale, d.exact)
    if upper is not None and sub_lower is not None and sub_lower >= upper:
        # the hint meets the job-subset bound: proven optimal without a search (a bound
        # above the hint is a contradiction, which certify() raises)
        proof = Proof(bound=sub_lower / unit, unit=lattice)
        return RouteResult(hint, upper / unit, proof, {**info, "returned": "hint"})
    lb = None
    budget = 30.0 if options.time_limit is None else min(30.0, 0.2 * options.time_limit)
    # the LP is built in Python before its solver's limit starts; with less than
    # LP_MIN_BUDGET seconds it would overrun the route's limit, so it is skipped
    if lp_bound and d.exact and budget >= LP_MIN_BUDGET:
        from .lowerbound import time_indexed_bound

        kw: dict[str, Any] = {"time_limit": budget, "threads": max(1, options.threads)}
        kw.update(lp_options or {})
        lb = time_indexed_bound(instance, d, upper, **kw)
    lower = None if lb is None else lb.scaled
    if sub_lower is not None:
        lower = sub_lower if lower is None else max(lower, sub_lower)
    partial = (
        []
        if sub is None
        else [(g.jobs, _scaled_bound(g.bound, unit)) for g in sub.partition if g.bound > 0]
    )
    built = build_cpsat(
        instance,
        d,
        upper=upper,
        lower=lower,
        symmetry=symmetry,
        job_bounds=job_bounds,
        redundant=redundant,
        pooled=pooled,
        partial=partial,
    )
    if hint is not None:
        add_hint(built, instance, hint)
    deadline = None if options.time_limit is None else t0 + options.time_limit
    run = run_cpsat(
        built.model,
        options,
        deadline=deadline,
        label=f"exact-cpsat on {instance.name}",
        params={"linearization_level": 2} if redundant else None,
    )
    info = {
        **info,
        "cpsat_status": run.status_name,
        "solver_wall_time": time.perf_counter() - t0,
        "num_workers": run.workers,
        "upper_from_hint": None if upper is None else upper / unit,
        "symmetry_classes": [c for c in built.gpu_classes if len(c) > 1],
        "lp_bound": None if lb is None else lb.bound,
        "lp_bound_grid": None if lb is None else lb.grid / d.time_scale,
        "lp_bound_seconds": None if lb is None else lb.seconds,
    }
    if run.infeasible and hint is None:
        raise ContradictionError(instance.name, "exact-cpsat", "every hare instance is feasible")
    cp_bound = run.bound
    if cp_bound is not None:
        cp_bound = max(
            cp_bound, lower or 0, _scaled_bound(combinatorial_bound(instance)["bound"], unit)
        )
    proof = Proof(
        # a bound on rounded-up data bounds nothing
        bound=cp_bound / unit if cp_bound is not None and d.exact else None,
        claimed_optimal=run.proven_optimal,
        infeasible=run.infeasible,
        hit_limit=run.hit_limit or _near(deadline, options.time_limit),
        unit=lattice,
    )
    if not run.has_solution:
        # nothing at least as good as the hint (objective <= upper) was found; INFEASIBLE
        # with the hint in hand is a contradiction that certify() turns into an error
        return RouteResult(
            hint, None if upper is None else upper / unit, proof, {**info, "returned": "hint"}
        )
    items = []
    for i in instance.tasks:
        g = built.placed_on(i, run.value)
        items.append((i, g, run.value(built.start[i]) / d.time_scale))
    schedule = TaskSchedule.from_items(colour_pools(instance, items, built.pools))
    assert run.objective is not None
    return RouteResult(schedule, run.objective / unit, proof, info)


__all__ = ["CpsatHare", "build_cpsat", "solve_cpsat_native"]
