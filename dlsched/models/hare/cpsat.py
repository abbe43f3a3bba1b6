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
generator's instances (2 GPUs per type); benchmarks/RESULTS_hare.md (section 2) measures it
against one NoOverlap per GPU.

CP-SAT needs integers: times are multiplied by the smallest power of ten (<= 1e6) making every
time integral, weights likewise. With integral data some optimal schedule has integral starts
(every start of a semi-active schedule is a sum of data), so the scaled optimum is the optimum.
If no such power exists, durations and arrivals are rounded *up* at resolution 1e-6: the
schedule stays feasible for the true data but optimality is no longer certified.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from dlsched.models.hare.instance import HareInstance, Task
from dlsched.models.hare.solution import TaskSchedule
from dlsched.solvers.base import SolveOptions
from dlsched.solvers.certify import ContradictionError, Proof
from dlsched.solvers.cpsat import run_cpsat
from dlsched.solvers.deadline import NEVER, Deadline

from .budget import BUILD_SHARE, LP_MIN_BUDGET, LP_SECONDS, LP_SHARE
from .common import NEAR_LIMIT, RouteResult, budget
from .relaxation import combinatorial_bound, fastest_round
from .scaling import ScaledData, objective_unit, scale_data, scaled_objective


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


class BuildTimeUp(Exception):
    """The deadline of a model's building passed before the model was whole."""


def _in_time(deadline: Deadline) -> None:
    """:class:`BuildTimeUp` once ``deadline`` has passed (asked per task or job while a model
    is built: Python building cannot be stopped otherwise)."""
    if deadline.passed():
        raise BuildTimeUp


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
    return fastest_round(d.tc, d.ts)[1]


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
    deadline: Deadline = NEVER,
) -> CpsatHare:
    """Build Hare_Sched (4)-(8) in CP-SAT; never solves. Raises :class:`BuildTimeUp` if
    ``deadline`` passes before the model is whole.

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
    windows = job_windows(d, instance, upper, job_bounds)
    start = _start_variables(cp, d, instance, windows)  # (4)
    classes_all = gpu_classes(instance)
    slots = [cls[0] for cls in classes_all] if pooled else list(range(instance.num_gpus))
    present, intervals, finish = _assignment(cp, d, instance, start, slots, deadline)  # (5)
    _gpu_capacity(cp, intervals, {cls[0]: len(cls) for cls in classes_all}, pooled)  # (8)
    if redundant:
        _redundant_cumulatives(cp, d, instance, start, present, pooled)
    completion = _barriers_and_completions(
        cp, d, instance, start, finish, windows, deadline
    )  # (6), (7)
    classes = classes_all if symmetry and not pooled else []
    _break_gpu_symmetry(cp, instance, present, classes, deadline)
    _objective(cp, d, completion, upper, lower, partial)
    pools = {cls[0]: cls for cls in classes_all} if pooled else {}
    return CpsatHare(cp, d, start, present, completion, classes, pools, slots)


@dataclass(frozen=True)
class JobWindows:
    """Per job (scaled): the fastest round min_m (T^c + T^s), the chain bound on C_n
    (a_n + R_n * fastest round), the deadline implied by ``upper``, and whether the chain
    bounds tighten the domains (``job_bounds``)."""

    fast: list[int]
    chain: list[int]
    deadline: list[int]
    tighten: bool


def job_windows(
    d: ScaledData, instance: HareInstance, upper: int | None, tighten: bool = True
) -> JobWindows:
    """The one place of the per-job chain bound and deadline: with a known schedule of
    objective ``upper``, C_n <= (upper - sum_{k != n} w_k LB_k) / w_n, LB_k the chain bound."""
    fast = job_lower_bounds(d, instance)
    chain = [d.arrival[n] + j.rounds * fast[n] for n, j in enumerate(instance.jobs)]
    deadline = [d.horizon] * len(chain)
    if upper is not None:
        total = sum(w * c for w, c in zip(d.weight, chain, strict=True))
        for n, (w, c) in enumerate(zip(d.weight, chain, strict=True)):
            deadline[n] = max(c, min(d.horizon, (upper - (total - w * c)) // w))
    return JobWindows(fast, chain, deadline, tighten)


def _start_variables(cp: Any, d: ScaledData, instance: HareInstance, w: JobWindows) -> dict:
    """x_i, within [a_n + r * fastest round, deadline - remaining rounds] ((4) in the bounds)."""
    start = {}
    for i in instance.tasks:
        n, r, _ = i
        lo = d.arrival[n] + (r * w.fast[n] if w.tighten else 0)
        hi = w.deadline[n] - ((instance.jobs[n].rounds - r) * w.fast[n] if w.tighten else 0)
        start[i] = cp.new_int_var(lo, max(lo, hi), f"x{i}")
    return start


def _assignment(
    cp: Any,
    d: ScaledData,
    instance: HareInstance,
    start: dict,
    slots: list[int],
    deadline: Deadline = NEVER,
) -> tuple[dict, dict, dict]:
    """(5) assign_once: one presence literal per (task, slot), exactly one per task; the
    optional training interval on each slot, and the finish (training + sync) of each task."""
    present: dict[tuple[Task, int], Any] = {}
    intervals: dict[int, list[Any]] = {m: [] for m in slots}
    finish: dict[Task, Any] = {}
    for i in instance.tasks:
        _in_time(deadline)
        n = i[0]
        for m in slots:
            lit = present[(i, m)] = cp.new_bool_var(f"y{i},{m}")
            intervals[m].append(
                cp.new_optional_fixed_size_interval_var(start[i], d.tc[n][m], lit, f"iv{i},{m}")
            )
        cp.add_exactly_one(present[(i, m)] for m in slots)
        finish[i] = start[i] + sum((d.tc[n][m] + d.ts[n][m]) * present[(i, m)] for m in slots)
    return present, intervals, finish


def _gpu_capacity(cp: Any, intervals: dict, pool_size: dict[int, int], pooled: bool) -> None:
    """(8) training intervals on one GPU never overlap; pooled identical GPUs: at most
    |class| trainings at a time, the same thing (fixed intervals of depth <= c colour with c)."""
    for m, ivs in intervals.items():
        if pooled and pool_size[m] > 1:
            cp.add_cumulative(ivs, [1] * len(ivs), pool_size[m])
        else:
            cp.add_no_overlap(ivs)


def _redundant_cumulatives(
    cp: Any, d: ScaledData, instance: HareInstance, start: dict, present: dict, pooled: bool
) -> None:
    """Implied by (8): a cumulative of capacity |M| over every task at its minimum training
    time, and one per class of identical GPUs over the tasks placed in the class."""
    ivs = [
        cp.new_fixed_size_interval_var(start[i], min(d.tc[i[0]]), f"ivmin{i}")
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
            cp.add(lit == sum(present[(i, m)] for m in cls))
            if d.tc[i[0]][cls[0]] > 0:
                size = d.tc[i[0]][cls[0]]
                ivs.append(cp.new_optional_fixed_size_interval_var(start[i], size, lit, ""))
        if ivs:
            cp.add_cumulative(ivs, [1] * len(ivs), len(cls))


def _barriers_and_completions(
    cp: Any,
    d: ScaledData,
    instance: HareInstance,
    start: dict,
    finish: dict,
    w: JobWindows,
    deadline: Deadline = NEVER,
) -> list[Any]:
    """(7) round_barrier through a barrier variable per (job, round >= 1); (6) C_n after every
    last-round finish; identical tasks of one round start in order (symmetry)."""
    completion = []
    for n, job in enumerate(instance.jobs):
        _in_time(deadline)
        for r in range(1, job.rounds):
            lo = d.arrival[n] + (r * w.fast[n] if w.tighten else 0)
            b = cp.new_int_var(lo, max(lo, w.deadline[n]), f"b{n},{r}")
            for k in range(job.tasks_per_round):
                cp.add(b >= finish[(n, r - 1, k)])
                cp.add(start[(n, r, k)] >= b)
        lo = w.chain[n] if w.tighten else d.arrival[n]
        c = cp.new_int_var(lo, max(lo, w.deadline[n]), f"C{n}")
        for k in range(job.tasks_per_round):
            cp.add(c >= finish[(n, job.rounds - 1, k)])
        completion.append(c)
        for r in range(job.rounds):
            for k in range(job.tasks_per_round - 1):
                cp.add(start[(n, r, k)] <= start[(n, r, k + 1)])
    return completion


def _break_gpu_symmetry(
    cp: Any,
    instance: HareInstance,
    present: dict,
    classes: list[list[int]],
    deadline: Deadline = NEVER,
) -> None:
    """For identical GPUs m < m', the first task on m' comes after the first task on m."""
    tasks = instance.tasks
    for cls in classes:
        for m, m2 in zip(cls, cls[1:], strict=False):
            for p, i in enumerate(tasks):
                _in_time(deadline)
                cp.add(present[(i, m2)] <= sum(present[(t, m)] for t in tasks[:p]))


def _objective(
    cp: Any,
    d: ScaledData,
    completion: list[Any],
    upper: int | None,
    lower: int | None,
    partial: Sequence[tuple[Sequence[int], int]],
) -> None:
    """min sum_n w_n C_n (Hare_Sched's objective), with the proven bounds stated: each
    group's sum of weighted completions >= its bound, the total within [lower, upper]."""
    for group, bound in partial:
        cp.add(sum(d.weight[n] * completion[n] for n in group) >= bound)
    objective = sum(w * c for w, c in zip(d.weight, completion, strict=True))
    if upper is not None:
        cp.add(objective <= upper)
    if lower is not None:
        cp.add(objective >= lower)
    cp.minimize(objective)


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
    from dlsched.models.hare.check import check_schedule

    best = None
    for name, sched in hint_candidates(instance, deadline):
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


@dataclass(frozen=True)
class PriorBounds:
    """What earlier stages proved, in scaled objective units: ``lower`` on the objective, and
    ``partial`` (jobs, bound) pairs on sums of weighted completions (see decompose.py)."""

    lower: int | None = None
    partial: tuple[tuple[tuple[int, ...], int], ...] = ()
    info: dict[str, Any] = field(default_factory=dict)


def solve_cpsat_native(
    instance: HareInstance,
    options: SolveOptions,
    hint: TaskSchedule | None = None,
    *,
    deadline: Deadline | None = None,
    prior: PriorBounds | None = None,
    use_upper: bool = True,
    symmetry: bool = True,
    job_bounds: bool = True,
    lp_bound: bool = True,
    redundant: bool = False,
    lp_options: dict[str, Any] | None = None,
    pooled: bool = True,
) -> RouteResult:
    """The LP-bound and CP-SAT stages of the exact route (the subset stage is
    :func:`pipeline.solve_exact`); the best schedule, its objective and what was proved.

    ``deadline``: the stage's budget (default: ``options.time_limit`` from now); the model is
    built in at most :data:`BUILD_SHARE` of what the LP bound left (else the hint is
    returned, ``cpsat_status`` "not built"), and CP-SAT gets what is left then, with the
    threads, seed and gap of ``options``.
    With a ``hint`` (and exact scaling) its objective is an upper bound of the model
    (``use_upper``); the hint is returned if CP-SAT finds nothing at least as good.
    ``prior``: bounds proved by earlier stages, stated in the model.
    ``redundant``: add the redundant cumulatives of :func:`build_cpsat` and set
    ``linearization_level = 2`` (unless ``options.extra`` sets it); off by default (see
    benchmarks/READING_hare.md). ``lp_bound``: first the time-indexed LP of :mod:`lowerbound`
    (HiGHS, :data:`LP_SHARE` of the time left), stated as objective >= its value.
    ``lp_options``: keyword arguments for :func:`lowerbound.time_indexed_bound`.
    ``pooled``: see :func:`build_cpsat`.
    """
    deadline = budget(options, deadline).stage(1.0)  # all that is left, from now
    prior = prior or PriorBounds()
    d = scale_data(instance)
    unit = d.time_scale * d.weight_scale
    upper = None
    if hint is not None and d.exact and use_upper:
        upper = scaled_objective(d, instance, hint)
        d = replace(d, horizon=max(d.horizon, math.ceil(_span(instance, hint) * d.time_scale)))
    lb = (
        lp_stage(instance, d, upper, options, lp_options, deadline)
        if lp_bound and d.exact
        else None
    )
    lower = max((v for v in (prior.lower, lb and lb.scaled) if v is not None), default=None)
    scaling = {
        "time_scale": d.time_scale,
        "weight_scale": d.weight_scale,
        "scale_exact": d.exact,
        "horizon": d.horizon / d.time_scale,
    }
    try:
        built = build_cpsat(
            instance,
            d,
            upper=upper,
            lower=lower,
            symmetry=symmetry,
            job_bounds=job_bounds,
            redundant=redundant,
            pooled=pooled,
            partial=prior.partial,
            deadline=deadline.stage(BUILD_SHARE),
        )
    except BuildTimeUp:  # no time to build the model and run it: the hint, as if CP-SAT ran dry
        info = {**prior.info, **scaling, "cpsat_status": "not built (time limit)"}
        objective = None if upper is None else upper / unit
        proof = _proof(instance, d, None, lower, near_limit=True)
        info.update(lp_info(lb, d, prior.info), returned="hint")
        return RouteResult(hint, objective, proof, info)
    if hint is not None:
        add_hint(built, instance, hint)
    run = run_cpsat(
        built.model,
        deadline.solve_options(options),
        label=f"exact-cpsat on {instance.name}",
        params={"linearization_level": 2} if redundant else None,
    )
    info = {
        **prior.info,
        **scaling,
        "cpsat_status": run.status_name,
        # C_n >= every last finish (6) leaves C_n free to lie above the schedule's completion
        # in a solution CP-SAT did not prove optimal with no gap: its objective then only
        # bounds the schedule's cost from above (at a proven optimum they are equal)
        "objective_is_upper": not (run.proven_optimal and options.mip_gap == 0),
        "solver_wall_time": deadline.elapsed(),
        "num_workers": run.workers,
        "upper_from_hint": None if upper is None else upper / unit,
        "symmetry_classes": [c for c in built.gpu_classes if len(c) > 1],
        **lp_info(lb, d, prior.info),
    }
    if run.infeasible and hint is None:
        raise ContradictionError(instance.name, "exact-cpsat", "every hare instance is feasible")
    proof = _proof(instance, d, run, lower, deadline.almost_passed(NEAR_LIMIT))
    if not run.has_solution:
        # nothing at least as good as the hint (objective <= upper) was found; INFEASIBLE
        # with the hint in hand is a contradiction that certify() turns into an error
        objective = None if upper is None else upper / unit
        return RouteResult(hint, objective, proof, {**info, "returned": "hint"})
    items = []
    for i in instance.tasks:
        g = built.placed_on(i, run.value)
        items.append((i, g, run.value(built.start[i]) / d.time_scale))
    schedule = TaskSchedule.from_items(colour_pools(instance, items, built.pools))
    assert run.objective is not None
    return RouteResult(schedule, run.objective / unit, proof, info)


def lp_info(lb: Any, d: ScaledData, earlier: dict[str, Any]) -> dict[str, Any]:
    """What the LP stage reports: its bound, grid and time, or an earlier stage's (None)."""
    if lb is None:
        return {k: earlier.get(k) for k in ("lp_bound", "lp_bound_grid", "lp_bound_seconds")}
    return {
        "lp_bound": lb.bound,
        "lp_bound_grid": lb.grid / d.time_scale,
        "lp_bound_seconds": lb.seconds,
    }


def _span(instance: HareInstance, schedule: TaskSchedule) -> float:
    """The last finish (training + sync) of a schedule."""
    return max(
        e.start + instance.tc[e.job, e.gpu] + instance.ts[e.job, e.gpu] for e in schedule.entries
    )


def lp_stage(
    instance: HareInstance,
    d: ScaledData,
    upper: int | None,
    options: SolveOptions,
    lp_options: dict[str, Any] | None,
    deadline: Deadline,
) -> Any:
    """The time-indexed LP bound with :data:`LP_SHARE` of the time left to ``deadline`` (at
    most :data:`LP_SECONDS`) as its solver's limit. The LP is built in Python before that limit
    starts; below LP_MIN_BUDGET seconds it would overrun the route's limit, so it is skipped
    (None)."""
    seconds = deadline.stage(LP_SHARE).seconds(cap=LP_SECONDS)
    if seconds is None or seconds < LP_MIN_BUDGET:
        return None
    from .lowerbound import time_indexed_bound

    kw: dict[str, Any] = {"time_limit": seconds, "threads": max(1, options.threads)}
    kw.update(lp_options or {})
    return time_indexed_bound(instance, d, upper, **kw)


def _proof(
    instance: HareInstance, d: ScaledData, run: Any, lower: int | None, near_limit: bool
) -> Proof:
    """What the CP-SAT stage proved: CP-SAT's bound (``run`` None: the model was not run),
    raised to the earlier stages' and to the combinatorial bound (all valid); none on
    rounded-up data, where bounds bound nothing."""
    unit = d.time_scale * d.weight_scale
    own = 0 if run is None else run.bound
    bound = None
    if own is not None and d.exact:
        combinatorial = _scaled_bound(combinatorial_bound(instance)["bound"], unit)
        bound = max(own, lower or 0, combinatorial) / unit
    ran = run is not None
    return Proof(
        bound=bound,
        claimed_optimal=ran and run.proven_optimal,
        infeasible=ran and run.infeasible,
        hit_limit=near_limit or (ran and run.hit_limit),
        unit=objective_unit(d),
    )


__all__ = ["BuildTimeUp", "CpsatHare", "PriorBounds", "build_cpsat", "solve_cpsat_native"]
