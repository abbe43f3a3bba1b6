"""Exact pricing: the cheapest schedule of one job under unit resource prices.

Zhou et al., problems (12) (parameter server) and (20) (Ring-AllReduce): given prices
Y[t, h, r] >= 0 (the duals delta_h^r(t) of (9)/(18)) and free capacities, find the schedule l of
job j minimising ``w_j c_l + sum_{t in T(l)} sum_h sum_r Y[t, h, r] f_jh^r(l)`` (the completion
term makes it the reduced cost of the minimization ILP; pass ``weight=0`` for (12) itself).

Why it is exact. Fix the worker type m, the PS type p, the worker count n, whether the job is
colocated (q) and hence its duration d (eq. 1/14 and (2f)), and the start t. Then

- q = 1: all n workers and one PS on one server h: try every h;
- q = 0 (PS): the PSs sit on one server h_ps (a wider PS set is dominated, see
  :mod:`.enumerate`) with g < n of the workers; the other n - g workers cost
  sum_h alpha_h y_h with alpha_h = sum_{t, r} Y e_m^r and 0 <= y_h <= cap_h: a continuous
  knapsack with unit items, solved exactly by filling the cheapest servers first. Every
  (h_ps, g) is tried;
- q = 0 (Ring-AllReduce): the n workers fill the cheapest servers first.

A q = 0 placement that lands on one server is still feasible (it is slower than it needs to
be), so the minimum over these candidates is the minimum over Gamma_j.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from dlsched.models.elastic.enumerate import Config, ps_count
from dlsched.models.elastic.instance import ElasticInstance, duration

#: Costs this close are ties (broken by earlier completion).
TIE = 1e-12


@dataclass(frozen=True)
class Shape:
    """What is fixed while pricing: job, worker type, PS type, workers, duration, first
    start."""

    j: int
    m: int
    p: int
    n: int
    d: int
    first: int


@dataclass(frozen=True)
class Priced:
    """The cheapest schedule found: its priced cost and the schedule (config + start)."""

    cost: float
    config: Config | None
    start: int


class Pricer:
    """Prices Y [T, H, R] and free capacities [T, H, R] of an instance, with window sums
    cached per duration."""

    def __init__(
        self,
        inst: ElasticInstance,
        prices: np.ndarray,
        free: np.ndarray | None = None,
        window: tuple[int, int] | None = None,
    ):
        """``window`` (lo, hi): only schedules with lo <= start and end <= hi (default: the
        whole horizon); arrivals always hold."""
        self.inst = inst
        self.lo, self.hi = window if window is not None else (0, int(prices.shape[0]))
        cap = np.array([s.capacity for s in inst.servers], dtype=float)
        self.free = np.broadcast_to(cap, prices.shape) if free is None else free
        self.prefix = np.concatenate([np.zeros((1, *prices.shape[1:])), prices.cumsum(axis=0)])
        self._win: dict[int, np.ndarray] = {}
        self._room: dict[int, np.ndarray] = {}

    def window(self, d: int) -> np.ndarray:
        """[t, h, r]: the sum of prices over slots t .. t+d-1, for every start t."""
        if d not in self._win:
            self._win[d] = self.prefix[d:] - self.prefix[:-d]
        return self._win[d]

    def room(self, d: int) -> np.ndarray:
        """[t, h, r]: the least free capacity over slots t .. t+d-1."""
        if d not in self._room:
            self._room[d] = sliding_window_view(self.free, d, axis=0).min(axis=-1)
        return self._room[d]


def _caps(room: np.ndarray, demand: np.ndarray, limit: int) -> np.ndarray:
    """[t, h]: most units of ``demand`` that fit in ``room`` [t, h, r] (at most ``limit``)."""
    pos = demand > 0
    if not pos.any():
        return np.full(room.shape[:2], limit)
    fit = np.floor(room[:, :, pos] / demand[pos] + 1e-9).min(axis=2)
    return np.clip(fit, 0, limit).astype(int)


def _fill_costs(alpha: np.ndarray, caps: np.ndarray, most: int) -> np.ndarray:
    """[t, k]: cheapest cost of k = 0..most unit items over servers of unit cost alpha [t, h]
    and capacity caps [t, h] (inf when k do not fit)."""
    order = np.argsort(alpha, axis=1, kind="stable")
    a = np.take_along_axis(alpha, order, axis=1)
    c = np.take_along_axis(caps, order, axis=1)
    cum_c = np.concatenate([np.zeros((len(a), 1)), c.cumsum(axis=1)], axis=1)
    cum_v = np.concatenate([np.zeros((len(a), 1)), (a * c).cumsum(axis=1)], axis=1)
    out = np.full((len(a), most + 1), np.inf)
    rows = np.arange(len(a))
    for k in range(most + 1):
        idx = np.minimum((cum_c[:, 1:] < k).sum(axis=1), a.shape[1] - 1)
        val = cum_v[rows, idx] + (k - cum_c[rows, idx]) * a[rows, idx]
        out[:, k] = np.where(cum_c[:, -1] >= k, val, np.inf)
    return out


def _fill(alpha: np.ndarray, caps: np.ndarray, k: int) -> list[int]:
    """The greedy placement of k unit items behind :func:`_fill_costs` (one start)."""
    y = [0] * len(alpha)
    for h in np.argsort(alpha, kind="stable").tolist():
        y[h] = int(min(caps[h], k))
        k -= y[h]
    return y


def price_job(pr: Pricer, j: int, weight: float | None = None) -> Priced:
    """The cheapest schedule of job j (see the module docstring); cost inf if none fits.

    Shapes are visited by duration; one is skipped when its least possible cost, the
    completion term w (t_first + d) with every price at zero, cannot beat the best found
    (prices are non-negative), which leaves the minimum and its tie-break unchanged.
    """
    inst = pr.inst
    w = inst.jobs[j].weight if weight is None else weight
    first = max(inst.jobs[j].arrival, pr.lo)
    shapes = []
    for m in range(len(inst.worker_types)):
        for p in inst.ps_choices():
            for n in range(1, inst.jobs[j].chunks + 1):
                for q in (True, False):
                    d = duration(inst, j, m, p if inst.is_ps else None, n, q)
                    shapes.append((d, m, p, n, q))
    shapes.sort(key=lambda x: x[0])
    best = Priced(math.inf, None, 0)
    for d, m, p, n, q in shapes:
        if best.config is not None and not _may_beat(w * (first + d), first + d, best):
            continue
        cand = price_shape(pr, j, m, p, n, q, w)
        if _better(cand, best):
            best = cand
    return best


def _may_beat(least: float, earliest_end: int, best: Priced) -> bool:
    """Whether a shape costing at least ``least`` and ending no earlier than
    ``earliest_end`` can beat ``best`` under :func:`_better`."""
    assert best.config is not None
    if least < best.cost - TIE:
        return True
    return least <= best.cost + TIE and earliest_end < best.start + best.config.duration


def _better(a: Priced, b: Priced) -> bool:
    """Cheaper, or as cheap (within 1e-12) and completing earlier."""
    if a.config is None:
        return False
    if b.config is None or a.cost < b.cost - TIE:
        return True
    return a.cost <= b.cost + TIE and a.start + a.config.duration < b.start + b.config.duration


def price_shape(pr: Pricer, j: int, m: int, p: int, n: int, q: bool, w: float) -> Priced:
    """Cheapest schedule with worker type m, PS type p, n workers and colocation q."""
    inst = pr.inst
    d = duration(inst, j, m, p if inst.is_ps else None, n, q)
    first = max(inst.jobs[j].arrival, pr.lo)
    if first + d > pr.hi:
        return Priced(math.inf, None, 0)
    win, room = pr.window(d)[first : pr.hi - d + 1], pr.room(d)[first : pr.hi - d + 1]
    e = np.array(inst.worker_types[m].demand)
    alpha = win @ e  # [t, h]
    base = w * (np.arange(first, first + len(win)) + d)
    if inst.is_ps:
        z = np.array(inst.ps_types[p].demand)
        shape = _ps_colocated if q else _ps_spread
        return shape(pr, Shape(j, m, p, n, d, first), alpha, win @ z, room, base)
    ring = _ring_colocated if q else _ring_spread
    return ring(pr, Shape(j, m, 0, n, d, first), alpha, None, room, base)


def _best(cost: np.ndarray, first: int) -> tuple[float, int, tuple[int, ...]]:
    """Minimum of cost [t, ...] and its index (t absolute)."""
    k = np.unravel_index(int(np.argmin(cost)), cost.shape)
    return float(cost[k]), first + int(k[0]), tuple(int(x) for x in k[1:])


def _config(pr: Pricer, sh: Shape, y: list[int], s: list[int]) -> Config:
    inst = pr.inst
    u = np.outer(np.array(y, dtype=float), np.array(inst.worker_types[sh.m].demand))
    if inst.is_ps:
        u += np.outer(np.array(s, dtype=float), np.array(inst.ps_types[sh.p].demand))
    return Config(sh.j, sh.m, sh.p, tuple(y), tuple(s), sh.d, u)


Arr = np.ndarray


def _ps_colocated(
    pr: Pricer, sh: Shape, alpha: Arr, beta: Arr | None, room: Arr, base: Arr
) -> Priced:
    inst = pr.inst
    assert beta is not None
    need = sh.n * np.array(inst.worker_types[sh.m].demand) + np.array(inst.ps_types[sh.p].demand)
    fits = (room >= need - 1e-9).all(axis=2)  # [t, h]
    cost = np.where(fits, base[:, None] + sh.n * alpha + beta, np.inf)
    val, t, (h,) = _best(cost, sh.first)
    if not math.isfinite(val):
        return Priced(math.inf, None, 0)
    y, s = [0] * inst.num_servers, [0] * inst.num_servers
    y[h], s[h] = sh.n, 1
    return Priced(val, _config(pr, sh, y, s), t)


def _fill_excluding(alpha: np.ndarray, caps: np.ndarray, most: int) -> np.ndarray:
    """[t, h, k]: cheapest cost of k = 0..most unit items over every server but h.

    With the servers in greedy order, let P_h be the capacity before h: the cheapest k <= P_h
    items never reach h; for k > P_h, the cheapest k + cap_h items over all servers take all
    of h, so removing h's cap_h items leaves the cheapest k without h.
    """
    full = _fill_costs(alpha, caps, 2 * most)  # [t, k]; caps <= most
    order = np.argsort(alpha, axis=1, kind="stable")
    c_sorted = np.take_along_axis(caps, order, axis=1)
    before = np.empty_like(caps)
    np.put_along_axis(before, order, c_sorted.cumsum(axis=1) - c_sorted, axis=1)
    k = np.arange(most + 1)
    idx = k[None, None, :] + caps[:, :, None]
    shifted = np.take_along_axis(
        np.broadcast_to(full[:, None, :], (*caps.shape, full.shape[1])), idx, axis=2
    )
    with np.errstate(invalid="ignore"):
        rest = shifted - (caps * alpha)[:, :, None]
    return np.where(k[None, None, :] <= before[:, :, None], full[:, None, : most + 1], rest)


def _ps_spread(pr: Pricer, sh: Shape, alpha: Arr, beta: Arr | None, room: Arr, base: Arr) -> Priced:
    """PSs on server h with g < n workers, the other n - g workers cheapest-first elsewhere:
    every (t, h, g) at once."""
    inst = pr.inst
    assert beta is not None
    e = np.array(inst.worker_types[sh.m].demand)
    z = np.array(inst.ps_types[sh.p].demand)
    caps = _caps(room, e, sh.n)
    g = np.arange(sh.n)
    s = np.array([ps_count(inst, sh.m, sh.p, sh.n - int(k)) for k in g])
    need = g[:, None] * e + s[:, None] * z  # [g, r]
    ok = (room[:, :, None, :] >= need[None, None] - 1e-9).all(axis=3)  # [t, h, g]
    fill = _fill_excluding(alpha, caps, sh.n)[:, :, sh.n - g]  # [t, h, g]
    with np.errstate(invalid="ignore"):
        cost = base[:, None, None] + g * alpha[:, :, None] + s * beta[:, :, None] + fill
    cost = np.where(ok & np.isfinite(fill), cost, np.inf)
    val, t, (h, gg) = _best(cost, sh.first)
    if not math.isfinite(val):
        return Priced(math.inf, None, 0)
    others = caps[t - sh.first].copy()
    others[h] = 0
    y = _fill(alpha[t - sh.first], others, sh.n - gg)
    y[h] = gg
    ps = [0] * inst.num_servers
    ps[h] = int(s[gg])
    return Priced(val, _config(pr, sh, y, ps), t)


def _ring_colocated(
    pr: Pricer, sh: Shape, alpha: Arr, _: Arr | None, room: Arr, base: Arr
) -> Priced:
    inst = pr.inst
    fits = _caps(room, np.array(inst.worker_types[sh.m].demand), sh.n) >= sh.n
    cost = np.where(fits, base[:, None] + sh.n * alpha, np.inf)
    val, t, (h,) = _best(cost, sh.first)
    if not math.isfinite(val):
        return Priced(math.inf, None, 0)
    y = [0] * inst.num_servers
    y[h] = sh.n
    return Priced(val, _config(pr, sh, y, [0] * inst.num_servers), t)


def _ring_spread(pr: Pricer, sh: Shape, alpha: Arr, _: Arr | None, room: Arr, base: Arr) -> Priced:
    inst = pr.inst
    caps = _caps(room, np.array(inst.worker_types[sh.m].demand), sh.n)
    cost = base + _fill_costs(alpha, caps, sh.n)[:, sh.n]
    val, t, _idx = _best(cost, sh.first)
    if not math.isfinite(val):
        return Priced(math.inf, None, 0)
    y = _fill(alpha[t - sh.first], caps[t - sh.first], sh.n)
    return Priced(val, _config(pr, sh, y, [0] * inst.num_servers), t)
