"""The compiled pricing of :mod:`colgen`: the dynamic program over each GPU's Smith order
(numba, ``nopython``, releasing the GIL). :mod:`colgen` states the pricing problem and why the
DP solves it; this module carries it out on integer arrays, one GPU after another.

On GPU m, for multipliers pi, the DP keeps f[t] = the least c(S, m) - pi(S) over the sets S of
the jobs seen so far (in Smith order) with training load exactly t; job j, seen last so far,
taken at load t costs w_j (a + s_jm + t) - pi_j on top of f[t - p_jm]. A job whose cost alone
w_j (a + s_jm + p_jm) - pi_j is not negative is left out: inserting it into any set (at its
Smith place, delaying the jobs after it) adds at least that much, so some least set does
without it and the minimum is unchanged (the *candidates* of :func:`price_gpus`).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _gpu_dp(jobs, p, cost0, w, pi, horizon, take):  # type: ignore[no-untyped-def]
    """The DP of one GPU over ``jobs`` (in Smith order; p, cost0 = w (a + s), w and pi per
    job of ``jobs``) with loads 0 .. ``horizon``: the final f, ``take[idx, t]`` set where job
    idx improved state t (for the trace)."""
    f = np.full(horizon + 1, np.inf)
    f[0] = 0.0
    reach = 0
    for idx in range(jobs.shape[0]):
        pj = p[idx]
        base = cost0[idx] - pi[idx]
        wj = w[idx]
        reach = min(reach + pj, horizon)
        for t in range(reach, pj - 1, -1):
            prev = f[t - pj]
            if prev < np.inf:
                cand = prev + base + wj * t
                if cand < f[t]:
                    f[t] = cand
                    take[idx, t] = True
    return f


@njit(cache=True, nogil=True)
def _trace(jobs, p, take, t, out):  # type: ignore[no-untyped-def]
    """The set reaching load ``t`` after the last job, into ``out``; returns its size."""
    size = 0
    for idx in range(jobs.shape[0] - 1, -1, -1):
        if take[idx, t]:
            out[size] = jobs[idx]
            size += 1
            t -= p[idx]
    return size


@njit(cache=True, nogil=True)
def price_gpus(order, p_seq, cost0_seq, w, pi, horizon, keep, most):  # type: ignore[no-untyped-def]
    """Pricing of every GPU m (rows of ``order``: its jobs in Smith order, ``p_seq`` and
    ``cost0_seq`` = w (a + s) beside them) over its candidates, at most ``most`` of them (the
    ``most`` of largest pi_j - cost0 - w_j p_jm when there are more: then a heuristic, its
    minimum no longer certain), loads up to ``horizon``.

    Returns (value[m] = min(0, least reduced cost), exact[m] (all candidates kept), and up to
    ``keep`` sets of negative value per GPU, the best at distinct end loads (of equal values
    the least load first: :mod:`pricing_array` answers the same), as column GPU,
    the column's reduced cost, offsets into the flat jobs array, and that array)."""
    n_gpus, n = order.shape
    values = np.zeros(n_gpus)
    exact = np.ones(n_gpus, dtype=np.bool_)
    col_gpu = np.empty(n_gpus * keep, dtype=np.int64)
    col_val = np.empty(n_gpus * keep)
    col_ptr = np.zeros(n_gpus * keep + 1, dtype=np.int64)
    flat = np.empty(n_gpus * keep * n, dtype=np.int64)
    count = 0
    for m in range(n_gpus):
        jobs_all = order[m]
        gain = pi[jobs_all] - cost0_seq[m] - w[jobs_all] * p_seq[m]
        cand = np.flatnonzero(gain > 0)
        if cand.shape[0] > most:
            exact[m] = False
            cut = np.sort(gain[cand])[cand.shape[0] - most]
            cand = cand[gain[cand] >= cut][:most]
        if cand.shape[0] == 0:
            continue
        jobs = jobs_all[cand]
        p = p_seq[m][cand]
        h = min(horizon, int(p.sum()))
        take = np.zeros((cand.shape[0], h + 1), dtype=np.bool_)
        f = _gpu_dp(jobs, p, cost0_seq[m][cand], w[jobs], pi[jobs], h, take)
        values[m] = min(0.0, f.min())
        ends = np.argsort(f, kind="mergesort")[:keep]  # stable: of equal values, the least load
        for t in ends:
            if not f[t] < 0:
                break
            size = _trace(jobs, p, take, t, flat[col_ptr[count] :])
            col_gpu[count] = m
            col_val[count] = f[t]
            col_ptr[count + 1] = col_ptr[count] + size
            count += 1
    return (
        values,
        exact,
        col_gpu[:count],
        col_val[:count],
        col_ptr[: count + 1],
        flat[: col_ptr[count]],
    )


__all__ = ["price_gpus"]
