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
and it equals the LP optimum when no column has a negative reduced cost (convergence).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dlsched.models.elastic.exact import Column, build_packing
from dlsched.models.elastic.instance import ElasticInstance
from dlsched.models.elastic.pricing import Pricer, price_job
from dlsched.solvers import SolveOptions

#: A column enters the master when its reduced cost is below -REDUCED_TOL.
REDUCED_TOL = 1e-7


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


def solve_master(
    inst: ElasticInstance, columns: list[Column], options: SolveOptions
) -> tuple[float, np.ndarray, np.ndarray]:
    """The restricted master LP: its value, pi [J] and prices Y [T, H, R] (>= 0)."""
    from pyomo.contrib.solver.common.factory import SolverFactory

    model = build_packing(inst, columns, relax=True, penalty=_penalty(inst))
    opt = SolverFactory("highs")
    res = opt.solve(
        model,
        load_solutions=False,
        raise_exception_on_nonoptimal_result=False,
        solver_options={"threads": options.threads, "random_seed": options.seed},
    )
    duals = res.solution_loader.get_duals()
    pi = np.array([duals[model.one_schedule[j]] for j in range(inst.num_jobs)])
    prices = np.zeros((inst.horizon, inst.num_servers, len(inst.resources)))
    for (t, h, r), con in model.capacity.items():
        prices[t, h, r] = max(0.0, -duals[con])  # any Y >= 0 gives a valid bound
    return float(res.incumbent_objective), pi, prices


def lagrangian_round(
    inst: ElasticInstance, prices: np.ndarray
) -> tuple[float, list[tuple[float, Column | None]]]:
    """L(Y) and each job's cheapest priced column (cost, column)."""
    pr = Pricer(inst, prices)
    cap = np.array([s.capacity for s in inst.servers], dtype=float)
    best = []
    for j in range(inst.num_jobs):
        got = price_job(pr, j)
        col = Column(got.config, got.start) if got.config is not None else None
        best.append((got.cost, col))
    total = sum(c for c, _ in best) - float((prices * cap).sum())
    return total, best


def column_generation(
    inst: ElasticInstance,
    options: SolveOptions,
    *,
    max_iterations: int = 500,
    t0: float | None = None,
) -> ColumnGeneration:
    """Column generation from each job's earliest-completion schedule until no column prices
    out, the iteration cap or the time limit."""
    t0 = time.perf_counter() if t0 is None else t0
    zero = np.zeros((inst.horizon, inst.num_servers, len(inst.resources)))
    bound, first = lagrangian_round(inst, zero)
    if not math.isfinite(bound):  # a job has no schedule at all: (2) is infeasible
        return ColumnGeneration(math.inf, None, True, 0, 0, wall_time=time.perf_counter() - t0)
    columns = [c for _, c in first if c is not None]
    seen = {_key(c) for c in columns}
    out = ColumnGeneration(bound, None, False, 0, len(columns))
    while out.iterations < max_iterations:
        if options.time_limit is not None and time.perf_counter() - t0 > options.time_limit:
            break
        value, pi, prices = solve_master(inst, columns, options)
        out.iterations += 1
        out.lp_value = value
        lb, priced = lagrangian_round(inst, prices)
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
    out.wall_time = time.perf_counter() - t0
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


__all__ = ["ColumnGeneration", "column_generation", "full_lp", "lagrangian_round"]
