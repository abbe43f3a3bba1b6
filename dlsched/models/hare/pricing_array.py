"""The pricing of :mod:`colgen` in numpy: the same dynamic program as the compiled
:func:`pricing_core.price_gpus`, the same arguments and the same answer to the last bit, without
loading numba (its import and cached code cost about a second and 100 MB, more than a small
instance's whole pricing). :mod:`colgen` prices with this one until it has cost that much.

The DP runs over every GPU's candidates in Smith order, all GPUs and loads t at once: f[t]
improves to f[t - p_j] + (w_j (a + s_jm) - pi_j) + w_j t where that is strictly smaller (the
compiled loop's very operations, in its order, so the same floats), from the values before job
j, as the compiled loop going down the loads reads them. Of equal values, both take the least
load first.
"""

from __future__ import annotations

import numpy as np


def _candidates(
    order: np.ndarray, p_seq: np.ndarray, cost0_seq: np.ndarray, w: np.ndarray, pi: np.ndarray,
    most: int,
) -> tuple[np.ndarray, list[np.ndarray]]:  # fmt: skip
    """(exact[m]: every candidate kept, each GPU's candidates: places in its Smith order), as
    the compiled function chooses them."""
    exact = np.ones(order.shape[0], dtype=np.bool_)
    out: list[np.ndarray] = []
    for m in range(order.shape[0]):
        gain = pi[order[m]] - cost0_seq[m] - w[order[m]] * p_seq[m]
        cand = np.flatnonzero(gain > 0)
        if cand.shape[0] > most:
            exact[m] = False
            cut = np.sort(gain[cand])[cand.shape[0] - most]
            cand = cand[gain[cand] >= cut][:most]
        out.append(cand)
    return exact, out


def _padded(rows: list[np.ndarray], fill: float | int, dtype: type) -> np.ndarray:
    """[GPUs, most candidates]: each GPU's row, then ``fill``."""
    out: np.ndarray = np.full(
        (len(rows), max((len(r) for r in rows), default=0)), fill, dtype=dtype
    )
    for m, r in enumerate(rows):
        out[m, : len(r)] = r
    return out


def _dp(
    p: np.ndarray, base: np.ndarray, w: np.ndarray, horizon: int
) -> tuple[np.ndarray, np.ndarray]:
    """Every GPU's DP side by side over its candidates ``p``, ``base`` = w (a + s) - pi and
    ``w`` [GPUs, K] (padding: p 0, base inf, never taken), loads 0 .. ``horizon``: (f [GPUs,
    loads], take[idx, m, t]: the idx-th candidate of GPU m improved load t)."""
    gpus, k = p.shape
    pad = int(p.max(initial=0))
    f = np.full((gpus, pad + horizon + 1), np.inf)  # f[:, pad + t]; the pad reads as infeasible
    f[:, pad] = 0.0
    flat, cur = f.reshape(-1), f[:, pad:]
    t = np.arange(horizon + 1, dtype=np.int64)
    at = (np.arange(gpus) * (pad + horizon + 1) + pad)[:, None] + t[None, :]
    take = np.zeros((k, gpus, horizon + 1), dtype=np.bool_)
    for idx in range(k):
        cand = flat[at - p[:, idx, None]] + base[:, idx, None] + w[:, idx, None] * t[None, :]
        np.less(cand, cur, out=take[idx])
        np.copyto(cur, cand, where=take[idx])
    return cur, take


def price_gpus(  # noqa: PLR0913 - the compiled function's signature
    order: np.ndarray,
    p_seq: np.ndarray,
    cost0_seq: np.ndarray,
    w: np.ndarray,
    pi: np.ndarray,
    horizon: int,
    keep: int,
    most: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`pricing_core.price_gpus` in numpy: the same arguments and results. Every GPU's
    loads go up to the largest candidate load (no more than ``horizon``); the loads beyond its
    own stay infeasible, so its least sets are the same."""
    exact, cand = _candidates(order, p_seq, cost0_seq, w, pi, most)
    picked = [order[m][c] for m, c in enumerate(cand)]  # each GPU's candidate jobs
    jobs = _padded(picked, -1, np.int64)
    p = _padded([p_seq[m][c] for m, c in enumerate(cand)], 0, np.int64)
    base = _padded([cost0_seq[m][c] - pi[picked[m]] for m, c in enumerate(cand)], np.inf, float)
    top = min(horizon, int(p.sum(axis=1).max(initial=0)))
    f, take = _dp(p, base, _padded([w[j] for j in picked], 0.0, float), top)
    values = np.minimum(0.0, f.min(axis=1))
    ends = np.argsort(f, axis=1, kind="stable")[:, :keep]
    neg = np.take_along_axis(f, ends, axis=1) < 0
    neg &= np.cumprod(neg, axis=1).astype(np.bool_)  # up to each GPU's first >= 0
    col_gpu, which = np.nonzero(neg)
    end = ends[col_gpu, which]
    state = end
    chosen = np.zeros((len(col_gpu), p.shape[1]), dtype=np.bool_)
    for idx in range(p.shape[1] - 1, -1, -1):
        chosen[:, idx] = take[idx, col_gpu, state]
        state = state - chosen[:, idx] * p[col_gpu, idx]
    back = chosen[:, ::-1]  # each set from its last job back, as the compiled trace
    flat = jobs[:, ::-1][col_gpu][back]
    ptr = np.concatenate([[0], np.cumsum(back.sum(axis=1))]).astype(np.int64)
    return values, exact, col_gpu.astype(np.int64), f[col_gpu, end], ptr, flat


__all__ = ["price_gpus"]
