"""The LP relaxation of ILP (8)/(17) by column generation, with a certified bound.

Zhou et al., Section 5.1: the minimization form of (8)/(17) is
``min sum_l w_j c_l x_l`` s.t. ``sum_{l in Gamma_j} x_l = 1`` (dual pi_j) and
``sum_l f_jh^r(l) x_l <= C_h^r`` per slot (dual -Y[t, h, r] <= 0), ``x >= 0``. The restricted
master holds some columns (and an artificial column per job, so it is always feasible); its
duals price every schedule exactly with :mod:`.pricing`, the cost minimization (12)/(20).

Bound. For any Y >= 0, Lagrangian relaxation of the capacity rows gives

    L(Y) = sum_j min_{l in Gamma_j} (w_j c_l + sum_{t in T(l)} Y_t . f(l)) - sum_t Y_t . C

<= the LP optimum <= the ILP optimum (x = one schedule per job is feasible in the inner
minimum). Every iteration's L is valid whatever the master's state; the best one is reported,
and it equals the LP optimum when no column has a negative reduced cost (convergence). It is
computed as :func:`dlsched.solvers.highs.safe_dual_bound` of the master with multipliers
(pi_j = job j's cheapest priced cost, -Y), so that floating-point rounding cannot push it above
the optimum (:func:`certified_bound`). The master is solved by
:func:`dlsched.solvers.highs.solve_matrix` (a sparse matrix, row duals from HiGHS).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from dlsched.models.elastic.exact import Column, build_packing
from dlsched.models.elastic.instance import ElasticInstance
from dlsched.models.elastic.pricing import Pricer, price_job
from dlsched.solvers import SolveOptions, SolverSettings
from dlsched.solvers.deadline import NEVER, Deadline
from dlsched.solvers.highs import MatrixModel, RowBlock, safe_dual_bound, solve_matrix, stack_rows

#: A column enters the master when its reduced cost is below -REDUCED_TOL.
REDUCED_TOL = 1e-7


class MasterLP(NamedTuple):
    """A restricted master LP solved: its value, the duals pi [J] and prices Y [T, H, R]
    (>= 0), its ``columns`` and their values ``x`` (aligned), and each job's artificial
    value ``art`` [J] (the share of job j the master leaves unscheduled)."""

    value: float
    pi: np.ndarray
    prices: np.ndarray
    columns: list[Column]
    x: np.ndarray
    art: np.ndarray


@dataclass
class ColumnGeneration:
    """What column generation did: bound, LP value, history."""

    bound: float | None
    lp_value: float | None
    converged: bool
    iterations: int
    columns: int
    history: list[tuple[float, float]] = field(default_factory=list)  # (master, bound)
    wall_time: float = 0.0
    #: the last master LP solved (None before the first): its columns and values, what a
    #: rounding of the LP reads (kept out of :meth:`details`)
    master: MasterLP | None = None

    def details(self) -> dict[str, Any]:
        return {
            "bound": self.bound,
            "lp_value": self.lp_value,
            "converged": self.converged,
            "iterations": self.iterations,
            "columns_generated": self.columns,
            "history": [list(h) for h in self.history],
            "colgen_time": self.wall_time,
        }


def _penalty(inst: ElasticInstance) -> float:
    """Larger than any schedule's cost: w_j (T + 1) summed."""
    return sum(j.weight for j in inst.jobs) * (inst.horizon + 1) + 1.0


def _one_schedule_rows(inst: ElasticInstance, columns: list[Column]) -> RowBlock:
    """(2a) with (8b)/(17b) as equality: sum_{l in Gamma_j} x_l + art_j = 1 (row j)."""
    jobs = np.arange(inst.num_jobs)
    real = np.array([c.job for c in columns], dtype=np.int64)
    row = np.concatenate([jobs, real])
    col = np.arange(inst.num_jobs + len(columns))
    return RowBlock.of(row, col, np.ones(len(col)), 1.0, 1.0, inst.num_jobs)


def _capacity_rows(inst: ElasticInstance, columns: list[Column]) -> RowBlock:
    """(8a)/(17a): sum_l f_jh^r(l) x_l <= C_h^r for every (t, h, r); row (t H + h) R + r."""
    h_count, r_count = inst.num_servers, len(inst.resources)
    rows, cols, vals = [], [], []
    for k, c in enumerate(columns):
        hs, rs = c.config.usage.nonzero()
        slots = np.arange(c.start, c.end)
        cell = (slots[:, None] * h_count + hs) * r_count + rs  # [slot, nonzero]
        rows.append(cell.ravel())
        cols.append(np.full(cell.size, inst.num_jobs + k))
        vals.append(np.tile(c.config.usage[hs, rs], len(slots)))
    cap = np.array([s.capacity for s in inst.servers], dtype=float)
    return RowBlock(
        np.concatenate([np.zeros(0, dtype=np.int64), *rows]),
        np.concatenate([np.zeros(0, dtype=np.int64), *cols]),
        np.concatenate([np.zeros(0), *vals]),
        np.full(inst.horizon * h_count * r_count, -np.inf),
        np.tile(cap.ravel(), inst.horizon),
    )


def master_matrix(inst: ElasticInstance, columns: list[Column]) -> MatrixModel:
    """The LP relaxation of the minimization form of (8)/(17) over ``columns``: variables
    art_0..art_{J-1} (cost :func:`_penalty`, no resource) then x_l in [0, 1]."""
    n = inst.num_jobs + len(columns)
    blocks = [_one_schedule_rows(inst, columns), _capacity_rows(inst, columns)]
    matrix, lower, upper = stack_rows(blocks, n)
    real = [c.cost(inst) for c in columns]
    cost = np.concatenate([np.full(inst.num_jobs, _penalty(inst)), np.array(real, dtype=float)])
    return MatrixModel(cost, matrix, lower, upper, np.zeros(n), np.ones(n))


def solve_master(
    inst: ElasticInstance, columns: list[Column], options: SolveOptions
) -> MasterLP | None:
    """The restricted master LP (HiGHS, :func:`solve_matrix`, within ``options.time_limit``)
    over ``columns`` (HiGHS gives a non-positive dual to an active upper side, hence Y =
    max(0, -dual)); None when the limit stopped it first."""
    res = solve_matrix(master_matrix(inst, columns), options)
    if res.info["hit_limit"] or res.objective is None or res.row_dual is None:
        return None
    assert res.col_value is not None
    pi = res.row_dual[: inst.num_jobs]
    shape = (inst.horizon, inst.num_servers, len(inst.resources))
    prices = np.maximum(0.0, -res.row_dual[inst.num_jobs :]).reshape(shape)
    art, x = res.col_value[: inst.num_jobs], res.col_value[inst.num_jobs :]
    return MasterLP(res.objective, pi, prices, list(columns), x, art)


def certified_bound(
    inst: ElasticInstance, columns: list[Column], prices: np.ndarray, priced: list[float]
) -> float:
    """:func:`safe_dual_bound` of the master over ``columns`` with multipliers pi_j = the
    cheapest priced cost of job j over all of Gamma_j (``priced``) and -Y on the capacity
    rows. Every schedule of Gamma_j then has reduced cost >= 0, so the value is L(Y) of the
    module docstring: a lower bound on the LP over every schedule, rounding included."""
    duals = np.concatenate([np.array(priced, dtype=float), -prices.ravel()])
    return safe_dual_bound(master_matrix(inst, columns), duals)


def lagrangian_round(
    inst: ElasticInstance, prices: np.ndarray, deadline: Deadline = NEVER
) -> tuple[float, list[tuple[float, Column | None]]] | None:
    """L(Y) and each job's cheapest priced column (cost, column); None when ``deadline``
    passes before every job is priced (a partial round certifies nothing)."""
    pr = Pricer(inst, prices)
    cap = np.array([s.capacity for s in inst.servers], dtype=float)
    best = []
    for j in range(inst.num_jobs):
        if deadline.passed():
            return None
        got = price_job(pr, j)
        col = Column(got.config, got.start) if got.config is not None else None
        best.append((got.cost, col))
    total = sum(c for c, _ in best) - float((prices * cap).sum())
    return total, best


def column_generation(
    inst: ElasticInstance,
    settings: SolverSettings,
    deadline: Deadline,
    *,
    max_iterations: int = 500,
) -> ColumnGeneration:
    """Column generation from each job's earliest-completion schedule until no column prices
    out, the iteration cap or ``deadline`` (checked between jobs while pricing, the master LP
    given what is left: the bound is that of the last complete round, None if none
    completed)."""
    zero = np.zeros((inst.horizon, inst.num_servers, len(inst.resources)))
    start = lagrangian_round(inst, zero, deadline)
    if start is None:
        return ColumnGeneration(None, None, False, 0, 0, wall_time=deadline.elapsed())
    bound, first = start
    if not math.isfinite(bound):  # a job has no schedule at all: (2) is infeasible
        return ColumnGeneration(math.inf, None, True, 0, 0, wall_time=deadline.elapsed())
    columns = [c for _, c in first if c is not None]
    seen = {_key(c) for c in columns}
    out = ColumnGeneration(bound, None, False, 0, len(columns))
    while out.iterations < max_iterations and not deadline.passed():
        master = solve_master(inst, columns, deadline.solve_options(settings))
        if master is None:
            break
        value, pi, prices = master.value, master.pi, master.prices
        out.iterations += 1
        out.lp_value = value
        out.master = master
        round_ = lagrangian_round(inst, prices, deadline)
        if round_ is None:
            break
        priced = round_[1]
        lb = certified_bound(inst, columns, prices, [c for c, _ in priced])
        out.bound = max(out.bound or -math.inf, lb)
        out.history.append((value, lb))
        new = [
            c
            for j, (cost, c) in enumerate(priced)
            if c is not None and cost - pi[j] < -REDUCED_TOL and _key(c) not in seen
        ]
        if not new:
            out.converged = True
            break
        columns += new
        seen |= {_key(c) for c in new}
        out.columns = len(columns)
    out.wall_time = deadline.elapsed()
    return out


def _key(c: Column) -> tuple[Any, ...]:
    cf = c.config
    return (cf.job, cf.worker_type, cf.ps_type, cf.workers, cf.ps, cf.duration, c.start)


def full_lp(inst: ElasticInstance, columns: list[Column]) -> float:
    """The LP relaxation over every enumerated column (a cross-check for small instances)."""
    from dlsched.solvers import solve

    model = build_packing(inst, columns, relax=True)
    res = solve(model, "highs")
    assert res.objective is not None
    return res.objective


__all__ = [
    "ColumnGeneration",
    "MasterLP",
    "certified_bound",
    "column_generation",
    "full_lp",
    "lagrangian_round",
    "master_matrix",
]
