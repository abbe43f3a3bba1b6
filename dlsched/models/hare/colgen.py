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
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp

from dlsched.solvers.base import SolverSettings
from dlsched.solvers.deadline import Deadline
from dlsched.solvers.highs import MatrixModel, run_highs, solve_matrix, use_threads
from dlsched.solvers.progress import note

from . import pricing_array
from .localsearch import (
    SumWC,
    assignment_from_sets,
    descend,
    load_horizon,
    marginal_multipliers,
)


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


class Priced(NamedTuple):
    """A pricing round: per GPU min(0, least reduced cost) (``values``), whether that minimum is
    certain (``exact``: every candidate job was kept), the negative sets found, as (GPU,
    jobs), and the reduced cost of each (``reduced``, at the multipliers priced)."""

    values: np.ndarray
    exact: np.ndarray
    found: list[tuple[int, np.ndarray]]
    reduced: np.ndarray


#: Pricing runs in numpy (:mod:`pricing_array`) until it has spent ARRAY_SECONDS there, then
#: compiled (:mod:`pricing_core`); both answer the same to the last bit, so the choice changes
#: only the time. Loading numba and the cached compiled code takes 1.2-1.5 s and 110 MB on a
#: lightly loaded 2-core machine, more than the whole pricing of the small instances (4 x 40:
#: 2-3 ms a round in numpy, 0.2 ms compiled; 20 x 200: 42 ms and 7 ms); paying it once the
#: numpy rounds have cost as much keeps every run within about twice its better choice.
ARRAY_SECONDS = 1.0
#: Instances of at least this many jobs price compiled from the first round (40 x 400: 110 ms a
#: round in numpy, 28 ms compiled, and hundreds of rounds).
COMPILED_MIN_JOBS = 300
#: The compiled pricing's module: once loaded in the process, it prices at once.
COMPILED = f"{__package__}.pricing_core"


@dataclass
class PricingEngine:
    """Which DP prices (:data:`ARRAY_SECONDS`): numpy until it has cost that many seconds or
    the compiled one is loaded, then the compiled one; the compiled one from the first round
    when ``compiled``."""

    compiled: bool = False
    spent: float = 0.0

    def price_gpus(self, *args: Any) -> tuple[np.ndarray, ...]:
        """:func:`pricing_core.price_gpus` (or its numpy twin) of ``args``."""
        if not self.compiled and (self.spent >= ARRAY_SECONDS or COMPILED in sys.modules):
            self.compiled = True
        if self.compiled:
            from .pricing_core import price_gpus

            return price_gpus(*args)  # type: ignore[no-any-return]
        started = time.perf_counter()
        out = pricing_array.price_gpus(*args)
        self.spent += time.perf_counter() - started
        return out


@dataclass(frozen=True)
class Pricer:
    """Pricing on every GPU at once: each GPU's jobs in its Smith order (``order[m]``, training
    times ``p_seq[m]``, ``cost0[m]`` = w (a + s) of each), states t = 0 .. ``horizon``
    (training load so far). :meth:`solve` runs the DP of :func:`pricing_core.price_gpus`
    (compiled, or its numpy twin: ``engine``, :class:`PricingEngine`); :meth:`table` and
    :meth:`enumerate` the same DP in numpy, keeping every stage."""

    data: SumWC
    horizon: int
    order: np.ndarray  # [m, idx] the idx-th job of GPU m's Smith order
    p_seq: np.ndarray  # [m, idx] its training time on m
    cost0: np.ndarray  # [m, idx] its w (a + s) on m
    engine: PricingEngine = field(default_factory=PricingEngine)

    @staticmethod
    def of(data: SumWC, horizon: int | None = None, compiled: bool | None = None) -> Pricer:
        """The pricer of ``data``; ``compiled``: price compiled from the first round (default:
        from :data:`COMPILED_MIN_JOBS` jobs)."""
        order = np.stack([data.smith_order(m, np.arange(data.n)) for m in range(data.m)])
        p_seq = np.take_along_axis(data.p.T, order, axis=1)
        cost0 = (data.w[order] * (data.a + np.take_along_axis(data.s.T, order, axis=1))).astype(
            float
        )
        most = int(p_seq.sum(axis=1).max())
        first = data.n >= COMPILED_MIN_JOBS if compiled is None else compiled
        return Pricer(
            data, most if horizon is None else min(most, horizon), order, p_seq, cost0,
            PricingEngine(first),
        )  # fmt: skip

    def solve(
        self, pi: np.ndarray, keep: int = 3, gpus: np.ndarray | None = None, most: int = 0
    ) -> Priced:
        """Pricing of the GPUs ``gpus`` (default all) at ``pi``: exact over every candidate
        job, or with ``most`` > 0 a heuristic over at most ``most`` candidates per GPU (those
        of largest pi_j - w_j (a + s_jm + p_jm)); up to ``keep`` negative sets per GPU, the
        best at distinct end loads, each of the value it was priced at."""
        gpus = np.arange(self.data.m) if gpus is None else np.asarray(gpus, dtype=np.int64)
        values, exact, col_gpu, reduced, ptr, flat = self.engine.price_gpus(
            self.order[gpus],
            self.p_seq[gpus],
            self.cost0[gpus],
            self.data.w.astype(float),
            np.asarray(pi, dtype=float),
            int(self.horizon),
            int(keep),
            int(most) if most > 0 else self.data.n,
        )
        found = [(int(gpus[g]), np.sort(flat[ptr[k] : ptr[k + 1]])) for k, g in enumerate(col_gpu)]
        return Priced(values, exact, found, reduced)

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
        value per GPU, the best at distinct end times, as (GPU, jobs)): :meth:`solve`, exact."""
        priced = self.solve(pi, keep, gpus)
        return priced.values, priced.found

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


#: Lagrangian ascent (:func:`lagrangian_ascent`): the Polyak step's factor starts at 1 and is
#: halved after ASCENT_STALL rounds without a better bound; the ascent ends below
#: ASCENT_THETA_MIN. A Lagrangian schedule (:func:`localsearch.assignment_from_sets`, then a
#: descent) is tried every ASCENT_REPAIR rounds. On 50 x 1000 (seed 0) the ascent reached a
#: gap of 1.2 % to the local search's schedule in 100 rounds (11 s), where the LP-driven column
#: generation stood at 29 % after 60 s: its restricted master, degenerate at the start,
#: kept the incumbent's value and extreme duals.
ASCENT_STALL, ASCENT_THETA_MIN, ASCENT_REPAIR = 20, 1e-3, 40
#: The ascent also ends when its bound rose by less than ASCENT_GAIN (relative) over the last
#: ASCENT_WINDOW rounds: on 40 x 400 (seed 0) it reached 90,020 in 14 s and crept below a unit
#: for the next 9 s, time the LP-driven rounds then lacked to converge.
ASCENT_WINDOW, ASCENT_GAIN = 100, 2e-5
#: The descent of a repaired Lagrangian schedule gets at most this share of the ascent's
#: budget (a descent from such a schedule took 7 s on 50 x 1000 on a loaded machine).
REPAIR_SHARE = 0.05
#: Instances of at least this many jobs start with the ascent (smaller ones converge by the
#: LP-driven column generation alone in a few seconds).
ASCENT_MIN_JOBS = 300
#: Heuristic pricing before the exact DP in the LP-driven rounds (``heuristic`` of
#: :func:`column_generation`): at most that many times the mean number of jobs per GPU as
#: candidates on each GPU (:meth:`Pricer.solve` with ``most``). Off by default: on 20 x 200
#: (seed 1) with 3, the master needed 251 LPs to converge instead of 124 (40.8 s against
#: 16.5 s), the compiled exact DP costing little beside the master LP.
HEURISTIC_OFF = 0


@dataclass
class BoundTrace:
    """The best Lagrangian bound so far (exact value at dyadic multipliers ``pi``), the rounds
    priced, and the trajectory (seconds on ``elapsed``, bound in original units) of its rises;
    ``elapsed``: seconds since the route started (a :meth:`Deadline.elapsed`), by default since
    this trace was made."""

    data: SumWC
    elapsed: Callable[[], float] = field(default_factory=lambda: Deadline.after(None).elapsed)
    best: float = -math.inf
    pi: np.ndarray | None = None
    rounds: int = 0
    trajectory: list[tuple[float, float]] = field(default_factory=list)

    def offer(self, value: float, pi: np.ndarray) -> bool:
        """Record the Lagrangian value ``value`` at ``pi``; whether it is a new best."""
        self.rounds += 1
        if value <= self.best:
            return False
        self.best, self.pi = value, pi
        mark = (round(self.elapsed(), 3), math.ceil(value - 1e-9) / self.data.unit)
        if (
            not self.trajectory
            or mark[1] > self.trajectory[-1][1] * (1 + 1e-5)
            or mark[0] > (self.trajectory[-1][0] + 1.0)
        ):
            self.trajectory.append(mark)
        return True

    @property
    def bound(self) -> int | None:
        return None if self.best == -math.inf else math.ceil(self.best - 1e-9)

    def line(self, stage: str) -> str:
        low = max(self.best, 0) / self.data.unit
        return f"{stage}: {self.rounds} pricing rounds, Lagrangian bound {low:.10g}"


def price_round(
    pricer: Pricer, pi: np.ndarray, trace: BoundTrace, keep: int
) -> list[tuple[int, np.ndarray]]:
    """Exact pricing at the dyadic ``pi``: its Lagrangian value offered to ``trace``; the
    negative sets found."""
    values, found = pricer(pi, keep)
    trace.offer(math.fsum([*pi.tolist(), *values.tolist()]), pi)
    return found


def lagrangian_ascent(
    pricer: Pricer,
    pi: np.ndarray,
    incumbent: Callable[[np.ndarray | None], float],
    deadline: Deadline,
    trace: BoundTrace,
) -> None:
    """Subgradient ascent of the Lagrangian bound from ``pi`` (Polyak's step towards the best
    known cost, ``incumbent(None)``): at each round every GPU's least set (exact pricing), the
    subgradient g_j = 1 - (sets holding j), pi += theta (upper - L) / |g|^2 g. Every
    ASCENT_REPAIR rounds the sets are made a schedule (:func:`assignment_from_sets`, then
    :func:`descend`) and offered to ``incumbent``. Ends at the deadline, a bound reaching the
    incumbent, theta below ASCENT_THETA_MIN, or a bound no longer rising (ASCENT_WINDOW)."""
    data = pricer.data
    theta, stale, window = 1.0, 0, (0, -math.inf)
    note(lambda: trace.line("Lagrangian ascent"))
    while not deadline.passed() and theta >= ASCENT_THETA_MIN:
        pi = dyadic(pi, data)
        found = price_round(pricer, pi, trace, 1)
        upper = incumbent(None)
        if trace.bound is not None and trace.bound >= upper:
            return
        if trace.rounds >= window[0] + ASCENT_WINDOW:  # still rising?
            if trace.best - window[1] < ASCENT_GAIN * abs(trace.best):
                return
            window = (trace.rounds, trace.best)
        cover = np.zeros(data.n)
        for _, jobs in found:
            cover[jobs] += 1
        if trace.rounds % ASCENT_REPAIR == 0:
            repair = deadline.share_of_limit(REPAIR_SHARE)
            upper = incumbent(descend(data, assignment_from_sets(data, found), repair))
        stale = 0 if trace.pi is pi else stale + 1
        if stale >= ASCENT_STALL:
            theta, stale = theta / 2, 0
        g = 1.0 - cover
        norm = float(g @ g)
        if norm == 0:  # the sets partition the jobs: a schedule of cost L, optimal
            incumbent(assignment_from_sets(data, found))
            return
        pi = pi + theta * max(upper - trace.best, 0.0) / norm * g


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
    incumbent: Callable[[np.ndarray | None], float] | None = None,
    ascent: Deadline | None = None,
    heuristic: int = HEURISTIC_OFF,
) -> CgResult:
    """Column generation from the columns of the assignment ``start`` until convergence,
    ``deadline``, or a bound reaching ``upper`` (a known scaled cost).

    ``incumbent`` (offered schedules, answering the best known cost) and ``ascent`` (its
    budget) start it with :func:`lagrangian_ascent` from :func:`marginal_multipliers` of
    ``start``, whose best multipliers are the first stability center. ``cap``: pool size above
    which columns are purged (:func:`purge`; default 20 n + 1000). ``heuristic``: see
    :data:`HEURISTIC_OFF`. ``info`` gets the seconds
    spent in the master LP and in pricing, and the bound's trajectory (seconds since
    ``deadline`` started)."""
    t0 = time.perf_counter()
    pricer = Pricer.of(data, load_horizon(data.p, data.s))
    trace = BoundTrace(data, deadline.elapsed)
    if incumbent is not None and ascent is not None:
        lagrangian_ascent(pricer, marginal_multipliers(data, start), incumbent, ascent, trace)
        upper = incumbent(None) if upper is None else min(upper, incumbent(None))
    t_ascent = time.perf_counter() - t0
    cols = Columns()
    for m in range(data.m):
        cols.add(data, m, np.flatnonzero(start == m))
    for j in range(data.n):  # every job alone on its fastest GPU: a cheap diverse start
        cols.add(data, int(np.argmin(data.p[j] + data.s[j])), np.array([j]))
    if trace.pi is not None:
        for m, jobs in price_round(pricer, trace.pi, trace, keep):
            cols.add(data, m, jobs)
    lp_value, it, converged = None, 0, False
    if upper is None or trace.bound is None or trace.bound < upper:
        lp_value, it, converged, spent = _generate(
            pricer, cols, deadline, trace, upper, (alpha, keep, heuristic), threads, lp_extra, cap
        )
    else:
        spent = {"lp_seconds": 0.0, "pricing_seconds": 0.0}
    info = {
        "columns": len(cols),
        "ascent_seconds": t_ascent,
        "pricing_rounds": trace.rounds,
        "bound_trajectory": trace.trajectory,
        **spent,
    }
    return CgResult(
        trace.bound,
        lp_value,
        cols,
        it,
        converged,
        time.perf_counter() - t0,
        info=info,
        pi=trace.pi,
        exact_bound=None if trace.bound is None else trace.best,
    )


def _generate(
    pricer: Pricer,
    cols: Columns,
    deadline: Deadline,
    trace: BoundTrace,
    upper: float | None,
    pricing: tuple[float, int, int],
    threads: int,
    lp_extra: dict[str, Any] | None,
    cap: int | None,
) -> tuple[float | None, int, bool, dict[str, float]]:
    """The LP-driven rounds: (last master LP value, iterations, converged, seconds spent);
    ``pricing``: smoothing alpha, columns kept per GPU, heuristic (:func:`_price_master`)."""
    data = pricer.data
    lp = MasterLP(data, threads, lp_extra)
    lp_value, it, converged = None, 0, False
    spent = {"lp_seconds": 0.0, "pricing_seconds": 0.0}
    note(lambda: trace.line(f"column generation ({it} master LPs)"))
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
        t1 = time.perf_counter()
        added = _price_master(pricer, cols, row_dual, trace, *pricing, deadline)
        spent["pricing_seconds"] += time.perf_counter() - t1
        if upper is not None and trace.bound is not None and trace.bound >= upper:
            break
        if not added:
            converged = not deadline.passed()
            break
    return lp_value, it, converged, spent


def _add_improving(
    data: SumWC,
    cols: Columns,
    found: list[tuple[int, np.ndarray]],
    duals: np.ndarray,
    mu: np.ndarray,
) -> int:
    """Add the sets ``found`` of negative reduced cost at the master's duals (job rows
    ``duals``, GPU rows ``mu``) to ``cols``; how many were new."""
    added = 0
    for m, s in found:
        reduced_cost = data.gpu_cost(m, s) - float(duals[s].sum()) - float(mu[m])
        if reduced_cost < -1e-7 and cols.add(data, m, s):
            added += 1
    return added


def _price_master(
    pricer: Pricer,
    cols: Columns,
    row_dual: np.ndarray,
    trace: BoundTrace,
    alpha: float,
    keep: int,
    heuristic: int,
    deadline: Deadline,
) -> int:
    """One pricing step of the LP-driven rounds (Wentges smoothing): at alpha * center +
    (1 - alpha) * duals (the center: the best multipliers so far), the heuristic pricing first
    if ``heuristic`` (its columns alone when some improve the master), then the exact DP (a
    Lagrangian value);
    if nothing improves the master, again at the LP duals alone. Returns the columns added."""
    data = pricer.data
    duals, mu = row_dual[: data.n], row_dual[data.n :]
    center = duals if trace.pi is None else trace.pi
    most = heuristic * -(-data.n // data.m)
    added = 0
    for a in (alpha, 0.0) if alpha > 0 else (0.0,):
        pi = dyadic(a * center + (1 - a) * duals, data)
        priced = pricer.solve(pi, keep, most=most)
        exact = bool(priced.exact.all())
        if exact:  # every GPU kept all its candidates: the heuristic was the exact DP
            trace.offer(math.fsum([*pi.tolist(), *priced.values.tolist()]), pi)
        added += _add_improving(data, cols, priced.found, duals, mu)
        if not added and not exact:
            added += _add_improving(data, cols, price_round(pricer, pi, trace, keep), duals, mu)
        if added or deadline.passed():
            break
    return added


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
    res = solve_matrix(model, deadline.solve_options(SolverSettings(threads=threads)), start=x0)
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
    options = SolverSettings(threads=threads)
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


def compile_pricing() -> float:
    """Seconds to compile (or load from numba's cache) the compiled pricing, on a tiny
    instance: ``make`` runs it once after installing, so no route pays the compilation inside
    its time limit."""
    from .generate import generate_unrelated
    from .localsearch import sum_wc_data

    started = time.perf_counter()
    data = sum_wc_data(generate_unrelated(4, 2, 0))
    Pricer.of(data, compiled=True).solve(np.zeros(data.n))
    return time.perf_counter() - started


if __name__ == "__main__":
    print(f"R || sum wC pricing compiled in {compile_pricing():.1f} s")

__all__ = [
    "BoundTrace",
    "CgResult",
    "Columns",
    "EnumResult",
    "MasterLP",
    "Priced",
    "Pricer",
    "PricingEngine",
    "enumerated_master",
    "column_generation",
    "lagrangian_ascent",
    "lagrangian_bound",
    "master_assignment",
    "price",
]
