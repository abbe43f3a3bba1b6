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

Finer grids are tighter (g = 1 loses nothing in step 1) but larger; :func:`choose_grid` keeps
the number of slots near ``max_slots``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from dlsched.models.hare.instance import HareInstance


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
    strong: bool = False,
    solver_options: dict[str, Any] | None = None,
) -> TimeIndexedBound | None:
    """The LP bound of the module docstring (None if the data are not exactly scaled, the LP
    did not solve to optimality, or HiGHS is missing). ``upper``: a known objective in the
    scaled integer units of ``data`` (time_scale * weight_scale)."""
    from .scaling import scale_data

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
    # precedence through barriers (see the module docstring, step 5)
    F = zt + P + Q  # finish slot of each column
    extra = [0]  # number of auxiliary columns (delta, Y, gamma, A, w), appended after C
    extra_lo: list[float] = []
    extra_hi: list[float] = []

    def new_cols(k: int, lo_v: float, hi_v: float) -> int:
        first = ncol + extra[0]
        extra[0] += k
        extra_lo.extend([lo_v] * k)
        extra_hi.extend([hi_v] * k)
        return first

    def add_rows(rws, cls, vls, lo_v, hi_v, count):
        nonlocal nrow
        rows.append(np.asarray(rws, dtype=np.int64) + nrow)
        cols.append(np.asarray(cls, dtype=np.int64))
        vals.append(np.asarray(vls, dtype=float))
        lo.extend([lo_v] * count)
        hi.extend([hi_v] * count)
        nrow += count

    inf = highspy.kHighsInf

    def add_nonincreasing(c0: int, length: int) -> None:
        """x_{c0+k} - x_{c0+k+1} >= 0 for k < length - 1 (an indicator chain [v >= t])."""
        if length > 1:
            k1 = np.arange(length - 1)
            add_rows(
                np.concatenate([k1, k1]),
                np.concatenate([c0 + k1, c0 + k1 + 1]),
                np.concatenate([np.ones(length - 1), -np.ones(length - 1)]),
                0.0,
                inf,
                length - 1,
            )

    def add_counts(c0: int, length: int, var: int, lo_v: float, hi_v: float) -> None:
        """lo_v <= var - sum_k x_{c0+k} <= hi_v (var equals its base plus the chain's count)."""
        add_rows(
            np.zeros(length + 1),
            np.append(c0 + np.arange(length), var),
            np.append(-np.ones(length), 1.0),
            lo_v,
            hi_v,
            1,
        )

    for n, j in enumerate(jobs):
        K_n = j.tasks_per_round
        for r in range(j.rounds):
            sel = np.nonzero(rid == round_id[(n, r)])[0]
            target = bar_id[(n, r + 1)] if r + 1 < j.rounds else c_id[n]
            if not strong or K_n == 1:
                # mean finish / mean start (exact for K = 1: the mean is the task itself)
                add_rows(
                    np.zeros(sel.size + 1),
                    np.append(sel, target),
                    np.append(-F[sel] / K_n, 1.0),
                    0.0,
                    inf,
                    1,
                )
                if r >= 1:
                    add_rows(
                        np.zeros(sel.size + 1),
                        np.append(sel, bar_id[(n, r)]),
                        np.append(zt[sel] / K_n, -1.0),
                        0.0,
                        inf,
                        1,
                    )
                continue
            # finish side: delta_t = [max finish >= t], Y_t = #finishing >= t, t in (flo, fhi]
            flo, fhi = int(F[sel].min()), int(F[sel].max())
            L = fhi - flo
            if L > 0:
                dl0 = new_cols(L, 0.0, 1.0)
                y0 = new_cols(L, 0.0, float(K_n))
                ks = np.arange(L)  # index of t = flo + 1 + k
                # Y_t - Y_{t+1} - sum_{F = t} z = 0
                fin_k = F[sel] - flo - 1
                inner = fin_k >= 0
                rr = [ks, ks[:-1], fin_k[inner]]
                cc = [y0 + ks, y0 + ks[:-1] + 1, sel[inner]]
                vv = [np.ones(L), -np.ones(L - 1), -np.ones(int(inner.sum()))]
                add_rows(np.concatenate(rr), np.concatenate(cc), np.concatenate(vv), 0.0, 0.0, L)
                # K delta_t - Y_t >= 0
                add_rows(
                    np.concatenate([ks, ks]),
                    np.concatenate([dl0 + ks, y0 + ks]),
                    np.concatenate([np.full(L, float(K_n)), -np.ones(L)]),
                    0.0,
                    inf,
                    L,
                )
                # delta_t - delta_{t+1} >= 0; target - sum delta >= flo
                add_nonincreasing(dl0, L)
                add_counts(dl0, L, target, float(flo), inf)
            else:
                add_rows([0], [target], [1.0], float(flo), inf, 1)
            # start side: gamma_t = [b >= t], A_t = #started before t, t in (slo, shi]
            g0 = None
            if r >= 1:
                b = bar_id[(n, r)]
                slo = int(a[n] + r * fast[n])  # the lower bound of b (and of every start)
                shi = int(zt[sel].max())
                Ls = shi - slo
                if Ls > 0:
                    g0 = new_cols(Ls, 0.0, 1.0)
                    a0 = new_cols(Ls, 0.0, float(K_n))
                    ks = np.arange(Ls)  # index of t = slo + 1 + k
                    # A_t - A_{t-1} - sum_{start = t - 1} z = 0
                    st_k = zt[sel] - slo  # start s counts in A_t for t = s + 1 -> index s - slo
                    inner = st_k < Ls
                    rr = [ks, ks[1:], st_k[inner]]
                    cc = [a0 + ks, a0 + ks[1:] - 1, sel[inner]]
                    vv = [np.ones(Ls), -np.ones(Ls - 1), -np.ones(int(inner.sum()))]
                    add_rows(
                        np.concatenate(rr), np.concatenate(cc), np.concatenate(vv), 0.0, 0.0, Ls
                    )
                    # K gamma_t + A_t <= K
                    add_rows(
                        np.concatenate([ks, ks]),
                        np.concatenate([g0 + ks, a0 + ks]),
                        np.concatenate([np.full(Ls, float(K_n)), np.ones(Ls)]),
                        -inf,
                        float(K_n),
                        Ls,
                    )
                    add_nonincreasing(g0, Ls)
                    # b - sum gamma <= slo
                    add_counts(g0, Ls, b, -inf, float(slo))
                else:
                    add_rows([0], [b], [1.0], -inf, float(slo), 1)
            # one-GPU windows: w_u = sum of z of this round on m started in [u - p + 1, u]
            for m in range(M):
                pm, qm = p[n][m], q[n][m]
                cm = sel[zm[sel] == m]
                if pm <= 0 or cm.size == 0:
                    continue
                est, lst = int(zt[cm].min()), int(zt[cm].max())
                nu = lst - est + pm  # u = est .. lst + pm - 1
                w0 = new_cols(nu, 0.0, 1.0)
                ku = np.arange(nu)
                # w_u - w_{u-1} - z_u + z_{u-p} = 0
                ci = zt[cm] - est  # column index k: enters w at u index k, leaves at k + pm
                rr = [ku, ku[1:], ci, ci + pm]
                cc = [w0 + ku, w0 + ku[1:] - 1, cm, cm]
                vv = [np.ones(nu), -np.ones(nu - 1), -np.ones(ci.size), np.ones(ci.size)]
                keep_ = np.concatenate(rr) < nu
                add_rows(
                    np.concatenate(rr)[keep_],
                    np.concatenate(cc)[keep_],
                    np.concatenate(vv)[keep_],
                    0.0,
                    0.0,
                    nu,
                )
                u = est + ku
                first_col = np.maximum(est, u - pm + 1)
                last_col = np.minimum(lst, u)
                if L > 0:  # delta_e >= w_u, e = finish of the earliest column of the window
                    e = first_col + pm + qm
                    ok = e > flo
                    k_ = ku[ok]
                    add_rows(
                        np.concatenate([np.arange(k_.size)] * 2),
                        np.concatenate([dl0 + e[ok] - flo - 1, w0 + k_]),
                        np.concatenate([np.ones(k_.size), -np.ones(k_.size)]),
                        0.0,
                        inf,
                        k_.size,
                    )
                if g0 is not None:  # gamma_h + w_u <= 1, h = latest start in the window + 1
                    h = last_col + 1
                    ok = h <= shi
                    k_ = ku[ok]
                    add_rows(
                        np.concatenate([np.arange(k_.size)] * 2),
                        np.concatenate([g0 + h[ok] - slo - 1, w0 + k_]),
                        np.ones(2 * k_.size),
                        -inf,
                        1.0,
                        k_.size,
                    )
    ncol_base = ncol
    ncol += extra[0]
    A = sp.csc_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(nrow, ncol)
    )
    cost = np.zeros(ncol)
    for n in range(len(jobs)):
        cost[c_id[n]] = d.weight[n]
    col_lo = np.zeros(ncol)
    col_hi = np.full(ncol, highspy.kHighsInf)
    col_lo[ncol_base:] = extra_lo
    col_hi[ncol_base:] = extra_hi
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
    if strong:  # interior point: far faster than simplex on the window/indicator chains
        h.setOptionValue("solver", "ipm")
    for k_, v_ in (solver_options or {}).items():
        h.setOptionValue(k_, v_)
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
