"""A proven lower bound on Hare_Sched: a time-indexed LP relaxation on a coarsened grid.

Used by the CP-SAT route (``objective >= LB``) and reported next to CP-SAT's own bound.

Why the bound is valid (every step maps an optimal schedule to something at most as costly):

1. *Rounding down.* Work in the integer units of :func:`cpsat.scale_data` (exact data only) and
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
   the LP optimum is <= OPT' <= OPT. The LP value returned by HiGHS is reduced by a relative
   1e-7 (plus an absolute 1e-7) against round-off.

Finer grids are tighter (g = 1 loses nothing in step 1) but larger; :func:`choose_grid` keeps
the number of slots near ``max_slots``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from dlsched.instances.hare import HareInstance


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


def _windows(d, instance: HareInstance, g: int, upper: int | None):
    jobs = instance.jobs
    p = [[v // g for v in row] for row in d.tc]
    # sync absorbs the remainder of the training time: T^c' + T^s' = g floor((T^c + T^s) / g)
    q = [
        [(c + v) // g - c // g for c, v in zip(crow, row, strict=True)]
        for crow, row in zip(d.tc, d.ts, strict=True)
    ]
    a = [v // g for v in d.arrival]
    fast = [min(pp + qq for pp, qq in zip(p[n], q[n], strict=True)) for n in range(len(jobs))]
    chain = [a[n] + j.rounds * fast[n] for n, j in enumerate(jobs)]
    w = list(d.weight)
    if upper is not None:
        total = sum(w[n] * chain[n] for n in range(len(jobs)))
        cap = upper / g
        dl = [
            max(chain[n], math.floor((cap - (total - w[n] * chain[n])) / w[n]))
            for n in range(len(jobs))
        ]
    else:
        work = sum(
            max(pp + qq for pp, qq in zip(p[n], q[n], strict=True)) * j.rounds * j.tasks_per_round
            for n, j in enumerate(jobs)
        )
        dl = [max(a) + work] * len(jobs)
    return p, q, a, fast, chain, dl


def choose_grid(d, instance: HareInstance, upper: int | None, max_slots: int = 1000) -> int:
    """Smallest grid (in scaled units) whose slot horizon stays within ``max_slots``."""
    g = 1
    while True:
        *_, dl = _windows(d, instance, g, upper)
        if max(dl) <= max_slots or g > 10**6:
            return g
        g = max(g + 1, math.ceil(g * max(dl) / max_slots))


def time_indexed_bound(
    instance: HareInstance,
    data: Any = None,
    upper: int | None = None,
    *,
    grid: int | None = None,
    max_slots: int = 1000,
    time_limit: float = 30.0,
    threads: int = 1,
) -> TimeIndexedBound | None:
    """The LP bound of the module docstring (None if the data are not exactly scaled, the LP
    did not solve to optimality, or HiGHS is missing). ``upper``: a known objective in the
    scaled integer units of ``data`` (time_scale * weight_scale)."""
    from .cpsat import scale_data

    d = data or scale_data(instance)
    if not d.exact:
        return None
    try:
        import highspy
        import scipy.sparse as sp
    except ImportError:  # pragma: no cover
        return None
    t0 = time.perf_counter()
    g = grid or choose_grid(d, instance, upper, max_slots)
    p, q, a, fast, chain, dl = _windows(d, instance, g, upper)
    jobs = instance.jobs
    M = instance.num_gpus
    T = max(dl) + 1
    # columns: z (n, r, m, t) | b (n, r>=1) | C_n
    zc_n, zc_r, zc_m, zc_t = [], [], [], []
    for n, j in enumerate(jobs):
        for r in range(j.rounds):
            est = a[n] + r * fast[n]
            for m in range(M):
                lst = dl[n] - (p[n][m] + q[n][m]) - (j.rounds - 1 - r) * fast[n]
                if lst < est:
                    continue
                ts = np.arange(est, lst + 1)
                zc_n.append(np.full(ts.size, n))
                zc_r.append(np.full(ts.size, r))
                zc_m.append(np.full(ts.size, m))
                zc_t.append(ts)
    zn = np.concatenate(zc_n)
    zr = np.concatenate(zc_r)
    zm = np.concatenate(zc_m)
    zt = np.concatenate(zc_t)
    nz = zn.size
    P = np.array(p)[zn, zm]
    Q = np.array(q)[zn, zm]
    round_id: dict[tuple[int, int], int] = {}
    for n, j in enumerate(jobs):
        for r in range(j.rounds):
            round_id[(n, r)] = len(round_id)
    rid = np.array([round_id[(int(n), int(r))] for n, r in zip(zn, zr, strict=True)])
    K = np.array([jobs[int(n)].tasks_per_round for n in zn], dtype=float)
    bar_id: dict[tuple[int, int], int] = {}
    for n, j in enumerate(jobs):
        for r in range(1, j.rounds):
            bar_id[(n, r)] = nz + len(bar_id)
    c_id = [nz + len(bar_id) + n for n in range(len(jobs))]
    ncol = nz + len(bar_id) + len(jobs)
    rows: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    vals: list[np.ndarray] = []
    lo: list[float] = []
    hi: list[float] = []
    nrow = 0
    # (5) per round: sum z = K
    rows.append(rid)
    cols.append(np.arange(nz))
    vals.append(np.ones(nz))
    for j in jobs:
        for _r in range(j.rounds):
            lo.append(j.tasks_per_round)
            hi.append(j.tasks_per_round)
    nrow += len(round_id)
    # (8) per GPU and slot: training in progress <= 1
    busy = P > 0
    idx = np.nonzero(busy)[0]
    reps = P[idx]
    col_rep = np.repeat(idx, reps)
    offs = np.concatenate([np.arange(k) for k in reps]) if reps.size else np.zeros(0, int)
    slot = zt[col_rep] + offs
    keep = slot < T
    col_rep, slot = col_rep[keep], slot[keep]
    rows.append(nrow + zm[col_rep] * T + slot)
    cols.append(col_rep)
    vals.append(np.ones(col_rep.size))
    lo += [-highspy.kHighsInf] * (M * T)
    hi += [1.0] * (M * T)
    nrow += M * T
    # precedence through barriers: b_{n,r} - F_{n,r-1} >= 0 and S_{n,r} - b_{n,r} >= 0;
    # completion C_n - F_{n,last} >= 0
    F = (zt + P + Q) / K
    S = zt / K
    prec_rows = []
    for n, j in enumerate(jobs):
        for r in range(j.rounds):
            sel = np.nonzero(rid == round_id[(n, r)])[0]
            if r >= 1:  # S_{n,r} - b >= 0
                prec_rows.append((sel, S[sel], bar_id[(n, r)], -1.0))
            if r + 1 < j.rounds:  # b_{n,r+1} - F_{n,r} >= 0
                prec_rows.append((sel, -F[sel], bar_id[(n, r + 1)], 1.0))
            else:  # C_n - F >= 0
                prec_rows.append((sel, -F[sel], c_id[n], 1.0))
    for sel, coef, extra, ecoef in prec_rows:
        rows.append(np.full(sel.size + 1, nrow))
        cols.append(np.append(sel, extra))
        vals.append(np.append(coef, ecoef))
        lo.append(0.0)
        hi.append(highspy.kHighsInf)
        nrow += 1
    A = sp.csc_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(nrow, ncol)
    )
    cost = np.zeros(ncol)
    for n in range(len(jobs)):
        cost[c_id[n]] = d.weight[n]
    col_lo = np.zeros(ncol)
    col_hi = np.full(ncol, highspy.kHighsInf)
    col_hi[:nz] = K
    for (n, r), c in bar_id.items():
        col_lo[c] = a[n] + r * fast[n]
    for n, c in enumerate(c_id):
        col_lo[c] = chain[n]
    lp = highspy.HighsLp()
    lp.num_col_ = ncol
    lp.num_row_ = nrow
    lp.col_cost_ = cost
    lp.col_lower_ = col_lo
    lp.col_upper_ = col_hi
    lp.row_lower_ = np.array(lo, dtype=float)
    lp.row_upper_ = np.array(hi, dtype=float)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = A.indptr
    lp.a_matrix_.index_ = A.indices
    lp.a_matrix_.value_ = A.data
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("time_limit", float(max(time_limit, 0.1)))
    h.setOptionValue("threads", int(max(1, threads)))
    h.passModel(lp)
    h.run()
    st = h.getModelStatus()
    secs = time.perf_counter() - t0
    if st != highspy.HighsModelStatus.kOptimal:
        return None
    val = h.getInfo().objective_function_value
    val = val * (1 - 1e-7) - 1e-7  # scaled-slot units; guard against round-off
    scaled = max(0, math.ceil(val * g - 1e-9))
    unit = d.time_scale * d.weight_scale
    return TimeIndexedBound(
        bound=val * g / unit,
        scaled=scaled,
        grid=g,
        slots=T,
        columns=ncol,
        nonzeros=int(A.nnz),
        seconds=secs,
        status=h.modelStatusToString(st),
    )


__all__ = ["TimeIndexedBound", "choose_grid", "time_indexed_bound"]
