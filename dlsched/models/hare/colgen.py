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
duals), alpha = 0.9 by default (it reached convergence or a higher bound sooner than 0.5 and
0.8 on the 4 x 80, 16 x 200, 20 x 200 and 4 x 200 instances tried); when that finds no column
improving the master LP, pricing at the LP duals alone. The master LP is kept in one HiGHS
instance (:class:`MasterLP`, warm started by primal simplex) and pricing runs the DP of every
GPU side by side (:class:`Pricer`). The restricted master solved with integer lambda (HiGHS)
then gives a schedule; :func:`enumerated_master` goes beyond the LP bound with the columns of
small reduced cost.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from dlsched.solvers.base import SolveOptions
from dlsched.solvers.deadline import Deadline
from dlsched.solvers.highs import MatrixModel, run_highs, solve_matrix, use_threads
from dlsched.solvers.progress import note

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


def master(data: SumWC, cols: Columns, integer: bool = False) -> MatrixModel:
    """The restricted master: job rows (= 1) then GPU rows (<= 1), lambda in [0, 1]."""
    indptr, rows = _column_entries(data, cols.gpu, cols.jobs)
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


def _column_entries(
    data: SumWC, gpus: list[int], jobs: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """CSC (indptr, row indices) of master columns: the column's jobs, then its GPU row."""
    sizes = np.array([len(j) + 1 for j in jobs], dtype=np.int64)
    indptr = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    rows = np.empty(int(sizes.sum()), dtype=np.int64)
    for k, (j, m) in enumerate(zip(jobs, gpus, strict=True)):
        rows[indptr[k] : indptr[k + 1] - 1] = j
        rows[indptr[k + 1] - 1] = data.n + m
    return indptr, rows


class MasterLP:
    """The restricted master LP kept in one HiGHS instance: new columns are appended and purged
    ones deleted, so every solve starts from the previous basis (a warm start) instead of
    rebuilding and solving the LP from scratch. Only its duals are used, as multipliers of the
    Lagrangian bound (valid for any multipliers), so the LP's own accuracy certifies nothing."""

    def __init__(self, data: SumWC, threads: int = 1, extra: dict[str, Any] | None = None):
        import highspy

        self.data, self.size, self.threads = data, 0, int(threads)
        self.h = highspy.Highs()
        settings = {  # primal simplex: appended columns leave the last basis primal feasible
            "output_flag": False,
            "threads": int(threads),
            "presolve": "off",
            "simplex_strategy": 4,
            **(extra or {}),
        }
        for key, value in settings.items():
            self.h.setOptionValue(key, value)
        rows = data.n + data.m
        lower = np.concatenate((np.ones(data.n), np.full(data.m, -highspy.kHighsInf)))
        empty = np.zeros(rows, dtype=np.int32)
        self.h.addRows(rows, lower, np.ones(rows), 0, empty, empty[:0], np.zeros(0))

    def add(self, cols: Columns) -> None:
        """Append the columns of ``cols`` past the ones already in the LP."""
        gpus, jobs = cols.gpu[self.size :], cols.jobs[self.size :]
        if not gpus:
            return
        indptr, rows = _column_entries(self.data, gpus, jobs)
        k = len(gpus)
        self.h.addCols(
            k,
            np.asarray(cols.cost[self.size :], dtype=float),
            np.zeros(k),
            np.ones(k),
            int(rows.size),
            indptr[:-1].astype(np.int32),
            rows.astype(np.int32),
            np.ones(rows.size),
        )
        self.size = len(cols)

    def drop(self, keep: np.ndarray) -> None:
        """Delete the LP columns where ``keep`` is False (same order as :meth:`Columns.keep`)."""
        gone = np.flatnonzero(~np.asarray(keep, dtype=bool)).astype(np.int32)
        if gone.size:
            self.h.deleteCols(int(gone.size), gone)
            self.size -= int(gone.size)

    def solve(self, deadline: Deadline) -> tuple[float, np.ndarray, np.ndarray, np.ndarray] | None:
        """(objective, row duals, column values, reduced costs), or None if not solved to
        optimality by ``deadline``."""
        import highspy

        # HiGHS's time limit is on its run clock, which adds up over the runs of one instance
        left = deadline.seconds()
        if left is not None:
            self.h.setOptionValue("time_limit", self.h.getRunTime() + left)
        use_threads(self.threads)
        run_highs(self.h)
        if self.h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return None
        sol = self.h.getSolution()
        return (
            float(self.h.getInfo().objective_function_value),
            np.asarray(sol.row_dual, dtype=float),
            np.asarray(sol.col_value, dtype=float),
            np.asarray(sol.col_dual, dtype=float),
        )


def purge(cols: Columns, lp: MasterLP, x: np.ndarray, reduced: np.ndarray, cap: int) -> None:
    """Above ``cap`` columns, keep the columns of the LP solution ``x`` and the cap / 2 of
    smallest ``reduced`` cost (the others may be generated again)."""
    if len(cols) <= cap:
        return
    mask = x > 1e-9
    mask[np.argsort(reduced, kind="stable")[: cap // 2]] = True
    cols.keep(mask)
    lp.drop(mask)


@dataclass(frozen=True)
class Pricer:
    """Pricing on every GPU at once: each GPU's jobs in its Smith order (``order[m]``, training
    times ``p_seq[m]``), states t = 0 .. ``horizon`` (training load so far)."""

    data: SumWC
    horizon: int
    order: np.ndarray  # [m, idx] the idx-th job of GPU m's Smith order
    p_seq: np.ndarray  # [m, idx] its training time on m

    @staticmethod
    def of(data: SumWC, horizon: int | None = None) -> Pricer:
        order = np.stack([data.smith_order(m, np.arange(data.n)) for m in range(data.m)])
        p_seq = np.take_along_axis(data.p.T, order, axis=1)
        most = int(p_seq.sum(axis=1).max())
        return Pricer(data, most if horizon is None else min(most, horizon), order, p_seq)

    def _dp(self, pi: np.ndarray, gpus: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """The DP over the Smith order of every GPU of ``gpus`` side by side: after job idx,
        yields (where it was taken, the live values f[r, t]): the min of c(S, m) - pi(S) over
        sets S of the first idx + 1 jobs of GPU m = ``gpus[r]`` with training load exactly t
        (inf if none). Including job j last ends its training at t, costing
        w_j (a + s_jm + t) - pi_j on top of f at t - p_jm."""
        d, H = self.data, self.horizon
        order, p_seq = self.order[gpus], self.p_seq[gpus]
        k, pad = len(gpus), int(p_seq.max())
        t = np.arange(H + 1, dtype=np.int64)
        f = np.full((k, pad + H + 1), np.inf)  # f[:, pad + t]; the pad reads as infeasible
        f[:, pad] = 0.0
        flat = f.reshape(-1)
        base = (np.arange(k) * (pad + H + 1) + pad)[:, None] + t[None, :]
        cur = f[:, pad:]
        for idx in range(d.n):
            j, pj = order[:, idx], p_seq[:, idx]
            cost = d.w[j][:, None] * (d.a + d.s[j, gpus][:, None] + t[None, :])
            cand = flat[base - pj[:, None]] + (cost - pi[j][:, None])
            better = cand < cur
            np.copyto(cur, cand, where=better)
            yield better, cur

    def table(self, pi: np.ndarray, gpus: np.ndarray) -> np.ndarray:
        """F[idx, r, t]: the DP values (:meth:`_dp`) after the first idx jobs (F[0]: 0 at
        t = 0, else inf)."""
        F = np.full((self.data.n + 1, len(gpus), self.horizon + 1), np.inf)
        F[0, :, 0] = 0.0
        for idx, (_, cur) in enumerate(self._dp(pi, gpus)):
            F[idx + 1] = cur
        return F

    def __call__(
        self, pi: np.ndarray, keep: int = 3, gpus: np.ndarray | None = None
    ) -> tuple[np.ndarray, list[tuple[int, np.ndarray]]]:
        """(per GPU of ``gpus`` (default all): min over job sets S of training load <=
        ``horizon`` of c(S, m) - pi(S), 0 for the empty set; up to ``keep`` sets of negative
        value per GPU, the best at distinct end times, as (GPU, jobs))."""
        gpus = np.arange(self.data.m) if gpus is None else np.asarray(gpus, dtype=np.int64)
        take = np.zeros((self.data.n, len(gpus), self.horizon + 1), dtype=bool)
        last = np.zeros(0)
        for idx, (better, cur) in enumerate(self._dp(pi, gpus)):
            take[idx], last = better, cur
        values = np.minimum(0.0, last.min(axis=1))
        ends = np.argsort(last, axis=1, kind="stable")[:, :keep]
        row, col = np.nonzero(np.take_along_axis(last, ends, axis=1) < 0)
        return values, self._trace(take, gpus, row, ends[row, col])

    def _trace(
        self, take: np.ndarray, gpus: np.ndarray, row: np.ndarray, state: np.ndarray
    ) -> list[tuple[int, np.ndarray]]:
        """The sets reaching end states ``state`` of rows ``row``, traced back all at once
        (``take[idx]``: where job idx improved the DP)."""
        chosen = np.zeros((row.size, self.data.n), dtype=bool)
        for idx in range(self.data.n - 1, -1, -1):
            hit = take[idx, row, state]
            chosen[hit, self.order[gpus[row[hit]], idx]] = True
            state = state - hit * self.p_seq[gpus[row], idx]
        return [(int(gpus[r]), np.flatnonzero(c)) for r, c in zip(row, chosen, strict=True)]

    def enumerate(
        self, pi: np.ndarray, slack: float, limit: int
    ) -> list[tuple[int, np.ndarray]] | None:
        """Every non-empty set S (as (GPU, jobs)) of training load <= ``horizon`` with
        c(S, m) - pi(S) <= v_m + ``slack``, v_m = min(0, min_S (c(S, m) - pi(S))); None if there
        are more than ``limit``. Backwards over the Smith order, a partial set is extended only
        where F (the exact minimum over the jobs before) keeps it under the threshold, so every
        partial set completes to at least one set listed."""
        out: list[tuple[int, np.ndarray]] = []
        for m in range(self.data.m):
            F = self.table(pi, np.array([m]))[:, 0, :]
            thr = min(0.0, float(F[-1].min())) + slack
            found = self._enumerate_gpu(m, pi, F, thr, limit)
            if found is None or len(out) + len(found) > limit:
                return None
            out += found
        return out

    def _enumerate_gpu(
        self, m: int, pi: np.ndarray, F: np.ndarray, thr: float, limit: int
    ) -> list[tuple[int, np.ndarray]] | None:
        d = self.data
        t = np.flatnonzero(F[-1] <= thr)  # end loads; acc = cost of the jobs decided so far
        acc = np.zeros(t.size)
        steps: list[tuple[np.ndarray, np.ndarray]] = []  # per idx (parent, included)
        for idx in range(d.n - 1, -1, -1):
            j, pj = int(self.order[m, idx]), int(self.p_seq[m, idx])
            skip = np.flatnonzero(F[idx, t] + acc <= thr)
            ok = t >= pj
            gain = np.where(ok, d.w[j] * (d.a + d.s[j, m] + t) - pi[j], np.inf)
            prev = np.where(ok, t - pj, 0)
            inc = np.flatnonzero(ok & (F[idx, prev] + acc + gain <= thr))
            parent = np.concatenate((skip, inc)).astype(np.int32)
            if parent.size > limit:
                return None
            steps.append((parent, np.arange(parent.size) >= skip.size))
            t = np.concatenate((t[skip], prev[inc]))
            acc = np.concatenate((acc[skip], acc[inc] + gain[inc]))
        chosen = np.zeros((t.size, d.n), dtype=bool)
        ids = np.arange(t.size)
        for idx, (parent, included) in zip(range(d.n), reversed(steps), strict=True):
            chosen[included[ids], self.order[m, idx]] = True
            ids = parent[ids]
        return [(m, np.flatnonzero(c)) for c in chosen if c.any()]


def price(
    data: SumWC, m: int, pi: np.ndarray, keep: int = 3, horizon: int | None = None
) -> tuple[float, list[np.ndarray]]:
    """min over job sets S of training load <= ``horizon`` (default: no limit) of
    c(S, m) - pi(S) (0 for the empty set), and up to ``keep`` sets of negative value (the best
    at distinct end times), by DP over Smith order on GPU m (:class:`Pricer`, one GPU)."""
    values, found = Pricer.of(data, horizon)(pi, keep, np.array([m]))
    return float(values[0]), [s for _, s in found]


def dyadic(pi: np.ndarray, data: SumWC) -> np.ndarray:
    """pi rounded down to a multiple of 2^-k, k <= 20 the largest with every sum of the
    Lagrangian bound (at most sum |pi| + n max cost) below 2^52 / 2^k, so exactly summed."""
    cost = float(np.max(data.w * (data.a + data.p.sum(axis=0).max() + data.s.max(axis=1))))
    size = float(np.abs(pi).sum()) + data.n * cost + 1.0
    k = max(0, min(20, 52 - math.ceil(math.log2(size)) - 1))
    return np.floor(pi * 2.0**k) / 2.0**k


def lagrangian_bound(
    data: SumWC,
    pi: np.ndarray,
    keep: int = 3,
    horizon: int | None = None,
    pricer: Pricer | None = None,
) -> tuple[float, list]:
    """(sum pi + sum_m min(0, pricing minimum), the negative columns found per GPU); ``pi``
    must be :func:`dyadic` for the sum to be exact. With ``horizon`` (:func:`load_horizon`,
    a load no GPU exceeds in some optimal schedule) the sets are limited to that load: the
    bound still holds, as that optimal schedule is one of the partitions it minimises over.
    ``pricer``: a :class:`Pricer` of the same data and horizon, built once per run."""
    values, found = (pricer or Pricer.of(data, horizon))(pi, keep)
    return math.fsum([*pi.tolist(), *values.tolist()]), found


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
    pi: np.ndarray | None = None  # the dyadic multipliers of ``bound``
    exact_bound: float | None = None  # the Lagrangian value at ``pi`` (exact, not rounded)


def column_generation(
    data: SumWC,
    start: np.ndarray,
    deadline: Deadline,
    *,
    upper: float | None = None,
    alpha: float = 0.9,
    keep: int = 3,
    threads: int = 1,
    lp_extra: dict[str, Any] | None = None,
    cap: int | None = None,
) -> CgResult:
    """Column generation from the columns of the assignment ``start`` until convergence,
    ``deadline``, or a bound reaching ``upper`` (a known scaled cost).
    ``cap``: pool size above which columns are purged (:func:`purge`; default 20 n + 1000).
    ``info`` gets the seconds spent in the master LP and in pricing."""
    t0 = time.perf_counter()
    pricer = Pricer.of(data, load_horizon(data.p, data.s))
    cols = Columns()
    for m in range(data.m):
        cols.add(data, m, np.flatnonzero(start == m))
    for j in range(data.n):  # every job alone on its fastest GPU: a cheap diverse start
        cols.add(data, int(np.argmin(data.p[j] + data.s[j])), np.array([j]))
    lp = MasterLP(data, threads, lp_extra)
    best, center, lp_value, it, converged = -math.inf, None, None, 0, False
    best_pi = None
    spent = {"lp_seconds": 0.0, "pricing_seconds": 0.0}
    note(
        lambda: (
            f"column generation: {it} iterations, Lagrangian bound {max(best, 0) / data.unit:.10g}"
        )
    )
    while not deadline.passed():
        t1 = time.perf_counter()
        lp.add(cols)
        solved = lp.solve(deadline)
        spent["lp_seconds"] += time.perf_counter() - t1
        if solved is None:
            break
        it += 1
        lp_value, row_dual, x, reduced = solved
        purge(cols, lp, x, reduced, 20 * data.n + 1000 if cap is None else cap)
        duals, mu = row_dual[: data.n], row_dual[data.n :]
        center = duals if center is None else center
        added = 0
        t1 = time.perf_counter()
        for a in (alpha, 0.0) if alpha > 0 else (0.0,):
            pi = dyadic(a * center + (1 - a) * duals, data)
            value, found = lagrangian_bound(data, pi, keep, pricer=pricer)
            if value > best:
                best, center, best_pi = value, pi, pi
            for m, s in found:
                reduced_cost = data.gpu_cost(m, s) - float(duals[s].sum()) - float(mu[m])
                if reduced_cost < -1e-7 and cols.add(data, m, s):
                    added += 1
            if added or deadline.passed():
                break
        spent["pricing_seconds"] += time.perf_counter() - t1
        if upper is not None and math.ceil(best - 1e-9) >= upper:
            break
        if not added:
            converged = not deadline.passed()
            break
    bound = None if best == -math.inf else math.ceil(best - 1e-9)
    info = {"columns": len(cols), **spent}
    seconds = time.perf_counter() - t0
    return CgResult(
        bound,
        lp_value,
        cols,
        it,
        converged,
        seconds,
        info=info,
        pi=best_pi,
        exact_bound=best if bound is not None else None,
    )


def master_assignment(
    data: SumWC, cols: Columns, start: np.ndarray, deadline: Deadline, threads: int = 1
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
    res = solve_matrix(model, deadline.solve_options(SolveOptions(threads=threads)), start=x0)
    if res.col_value is None:
        return None
    assign = np.full(data.n, -1, dtype=np.int64)
    for k in np.flatnonzero(res.col_value > 0.5):
        assign[cols.jobs[k]] = cols.gpu[k]
    return assign if np.all(assign >= 0) else None


@dataclass
class EnumResult:
    """The set-partitioning MIP over every column of reduced cost within ``slack`` of its
    GPU's minimum (:meth:`Pricer.enumerate`): a bound (scaled, integer), the best assignment
    found, the number of columns and the MIP's status."""

    bound: int | None
    assign: np.ndarray | None
    columns: int
    slack: float
    status: str
    seconds: float


def enumerated_master(
    data: SumWC,
    pi: np.ndarray,
    lagrangian: float,
    upper: float,
    deadline: Deadline,
    *,
    threads: int = 1,
    limit: int = 120_000,
    rounds: int = 3,
) -> EnumResult:
    """Reduced-cost enumeration then the exact MIP over the columns enumerated.

    With L = ``lagrangian`` the (exact) Lagrangian value at the dyadic ``pi`` and v_m the
    pricing minimum of GPU m, any schedule (one set S_m per GPU) costs
    L + sum_m (rc_m(S_m) - v_m), every term >= 0. So every schedule of cost <= L + slack uses
    only columns with rc_m(S) <= v_m + slack: enumerate them and solve the set-partitioning MIP
    over them. A schedule not in that MIP costs > L + slack, i.e. >= floor(L + slack) + 1
    (integer costs), so OPT >= min(MIP dual bound, floor(L + slack) + 1), whether the MIP
    finished or not (infeasible: the second term alone). The slack is ``upper`` - 1 - L
    (``upper`` the best known cost; then the second term is ``upper`` and the MIP decides
    optimality), halved while there are more than ``limit`` columns; when the MIP finds a
    cheaper schedule, again from its cost, ``rounds`` times at most. The largest bound is
    returned with the cheapest schedule."""
    t0 = time.perf_counter()
    note("columns of small reduced cost and their set-partitioning MIP")
    pricer = Pricer.of(data, load_horizon(data.p, data.s))
    out = EnumResult(None, None, 0, 0.0, "not run", 0.0)
    for _ in range(rounds):
        slack = float(upper) - 1.0 - lagrangian
        found = None
        while slack >= 0 and not deadline.passed():
            found = pricer.enumerate(pi, slack, limit)
            if found is not None:
                break
            slack = math.floor(slack / 2) if slack >= 1 else -1.0
        if found is None:
            out.status = "too many columns" if out.status == "not run" else out.status
            break
        bound, assign, count, status = _partition_mip(data, found, threads, deadline)
        cap = math.floor(lagrangian + slack) + 1
        bound = cap if status == "infeasible" or not count else bound
        bound = None if bound is None else min(bound, cap)
        if bound is not None and (out.bound is None or bound > out.bound):
            out.bound, out.columns, out.slack, out.status = bound, count, slack, status
        cost = None if assign is None else data.cost(assign)
        if cost is None or cost >= upper:
            break
        out.assign, upper = assign, cost
        if out.bound is not None and out.bound >= upper:
            break
    out.seconds = time.perf_counter() - t0
    return out


def _partition_mip(
    data: SumWC, found: list[tuple[int, np.ndarray]], threads: int, deadline: Deadline
) -> tuple[int | None, np.ndarray | None, int, str]:
    """The set-partitioning MIP over the columns ``found`` (HiGHS): (dual bound rounded up to
    an integer when within 1e-6 of one, the assignment found, columns, status)."""
    from dlsched.solvers.base import Status

    cols = Columns()
    for m, jobs in found:
        cols.add(data, m, jobs)
    if not len(cols):
        return None, None, 0, "no column"
    model = master(data, cols, integer=True)
    options = SolveOptions(threads=threads)
    res = solve_matrix(model, deadline.solve_options(options))
    if res.status == Status.ERROR:  # HiGHS 1.13's presolve can return a row-infeasible point
        off = options.with_(extra={"presolve": "off"})
        res = solve_matrix(model, deadline.solve_options(off))
    if res.status == Status.INFEASIBLE:
        return None, None, len(cols), "infeasible"
    if res.status == Status.ERROR:
        return None, None, len(cols), "error"
    bound = None if res.bound is None else math.ceil(res.bound - 1e-6)
    assign = None
    if res.col_value is not None:
        assign = np.full(data.n, -1, dtype=np.int64)
        for k in np.flatnonzero(res.col_value > 0.5):
            assign[cols.jobs[k]] = cols.gpu[k]
        assign = assign if np.all(assign >= 0) else None
    return bound, assign, len(cols), str(res.status)


__all__ = [
    "CgResult",
    "Columns",
    "EnumResult",
    "MasterLP",
    "Pricer",
    "enumerated_master",
    "column_generation",
    "lagrangian_bound",
    "master_assignment",
    "price",
]
