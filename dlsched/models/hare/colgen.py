"""Column generation for R || sum w_j C_j (the single-task special case of Hare_Sched).

van den Akker, Hoogeveen, van de Velde, *Parallel machine scheduling by column generation*,
Operations Research 47 (1999); Chen and Powell, *Solving parallel machine scheduling problems by
column generation*, INFORMS J. Computing 11 (1999).

Set-partitioning model: a column is a set S of jobs on one GPU m, run in Smith order without
idle time (optimal for that set, see special.py), of cost c(S, m) = sum_{j in S} w_j C_j.

    min sum c_k lambda_k   s.t.  sum_{k ∋ j} lambda_k = 1 (each job j),
                                 sum_{k on m} lambda_k <= 1 (each GPU m),  0 <= lambda <= 1.

Pricing on GPU m, given job multipliers pi: min over S of c(S, m) - pi(S), by dynamic
programming over the jobs in Smith order on m with state t = the training time so far
(pseudo-polynomial: n x sum_j p_jm per GPU). Including job j as the last so far ends its
training at t, costing w_j (a + t + s_jm) - pi_j.

The bound is Lagrangian, valid for ANY multipliers pi (optimal or not): an optimal schedule is
one set S_m per GPU (possibly empty), partitioning the jobs, so

    OPT = sum_j pi_j + sum_m (c(S_m, m) - pi(S_m)) >= sum_j pi_j + sum_m min(0, min_S (c - pi)).

Every iteration certifies this number, so a time-limited run still has a bound. Arithmetic is
exact: pi is rounded down to a multiple of 2^-k chosen so that every partial sum is an integer
multiple of 2^-k below 2^52 (float64 sums of such numbers are exact). At convergence (no column
of negative reduced cost at the LP duals) the bound equals the set-partitioning LP optimum.

Dual smoothing (Wentges 1997): pricing at alpha * (best multipliers) + (1 - alpha) * (LP
duals); when that finds no column improving the master LP, pricing at the LP duals alone.
The restricted master solved with integer lambda (HiGHS) then gives a schedule.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from dlsched.solvers.base import SolveOptions
from dlsched.solvers.highs import MatrixModel, solve_matrix

from .localsearch import SumWC, load_horizon


@dataclass
class Columns:
    """The generated columns: GPU, jobs (sorted), scaled cost; ``seen`` avoids duplicates."""

    gpu: list[int] = field(default_factory=list)
    jobs: list[np.ndarray] = field(default_factory=list)
    cost: list[float] = field(default_factory=list)
    seen: set[tuple[int, tuple[int, ...]]] = field(default_factory=set)

    def add(self, data: SumWC, m: int, jobs: np.ndarray) -> bool:
        jobs = np.sort(np.asarray(jobs, dtype=np.int64))
        key = (m, tuple(jobs.tolist()))
        if not len(jobs) or key in self.seen:
            return False
        self.seen.add(key)
        self.gpu.append(m)
        self.jobs.append(jobs)
        self.cost.append(data.gpu_cost(m, jobs))
        return True

    def __len__(self) -> int:
        return len(self.gpu)

    def keep(self, mask: np.ndarray) -> None:
        """Drop the columns where ``mask`` is False (they may be generated again)."""
        idx = np.flatnonzero(mask).tolist()
        self.gpu = [self.gpu[k] for k in idx]
        self.jobs = [self.jobs[k] for k in idx]
        self.cost = [self.cost[k] for k in idx]
        self.seen = {(m, tuple(j.tolist())) for m, j in zip(self.gpu, self.jobs, strict=True)}


def purge(cols: Columns, res: Any, cap: int) -> None:
    """Above ``cap`` columns, keep the columns of the LP solution and the cap / 2 of smallest
    reduced cost (the master LP is re-solved from scratch each iteration: its size is time)."""
    if len(cols) <= cap or res.col_dual is None or res.col_value is None:
        return
    reduced = np.asarray(res.col_dual, dtype=float)
    mask = np.asarray(res.col_value) > 1e-9
    mask[np.argsort(reduced, kind="stable")[: cap // 2]] = True
    cols.keep(mask)


def master(data: SumWC, cols: Columns, integer: bool = False) -> MatrixModel:
    """The restricted master: job rows (= 1) then GPU rows (<= 1), lambda in [0, 1]."""
    sizes = np.array([len(j) + 1 for j in cols.jobs])
    rows = np.empty(int(sizes.sum()), dtype=np.int64)
    indptr = np.concatenate(([0], np.cumsum(sizes)))
    for k, (j, m) in enumerate(zip(cols.jobs, cols.gpu, strict=True)):
        rows[indptr[k] : indptr[k + 1] - 1] = j
        rows[indptr[k + 1] - 1] = data.n + m
    k = len(cols)
    matrix = sp.csc_matrix((np.ones(rows.size), rows, indptr), shape=(data.n + data.m, k))
    return MatrixModel(
        cost=np.array(cols.cost, dtype=float),
        matrix=matrix,
        row_lower=np.concatenate((np.ones(data.n), np.full(data.m, -np.inf))),
        row_upper=np.ones(data.n + data.m),
        col_lower=np.zeros(k),
        col_upper=np.ones(k),
        integrality=np.ones(k, dtype=bool) if integer else None,
    )


def price(
    data: SumWC, m: int, pi: np.ndarray, keep: int = 3, horizon: int | None = None
) -> tuple[float, list[np.ndarray]]:
    """min over job sets S of training load <= ``horizon`` (default: no limit) of
    c(S, m) - pi(S) (0 for the empty set), and up to ``keep`` sets of negative value (the best
    at distinct end times), by DP over Smith order on GPU m."""
    order = data.smith_order(m, np.arange(data.n))
    p = data.p[order, m]
    horizon = int(p.sum()) if horizon is None else min(int(p.sum()), horizon)
    f = np.full(horizon + 1, np.inf)
    f[0] = 0.0
    take = np.zeros((data.n, horizon + 1), dtype=bool)
    ends = np.arange(horizon + 1, dtype=float)
    reach = 0
    for idx, j in enumerate(order.tolist()):
        pj = int(p[idx])
        reach = min(reach + pj, horizon)
        if pj > horizon:
            continue
        gain = data.w[j] * (data.a + data.s[j, m] + ends[pj : reach + 1]) - pi[j]
        cand = f[: reach + 1 - pj] + gain
        better = cand < f[pj : reach + 1]
        take[idx, pj : reach + 1] = better
        f[pj : reach + 1] = np.where(better, cand, f[pj : reach + 1])
    best = float(min(0.0, f.min()))
    sets = []
    for t in np.argsort(f, kind="stable")[:keep]:
        if not f[t] < 0:
            break
        t, chosen = int(t), []
        for idx in range(data.n - 1, -1, -1):
            if take[idx, t]:
                chosen.append(order[idx])
                t -= int(p[idx])
        sets.append(np.array(chosen, dtype=np.int64))
    return best, sets


def dyadic(pi: np.ndarray, data: SumWC) -> np.ndarray:
    """pi rounded down to a multiple of 2^-k, k <= 20 the largest with every sum of the
    Lagrangian bound (at most sum |pi| + n max cost) below 2^52 / 2^k, so exactly summed."""
    cost = float(np.max(data.w * (data.a + data.p.sum(axis=0).max() + data.s.max(axis=1))))
    size = float(np.abs(pi).sum()) + data.n * cost + 1.0
    k = max(0, min(20, 52 - math.ceil(math.log2(size)) - 1))
    return np.floor(pi * 2.0**k) / 2.0**k


def lagrangian_bound(
    data: SumWC, pi: np.ndarray, keep: int = 3, horizon: int | None = None
) -> tuple[float, list]:
    """(sum pi + sum_m min(0, pricing minimum), the negative columns found per GPU); ``pi``
    must be :func:`dyadic` for the sum to be exact. With ``horizon`` (:func:`load_horizon`,
    a load no GPU exceeds in some optimal schedule) the sets are limited to that load: the
    bound still holds, as that optimal schedule is one of the partitions it minimises over."""
    total = float(pi.sum())
    found = []
    for m in range(data.m):
        v, sets = price(data, m, pi, keep, horizon)
        total += v
        found += [(m, s) for s in sets]
    return total, found


@dataclass
class CgResult:
    """The best certified Lagrangian bound (scaled units, rounded up to an integer), the last
    restricted master LP value, the columns, iterations, whether pricing proved the LP optimum,
    and the master's integer solution (assignment) if one was solved."""

    bound: int | None
    lp_value: float | None
    columns: Columns
    iterations: int
    converged: bool
    seconds: float
    assign: np.ndarray | None = None
    info: dict[str, Any] = field(default_factory=dict)


def column_generation(
    data: SumWC,
    start: np.ndarray,
    t_end: float,
    *,
    upper: float | None = None,
    alpha: float = 0.5,
    keep: int = 3,
    threads: int = 1,
    lp_extra: dict[str, Any] | None = None,
    cap: int | None = None,
) -> CgResult:
    """Column generation from the columns of the assignment ``start`` until convergence,
    ``t_end`` (a perf_counter value), or a bound reaching ``upper`` (a known scaled cost).
    ``cap``: pool size above which columns are purged (:func:`purge`; default 10 n + 500)."""
    t0 = time.perf_counter()
    horizon = load_horizon(data.p, data.s)
    cols = Columns()
    for m in range(data.m):
        cols.add(data, m, np.flatnonzero(start == m))
    for j in range(data.n):  # every job alone on its fastest GPU: a cheap diverse start
        cols.add(data, int(np.argmin(data.p[j] + data.s[j])), np.array([j]))
    best, center, lp_value, it, converged = -math.inf, None, None, 0, False
    opts = SolveOptions(time_limit=None, threads=threads, extra=lp_extra or {})
    while time.perf_counter() < t_end:
        res = solve_matrix(master(data, cols), opts, deadline=t_end)
        if res.row_dual is None:
            break
        it += 1
        lp_value = res.objective
        purge(cols, res, 10 * data.n + 500 if cap is None else cap)
        duals = res.row_dual[: data.n]
        mu = res.row_dual[data.n :]
        center = duals if center is None else center
        added = 0
        for a in (alpha, 0.0) if alpha > 0 else (0.0,):
            pi = dyadic(a * center + (1 - a) * duals, data)
            value, found = lagrangian_bound(data, pi, keep, horizon)
            if value > best:
                best, center = value, pi
            for m, s in found:
                reduced = data.gpu_cost(m, s) - float(duals[s].sum()) - float(mu[m])
                if reduced < -1e-7 and cols.add(data, m, s):
                    added += 1
            if added or time.perf_counter() >= t_end:
                break
        if upper is not None and math.ceil(best - 1e-9) >= upper:
            break
        if not added:
            converged = time.perf_counter() < t_end
            break
    bound = None if best == -math.inf else math.ceil(best - 1e-9)
    return CgResult(
        bound, lp_value, cols, it, converged, time.perf_counter() - t0, info={"columns": len(cols)}
    )


def master_assignment(
    data: SumWC, cols: Columns, start: np.ndarray, t_end: float, threads: int = 1
) -> np.ndarray | None:
    """The restricted master with integer lambda (HiGHS, MIP start ``start``'s columns when
    they are in the pool): an assignment, or None if none was found in time."""
    model = master(data, cols, integer=True)
    x0 = np.zeros(len(cols))
    index = {
        (m, tuple(j.tolist())): k for k, (m, j) in enumerate(zip(cols.gpu, cols.jobs, strict=True))
    }
    for m in range(data.m):
        key = (m, tuple(np.flatnonzero(start == m).tolist()))
        if key in index:
            x0[index[key]] = 1.0
    res = solve_matrix(
        model, SolveOptions(time_limit=None, threads=threads), start=x0, deadline=t_end
    )
    if res.col_value is None:
        return None
    assign = np.full(data.n, -1, dtype=np.int64)
    for k in np.flatnonzero(res.col_value > 0.5):
        assign[cols.jobs[k]] = cols.gpu[k]
    return assign if np.all(assign >= 0) else None


__all__ = [
    "CgResult",
    "Columns",
    "column_generation",
    "lagrangian_bound",
    "master_assignment",
    "price",
]
