"""Algorithms 4-7 of Zhou et al. as written: A_mincost1 (PS, q = 0), A_mincost2 (PS, q = 1),
A_RAmincost1 (Ring-AllReduce, q = 1) and A_RAmincost2 (Ring-AllReduce, q = 0).

Each ``*_fixed`` function is the body of its algorithm for a fixed worker type m', PS type p',
duration L and start t^- (problem (13) or (21)); :func:`paper_mincost` runs the loops around them.
The loop over L is visited through the worker counts it produces: for each count N the fewest
slots L = ceil(E D K / (N rho)) (a longer L with the same N costs no less and ends later).
These are the oracles whose optimality Theorems 1 and 6 claim; :mod:`.guarantees` compares them
with the exact MILP of (13)/(21) (:func:`.problem13.build_problem13`).
"""

from __future__ import annotations

import math

import numpy as np

from dlsched.models.elastic.enumerate import Config
from dlsched.models.elastic.instance import ElasticInstance, duration
from dlsched.models.elastic.pricing import Priced

#: (cost, workers per server, PSs per server); cost inf when infeasible.
Placement = tuple[float, list[int], list[int]]


def _window(prices: np.ndarray, free: np.ndarray, t: int, length: int) -> tuple:
    """Price sums [h, r] and least free capacity [h, r] over slots t .. t+L-1."""
    return prices[t : t + length].sum(axis=0), free[t : t + length].min(axis=0)


def _fit(room: np.ndarray, demand: np.ndarray) -> int:
    pos = demand > 0
    if not pos.any():
        return 10**9
    return int(np.floor(room[pos] / demand[pos] + 1e-9).min())


def mincost1_fixed(
    inst: ElasticInstance,
    m: int,
    p: int,
    n_workers: int,
    win: np.ndarray,
    room: np.ndarray,
    skip_g_n: bool = False,
) -> Placement:
    """Algorithm 4, lines 8-29: workers from the cheapest server on; at each candidate PS
    server n the largest g <= y^ whose PSs cover the other N - g workers (2i).

    As written, the iteration g = N of lines 15-19 (server n the cheapest with room for all N
    workers) passes line 16 with s = ceil(0) = 0 PSs, and line 25 then rejects server n
    (docs/errata.md, seed 003, "Algorithms 4-7"). ``skip_g_n`` is the reading without that
    iteration: the largest g < N wins, so server n keeps a PS (13e); it classifies Theorem 1's
    violations (:func:`~dlsched.models.elastic.guarantees.reading`)."""
    e = np.array(inst.worker_types[m].demand)
    z = np.array(inst.ps_types[p].demand)
    b, big_b = inst.worker_types[m].bandwidth, inst.ps_types[p].bandwidth
    omega = win @ e  # Omega_h (the price of one worker on h over the window)
    order = np.argsort(omega, kind="stable").tolist()
    h_count = inst.num_servers
    best: Placement = (math.inf, [], [])
    for n in range(h_count):  # line 9: the PS server
        y, s = [0] * h_count, [0] * h_count
        left = n_workers
        for k in order:  # lines 11-24
            y_hat = min(_fit(room[k], e), left)
            y[k] = y_hat
            if k == n:
                top = min(y_hat, n_workers - 1) if skip_g_n else y_hat  # g <= y^ <= N
                for g in range(top + 1):  # lines 15-21
                    s_hat = _fit(room[n] - g * e, z)
                    if s_hat * big_b >= (n_workers - g) * b:
                        y[n] = g
                        s[n] = min(s_hat, math.ceil((n_workers - g) * b / big_b))
            left -= y[k]
        if left > 0 or s[n] < 1:  # lines 25-26
            continue
        cost = float(np.array(y) @ omega + np.array(s) @ (win @ z))
        if cost < best[0]:
            best = (cost, y, s)
    return best


def mincost2_fixed(
    inst: ElasticInstance, m: int, p: int, n_workers: int, win: np.ndarray, room: np.ndarray
) -> Placement:
    """Algorithm 5: every worker and one PS on one server (q = 1), the cheapest server."""
    e = np.array(inst.worker_types[m].demand)
    z = np.array(inst.ps_types[p].demand)
    best: Placement = (math.inf, [], [])
    for h in range(inst.num_servers):
        if (room[h] >= n_workers * e + z - 1e-9).all():
            cost = float(n_workers * (win[h] @ e) + win[h] @ z)
            if cost < best[0]:
                y, s = [0] * inst.num_servers, [0] * inst.num_servers
                y[h], s[h] = n_workers, 1
                best = (cost, y, s)
    return best


def ramincost1_fixed(
    inst: ElasticInstance, m: int, n_workers: int, win: np.ndarray, room: np.ndarray
) -> Placement:
    """Algorithm 6, lines 8-18: all Phi' workers on one server."""
    e = np.array(inst.worker_types[m].demand)
    best: Placement = (math.inf, [], [])
    for h in range(inst.num_servers):
        if min(_fit(room[h], e), n_workers) >= n_workers:
            cost = float(n_workers * (win[h] @ e))
            if cost < best[0]:
                y = [0] * inst.num_servers
                y[h] = n_workers
                best = (cost, y, [0] * inst.num_servers)
    return best


def ramincost2_fixed(
    inst: ElasticInstance, m: int, n_workers: int, win: np.ndarray, room: np.ndarray
) -> Placement:
    """Algorithm 7, lines 7-18: Phi' workers from the cheapest server on (N^ = Phi'; the text
    prints N^ = d^, read as a typo)."""
    e = np.array(inst.worker_types[m].demand)
    omega = win @ e
    y = [0] * inst.num_servers
    left = n_workers
    for h in np.argsort(omega, kind="stable").tolist():
        y[h] = min(_fit(room[h], e), left)
        left -= y[h]
    if left > 0:
        return (math.inf, [], [])
    return (float(np.array(y) @ omega), y, [0] * inst.num_servers)


#: One algorithm alone: name -> (architecture, q). Algorithm 4 is A_mincost1 (PS, q = 0),
#: 5 A_mincost2 (PS, q = 1), 6 A_RAmincost1 (Ring-AllReduce, q = 1), 7 A_RAmincost2 (q = 0).
ALGORITHMS = {
    "a-mincost1": ("ps", False),
    "a-mincost2": ("ps", True),
    "a-ramincost1": ("ring", True),
    "a-ramincost2": ("ring", False),
}


def _shapes(
    inst: ElasticInstance, j: int, only_q: bool | None = None
) -> list[tuple[int, int, int, bool]]:
    """(m, p, N, q) in the algorithms' loop order (``only_q``: one algorithm's q alone)."""
    return [
        (m, p, n, q)
        for q in ((False, True) if only_q is None else (only_q,))
        for m in range(len(inst.worker_types))
        for p in inst.ps_choices()
        for n in range(inst.jobs[j].chunks, 0, -1)
    ]


def fixed_mincost(
    inst: ElasticInstance,
    m: int,
    p: int,
    n: int,
    q: bool,
    win: np.ndarray,
    room: np.ndarray,
    skip_g_n: bool = False,
) -> Placement:
    """The algorithm of the scenario (PS or Ring-AllReduce, colocated or not) for fixed m', p',
    n workers and q: A_mincost2, A_mincost1, A_RAmincost1 or A_RAmincost2."""
    if inst.is_ps and q:
        return mincost2_fixed(inst, m, p, n, win, room)
    if inst.is_ps:
        return mincost1_fixed(inst, m, p, n, win, room, skip_g_n)
    return (ramincost1_fixed if q else ramincost2_fixed)(inst, m, n, win, room)


def paper_mincost(
    inst: ElasticInstance,
    j: int,
    prices: np.ndarray,
    free: np.ndarray,
    window: tuple[int, int],
    skip_g_n: bool = False,
    only_q: bool | None = None,
) -> Priced:
    """The cheaper of the two algorithms of the architecture over every (m', p', L, t^-) with
    arrival and window respected; the first minimum found is kept (strict improvement).
    ``skip_g_n``: Algorithm 4 without the g = N iteration of its lines 15-19
    (:func:`mincost1_fixed`);
    ``only_q``: only the algorithm of that colocation (:data:`ALGORITHMS`)."""
    best = Priced(math.inf, None, 0)
    lo = max(window[0], inst.jobs[j].arrival)
    for m, p, n, q in _shapes(inst, j, only_q):
        d = duration(inst, j, m, p if inst.is_ps else None, n, q)
        for t in range(lo, window[1] - d + 1):
            win, room = _window(prices, free, t, d)
            cost, y, s = fixed_mincost(inst, m, p, n, q, win, room, skip_g_n)
            if cost < best.cost:
                u = np.outer(np.array(y, dtype=float), np.array(inst.worker_types[m].demand))
                if inst.is_ps:
                    u += np.outer(np.array(s, dtype=float), np.array(inst.ps_types[p].demand))
                best = Priced(cost, Config(j, m, p, tuple(y), tuple(s), d, u), t)
    return best
