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

Both start from an incumbent of a local search on assignments (relocate and swap moves,
per-GPU Smith order), which is also what the route returns if the solver finds nothing better.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from dlsched.models.hare.instance import HareInstance
from dlsched.models.hare.solution import TaskSchedule
from dlsched.solvers.base import SolveOptions
from dlsched.solvers.certify import Proof
from dlsched.solvers.cpsat import run_cpsat

from .common import RouteResult
from .scaling import objective_unit, scale_data

#: Largest number of time-indexed columns built before falling back to the pairs model.
MAX_TIME_INDEXED_COLUMNS = 400_000


def is_single_task_case(instance: HareInstance) -> bool:
    """One round of one task per job and a common arrival: R || sum w_j C_j (with sync)."""
    jobs = instance.jobs
    return all(j.rounds == 1 and j.tasks_per_round == 1 for j in jobs) and all(
        j.arrival == jobs[0].arrival for j in jobs
    )


# --- assignments, Smith order, local search ------------------------------------------------


def smith_order(instance: HareInstance, jobs: list[int], m: int) -> list[int]:
    """Jobs of one GPU in Smith order: w / T^c non-increasing (ties by index)."""
    tc = instance.tc
    return sorted(jobs, key=lambda j: (-instance.jobs[j].weight / tc[j, m], j))


def _gpu_cost(w: np.ndarray, p: np.ndarray, s: np.ndarray, jobs: list[int]) -> float:
    """sum w_j (S_j + p_j + s_j) of ``jobs`` on one GPU in Smith order (arrival excluded)."""
    if not jobs:
        return 0.0
    idx = np.array(jobs)
    order = idx[np.lexsort((idx, -w[idx] / p[idx]))]
    c = np.cumsum(p[order]) + s[order]
    return float(np.dot(w[order], c))


def assignment_cost(instance: HareInstance, assign: list[int]) -> float:
    """Objective of the Smith-ordered schedule of an assignment job -> GPU."""
    w = np.array([j.weight for j in instance.jobs])
    a = instance.jobs[0].arrival
    total = a * float(w.sum())
    for m in range(instance.num_gpus):
        jobs = [j for j, g in enumerate(assign) if g == m]
        total += _gpu_cost(w, instance.tc[:, m], instance.ts[:, m], jobs)
    return total


def assignment_schedule(instance: HareInstance, assign: list[int]) -> TaskSchedule:
    """Smith order on every GPU, no idle time, starting at the common arrival."""
    a = instance.jobs[0].arrival
    items = []
    for m in range(instance.num_gpus):
        t = a
        for j in smith_order(instance, [j for j, g in enumerate(assign) if g == m], m):
            items.append(((j, 0, 0), m, t))
            t += float(instance.tc[j, m])
    return TaskSchedule.from_items(items)


def local_search(
    instance: HareInstance,
    assign: list[int],
    budget: float,
    seed: int = 0,
    max_stale: int = 200,
) -> tuple[list[int], float, int]:
    """Iterated local search on assignments: relocate / swap moves to a local optimum, then a
    random perturbation (a few relocations), within ``budget`` seconds or until ``max_stale``
    perturbations in a row bring no improvement. Returns
    (best assignment, its cost without the arrival term, number of local optima visited)."""
    n, M = instance.num_jobs, instance.num_gpus
    w = np.array([j.weight for j in instance.jobs], dtype=float)
    P, S = instance.tc, instance.ts
    rng = random.Random(seed)
    t_end = time.perf_counter() + budget

    def costs(asg: list[int]) -> tuple[list[list[int]], list[float]]:
        per = [[j for j in range(n) if asg[j] == m] for m in range(M)]
        return per, [_gpu_cost(w, P[:, m], S[:, m], per[m]) for m in range(M)]

    def descend(asg: list[int]) -> tuple[list[int], float]:
        per, cm = costs(asg)
        improved = True
        while improved and time.perf_counter() < t_end:
            improved = False
            for j in range(n):
                g = asg[j]
                without = [k for k in per[g] if k != j]
                c_without = _gpu_cost(w, P[:, g], S[:, g], without)
                for h in range(M):
                    if h == g:
                        continue
                    c_with = _gpu_cost(w, P[:, h], S[:, h], [*per[h], j])
                    if c_without + c_with < cm[g] + cm[h] - 1e-9:
                        per[g], per[h] = without, [*per[h], j]
                        cm[g], cm[h] = c_without, c_with
                        asg[j] = h
                        improved = True
                        break
                    for k in per[h]:  # swap j <-> k
                        a_g = [*without, k]
                        a_h = [x for x in per[h] if x != k] + [j]
                        cg = _gpu_cost(w, P[:, g], S[:, g], a_g)
                        ch = _gpu_cost(w, P[:, h], S[:, h], a_h)
                        if cg + ch < cm[g] + cm[h] - 1e-9:
                            per[g], per[h], cm[g], cm[h] = a_g, a_h, cg, ch
                            asg[j], asg[k] = h, g
                            improved = True
                            break
                    if improved:
                        break
        return asg, float(sum(cm))

    best, best_c = descend(list(assign))
    cur, cur_c = list(best), best_c
    visits, stale = 1, 0
    while time.perf_counter() < t_end and M > 1 and stale < max_stale:
        nxt = list(cur)
        for _ in range(rng.randint(2, max(2, min(6, n // 4 + 1)))):
            j = rng.randrange(n)
            nxt[j] = rng.choice([m for m in range(M) if m != nxt[j]])
        nxt, c = descend(nxt)
        visits += 1
        if c < cur_c - 1e-9 or rng.random() < 0.05:
            cur, cur_c = nxt, c
        stale += 1
        if c < best_c - 1e-9:
            best, best_c, stale = list(nxt), c, 0
        elif cur_c > best_c * 1.05:
            cur, cur_c = list(best), best_c
    return best, best_c, visits


def greedy_assignment(instance: HareInstance) -> list[int]:
    """Jobs in non-increasing w / min T^c, each to the GPU minimising its own completion."""
    n, M = instance.num_jobs, instance.num_gpus
    P, S = instance.tc, instance.ts
    order = sorted(range(n), key=lambda j: (-instance.jobs[j].weight / P[j].min(), j))
    load = [0.0] * M
    assign = [0] * n
    for j in order:
        g = min(range(M), key=lambda m: (load[m] + P[j, m] + S[j, m], m))
        assign[j] = g
        load[g] += P[j, g]
    return assign


# --- exact models ---------------------------------------------------------------------------


@dataclass
class SpecialResult:
    assign: list[int] | None
    objective: float | None  # original units
    proof: Proof
    info: dict[str, Any] = field(default_factory=dict)


def time_indexed_horizon(p: np.ndarray, s: np.ndarray) -> int:
    """Upper bound (integer units, from the arrival) on every GPU's training load in every
    optimal schedule (see the module docstring)."""
    n, M = p.shape
    if M == 1:
        return int(p[:, 0].sum())
    delta = 0
    for j in range(n):
        for m in range(M):
            for h in range(M):
                if h != m:
                    delta = max(delta, int(p[j, h] + s[j, h] - s[j, m]))
    lmin = int(p.max(axis=1).sum()) // M
    return min(lmin + max(delta, 0), int(p.max(axis=1).sum()))


def solve_time_indexed(
    instance: HareInstance, options: SolveOptions, start: list[int] | None, t_end: float
) -> SpecialResult:
    """Time-indexed MILP (HiGHS); exact when the scaled data are integral.

    Columns x[j, m, t] (job j starts at the arrival + t on GPU m), t = 0 .. T - p_jm, in job,
    GPU, slot order; rows: one start per job (= 1), then GPU m busy at slot u (<= 1)."""
    from dlsched.solvers.base import Status
    from dlsched.solvers.highs import (
        MatrixModel,
        RowBlock,
        segment_offsets,
        solve_matrix,
        stack_rows,
    )

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
        RowBlock.of(job, np.arange(job.size), np.ones(job.size), 1.0, 1.0, n),
        RowBlock.of(
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
    x0 = None
    if start is not None:  # the incumbent as a MIP start (Smith order, no idle time)
        keys = []
        for m in range(M):
            order = smith_order(instance, [j for j, g in enumerate(start) if g == m], m)
            begin = np.cumsum([0] + [int(p[j, m]) for j in order])
            keys += [(j, m, int(t)) for j, t in zip(order, begin, strict=False)]
        if all(t < count[j * M + m] for j, m, t in keys):
            x0 = np.zeros(job.size)
            x0[[first[j, m] + t for j, m, t in keys]] = 1.0
    # HiGHS's presolve (probing over ~40k binaries of long rows) can take minutes on this
    # model while the root LP takes about a second; it is off unless asked for via ``extra``.
    opts = options.with_(extra={"presolve": "off", **options.extra})
    res = solve_matrix(model, opts, start=x0, deadline=t_end)
    out: dict[str, Any] = {
        "special_model": "time-indexed",
        "time_scale": d.time_scale,
        "scale_exact": d.exact,
        "horizon_units": T,
        "columns": model.num_cols,
        "rows": model.num_rows,
        "highs_status": res.info["highs_status"],
        "mip_nodes": res.info["mip_nodes"],
    }
    assign = None
    if res.col_value is not None:
        assign = [0] * n
        for k in np.nonzero(res.col_value > 0.5)[0]:
            assign[int(job[k])] = int(gpu[k])
    proof = Proof(
        bound=res.bound if d.exact else None,  # rounded-up data: the model bounds nothing
        claimed_optimal=res.info["claimed_optimal"],
        infeasible=res.status == Status.INFEASIBLE,  # impossible: see the horizon
        hit_limit=res.info["hit_limit"],
        unit=objective_unit(d.time_scale, d.weight_scale, d.exact),
    )
    return SpecialResult(assign, res.objective, proof, out)


def solve_pairs_cpsat(
    instance: HareInstance, options: SolveOptions, start: list[int] | None, t_end: float
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
        order = smith_order(instance, list(range(n)), m)
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
    run = run_cpsat(cp, options, deadline=t_end, label=f"pairs model of {instance.name}")
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
        unit=objective_unit(d.time_scale, d.weight_scale, d.exact),
    )
    if not run.has_solution or run.objective is None:
        return SpecialResult(None, None, proof, info)
    assign = [next(m for m in range(M) if run.value(y[(j, m)])) for j in range(n)]
    return SpecialResult(assign, run.objective / unit, proof, info)


def solve_single_task(
    instance: HareInstance, options: SolveOptions, model: str = "auto"
) -> RouteResult:
    """Local search, then an exact model; returns the best schedule, its objective and what
    the model proved.

    The schedule is the Smith-ordered schedule of the best assignment found (never worse than
    the solver's own schedule). ``model``: ``auto`` | ``time-indexed`` | ``pairs``.
    """
    if not is_single_task_case(instance):
        raise ValueError("not the single-task, common-arrival special case")
    t0 = time.perf_counter()
    limit = options.time_limit
    t_end = t0 + (limit if limit is not None else 1e9)
    ls_budget = min(2.0, 0.1 * limit) if limit is not None else 2.0
    base = greedy_assignment(instance)
    inc, _, visits = local_search(instance, base, ls_budget, options.seed)
    inc_cost = assignment_cost(instance, inc)
    t_ls = time.perf_counter() - t0
    if model == "auto":
        d = scale_data(instance)
        T = time_indexed_horizon(np.array(d.tc), np.array(d.ts))
        ncols = sum(max(0, T - p + 1) for row in d.tc for p in row)
        model = "time-indexed" if d.exact and ncols <= MAX_TIME_INDEXED_COLUMNS else "pairs"
    if model == "time-indexed":
        res = solve_time_indexed(instance, options, inc, t_end)
    elif model == "pairs":
        res = solve_pairs_cpsat(instance, options, inc, t_end)
    else:
        raise ValueError(f"unknown special model {model!r}")
    assign, obj = inc, inc_cost
    if res.assign is not None:
        c = assignment_cost(instance, res.assign)
        if c < obj:
            assign, obj = res.assign, c
    hit = limit is not None and time.perf_counter() - t0 >= 0.95 * limit
    proof = replace(res.proof, hit_limit=res.proof.hit_limit or hit)
    info = {
        "route": "special",
        "local_search_time": t_ls,
        "local_search_objective": inc_cost,
        "local_search_optima": visits,
        **res.info,
    }
    return RouteResult(assignment_schedule(instance, assign), obj, proof, info)


__all__ = [
    "MAX_TIME_INDEXED_COLUMNS",
    "assignment_cost",
    "assignment_schedule",
    "is_single_task_case",
    "local_search",
    "solve_single_task",
]
