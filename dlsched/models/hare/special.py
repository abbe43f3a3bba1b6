"""Exact route for the single-task special case of Hare_Sched: R || sum w_j C_j (with sync).

When every job has one round of one task and all jobs arrive at the same time a, a schedule is
an assignment of jobs to GPUs plus an order per GPU. GPU m is busy for T^c_{j,m} only (8); the
job completes T^s_{j,m} later (6), so C_j = a + S_j + T^c_{j,m} + T^s_{j,m}, S_j being the total
training time of the jobs before j on m. For a fixed assignment the sync term is a constant, and
the order minimising sum_j w_j S_j on one GPU is Smith's rule (w_j / T^c_{j,m} non-increasing;
Smith 1956), with no idle time. Hence the problem is a pure assignment problem:

    sum_j w_j C_j = sum_j sum_m y_jm w_j (a + T^c_jm + T^s_jm)
                    + sum_m sum_{k before j in Smith order on m} w_j T^c_km y_jm y_km.

Two exact models of it are provided:

* ``time-indexed`` (default when the integer-scaled horizon is small): x[j, m, t] = 1 if job j
  starts training at a + t on GPU m; one start per job; at most one job trains on a GPU per time
  unit. Its LP bound is strong (Sousa and Wolsey 1992; van den Akker, van Hoesel, Savelsbergh
  1999). It is solved by HiGHS. Times are scaled to integers (same scaling as the CP-SAT route);
  with integral data some optimal schedule has integral starts (no idle time), so the scaled
  model is exact. The horizon uses the following property of every optimal schedule: moving
  the last job j of GPU m to the end of GPU m' must not pay off, so
  L_m + T^s_jm <= L_m' + T^c_jm' + T^s_jm' (L = the training load). Therefore
  L_max <= L_min + Delta with Delta = max_j max_{m != m'} (T^c_jm' + T^s_jm' - T^s_jm), and
  L_min <= floor(sum_j max_m T^c_jm / |M|).
* ``pairs``: the quadratic form above with z_jkm = y_jm AND y_km (CP-SAT on booleans). No horizon
  is needed, but its LP bound is weak; it is kept as the fallback when the time-indexed model
  would be too large.

Before either, :func:`solve_single_task` runs an iterated local search on assignments
(:mod:`localsearch`) and column generation over single-GPU Smith schedules (:mod:`colgen`),
whose Lagrangian bound is certified at every iteration and often meets the incumbent (a proof
without a MILP); the integer restricted master gives another schedule. Then every column whose
reduced cost is within (incumbent - 1 - Lagrangian bound) of its GPU's pricing minimum is
enumerated and the set-partitioning MIP over them is solved (:func:`colgen.enumerated_master`):
every cheaper schedule uses only those columns, so the MIP either finds it or proves the
incumbent optimal. The best schedule of any stage is returned, with the larger of the valid
bounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dlsched.models.hare.check import check_schedule
from dlsched.models.hare.instance import HareInstance, is_single_task_case
from dlsched.models.hare.solution import TaskSchedule
from dlsched.solvers.base import SolverSettings
from dlsched.solvers.certify import Proof
from dlsched.solvers.cpsat import run_cpsat
from dlsched.solvers.deadline import Deadline
from dlsched.solvers.progress import note

from .budget import CG_SHARE, ENUM_END, LS_END, LS_SECONDS, LS_SHARE, MASTER_SECONDS, MASTER_SHARE
from .colgen import ASCENT_MIN_JOBS, column_generation, enumerated_master, master_assignment
from .common import NEAR_LIMIT, RouteResult
from .localsearch import SumWC, iterated_local_search, sum_wc_data
from .localsearch import load_horizon as time_indexed_horizon
from .relaxation import combinatorial_bound
from .scaling import objective_unit, scale_data

#: Largest number of time-indexed columns built before falling back to the pairs model.
MAX_TIME_INDEXED_COLUMNS = 400_000
#: From ASCENT_MIN_JOBS jobs, column generation starts with a Lagrangian ascent
#: (:func:`colgen.lagrangian_ascent`) that ends at the latest ASCENT_END of the route's limit
#: after its start (the LP-driven rounds then run to LS_SHARE + CG_SHARE of it).
ASCENT_END = 0.45


# --- schedules of assignments ----------------------------------------------------------------


def assignment_schedule(instance: HareInstance, data: SumWC, assign: Any) -> TaskSchedule:
    """Smith order on every GPU (:meth:`SumWC.smith_order`), no idle time, from the common
    arrival."""
    a = instance.jobs[0].arrival
    items = []
    for m in range(instance.num_gpus):
        t = a
        for j in data.smith_order(m, np.flatnonzero(np.asarray(assign) == m)).tolist():
            items.append(((j, 0, 0), m, t))
            t += float(instance.tc[j, m])
    return TaskSchedule.from_items(items)


# --- exact models ---------------------------------------------------------------------------


@dataclass
class SpecialResult:
    assign: list[int] | None
    objective: float | None  # original units
    proof: Proof
    info: dict[str, Any] = field(default_factory=dict)


def time_indexed_model(instance: HareInstance) -> tuple[Any, dict[str, Any]]:
    """The time-indexed MILP of the scaled instance: (its :class:`MatrixModel`, the column
    layout: ``job``, ``gpu`` per column, ``first[j, m]`` the column of x[j, m, 0], ``count``
    columns per (job, GPU), the scaled data ``d`` and ``p``, horizon ``T``).

    Columns x[j, m, t] (job j starts at the arrival + t on GPU m), t = 0 .. T - p_jm, in job,
    GPU, slot order; rows: one start per job (= 1), then GPU m busy at slot u (<= 1)."""
    from dlsched.solvers.highs import MatrixModel, RowBlock, segment_offsets, stack_rows

    d = scale_data(instance)
    n, M = instance.num_jobs, instance.num_gpus
    p = np.array(d.tc, dtype=np.int64)
    s = np.array(d.ts, dtype=np.int64)
    w = np.array([j.weight for j in instance.jobs], dtype=float)
    T = time_indexed_horizon(p, s)
    count = np.maximum(T - p + 1, 0).reshape(-1)  # columns per (job, GPU)
    first = (np.cumsum(count) - count).reshape(n, M)  # the column of x[j, m, 0]
    job = np.repeat(np.arange(n), count.reshape(n, M).sum(axis=1))
    gpu = np.repeat(np.tile(np.arange(M), n), count)
    slot = segment_offsets(count)
    train = p[job, gpu]
    busy = np.repeat(np.arange(job.size), train)
    rows = [
        RowBlock.of(job, np.arange(job.size), np.ones(job.size), 1.0, 1.0, n),  # one start
        RowBlock.of(  # one job at a time on a GPU (8)
            gpu[busy] * T + slot[busy] + segment_offsets(train),
            busy,
            np.ones(busy.size),
            -math.inf,
            1.0,
            M * T,
        ),
    ]
    matrix, row_lower, row_upper = stack_rows(rows, job.size)
    model = MatrixModel(
        cost=w[job] * (d.arrival[0] + slot + train + s[job, gpu]) / d.time_scale,
        matrix=matrix,
        row_lower=row_lower,
        row_upper=row_upper,
        col_lower=np.zeros(job.size),
        col_upper=np.ones(job.size),
        integrality=np.ones(job.size, dtype=bool),
    )
    layout = {"job": job, "gpu": gpu, "first": first, "count": count, "d": d, "p": p, "T": T}
    return model, layout


def _time_indexed_start(
    instance: HareInstance, layout: dict[str, Any], start: np.ndarray | None
) -> np.ndarray | None:
    """The assignment ``start`` as a MIP start of the time-indexed model (Smith order, no idle
    time), or None when some start lies past the horizon."""
    if start is None:
        return None
    p, count, first = layout["p"], layout["count"], layout["first"]
    M = instance.num_gpus
    data = sum_wc_data(instance)
    keys = []
    for m in range(M):
        order = data.smith_order(m, np.flatnonzero(start == m)).tolist()
        begin = np.cumsum([0] + [int(p[j, m]) for j in order])
        keys += [(j, m, int(t)) for j, t in zip(order, begin, strict=False)]
    if not all(t < count[j * M + m] for j, m, t in keys):
        return None
    x0 = np.zeros(layout["job"].size)
    x0[[first[j, m] + t for j, m, t in keys]] = 1.0
    return x0


def solve_time_indexed(
    instance: HareInstance,
    settings: SolverSettings,
    start: np.ndarray | None,
    deadline: Deadline,
) -> SpecialResult:
    """Time-indexed MILP (:func:`time_indexed_model`, HiGHS); exact when the scaled data are
    integral. ``start``: an assignment given as MIP start."""
    from dlsched.solvers.base import Status
    from dlsched.solvers.highs import solve_matrix

    model, layout = time_indexed_model(instance)
    d = layout["d"]
    x0 = _time_indexed_start(instance, layout, start)
    # HiGHS's presolve (probing over ~40k binaries of long rows) can take minutes on this
    # model while the root LP takes about a second; it is off unless asked for via ``extra``.
    opts = settings.with_(extra={"presolve": "off", **settings.extra})
    res = solve_matrix(model, deadline.solve_options(opts), start=x0)
    out: dict[str, Any] = {
        "special_model": "time-indexed",
        "time_scale": d.time_scale,
        "scale_exact": d.exact,
        "horizon_units": layout["T"],
        "columns": model.num_cols,
        "rows": model.num_rows,
        "highs_status": res.info["highs_status"],
        "mip_nodes": res.info["mip_nodes"],
    }
    assign = None
    if res.col_value is not None:
        assign = [0] * instance.num_jobs
        for k in np.nonzero(res.col_value > 0.5)[0]:
            assign[int(layout["job"][k])] = int(layout["gpu"][k])
    proof = Proof(
        bound=res.bound if d.exact else None,  # rounded-up data: the model bounds nothing
        claimed_optimal=res.info["claimed_optimal"],
        infeasible=res.status == Status.INFEASIBLE,  # impossible: see the horizon
        hit_limit=res.info["hit_limit"],
        unit=objective_unit(d),
    )
    return SpecialResult(assign, res.objective, proof, out)


def solve_pairs_cpsat(
    instance: HareInstance,
    settings: SolverSettings,
    start: np.ndarray | None,
    deadline: Deadline,
) -> SpecialResult:
    """Assignment booleans y and products z = y_j AND y_k per GPU, Smith order fixed (CP-SAT)."""
    from ortools.sat.python import cp_model

    d = scale_data(instance)
    n, M = instance.num_jobs, instance.num_gpus
    a = d.arrival[0]
    cp = cp_model.CpModel()
    y = {(j, m): cp.new_bool_var(f"y{j},{m}") for j in range(n) for m in range(M)}
    terms = []
    for j in range(n):
        cp.add_exactly_one(y[(j, m)] for m in range(M))
        for m in range(M):
            terms.append(d.weight[j] * (a + d.tc[j][m] + d.ts[j][m]) * y[(j, m)])
    for m in range(M):
        order = sum_wc_data(instance).smith_order(m, np.arange(n)).tolist()
        for pos, j in enumerate(order):
            for k in order[:pos]:  # k before j on m: w_j p_k if both are on m
                z = cp.new_bool_var(f"z{j},{k},{m}")
                cp.add_implication(z, y[(j, m)])
                cp.add_implication(z, y[(k, m)])
                cp.add_bool_or([y[(j, m)].Not(), y[(k, m)].Not(), z])
                terms.append(d.weight[j] * d.tc[k][m] * z)
    cp.minimize(sum(terms))
    if start is not None:
        for j in range(n):
            for m in range(M):
                cp.add_hint(y[(j, m)], int(start[j] == m))
    run = run_cpsat(cp, deadline.solve_options(settings), label=f"pairs model of {instance.name}")
    unit = d.time_scale * d.weight_scale
    info: dict[str, Any] = {
        "special_model": "pairs",
        "time_scale": d.time_scale,
        "scale_exact": d.exact,
        "cpsat_status": run.status_name,
    }
    proof = Proof(
        bound=run.bound / unit if d.exact and run.bound is not None else None,
        claimed_optimal=run.proven_optimal,
        infeasible=run.infeasible,
        hit_limit=run.hit_limit,
        unit=objective_unit(d),
    )
    if not run.has_solution or run.objective is None:
        return SpecialResult(None, None, proof, info)
    assign = [next(m for m in range(M) if run.value(y[(j, m)])) for j in range(n)]
    return SpecialResult(assign, run.objective / unit, proof, info)


@dataclass
class _Best:
    """The best assignment so far, its scaled cost, and which stage found it."""

    assign: np.ndarray
    cost: float
    stage: str

    def offer(self, data: SumWC, assign: np.ndarray | None, stage: str) -> None:
        if assign is not None and (c := data.cost(assign)) < self.cost:
            self.assign, self.cost, self.stage = np.asarray(assign), c, stage


def solve_single_task(
    instance: HareInstance,
    settings: SolverSettings,
    model: str = "auto",
    *,
    deadline: Deadline,
) -> RouteResult:
    """Stages, each keeping the best assignment so far (returned as the Smith-ordered schedule
    of every GPU, with the checker's objective):

    1. iterated local search (:mod:`localsearch`), at most LS_SHARE of the limit;
    2. column generation (:mod:`colgen`, exact data only): from ASCENT_MIN_JOBS jobs a
       Lagrangian ascent first (until ASCENT_END of the limit), then the LP-driven rounds; a
       Lagrangian bound at every pricing round, stopping when it meets the incumbent (proof)
       or converges; then the restricted master with integer columns as a schedule, polished
       by the local search; then the MIP over the enumerated columns of small reduced cost,
       until ENUM_END of the limit (a bound beyond the LP's and a schedule);
    3. if not proven: an exact model in the time left (``auto``: the time-indexed MILP when it
       has at most MAX_TIME_INDEXED_COLUMNS columns, else more local search), its bound and
       schedule merged with the stages' (the larger bound; both are valid).

    ``model``: ``auto`` | ``time-indexed`` | ``pairs`` (stage 3 forced, stage 2 skipped) |
    ``colgen`` (stages 1-2 only). ``deadline``: the route's budget (a caller without one
    passes ``Deadline.after(seconds)`` or ``NEVER``); ``settings`` give threads and seed.
    """
    if not is_single_task_case(instance):
        raise ValueError("not the single-task, common-arrival special case")
    if model not in ("auto", "time-indexed", "pairs", "colgen"):
        raise ValueError(f"unknown special model {model!r}")
    data = sum_wc_data(instance)
    scaled = scale_data(instance)
    note("local search")
    ls, ls_cost, visits = iterated_local_search(
        data, None, deadline.share_of_limit(LS_SHARE, cap=LS_SECONDS), settings.seed
    )
    best = _Best(ls, ls_cost, "local search")
    info: dict[str, Any] = {
        "route": "special",
        "local_search_time": deadline.elapsed(),
        "local_search_objective": ls_cost / data.unit,
        "local_search_optima": visits,
        "time_scale": scaled.time_scale,
        "scale_exact": data.exact,
    }
    bound = None  # scaled
    if model in ("auto", "colgen") and data.exact:
        bound = _colgen_stage(data, best, deadline, settings, info)
    res = None
    if not (bound is not None and bound >= best.cost) and model != "colgen":
        res = _last_stage(instance, data, model, best, settings, deadline, info)
    bounds = [
        b
        for b in (
            None if bound is None else bound / data.unit,
            None if res is None else res.proof.bound,
            combinatorial_bound(instance)["bound"],  # when the stages above prove less
        )
        if b is not None
    ]
    proof = Proof(
        bound=max(bounds) if bounds else None,
        claimed_optimal=res is not None and res.proof.claimed_optimal,
        infeasible=res is not None and res.proof.infeasible,
        hit_limit=(res is not None and res.proof.hit_limit) or deadline.almost_passed(NEAR_LIMIT),
        unit=objective_unit(scaled),
    )
    info["incumbent_from"] = best.stage
    schedule = assignment_schedule(instance, data, best.assign)
    return RouteResult(schedule, check_schedule(instance, schedule).objective, proof, info)


def _last_stage(
    instance: HareInstance,
    data: SumWC,
    model: str,
    best: _Best,
    settings: SolverSettings,
    deadline: Deadline,
    info: dict[str, Any],
) -> SpecialResult | None:
    """Stage 3: the exact model (its result, its schedule offered to ``best``), or when the
    instance is too large for one, the local search again until LS_END of the limit."""
    stage3 = model if model != "auto" else _auto_model(instance)
    if stage3 not in ("time-indexed", "pairs"):
        best.offer(
            data,
            iterated_local_search(
                data, best.assign, deadline.share_from_start(LS_END), settings.seed + 1
            )[0],
            "local search (second run)",
        )
        return None
    res = _exact_stage(stage3, instance, settings, best.assign, deadline)
    info["exact_stage_finished"] = res is not None
    if res is not None:
        best.offer(data, None if res.assign is None else np.array(res.assign), stage3)
        info.update(res.info)
    return res


def _exact_stage(
    stage: str,
    instance: HareInstance,
    settings: SolverSettings,
    start: np.ndarray | None,
    deadline: Deadline,
) -> SpecialResult | None:
    """Stage 3 in a child process killed at the deadline (plus the solvers' grace): HiGHS sets
    up a MIP of a few hundred thousand columns for longer than its own time limit, before it
    first checks the clock. None when it did not finish."""
    solve = solve_time_indexed if stage == "time-indexed" else solve_pairs_cpsat
    if deadline.passed():
        return None
    return deadline.run(solve, instance, settings, start, deadline, label=f"{stage} stage")


def _auto_model(instance: HareInstance) -> str:
    """The time-indexed MILP when it is small enough, else none (local search)."""
    d = scale_data(instance)
    T = time_indexed_horizon(np.array(d.tc), np.array(d.ts))
    ncols = sum(max(0, T - p + 1) for row in d.tc for p in row)
    return "time-indexed" if d.exact and ncols <= MAX_TIME_INDEXED_COLUMNS else "none"


def _colgen_stage(
    data: SumWC, best: _Best, deadline: Deadline, settings: SolverSettings, info: dict
) -> int | None:
    """Column generation (bound, scaled) then the integer restricted master and a short local
    search from it, then the MIP over the columns of small reduced cost
    (:func:`colgen.enumerated_master`, a bound beyond the LP's and a schedule), each in its
    budget of ``deadline`` (see :data:`LS_SHARE`): schedules offered to ``best``, the largest
    bound returned; details into ``info``."""

    def incumbent(assign: np.ndarray | None) -> float:
        best.offer(data, assign, "Lagrangian ascent (repaired sets)")
        return best.cost

    large = data.n >= ASCENT_MIN_JOBS
    cg = column_generation(
        data,
        best.assign,
        deadline.share_from_start(LS_SHARE + CG_SHARE),
        upper=best.cost,
        threads=settings.threads,
        lp_extra={"presolve": "off"},
        incumbent=incumbent if large else None,
        ascent=deadline.share_from_start(ASCENT_END) if large else None,
    )
    info.update(
        {
            "colgen_bound": None if cg.bound is None else cg.bound / data.unit,
            "colgen_lp_value": None if cg.lp_value is None else cg.lp_value / data.unit,
            "colgen_iterations": cg.iterations,
            "colgen_converged": cg.converged,
            "colgen_columns": len(cg.columns),
            "colgen_seconds": cg.seconds,
            "colgen_pricing_rounds": cg.info["pricing_rounds"],
            "ascent_seconds": cg.info["ascent_seconds"],
            "bound_trajectory": cg.info["bound_trajectory"],
        }
    )
    if cg.bound is not None and cg.bound >= best.cost:
        return cg.bound
    master = deadline.share_of_limit(MASTER_SHARE, cap=MASTER_SECONDS)
    note("restricted master with integer columns, then local search")
    found = master_assignment(data, cg.columns, best.assign, master, settings.threads)
    best.offer(data, found, "restricted master (integer columns)")
    if found is not None and (cg.bound is None or cg.bound < best.cost):  # not yet proven
        polish = deadline.share_of_limit(LS_SHARE, cap=LS_SECONDS)
        best.offer(
            data,
            iterated_local_search(data, best.assign, polish, settings.seed + 2)[0],
            "local search from the restricted master",
        )
    info["master_seconds"] = master.elapsed()
    if cg.bound is None or cg.pi is None or cg.exact_bound is None or cg.bound >= best.cost:
        return cg.bound
    enum = enumerated_master(
        data,
        cg.pi,
        cg.exact_bound,
        best.cost,
        deadline.share_from_start(ENUM_END),
        threads=settings.threads,
    )
    best.offer(data, enum.assign, "enumerated master (reduced-cost columns)")
    info.update(
        {
            "enum_bound": None if enum.bound is None else enum.bound / data.unit,
            "enum_columns": enum.columns,
            "enum_status": enum.status,
            "enum_seconds": enum.seconds,
        }
    )
    return max(cg.bound, enum.bound) if enum.bound is not None else cg.bound


__all__ = [
    "MAX_TIME_INDEXED_COLUMNS",
    "assignment_schedule",
    "is_single_task_case",
    "solve_single_task",
]
