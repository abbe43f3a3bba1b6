"""A proven lower bound on Hare_Sched: a time-indexed LP relaxation on a coarsened grid.

Used by the CP-SAT route (``objective >= LB``) and reported next to CP-SAT's own bound.

Why the bound is valid (every step maps an optimal schedule to something at most as costly):

1. *Rounding down.* Work in the integer units of :func:`scaling.scale_data` (exact data only) and
   pick a grid ``g`` (a positive integer). The relaxed instance has T^c' = g floor(T^c / g),
   T^s' = g floor((T^c + T^s) / g) - T^c', a' = g floor(a / g) (the sync absorbs what the
   training loses, so T^c' <= T^c and T^c' + T^s' <= T^c + T^s). Any schedule of the true
   instance stays feasible for the relaxed one with the same starts and GPUs (a task occupies
   its GPU no longer and finishes no later, so barriers and completions only move earlier):
   OPT' <= OPT.
2. *Integrality.* The relaxed data are multiples of ``g``; in a semi-active schedule every
   start is an arrival plus a sum of data, so some optimal relaxed schedule starts every task
   on a multiple of ``g``. Divided by ``g`` it is an integer schedule on slots.
3. *Deadlines.* With an upper bound U >= OPT (the objective of a known schedule), that optimal
   slot schedule has sum w C <= U / g and C_k >= a'_k + R_k min_m (T^c' + T^s') (chain), so
   C_n <= (U/g - sum_{k != n} w_k chain_k) / w_n; every start lies in the window the model
   builds. Without U the window is the trivial horizon.
4. *LP.* z_{n,r,m,t} = number of tasks of round r of job n started on GPU m at slot t (tasks of
   one round are identical, so the symmetric average of an integer solution is feasible and of
   equal cost: aggregating them loses nothing). Per job round: sum z = |D_r|. Per GPU and slot:
   the tasks in training at that slot sum to <= 1 (NoOverlap (8)). The mean start S_{n,r} and
   mean finish F_{n,r} (training + sync) of a round are linear in z; the barrier b_{n,r} >= F of
   every task of round r-1 >= F_{n,r-1}, and S_{n,r} >= b_{n,r} (mean of starts each >= b);
   C_n >= F_{n,last}. The integer schedule of step 3 is a feasible point with the same cost, so
   the LP optimum is <= OPT' <= OPT. Every column is bounded: z by |D_r|, the auxiliary
   columns of step 5 by 1 or |D_r|, b_{n,r} and C_n by the windows of step 3 (b_{n,r} <= the
   latest start of round r, C_n <= the deadline), which the slot schedule meets; the LP never
   needs more (b is at most a start of its round, C at most the latest finish), so its value
   is unchanged.

5. *Max instead of mean (``strong=True``, rounds of >= 2 tasks).* Per-task start variables
   with b >= S_i + p_i for each task would add nothing: the tasks of a round are
   interchangeable, so the symmetric average of any LP point is feasible and gives every task
   the mean finish. Instead, in the integer slot schedule of step 3 take b_{n,r} = the latest
   finish of round r-1 (an integer) and use indicators, all valid for that schedule:
   delta_t = [latest finish of the round >= t] and Y_t = number of its tasks finishing at
   >= t (Y_t = Y_{t+1} + sum_{finish = t} z), so delta_t >= Y_t / K, delta_t >= delta_{t+1},
   0 <= delta_t <= 1 and b_{n,r+1} (or C_n) >= f_lo + sum_{t > f_lo} delta_t (f_lo = the
   earliest possible finish); gamma_t = [b_{n,r} >= t] and A_t = number of tasks of round r
   started before t, so K gamma_t + A_t <= K, gamma_t >= gamma_{t+1} and
   b_{n,r} <= s_lo + sum_{t > s_lo} gamma_t (s_lo = the lower bound of b and of every start).
   The link that cuts the mean: on one GPU, all tasks started in a window [u - p + 1, u]
   (p = the relaxed training length there, > 0) are in training at slot u, so at most one
   does; the window sum w_u (built by the sliding recurrence w_u = w_{u-1} + z_u - z_{u-p})
   is 0 or 1, and if 1 then some task finishes at or after e (earliest start in the window
   + p + q) and starts at or before h - 1 (latest start in the window): delta_e >= w_u and
   gamma_h + w_u <= 1. Summing delta_t >= Y_t / K gives back the mean-finish row, and
   gamma_t <= 1 - A_t / K the mean-start row, so step 4 is dominated. Rounds of one task keep
   the mean rows (exact for them). Measured on random-8gpu-60tasks-s102 at g = 0.9: 715.4
   against 713.3 for the mean rows, 15 times the LP time (benchmarks/READING_hare.md,
   development measurements), so it is off by default.

6. *Certification.* The bound is not HiGHS's LP value but
   :func:`dlsched.solvers.highs.safe_dual_bound` of its row duals: weak duality evaluated in
   safe floating point, a lower bound on the LP optimum for any multipliers (finite because
   every column is bounded, step 4). ``scaled`` = ceil(val g - :data:`SCALED_MARGIN` |val g|)
   for that certified value val (slot units): every feasible objective in scaled units is an
   integer >= the exact val g >= the computed product minus the margin (which covers the
   rounding of the product), hence >= ``scaled``. ``bound`` = val g / unit, lowered by a
   relative 1e-15 (more than the two roundings of that expression).

Finer grids are tighter (g = 1 loses nothing in step 1) but larger; :func:`choose_grid` keeps
the number of slots near ``max_slots``.

The model is assembled from one row block per constraint family (functions ``_*_rows``),
stacked by :func:`dlsched.solvers.highs.stack_rows` and solved by
:func:`dlsched.solvers.highs.solve_matrix`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dlsched.models.hare.instance import HareInstance
from dlsched.solvers.base import SolveOptions
from dlsched.solvers.highs import (
    MatrixModel,
    RowBlock,
    segment_offsets,
    solve_matrix,
    stack_rows,
)

from .scaling import ScaledData, scale_data

INF = math.inf
#: Relative margin taken off the certified bound in scaled units before it is rounded up to
#: ``scaled``: it covers the rounding of the product (slot units) x (grid), at most one unit
#: roundoff of the result.
SCALED_MARGIN = 1e-12
#: Relative amount by which ``bound`` (instance units) is lowered: more than two roundings.
BOUND_MARGIN = 1e-15


@dataclass(frozen=True)
class TimeIndexedBound:
    bound: float  # in the instance's units (objective), proven <= OPT
    scaled: int  # ceil of the bound in the CP-SAT integer objective units
    grid: int  # slot length in scaled time units
    slots: int
    columns: int
    nonzeros: int
    seconds: float
    status: str


# --- the relaxed instance on slots (steps 1-3) ------------------------------------------------


@dataclass(frozen=True)
class SlotData:
    """The relaxed instance of steps 1-3 in slots of length ``g`` (lists indexed [job][gpu])."""

    train: list[list[int]]  # p = T^c' / g
    sync: list[list[int]]  # q = T^s' / g (absorbs what the training lost to rounding)
    arrival: list[int]  # a' / g
    fast: list[int]  # min_m (p + q): the job's shortest round
    chain: list[int]  # a + R fast: the job's earliest completion
    deadline: list[int]  # its latest completion in the slot schedule of step 3


def _trivial_deadlines(
    instance: HareInstance, train: list[list[int]], sync: list[list[int]], arrival: list[int]
) -> list[int]:
    """Without a known objective: the last arrival plus all the work (step 3)."""
    work = sum(
        max(p + q for p, q in zip(train[n], sync[n], strict=True)) * j.rounds * j.tasks_per_round
        for n, j in enumerate(instance.jobs)
    )
    return [max(arrival) + work] * instance.num_jobs


def _upper_deadlines(weight: tuple[int, ...], chain: list[int], cap: float) -> list[int]:
    """C_n <= (U/g - sum_{k != n} w_k chain_k) / w_n (step 3), never below the chain."""
    total = sum(w * c for w, c in zip(weight, chain, strict=True))
    return [
        max(c, math.floor((cap - (total - w * c)) / w)) for w, c in zip(weight, chain, strict=True)
    ]


def slot_data(d: ScaledData, instance: HareInstance, g: int, upper: int | None) -> SlotData:
    """Steps 1-3 on the grid ``g``; ``upper``: a known objective in scaled units."""
    train = [[v // g for v in row] for row in d.tc]
    sync = [
        [(c + v) // g - c // g for c, v in zip(crow, row, strict=True)]
        for crow, row in zip(d.tc, d.ts, strict=True)
    ]
    arrival = [v // g for v in d.arrival]
    fast = [
        min(p + q for p, q in zip(pn, qn, strict=True)) for pn, qn in zip(train, sync, strict=True)
    ]
    chain = [a + j.rounds * f for a, f, j in zip(arrival, fast, instance.jobs, strict=True)]
    if upper is None:
        deadline = _trivial_deadlines(instance, train, sync, arrival)
    else:
        deadline = _upper_deadlines(d.weight, chain, upper / g)
    return SlotData(train, sync, arrival, fast, chain, deadline)


def choose_grid(
    d: ScaledData, instance: HareInstance, upper: int | None, max_slots: int = 1000
) -> int:
    """Smallest grid (in scaled units) whose slot horizon stays within ``max_slots``."""
    g = 1
    while True:
        horizon = max(slot_data(d, instance, g, upper).deadline)
        if horizon <= max_slots or g > 10**6:
            return g
        g = max(g + 1, math.ceil(g * horizon / max_slots))


# --- columns ------------------------------------------------------------------------------------


@dataclass
class _Columns:
    """Column bounds in creation order; the families of step 5 append auxiliary columns."""

    lower: list[np.ndarray] = field(default_factory=list)
    upper: list[np.ndarray] = field(default_factory=list)
    size: int = 0

    def add(self, lower: Any, upper: Any) -> int:
        """Append columns with these bounds (arrays of one length); returns the first index."""
        lo, hi = np.atleast_1d(np.asarray(lower, float)), np.atleast_1d(np.asarray(upper, float))
        self.lower.append(lo)
        self.upper.append(hi)
        self.size += lo.size
        return self.size - lo.size

    def chain(self, base: int, length: int, upper: float) -> _Chain:
        """Columns x_t in [0, upper] for the slots t = base + 1 .. base + length."""
        return _Chain(self.add(np.zeros(length), np.full(length, upper)), base, length)


@dataclass(frozen=True)
class _Starts:
    """z_{n,r,m,t} of step 4: one column per (job, round, GPU, slot) inside the windows of
    step 3, in that order, so they are columns 0 .. size - 1 and each round's are contiguous."""

    round: np.ndarray  # global round index (job-major)
    gpu: np.ndarray
    slot: np.ndarray
    train: np.ndarray  # p of the column's job and GPU
    finish: np.ndarray  # slot + p + q

    @property
    def size(self) -> int:
        return int(self.slot.size)


def _start_windows(s: SlotData, n: int, rounds: int, gpus: int) -> Iterator[tuple[int, int, int]]:
    """(round, GPU, latest start) of every non-empty window of job n, in round, GPU order;
    the earliest start of round r is a + r fast."""
    for r in range(rounds):
        for m in range(gpus):
            lst = s.deadline[n] - (s.train[n][m] + s.sync[n][m]) - (rounds - 1 - r) * s.fast[n]
            if lst >= s.arrival[n] + r * s.fast[n]:
                yield r, m, lst


def _start_columns(s: SlotData, instance: HareInstance) -> _Starts:
    """The z columns of every window, job by job."""
    job, rnd, gpu, slot = [], [], [], []
    first = np.cumsum([0] + [j.rounds for j in instance.jobs])
    for n, j in enumerate(instance.jobs):
        for r, m, lst in _start_windows(s, n, j.rounds, instance.num_gpus):
            ts = np.arange(s.arrival[n] + r * s.fast[n], lst + 1)
            job.append(np.full(ts.size, n))
            rnd.append(np.full(ts.size, first[n] + r))
            gpu.append(np.full(ts.size, m))
            slot.append(ts)
    zn, zm, zt = np.concatenate(job), np.concatenate(gpu), np.concatenate(slot)
    p, q = np.array(s.train)[zn, zm], np.array(s.sync)[zn, zm]
    return _Starts(np.concatenate(rnd), zm, zt, p, zt + p + q)


@dataclass(frozen=True)
class _Round:
    """Round r of job n: its z columns and the barrier columns its rows link."""

    job: int
    tasks: int  # K = |D_r|
    cols: np.ndarray  # its z columns (contiguous)
    target: int  # b_{n,r+1}, or C_n for the last round
    barrier: int | None  # b_{n,r} (None for r = 0)
    earliest: int  # a + r fast: the lower bound of b_{n,r} and of every start of the round


def _barrier_columns(
    s: SlotData, instance: HareInstance, columns: _Columns
) -> tuple[dict[tuple[int, int], int], list[int]]:
    """b_{n,r} (r >= 1), then C_n, bounded as in step 4: b_{n,r} in [a + r fast, deadline -
    (R - r) fast] (the latest start of round r), C_n in [chain, deadline]."""
    barrier: dict[tuple[int, int], int] = {}
    for n, j in enumerate(instance.jobs):
        for r in range(1, j.rounds):
            lo = s.arrival[n] + r * s.fast[n]
            barrier[(n, r)] = columns.add(lo, s.deadline[n] - (j.rounds - r) * s.fast[n])
    completion = [columns.add(s.chain[n], s.deadline[n]) for n in range(instance.num_jobs)]
    return barrier, completion


def _job_rounds(
    s: SlotData,
    instance: HareInstance,
    starts: _Starts,
    barrier: dict[tuple[int, int], int],
    completion: list[int],
) -> list[_Round]:
    """Every job round, job-major (the order of the global round index)."""
    ends = np.searchsorted(starts.round, np.arange(sum(j.rounds for j in instance.jobs) + 1))
    out: list[_Round] = []
    for n, j in enumerate(instance.jobs):
        for r in range(j.rounds):
            k = len(out)
            out.append(
                _Round(
                    job=n,
                    tasks=j.tasks_per_round,
                    cols=np.arange(ends[k], ends[k + 1]),
                    target=barrier[(n, r + 1)] if r + 1 < j.rounds else completion[n],
                    barrier=barrier.get((n, r)),
                    earliest=s.arrival[n] + r * s.fast[n],
                )
            )
    return out


# --- step 4: one task per slot, barriers through the mean ---------------------------------------


def _round_rows(starts: _Starts, rounds: list[_Round]) -> RowBlock:
    """(5) per job round: sum_{m,t} z_{n,r,m,t} = |D_r|."""
    k = np.array([rnd.tasks for rnd in rounds], dtype=float)
    return RowBlock(starts.round, np.arange(starts.size), np.ones(starts.size), k, k)


def _capacity_rows(starts: _Starts, gpus: int, slots: int) -> RowBlock:
    """(8) per GPU and slot: the tasks in training at that slot sum to <= 1."""
    busy = np.nonzero(starts.train > 0)[0]
    reps = starts.train[busy]
    col = np.repeat(busy, reps)
    slot = starts.slot[col] + segment_offsets(reps)
    col, slot = col[slot < slots], slot[slot < slots]
    return RowBlock.of(
        starts.gpu[col] * slots + slot, col, np.ones(col.size), -INF, 1.0, gpus * slots
    )


def _mean_finish_rows(rnd: _Round, starts: _Starts) -> RowBlock:
    """The next barrier (or C_n) >= the mean finish of the round: target - sum F z / K >= 0."""
    cols = np.append(rnd.cols, rnd.target)
    vals = np.append(-starts.finish[rnd.cols] / rnd.tasks, 1.0)
    return RowBlock.of(np.zeros(cols.size), cols, vals, 0.0, INF, 1)


def _mean_start_rows(rnd: _Round, barrier: int, starts: _Starts) -> RowBlock:
    """The mean start of the round >= its barrier: sum t z / K - b >= 0."""
    cols = np.append(rnd.cols, barrier)
    vals = np.append(starts.slot[rnd.cols] / rnd.tasks, -1.0)
    return RowBlock.of(np.zeros(cols.size), cols, vals, 0.0, INF, 1)


# --- step 5: indicators of the latest finish and of the barrier ---------------------------------


@dataclass(frozen=True)
class _Chain:
    """_Columns x_t for the slots t = base + 1 .. base + length; ``first`` is x_{base+1}'s."""

    first: int
    base: int
    length: int

    def col(self, t: Any) -> Any:
        return self.first + np.asarray(t) - self.base - 1


def _nonincreasing_rows(x: _Chain) -> RowBlock:
    """x_t - x_{t+1} >= 0 (an indicator [v >= t] does not increase with t)."""
    k = np.arange(x.length - 1)
    rows, cols = np.concatenate([k, k]), np.concatenate([x.first + k, x.first + k + 1])
    vals = np.concatenate([np.ones(k.size), -np.ones(k.size)])
    return RowBlock.of(rows, cols, vals, 0.0, INF, k.size)


def _indicator_sum_rows(x: _Chain, var: int, lower: float, upper: float) -> RowBlock:
    """lower <= var - sum_t x_t <= upper (var = its base plus the count of indicators)."""
    cols = np.append(x.first + np.arange(x.length), var)
    vals = np.append(-np.ones(x.length), 1.0)
    return RowBlock.of(np.zeros(cols.size), cols, vals, lower, upper, 1)


def _finish_count_rows(y: _Chain, rnd: _Round, starts: _Starts) -> RowBlock:
    """Y_t - Y_{t+1} - sum_{F = t} z = 0: Y_t counts the round's tasks finishing at >= t."""
    k = np.arange(y.length)
    fin = starts.finish[rnd.cols] - y.base - 1
    inner = fin >= 0
    rows = np.concatenate([k, k[:-1], fin[inner]])
    cols = np.concatenate([y.first + k, y.first + k[:-1] + 1, rnd.cols[inner]])
    vals = np.concatenate([np.ones(k.size), -np.ones(k.size - 1), -np.ones(int(inner.sum()))])
    return RowBlock.of(rows, cols, vals, 0.0, 0.0, y.length)


def _latest_finish_rows(delta: _Chain, y: _Chain, tasks: int) -> RowBlock:
    """K delta_t - Y_t >= 0: some task finishes at >= t, so the latest finish is >= t."""
    k = np.arange(delta.length)
    cols = np.concatenate([delta.first + k, y.first + k])
    vals = np.concatenate([np.full(k.size, float(tasks)), -np.ones(k.size)])
    return RowBlock.of(np.concatenate([k, k]), cols, vals, 0.0, INF, k.size)


def _start_count_rows(a: _Chain, rnd: _Round, starts: _Starts) -> RowBlock:
    """A_t - A_{t-1} - sum_{start = t - 1} z = 0: A_t counts the tasks started before t."""
    k = np.arange(a.length)
    st = starts.slot[rnd.cols] - a.base  # a start s counts from A_{s+1} on: index s - base
    inner = st < a.length
    rows = np.concatenate([k, k[1:], st[inner]])
    cols = np.concatenate([a.first + k, a.first + k[1:] - 1, rnd.cols[inner]])
    vals = np.concatenate([np.ones(k.size), -np.ones(k.size - 1), -np.ones(int(inner.sum()))])
    return RowBlock.of(rows, cols, vals, 0.0, 0.0, a.length)


def _barrier_start_rows(gamma: _Chain, a: _Chain, tasks: int) -> RowBlock:
    """K gamma_t + A_t <= K: the barrier is >= t only if no task started before t."""
    k = np.arange(gamma.length)
    cols = np.concatenate([gamma.first + k, a.first + k])
    vals = np.concatenate([np.full(k.size, float(tasks)), np.ones(k.size)])
    return RowBlock.of(np.concatenate([k, k]), cols, vals, -INF, float(tasks), k.size)


def _finish_indicator_rows(
    rnd: _Round, starts: _Starts, columns: _Columns
) -> tuple[list[RowBlock], _Chain | None]:
    """delta_t = [latest finish >= t], Y_t for t in (f_lo, f_hi]; target >= f_lo + sum delta."""
    fin = starts.finish[rnd.cols]
    flo, length = int(fin.min()), int(fin.max() - fin.min())
    if length == 0:
        return [RowBlock.of([0], [rnd.target], [1.0], float(flo), INF, 1)], None
    delta, y = columns.chain(flo, length, 1.0), columns.chain(flo, length, float(rnd.tasks))
    return [
        _finish_count_rows(y, rnd, starts),
        _latest_finish_rows(delta, y, rnd.tasks),
        _nonincreasing_rows(delta),
        _indicator_sum_rows(delta, rnd.target, float(flo), INF),
    ], delta


def _start_indicator_rows(
    rnd: _Round, barrier: int, starts: _Starts, columns: _Columns
) -> tuple[list[RowBlock], _Chain | None]:
    """gamma_t = [b >= t], A_t for t in (s_lo, s_hi]; b <= s_lo + sum gamma."""
    slo = rnd.earliest
    length = int(starts.slot[rnd.cols].max()) - slo
    if length <= 0:
        return [RowBlock.of([0], [barrier], [1.0], -INF, float(slo), 1)], None
    gamma, a = columns.chain(slo, length, 1.0), columns.chain(slo, length, float(rnd.tasks))
    return [
        _start_count_rows(a, rnd, starts),
        _barrier_start_rows(gamma, a, rnd.tasks),
        _nonincreasing_rows(gamma),
        _indicator_sum_rows(gamma, barrier, -INF, float(slo)),
    ], gamma


# --- step 5: one-GPU windows --------------------------------------------------------------------


def _window_sum_rows(w: _Chain, cols: np.ndarray, starts: _Starts, p: int) -> RowBlock:
    """w_u - w_{u-1} - z_u + z_{u-p} = 0: w_u sums the starts on the GPU in [u - p + 1, u]."""
    k = np.arange(w.length)
    enter = w.col(starts.slot[cols]) - w.first  # a start enters w at its slot, leaves p later
    rows = np.concatenate([k, k[1:], enter, enter + p])
    cc = np.concatenate([w.first + k, w.first + k[1:] - 1, cols, cols])
    vals = np.concatenate([np.ones(k.size), -np.ones(k.size - 1), -np.ones(cols.size)])
    vals = np.concatenate([vals, np.ones(cols.size)])
    keep = rows < w.length
    return RowBlock.of(rows[keep], cc[keep], vals[keep], 0.0, 0.0, w.length)


def _window_finish_rows(w: _Chain, delta: _Chain, est: int, p: int, q: int) -> RowBlock:
    """delta_e >= w_u, e = the finish of the earliest start in the window of u."""
    u = w.base + 1 + np.arange(w.length)
    e = np.maximum(est, u - p + 1) + p + q
    ok = e > delta.base
    cols = np.concatenate([delta.col(e[ok]), w.col(u[ok])])
    vals = np.concatenate([np.ones(int(ok.sum())), -np.ones(int(ok.sum()))])
    rows = np.tile(np.arange(int(ok.sum())), 2)
    return RowBlock.of(rows, cols, vals, 0.0, INF, int(ok.sum()))


def _window_start_rows(w: _Chain, gamma: _Chain, lst: int) -> RowBlock:
    """gamma_h + w_u <= 1, h = the latest start in the window of u, plus 1."""
    u = w.base + 1 + np.arange(w.length)
    h = np.minimum(lst, u) + 1
    ok = h <= gamma.base + gamma.length
    cols = np.concatenate([gamma.col(h[ok]), w.col(u[ok])])
    rows = np.tile(np.arange(int(ok.sum())), 2)
    return RowBlock.of(rows, cols, np.ones(cols.size), -INF, 1.0, int(ok.sum()))


def _window_rows(
    rnd: _Round,
    m: int,
    s: SlotData,
    starts: _Starts,
    links: tuple[_Chain | None, _Chain | None],
    columns: _Columns,
) -> list[RowBlock]:
    """The windows of the round on GPU m (u = est .. lst + p - 1), linked to delta and gamma."""
    p, q = s.train[rnd.job][m], s.sync[rnd.job][m]
    cols = rnd.cols[starts.gpu[rnd.cols] == m]
    if p <= 0 or cols.size == 0:
        return []
    est, lst = int(starts.slot[cols].min()), int(starts.slot[cols].max())
    w = columns.chain(est - 1, lst - est + p, 1.0)
    delta, gamma = links
    blocks = [_window_sum_rows(w, cols, starts, p)]
    if delta is not None:
        blocks.append(_window_finish_rows(w, delta, est, p, q))
    if gamma is not None:
        blocks.append(_window_start_rows(w, gamma, lst))
    return blocks


def _strong_round_rows(
    rnd: _Round, s: SlotData, starts: _Starts, gpus: int, columns: _Columns
) -> list[RowBlock]:
    """Step 5 for one round: finish indicators, start indicators (r >= 1), windows."""
    blocks, delta = _finish_indicator_rows(rnd, starts, columns)
    gamma = None
    if rnd.barrier is not None:
        more, gamma = _start_indicator_rows(rnd, rnd.barrier, starts, columns)
        blocks += more
    for m in range(gpus):
        blocks += _window_rows(rnd, m, s, starts, (delta, gamma), columns)
    return blocks


def _barrier_rows(
    rnd: _Round, s: SlotData, starts: _Starts, gpus: int, columns: _Columns, strong: bool
) -> list[RowBlock]:
    """The precedence of one round through its barriers: the mean rows of step 4 (also for
    rounds of one task, where they are exact), or the indicator rows of step 5."""
    if strong and rnd.tasks > 1:
        return _strong_round_rows(rnd, s, starts, gpus, columns)
    blocks = [_mean_finish_rows(rnd, starts)]
    if rnd.barrier is not None:
        blocks.append(_mean_start_rows(rnd, rnd.barrier, starts))
    return blocks


# --- the model, its solution and its certified bound --------------------------------------------


def build_lp(instance: HareInstance, d: ScaledData, s: SlotData, strong: bool) -> MatrixModel:
    """The LP of steps 4-5 on the slot data ``s`` (objective: sum w_n C_n in slot units)."""
    starts = _start_columns(s, instance)
    tasks = np.array([instance.jobs[n].tasks_per_round for n in _round_jobs(instance)])
    columns = _Columns()
    columns.add(np.zeros(starts.size), tasks[starts.round].astype(float))
    barrier, completion = _barrier_columns(s, instance, columns)
    rounds = _job_rounds(s, instance, starts, barrier, completion)
    blocks = [_round_rows(starts, rounds), _capacity_rows(starts, instance.num_gpus, _slots(s))]
    for rnd in rounds:
        blocks += _barrier_rows(rnd, s, starts, instance.num_gpus, columns, strong)
    matrix, lower, upper = stack_rows(blocks, columns.size)
    cost = np.zeros(columns.size)
    cost[completion] = d.weight
    return MatrixModel(
        cost, matrix, lower, upper, np.concatenate(columns.lower), np.concatenate(columns.upper)
    )


def _round_jobs(instance: HareInstance) -> list[int]:
    """The job of every global round index."""
    return [n for n, j in enumerate(instance.jobs) for _ in range(j.rounds)]


def _slots(s: SlotData) -> int:
    return max(s.deadline) + 1


def _lp_options(
    time_limit: float, threads: int, strong: bool, solver_options: dict[str, Any] | None
) -> SolveOptions:
    # interior point for the strong LP: far faster than simplex on the window/indicator chains
    extra: dict[str, Any] = {"solver": "ipm"} if strong else {}
    extra.update(solver_options or {})
    return SolveOptions(time_limit=max(time_limit, 0.1), threads=max(1, threads), extra=extra)


def _certified(val: float, g: int, d: ScaledData) -> tuple[float, int]:
    """(bound in instance units, ``scaled``) of a certified LP bound ``val`` (slot units);
    see step 6."""
    product = val * g
    scaled = max(0, math.ceil(product - SCALED_MARGIN * max(1.0, abs(product))))
    bound = product / (d.time_scale * d.weight_scale)
    return bound - BOUND_MARGIN * abs(bound), scaled


def time_indexed_bound(
    instance: HareInstance,
    data: ScaledData | None = None,
    upper: int | None = None,
    *,
    grid: int | None = None,
    max_slots: int = 1000,
    time_limit: float = 30.0,
    threads: int = 1,
    strong: bool = False,
    solver_options: dict[str, Any] | None = None,
) -> TimeIndexedBound | None:
    """The LP bound of the module docstring (None if the data are not exactly scaled, HiGHS did
    not report the LP optimal, or HiGHS is missing). ``upper``: a known objective in the
    scaled integer units of ``data`` (time_scale * weight_scale).

    ``bound`` and ``scaled`` are certified from the LP's row duals by
    :func:`dlsched.solvers.highs.safe_dual_bound` (step 6), not read off HiGHS's LP value."""
    d = data or scale_data(instance)
    if not d.exact:
        return None
    try:
        import highspy  # noqa: F401
    except ImportError:  # pragma: no cover
        return None
    t0 = time.perf_counter()
    g = grid or choose_grid(d, instance, upper, max_slots)
    s = slot_data(d, instance, g, upper)
    model = build_lp(instance, d, s, strong)
    res = solve_matrix(model, _lp_options(time_limit, threads, strong, solver_options))
    if not res.info.get("claimed_optimal") or res.bound is None:
        return None  # res.bound: safe_dual_bound of the row duals (solve_matrix, for an LP)
    bound, scaled = _certified(res.bound, g, d)
    return TimeIndexedBound(
        bound=bound,
        scaled=scaled,
        grid=g,
        slots=_slots(s),
        columns=model.num_cols,
        nonzeros=int(model.matrix.nnz),
        seconds=time.perf_counter() - t0,
        status=res.message,
    )


__all__ = ["SlotData", "TimeIndexedBound", "build_lp", "choose_grid", "time_indexed_bound"]
