"""A time-indexed lower bound on sum_j w_j c_j of every schedule of an elastic instance: the
LP relaxation of the non-preemptive runs on the cluster's pooled resources, by column
generation, certified by Lagrangian relaxation.

Relaxation. A schedule runs job j once: n <= D_j workers of one type m from slot s for d
slots, completing at c_j = s + d <= T, with d >= d_j(m, n) (:func:`.instance.durations` with
every worker colocated, q = 1: eq. (1) and (14) add the gradient term only when q = 0; the PS
types minimized over). In each of the slots s .. s + d - 1 it holds n e_mr of every resource
r (its PSs hold more; leaving them out keeps a relaxation), and in every slot the jobs
running hold at most S_r = sum_h C_hr of r (each server's capacity, summed). A *run*
(j, m, n, s) is job j on n workers of type m from s for exactly d_j(m, n) slots; with
multipliers lam_rt >= 0 on the pooled capacities,

    L(lam) = sum_j min_{runs of j} (w_j (s + d) + n sum_{t=s}^{s+d-1} sum_r e_mr lam_rt)
             - sum_{r,t} S_r lam_rt

is at most sum_j w_j c_j of every schedule: its runs satisfy the pooled capacities, so adding
sum lam (use - S) <= 0 to its objective lowers it, and each job's term is then at least the
inner minimum (a real run of d' >= d_j(m, n) slots costs w (s + d') plus the prices of d'
slots, no less than the run of d_j(m, n) slots from the same s, the prices being >= 0).
This holds for every lam >= 0; the best L is the optimum of the time-indexed LP (one
convex combination of runs per job, the pooled capacities per slot), which column generation
finds: a restricted master LP over some runs (and an artificial run per job, so it is always
feasible), its capacity duals as lam, each job's cheapest run (suffix minima of window sums,
every start at once) added when it prices out. Every lam tried gives a valid L; the largest
is kept, so a cut by the iteration cap or the deadline leaves a valid (weaker) bound.

Unlike the preemptive relaxations of :mod:`.flowbound`, it charges a run for all of its
slots (a long job started before a burst of arrivals holds its workers through it), a run to
one type (Gavel's K80 is not a fast V100), and whole slots.

Rounding: L is computed in floating point from prices >= 0 and lowered by
:data:`MARGIN` of the magnitudes summed (far above the error of a few thousand additions).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dlsched.models.elastic.instance import ElasticInstance, least_durations, most_workers
from dlsched.solvers.deadline import NEVER, Deadline

#: Relative margin subtracted from every Lagrangian value (floating-point rounding).
MARGIN = 1e-9
#: Master LPs at most (each followed by one pricing round).
MAX_ITERATIONS = 200
#: A run enters the master when its reduced cost is below -REDUCED_TOL.
REDUCED_TOL = 1e-7
#: Slots of run costs priced at once (groups x horizon): about 4 MB of them.
BLOCK = 500_000

#: A run (j, m, n, d, s): job j on n workers of type m from slot s for d slots.
RunKey = tuple[int, int, int, int, int]


def _key(j: int, run: np.ndarray) -> RunKey:
    """The run (j, m, n, d, s) of job j from a row (m, n, d, s) of :meth:`Pricing.cheapest`."""
    m, n, d, s = (int(x) for x in run)
    return (int(j), m, n, d, s)


@dataclass(frozen=True)
class Shapes:
    """The runs of each job up to their start: ``of[j]`` lists (m, n, d), job j on n workers
    of type m for d = d_j(m, n) slots, Pareto-least (no other n of type m is as short with
    fewer workers), only those that can end by T from the arrival."""

    of: tuple[tuple[tuple[int, int, int], ...], ...]


def shapes(inst: ElasticInstance) -> Shapes:
    """:class:`Shapes` of every job, n up to D_j and the most the empty cluster holds."""
    most = most_workers(inst)
    out = []
    for j, job in enumerate(inst.jobs):
        runs = []
        for m, d in enumerate(least_durations(inst, j, most)):
            shortest = math.inf
            for k, slots in enumerate(d.tolist(), start=1):
                if slots < shortest and job.arrival + slots <= inst.horizon:
                    runs.append((m, k, int(slots)))
                    shortest = slots
        out.append(tuple(runs))
    return Shapes(tuple(out))


class Pricing:
    """Each job's cheapest run at prices lam [R, T] (:meth:`cheapest`), every start at once:
    runs of one shape and weight form a group, which shares the window sums and their suffix
    minima; the groups are priced together, in blocks of about :data:`BLOCK` slots (the
    groups by their first arrival, each block from its first arrival on)."""

    def __init__(self, inst: ElasticInstance, shape: Shapes, weights: Sequence[float]):
        self.inst, self.horizon = inst, inst.horizon
        self.demand = np.array([t.demand for t in inst.worker_types], dtype=float)  # [M, R]
        self.supply = np.array([s.capacity for s in inst.servers], dtype=float).sum(axis=0)
        self.arrival = np.array([j.arrival for j in inst.jobs], dtype=np.int64)
        self.weights = np.asarray(weights, dtype=float)
        run_job = np.repeat(np.arange(inst.num_jobs), [len(runs) for runs in shape.of])
        keys = np.array([r for runs in shape.of for r in runs], dtype=float).reshape(-1, 3)
        keys = np.column_stack([keys, self.weights[run_job]])  # each run's (m, n, d, w)
        found, first, key_of = np.unique(keys, axis=0, return_index=True, return_inverse=True)
        met = np.argsort(first)  # the distinct keys in the order first met
        run_group = np.empty(len(met), dtype=np.int64)
        run_group[met] = np.arange(len(met))
        run_group = run_group[key_of.reshape(-1)]
        #: each group's (m, n, d, w), in the order first met (ties go to the first)
        self.group = found[met].reshape(-1, 4)
        self.shape = self.group[:, :3].astype(np.int64)
        # the runs by job, then group: a job's runs are one segment, its first cheapest first
        order = np.lexsort((run_group, run_job))
        self.run_job = run_job.astype(np.int64)[order]
        self.run_group = run_group[order]
        self.has_runs = np.unique(self.run_job)
        self.first_run = np.searchsorted(self.run_job, self.has_runs)
        #: jobs without a run that ends by T: no schedule at all, no bound from here
        self.missing = [j for j, runs in enumerate(shape.of) if not runs]
        self._blocks()

    def _blocks(self) -> None:
        """The pricing's blocks: the groups by their first arrival (``by_arrival``, block k
        its slice ``cut[k]:cut[k + 1]``; ``rank``: each group's place there), the runs of each
        (``block_runs``); each group's (m, d) among the distinct ones (``spans``,
        ``span_of``)."""
        count = len(self.group)
        first = np.full(count, self.horizon, dtype=np.int64)
        np.minimum.at(first, self.run_group, self.arrival[self.run_job])
        self.by_arrival = np.argsort(first, kind="stable")
        self.first_arrival = first[self.by_arrival]
        self.cut = [*range(0, count, max(1, BLOCK // max(1, self.horizon))), count]
        self.rank = np.empty(count, dtype=np.int64)  # each group's place in by_arrival
        self.rank[self.by_arrival] = np.arange(count)
        place = self.rank[self.run_group]
        runs = np.argsort(place, kind="stable")
        blocks = np.split(runs, np.searchsorted(place[runs], self.cut[1:-1]))
        self.block_runs = blocks if count else []
        key = self.shape[:, 0] * (self.horizon + 1) + self.shape[:, 2]
        spans, self.span_of = np.unique(key, return_inverse=True)
        self.span_of = self.span_of.reshape(-1)
        self.spans = np.stack([spans // (self.horizon + 1), spans % (self.horizon + 1)], 1)

    def cheapest(self, lam: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """(L(lam) lowered by the rounding margin, each job's cheapest run cost [J], its run
        [J, 4] = (m, n, d, s)); L is -inf when some job has no run."""
        j_count = self.inst.num_jobs
        if lam.any() or (self.weights < 0).any():
            low, at = self._runs_priced(lam)
        else:  # no prices: a run costs w (s + d), least (and first) from its job's arrival
            at = self.arrival[self.run_job]
            low = self.group[self.run_group, 3] * (self.shape[self.run_group, 2] + at)
        best = np.full(j_count, np.inf)
        run = np.zeros((j_count, 4), dtype=np.int64)
        if len(low):
            least = np.minimum.reduceat(low, self.first_run)
            hit = np.flatnonzero(low == np.repeat(least, np.diff([*self.first_run, len(low)])))
            first = hit[np.searchsorted(hit, self.first_run)]  # each job's first cheapest run
            best[self.has_runs] = low[first]
            run[self.has_runs, :3] = self.shape[self.run_group[first]]
            run[self.has_runs, 3] = at[first]
        if self.missing:
            return -math.inf, best, run
        paid = float((lam * self.supply[:, None]).sum())
        total = math.fsum(best.tolist()) - paid
        margin = MARGIN * (float(np.abs(best).sum()) + paid) + MARGIN
        return total - margin, best, run

    def _runs_priced(self, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(each run's least cost at prices ``lam`` from its job's arrival on, its start)."""
        per_worker = self.demand @ lam  # [M, T]: the price of one worker in each slot
        prefix = np.concatenate([np.zeros((len(per_worker), 1)), per_worker.cumsum(axis=1)], 1)
        window = self._windows(prefix)
        low = np.empty(len(self.run_job))
        at = np.empty(len(self.run_job), dtype=np.int64)
        for k, runs in enumerate(self.block_runs):
            groups = self.by_arrival[self.cut[k] : self.cut[k + 1]]
            start = int(self.first_arrival[self.cut[k]])
            g_low, g_at = _suffix_min(self._costs(window, groups, start))
            row = self.rank[self.run_group[runs]] - self.cut[k]
            a = self.arrival[self.run_job[runs]] - start
            low[runs], at[runs] = g_low[row, a], g_at[row, a] + start
        return low, at

    def _windows(self, prefix: np.ndarray) -> np.ndarray:
        """[spans, T]: the price of one worker of type m in slots s .. s + d - 1, for each
        distinct (m, d) of the runs and each start s; inf where it would end after T."""
        s = np.arange(self.horizon)[None, :]
        kind, end = self.spans[:, :1], s + self.spans[:, 1:]
        window = prefix[kind, np.minimum(end, self.horizon)] - prefix[kind, s]
        window[end > self.horizon] = np.inf
        return window

    def _costs(self, window: np.ndarray, groups: np.ndarray, start: int) -> np.ndarray:
        """[G, T - start]: the cost w (s + d) + n (the prices of slots s .. s + d - 1) of the
        run of each of ``groups`` from each start s >= ``start``, inf where it ends after T."""
        _, n, d = self.shape[groups].T
        ends = np.lib.stride_tricks.sliding_window_view(np.arange(2 * self.horizon), self.horizon)
        w = self.group[groups, 3:]
        return w * ends[d, start:] + n[:, None] * window[self.span_of[groups], start:]


def _suffix_min(cost: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(min of cost[..., s:], the first index attaining it) for every s, along the last
    axis."""
    rev = cost[..., ::-1]
    low = np.minimum.accumulate(rev, axis=-1)
    pos = np.where(rev <= low, np.arange(rev.shape[-1]), -1)
    last = np.maximum.accumulate(pos, axis=-1)  # in rev: the latest position reaching the min
    return low[..., ::-1], (rev.shape[-1] - 1 - last)[..., ::-1]


class Master:
    """The restricted master LP on HiGHS: rows job j (= 1) then the pooled capacity of
    resource r in slot t (<= S_r; row J + r T + t); an artificial run per job at a cost
    above any run's, then the runs added."""

    def __init__(self, pricing: Pricing, deadline: Deadline):
        import highspy

        self.p, self.deadline = pricing, deadline
        inst = pricing.inst
        self.jobs, self.slots = inst.num_jobs, inst.horizon
        self.res = len(pricing.supply)
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("threads", 1)
        h.setOptionValue("simplex_strategy", 4)  # primal: added columns keep it feasible
        inf = highspy.kHighsInf
        rows = self.jobs + self.res * self.slots
        lower = np.concatenate([np.ones(self.jobs), np.full(self.res * self.slots, -inf)])
        upper = np.concatenate([np.ones(self.jobs), np.repeat(pricing.supply, self.slots)])
        h.addRows(rows, lower, upper, 0, np.zeros(1, np.int32), np.zeros(0, np.int32), np.zeros(0))
        penalty = 2.0 * float(pricing.weights.max(initial=1.0)) * (self.slots + 1)
        cols = np.arange(self.jobs, dtype=np.int32)
        h.addCols(
            self.jobs, np.full(self.jobs, penalty), np.zeros(self.jobs), np.full(self.jobs, inf),
            self.jobs, cols, cols, np.ones(self.jobs),
        )  # fmt: skip
        self.h = h
        self.seen: set[RunKey] = set()

    def add(self, runs: list[RunKey]) -> int:
        """Add the runs (j, m, n, d, s) not in the master yet; how many were new."""
        costs: list[float] = []
        starts: list[int] = []
        index: list[int] = []
        value: list[float] = []
        for j, m, n, d, s in runs:
            if (j, m, n, d, s) in self.seen:
                continue
            self.seen.add((j, m, n, d, s))
            costs.append(self.p.weights[j] * (s + d))
            starts.append(len(index))
            index.append(j)
            value.append(1.0)
            for r in np.flatnonzero(self.p.demand[m]).tolist():
                index += (self.jobs + r * self.slots + np.arange(s, s + d)).tolist()
                value += [n * float(self.p.demand[m, r])] * d
        if costs:
            k = len(costs)
            self.h.addCols(
                k, np.array(costs), np.zeros(k), np.full(k, np.inf), len(index),
                np.array(starts, np.int32), np.array(index, np.int32), np.array(value),
            )  # fmt: skip
        return len(costs)

    def solve(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(pi [J], lam [R, T] >= 0) of the master's optimum; None if cut or not optimal."""
        import highspy

        left = self.deadline.seconds()
        if left is not None:
            self.h.setOptionValue("time_limit", float(left))
        self.h.run()
        if self.h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return None
        dual = np.array(self.h.getSolution().row_dual)
        lam = np.maximum(0.0, -dual[self.jobs :]).reshape(self.res, self.slots)
        return dual[: self.jobs], lam


def greedy_runs(pricing: Pricing, shape: Shapes) -> list[RunKey]:
    """A feasible start for the master: jobs by arrival, each at its earliest completion in
    what the pooled capacities leave (a job with no room keeps its artificial run; of runs
    completing together, the first of its shapes)."""
    inst = pricing.inst
    horizon, demand = inst.horizon, pricing.demand
    left = np.repeat(pricing.supply[:, None], horizon, axis=1)  # [R, T]
    out: list[RunKey] = []
    for j in sorted(range(inst.num_jobs), key=lambda k: (inst.jobs[k].arrival, k)):
        a, runs = inst.jobs[j].arrival, np.array(shape.of[j], dtype=np.int64).reshape(-1, 3)
        start = _earliest_starts(left[:, a:], demand, runs)
        if not (start >= 0).any():
            continue
        k = int(np.argmin(np.where(start >= 0, start + runs[:, 2], np.iinfo(np.int64).max)))
        m, n, d = (int(x) for x in runs[k])
        s = a + int(start[k])
        left[:, s : s + d] -= n * demand[m][:, None]
        out.append((j, m, n, d, s))
    return out


def _earliest_starts(free: np.ndarray, demand: np.ndarray, runs: np.ndarray) -> np.ndarray:
    """[K]: the earliest slot (from 0) at which run k = (m, n, d) of ``runs`` fits in ``free``
    [R, slots] for its d slots, -1 where it never does."""
    if not len(runs) or not free.shape[1]:
        return np.full(len(runs), -1, dtype=np.int64)
    need = runs[:, 1, None] * demand[runs[:, 0]]  # [K, R]
    fits = (free[None, :, :] >= need[:, :, None] - 1e-9).all(axis=1)  # [K, slots]
    slot = np.arange(free.shape[1])
    stop = np.where(fits, free.shape[1], slot)  # the first slot that does not fit, from each
    stop = np.minimum.accumulate(stop[:, ::-1], axis=1)[:, ::-1]
    room = stop - slot >= runs[:, 2, None]
    first = room.argmax(axis=1)
    return np.where(room[np.arange(len(runs)), first], first, -1)


@dataclass(frozen=True)
class TimeBound:
    """The best L found (sum w c), the master LP's last value (an upper bound on the LP, not
    on the optimum), master LPs solved and whether no run priced out (the LP's optimum)."""

    value: float
    master: float | None
    iterations: int
    converged: bool


def time_indexed_bound(
    inst: ElasticInstance,
    weights: Sequence[float] | None = None,
    deadline: Deadline = NEVER,
    max_iterations: int = MAX_ITERATIONS,
) -> TimeBound:
    """The largest L(lam) of the module docstring found by column generation (weights w_j;
    None: the jobs' own), within ``deadline`` and ``max_iterations`` master LPs; -inf when some
    job cannot end by T (no schedule: the instance is infeasible)."""
    w = [j.weight for j in inst.jobs] if weights is None else list(weights)
    return time_indexed_bounds(inst, [w], deadline, max_iterations)[0]


def time_indexed_bounds(
    inst: ElasticInstance,
    weightings: Sequence[Sequence[float]],
    deadline: Deadline = NEVER,
    max_iterations: int = MAX_ITERATIONS,
) -> tuple[TimeBound, ...]:
    """:func:`time_indexed_bound` for each weighting in turn, in one pass: the runs of every
    job (:func:`shapes`) and the master's first runs (:func:`greedy_runs`, which no weight
    changes) found once for all; each value the same as alone."""
    shape = shapes(inst)
    start: list[RunKey] | None = None
    out = []
    for w in weightings:
        pricing = Pricing(inst, shape, w)
        zero = np.zeros((len(pricing.supply), inst.horizon))
        best, _, first = pricing.cheapest(zero)
        if pricing.missing or deadline.passed():
            out.append(TimeBound(best, None, 0, False))
            continue
        start = greedy_runs(pricing, shape) if start is None else start
        initial = start + [_key(j, first[j]) for j in range(inst.num_jobs)]
        out.append(_generate(pricing, initial, best, deadline, max_iterations))
    return tuple(out)


def _generate(
    pricing: Pricing, initial: list[RunKey], best: float, deadline: Deadline, max_iterations: int
) -> TimeBound:
    """Column generation from the runs ``initial`` (added in this order), ``best`` the
    largest L met so far."""
    master = Master(pricing, deadline)
    master.add(initial)
    value, iterations = None, 0
    while iterations < max_iterations and not deadline.passed():
        got = master.solve()
        if got is None:
            break
        iterations += 1
        pi, lam = got
        value = float(master.h.getInfo().objective_function_value)
        bound, cost, run = pricing.cheapest(lam)
        best = max(best, bound)
        new = np.flatnonzero(cost - pi < -REDUCED_TOL)
        if master.add([_key(int(j), run[j]) for j in new]) == 0:
            return TimeBound(best, value, iterations, True)
    return TimeBound(best, value, iterations, False)


__all__ = [
    "Pricing",
    "Shapes",
    "TimeBound",
    "greedy_runs",
    "shapes",
    "time_indexed_bound",
    "time_indexed_bounds",
]
