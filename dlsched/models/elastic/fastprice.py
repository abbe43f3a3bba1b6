"""The paper's pricing oracle made fast: Algorithms 4-7 vectorised over starts and servers.

Zhou et al., Algorithm 3 lines 3-7 price job j by looping over worker type m', PS type p',
duration L and start t^- and calling A_mincost1/2 (PS) or A_RAmincost1/2 (Ring-AllReduce)
for each. :mod:`.mincost` runs those loops as written (one start, one server at a time); this
module computes the same algorithms for every start t and every server h at once with numpy,
and visits far fewer (m', p', N, q) shapes:

- *dominated worker counts*: for fixed (m', p', q) a count N whose duration a smaller count
  already reaches is skipped (more workers, same slots);
- *counts that cannot fit*: q = 1 needs N workers and one PS on one server, q = 0 needs N
  workers somewhere in the cluster (largest server / total capacity on the empty cluster);
- *window*: only shapes whose duration fits in the window [max(a_j, lo), hi) are visited, and
  every array is cut to that window;
- *bounds*: a shape is skipped when its least possible cost, w (t_first + L) plus N times the
  cheapest worker price of type m' over the window, cannot beat the best found or the
  caller's ``limit`` (A_maxweight only needs schedules cheaper than w_j, line 9);
- *caches*: window sums, least free capacity, per-type worker prices and capacities are kept
  between calls for as long as the price and free-capacity arrays are the same objects
  (:class:`.algorithms.Ledger` replaces them on every commit).

Ties: cheaper first, then earlier completion (as :mod:`.pricing`); the as-written loops keep
the first minimum of their loop order instead, so two schedules of equal cost may differ.

What it computes per shape is the algorithm of the paper, so where Theorems 1/6 hold
(Algorithms 5, 6, 7) it equals the exact minimization of :mod:`.pricing`; Algorithm 4
(A_mincost1) is not always optimal (docs/errata.md, elastic/theorem1-counterexample).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from dlsched.models.elastic.enumerate import Config, ps_count
from dlsched.models.elastic.instance import ElasticInstance, durations
from dlsched.models.elastic.pricing import Priced

Arr = np.ndarray
#: Slack of capacity comparisons (as :mod:`.pricing`).
EPS = 1e-9
#: Costs this close are ties (broken by earlier completion).
TIE = 1e-12


class Shape(NamedTuple):
    """What is fixed while pricing one job: worker type, PS type, workers, colocation,
    duration."""

    m: int
    p: int
    n: int
    q: bool
    d: int


def _most_per_server(cap: Arr, demand: Arr) -> Arr:
    """[h]: most copies of ``demand`` each server holds on the empty cluster."""
    pos = demand > 0
    if not pos.any():
        return np.full(len(cap), 10**9)
    return np.floor(cap[:, pos] / demand[pos] + EPS).min(axis=1).astype(int)


def _undominated(rows: Arr) -> list[int]:
    """Indices of the rows no other row dominates (<= everywhere, < somewhere; of equal rows
    the first is kept)."""
    keep = []
    for i in range(len(rows)):
        le = (rows <= rows[i] + 1e-12).all(axis=1)
        lt = le & (rows < rows[i] - 1e-12).any(axis=1)
        twin = le & ~lt
        twin[i:] = False
        if not lt.any() and not twin.any():
            keep.append(i)
    return keep


def _types(inst: ElasticInstance, j: int, q: bool) -> tuple[list[int], list[int]]:
    """Worker and PS types of job j not dominated for colocation q: another type needs no
    more of any resource, is no slower (eq. 1/14) and, off one server, needs no more PSs
    (2i) -- any placement of the dominated type is then matched at no higher price."""
    job = inst.jobs[j]
    wt = inst.worker_types
    e = np.array([t.demand for t in wt])
    v = np.array(job.minibatch_time)[:, None]
    inv_b = 2 * job.gradient_mb / np.array([t.bandwidth for t in wt])[:, None]
    if q:
        m_rows = np.hstack([e, v])
    elif inst.is_ps:  # faster (v + 2 pi / b) and fewer PSs (smaller b)
        m_rows = np.hstack([e, v + inv_b, -inv_b])
    else:  # faster for every count: smaller v, larger b
        m_rows = np.hstack([e, v, inv_b])
    if not inst.is_ps:
        return _undominated(m_rows), [0]
    pt = inst.ps_types
    z = np.array([t.demand for t in pt])
    u = np.array(job.ps_update_time)[:, None]
    big_b = np.array([[-t.bandwidth] for t in pt])
    p_rows = np.hstack([z, u]) if q else np.hstack([z, u, big_b])
    return _undominated(m_rows), _undominated(p_rows)


def _spread_fits(inst: ElasticInstance, cap: Arr, m: int, p: int, ns: Arr) -> Arr:
    """[n]: whether N = ns workers fit off one server on the empty cluster: some server h
    holds g < N workers and ps_count(N - g) PSs while the others hold the N - g left."""
    servers = np.unique(cap, axis=0)  # the test depends on the capacity alone
    e, z = np.array(inst.worker_types[m].demand), np.array(inst.ps_types[p].demand)
    each = _most_per_server(cap, e)
    total = int(each.sum())
    g = np.arange(int(ns.max()))
    ratio = inst.worker_types[m].bandwidth / inst.ps_types[p].bandwidth
    remote = ns[:, None] - g[None, :]  # [n, g]
    s = np.maximum(1, np.ceil(remote * ratio * (1 - 1e-12)))
    need = g[None, :, None] * e + s[:, :, None] * z  # [n, g, r]
    fits = (servers[:, None, None, :] >= need[None] - EPS).all(axis=3)  # [u, n, g]
    mine = _most_per_server(servers, e)[:, None, None]
    ok = fits & (remote[None] >= 1) & (g[None, None, :] <= mine) & (total - mine >= remote[None])
    return ok.any(axis=(0, 2))  # type: ignore[no-any-return]


class Static:
    """What the shapes of every job share: per worker type the most workers the empty
    cluster holds, per (worker, PS) type the most on one server beside one PS, and which
    counts fit off one server (:func:`_spread_fits`)."""

    def __init__(self, inst: ElasticInstance):
        cap = np.array([s.capacity for s in inst.servers], dtype=float)
        ps = inst.ps_choices()
        n_w = len(inst.worker_types)
        self.total = np.zeros((n_w, 1), dtype=int)
        self.alone = np.zeros((n_w, len(ps)), dtype=int)
        most = max(j.chunks for j in inst.jobs)
        self.spread = np.ones((n_w, len(ps), most), dtype=bool)
        for m in range(n_w):
            e = np.array(inst.worker_types[m].demand)
            self.total[m] = _most_per_server(cap, e).sum()
            for p in ps:
                z = np.array(inst.ps_types[p].demand) if inst.is_ps else np.zeros_like(e)
                fits_ps = (cap - z >= -EPS).all(axis=1)
                self.alone[m, p] = np.where(fits_ps, _most_per_server(cap - z, e), 0).max()
                if inst.is_ps:
                    self.spread[m, p] = _spread_fits(inst, cap, m, p, np.arange(1, most + 1))


def job_shapes(inst: ElasticInstance, j: int, static: Static | None = None) -> Arr:
    """The shapes of job j worth visiting, by duration (see the module docstring): rows
    (m, p, N, q, d) of an integer array. ``static``: :class:`Static` of the instance."""
    st = Static(inst) if static is None else static
    chunks = inst.jobs[j].chunks
    ns = np.arange(1, chunks + 1)
    rows = []
    for q in (False, True):
        ms, ps = (np.array(x) for x in _types(inst, j, q))
        ds = durations(inst, j, ms[:, None, None], ps[None, :, None], ns, q)  # [m, p, n]
        big = np.full((*ds.shape[:2], 1), np.iinfo(int).max)
        prev = np.minimum.accumulate(np.concatenate([big, ds[:, :, :-1]], axis=2), axis=2)
        top = (st.alone[np.ix_(ms, ps)] if q else st.total[ms][:, :1])[:, :, None]
        keep = (ds < prev) & (ns <= top)  # fits; shorter than any smaller count
        if inst.is_ps and not q:
            keep &= st.spread[np.ix_(ms, ps)][:, :, :chunks]
        i, k, n = np.nonzero(keep)
        rows.append(np.stack([ms[i], ps[k], n + 1, np.full(len(i), int(q)), ds[i, k, n]], 1))
    arr = np.concatenate(rows)
    arr = arr[np.argsort(arr[:, 4], kind="stable")]
    return arr


def consumption_floor(inst: ElasticInstance, j: int) -> float:
    """A lower bound on the least total consumption of job j: d (N e + z) summed over the
    resources for its cheapest shape (one PS at least under PS; inf when no shape fits)."""
    arr = all_shapes(inst)[j]
    if not len(arr):
        return math.inf
    e = np.array([t.demand for t in inst.worker_types]).sum(axis=1)
    z = np.array([t.demand for t in inst.ps_types]).sum(axis=1) if inst.is_ps else np.zeros(1)
    return float((arr[:, 4] * (arr[:, 2] * e[arr[:, 0]] + z[arr[:, 1]])).min())


_SHAPES: dict[int, tuple[ElasticInstance, list[Arr]]] = {}


def all_shapes(inst: ElasticInstance) -> list[Arr]:
    """:func:`job_shapes` of every job, kept for the last few instances asked about."""
    got = _SHAPES.get(id(inst))
    if got is None or got[0] is not inst:
        if len(_SHAPES) >= 4:
            _SHAPES.pop(next(iter(_SHAPES)))
        static = Static(inst)
        got = (inst, [job_shapes(inst, j, static) for j in range(inst.num_jobs)])
        _SHAPES[id(inst)] = got
    return got[1]


class Window:
    """Everything derived from one (prices, free, [lo, hi)) triple, computed on demand."""

    def __init__(
        self,
        inst: ElasticInstance,
        prices: Arr,
        free: Arr,
        lo: int,
        hi: int,
        stationary: bool = False,
    ):
        """``stationary``: prices and free capacity do not change over time, so that the
        first start is as good as any: only it is looked at."""
        self.inst, self.lo, self.hi = inst, lo, hi
        self.stationary = stationary
        self.free = free[lo : lo + 1] if stationary else free[lo:hi]
        pr = prices[lo : lo + 1] if stationary else prices[lo:hi]
        self.prefix = np.concatenate([np.zeros((1, *pr.shape[1:])), pr.cumsum(axis=0)])
        self.free_of_charge = not self.prefix[-1].any()  # prices >= 0: all zero
        self._room: list[Arr] = [self.free]  # room[d - 1]
        self._cache: dict[tuple[Any, ...], Any] = {}
        self.most = max(j.chunks for j in inst.jobs)

    def win(self, d: int) -> Arr:
        """[t, h, r]: prices summed over slots t .. t+d-1 (t relative to lo)."""
        if self.stationary:
            return d * self.prefix[1:2]
        return self.prefix[d:] - self.prefix[:-d]

    def room(self, d: int) -> Arr:
        """[t, h, r]: least free capacity over slots t .. t+d-1."""
        if self.stationary:
            return self.free
        while len(self._room) < d:
            prev = self._room[-1]
            k = len(self._room)
            self._room.append(np.minimum(prev[:-1], self.free[k:]))
        return self._room[d - 1]

    def worker(self, m: int, d: int) -> tuple[Arr, Arr, float]:
        """(alpha [t, h], caps [t, h], least alpha where a worker fits) for type m."""
        key = ("w", m, d)
        if key not in self._cache:
            e = np.array(self.inst.worker_types[m].demand)
            alpha = self.win(d) @ e
            caps = _caps(self.room(d), e, self.most)
            fits = caps > 0
            least = float(alpha[fits].min()) if fits.any() else math.inf
            self._cache[key] = (alpha, caps, least)
        return self._cache[key]  # type: ignore[no-any-return]

    def ps_least(self, p: int, d: int) -> float:
        """The least price of one type-p PS at any start and server (every schedule under
        PS has one at least)."""
        key = ("pl", p, d)
        if key not in self._cache:
            beta = self.ps(p, d)
            self._cache[key] = float(beta.min()) if beta.size else math.inf
        return self._cache[key]  # type: ignore[no-any-return]

    def starts(self, d: int) -> Arr:
        """[t]: the absolute start of every row of the d-slot arrays."""
        return self.lo + np.arange(len(self.room(d)))

    def fitting(self, m: int, d: int, n: int, q: bool) -> Arr:
        """Rows (starts) where n type-m workers fit on one server (q) or in the cluster."""
        key = ("f", m, d, q)
        if key not in self._cache:
            caps = self.worker(m, d)[1]
            self._cache[key] = caps.max(axis=1) if q else caps.sum(axis=1)
        return np.flatnonzero(self._cache[key] >= n)

    def most_on_one(self, m: int, d: int) -> int:
        """Most type-m workers one server holds at any start."""
        key = ("o", m, d)
        if key not in self._cache:
            caps = self.worker(m, d)[1]
            self._cache[key] = int(caps.max()) if caps.size else 0
        return self._cache[key]  # type: ignore[no-any-return]

    def ps(self, p: int, d: int) -> Arr:
        """beta [t, h]: the price of one type-p PS."""
        key = ("p", p, d)
        if key not in self._cache:
            self._cache[key] = self.win(d) @ np.array(self.inst.ps_types[p].demand)
        return self._cache[key]  # type: ignore[no-any-return]

    def capacity_total(self, m: int, d: int) -> int:
        """Most type-m workers the cluster holds at any one start."""
        key = ("t", m, d)
        if key not in self._cache:
            caps = self.worker(m, d)[1]
            self._cache[key] = int(caps.sum(axis=1).max()) if caps.size else 0
        return self._cache[key]  # type: ignore[no-any-return]


def _caps(room: Arr, demand: Arr, limit: int) -> Arr:
    """[t, h]: most units of ``demand`` that fit in ``room`` [t, h, r] (at most ``limit``)."""
    pos = demand > 0
    if not pos.any():
        return np.full(room.shape[:2], limit)
    fit = np.floor(room[:, :, pos] / demand[pos] + EPS).min(axis=2)
    return np.clip(fit, 0, limit).astype(int)


def fill_table(alpha: Arr, caps: Arr, most: int) -> Arr:
    """[t, k]: cheapest cost of k = 0..most unit items over servers of unit cost alpha [t, h]
    and capacity caps [t, h] (inf when k do not fit): the k cheapest units, all rows at once."""
    rows, h_count = alpha.shape
    out = np.full((rows, most + 1), np.inf)
    out[:, 0] = 0.0
    if rows == 0 or most == 0:
        return out
    order = np.argsort(alpha, axis=1, kind="stable")
    a = np.take_along_axis(alpha, order, axis=1)
    cum = np.take_along_axis(caps, order, axis=1).cumsum(axis=1)
    off = int(cum[:, -1].max()) + most + 1
    base = np.arange(rows)[:, None] * off
    flat = (cum + base).ravel()
    units = np.arange(most)[None, :] + base
    idx = np.searchsorted(flat, units, side="right") - np.arange(rows)[:, None] * h_count
    unit = np.take_along_axis(a, np.minimum(idx, h_count - 1), axis=1)
    unit = np.where(np.arange(most)[None, :] < cum[:, -1:], unit, np.inf)
    out[:, 1:] = unit.cumsum(axis=1)
    return out


class Excluding:
    """Cheapest cost of k unit items over every server but h, for every start t and server h
    (caps <= most): :meth:`__call__` (k [t, h] or one k) -> [t, h].

    With the servers in cheapest-first order, let P_h be the capacity before h: the cheapest
    k <= P_h items never reach h; for k > P_h, the cheapest k + cap_h items over all servers
    take all of h, so removing h's cap_h items leaves the cheapest k without h.
    """

    def __init__(self, alpha: Arr, caps: Arr, most: int):
        self.alpha, self.caps = alpha, caps
        self.full = fill_table(alpha, caps, most + int(caps.max(initial=0)))
        order = np.argsort(alpha, axis=1, kind="stable")
        c_sorted = np.take_along_axis(caps, order, axis=1)
        self.before = np.empty_like(caps)
        np.put_along_axis(self.before, order, c_sorted.cumsum(axis=1) - c_sorted, axis=1)
        self.order = order

    def __call__(self, k: Arr | int) -> Arr:
        """k [t, h] (or [t, h, g], or one k) -> the costs, shaped like k."""
        k = np.asarray(k)
        extra = k.ndim == 3
        k = np.broadcast_to(k, k.shape if extra else self.caps.shape)
        caps = self.caps[:, :, None] if extra else self.caps
        rows = np.arange(len(self.full)).reshape((-1, 1, 1) if extra else (-1, 1))
        plain = self.full[rows, k]
        shifted = self.full[rows, k + caps]
        with np.errstate(invalid="ignore"):
            rest = shifted - caps * (self.alpha[:, :, None] if extra else self.alpha)
        before = self.before[:, :, None] if extra else self.before
        return np.where(k <= before, plain, rest)


def fill_excluding(alpha: Arr, caps: Arr, k: Arr) -> Arr:
    """[t, h]: cheapest cost of k[t, h] unit items over every server but h."""
    return Excluding(alpha, caps, int(k.max(initial=0)))(k)


def _fill(alpha: Arr, caps: Arr, k: int) -> list[int]:
    """The cheapest-first placement of k unit items (one start)."""
    y = [0] * len(alpha)
    for h in np.argsort(alpha, kind="stable").tolist():
        y[h] = int(min(caps[h], k))
        k -= y[h]
    return y


# --- the four algorithms, every start and server at once -------------------------------------


def _beside_ps(
    alpha: Arr, caps: Arr, n: int, h: int, g: int, s: int
) -> tuple[list[int], list[int]]:
    """Workers and PSs of a spread PS schedule: ``s`` PSs and ``g`` workers on server ``h``, the
    other ``n - g`` workers cheapest first on the other servers."""
    others = caps.copy()
    others[h] = 0
    y = _fill(alpha, others, n - g)
    y[h] = g
    ps = [0] * len(caps)
    ps[h] = s
    return y, ps


def ps_colocated(w: Window, sh: Shape) -> tuple[Arr, Any]:
    """Algorithm 5 (A_mincost2): N workers and one PS on one server h."""
    inst = w.inst
    alpha, _, _ = w.worker(sh.m, sh.d)
    e, z = np.array(inst.worker_types[sh.m].demand), np.array(inst.ps_types[sh.p].demand)
    fits = (w.room(sh.d) >= sh.n * e + z - EPS).all(axis=2)
    cost = np.where(fits, sh.n * alpha + w.ps(sh.p, sh.d), np.inf)

    def place(t: int, h: int) -> tuple[list[int], list[int]]:
        y, s = [0] * inst.num_servers, [0] * inst.num_servers
        y[h], s[h] = sh.n, 1
        return y, s

    return cost, place


def ring_colocated(w: Window, sh: Shape) -> tuple[Arr, Any]:
    """Algorithm 6 (A_RAmincost1): N workers on one server h."""
    alpha, caps, _ = w.worker(sh.m, sh.d)
    cost = np.where(caps >= sh.n, sh.n * alpha, np.inf)

    def place(t: int, h: int) -> tuple[list[int], list[int]]:
        y = [0] * w.inst.num_servers
        y[h] = sh.n
        return y, [0] * w.inst.num_servers

    return cost, place


def ring_spread(w: Window, sh: Shape) -> tuple[Arr, Any]:
    """Algorithm 7 (A_RAmincost2): N workers from the cheapest server on (one column)."""
    alpha, caps, _ = w.worker(sh.m, sh.d)
    caps = np.minimum(caps, sh.n)
    cost = fill_table(alpha, caps, sh.n)[:, sh.n : sh.n + 1]

    def place(t: int, h: int) -> tuple[list[int], list[int]]:
        return _fill(alpha[t], caps[t], sh.n), [0] * w.inst.num_servers

    return cost, place


def _spread_inputs(w: Window, sh: Shape) -> tuple[Arr, Arr, Arr, Arr, Arr, Arr]:
    """What both q = 0 PS pricings start from: alpha [t, h] (one worker's price), caps [t, h]
    (workers that fit, at most N), beta [t, h] (one PS's price), room [t, h, r] and the worker
    and PS demands e and z."""
    alpha, caps, _ = w.worker(sh.m, sh.d)
    e, z = np.array(w.inst.worker_types[sh.m].demand), np.array(w.inst.ps_types[sh.p].demand)
    return alpha, np.minimum(caps, sh.n), w.ps(sh.p, sh.d), w.room(sh.d), e, z


def ps_spread(w: Window, sh: Shape) -> tuple[Arr, Any]:
    """Algorithm 4 (A_mincost1) for every start t and PS server h (its n) at once.

    Workers go cheapest server first; at the PS server h, with y^ = min(cap_h, N - P_h) (P_h
    the capacity before h), the largest g <= y^ whose s^ = fit(room_h - g e, z) PSs satisfy
    s^ B >= (N - g) b (2i) is kept (lines 15-21), with s_h = min(s^, ceil((N - g) b / B)); the
    other N - g workers fill the other servers cheapest first. Lines 25-26: rejected when
    workers are left or s_h < 1. fit(x, z) >= k for an integer k is x >= k z, so the test of
    line 17 is room_h >= g e + need(g) z with need(g) = ceil((N - g) b / B).
    """
    inst = w.inst
    n = sh.n
    alpha, caps, beta, room, e, z = _spread_inputs(w, sh)
    b, big_b = inst.worker_types[sh.m].bandwidth, inst.ps_types[sh.p].bandwidth
    excl = Excluding(alpha, caps, n)
    before = excl.before
    y_hat = np.minimum(caps, np.maximum(n - before, 0))
    g_all = np.arange(int(y_hat.max(initial=0)) + 1)  # g <= y^
    need = np.ceil((n - g_all) * b / big_b * (1 - 1e-12)).astype(int)
    ok = (room[:, :, None, :] >= (g_all[:, None] * e + need[:, None] * z) - EPS).all(axis=3)
    ok &= g_all <= y_hat[:, :, None]
    last = len(g_all) - 1 - np.argmax(ok[:, :, ::-1], axis=2)  # the last g passing wins (l. 18)
    g_best = np.where(ok.any(axis=2), last, -1)
    s = np.where(g_best >= 0, need[np.maximum(g_best, 0)], 0)
    g_use = np.maximum(g_best, 0)
    rest = excl(n - g_use)
    with np.errstate(invalid="ignore"):
        cost = g_use * alpha + s * beta + rest
    cost = np.where((s >= 1) & np.isfinite(rest), cost, np.inf)

    def place(t: int, h: int) -> tuple[list[int], list[int]]:
        return _beside_ps(alpha[t], caps[t], n, h, int(g_use[t, h]), int(s[t, h]))

    return cost, place


def ps_spread_exact(w: Window, sh: Shape) -> tuple[Arr, Any]:
    """The exact minimum of (13) with q = 0 (as :mod:`.pricing`): PSs on server h with every
    g < N workers beside them, the other N - g workers cheapest first elsewhere."""
    inst = w.inst
    n = sh.n
    alpha, caps, beta, room, e, z = _spread_inputs(w, sh)
    g = np.arange(min(n, int(caps.max(initial=0)) + 1))  # g < N workers that fit on h
    s_of = np.array([ps_count(inst, sh.m, sh.p, n - k) for k in g.tolist()])
    ok = (room[:, :, None, :] >= (g[:, None] * e + s_of[:, None] * z) - EPS).all(axis=3)
    rest = Excluding(alpha, caps, n)(np.broadcast_to(n - g, (*caps.shape, len(g))))
    with np.errstate(invalid="ignore"):
        every = g * alpha[:, :, None] + s_of * beta[:, :, None] + rest
    every = np.where(ok & np.isfinite(rest), every, np.inf)
    g_best = np.argmin(every, axis=2)
    cost = np.take_along_axis(every, g_best[:, :, None], axis=2)[:, :, 0]

    def place(t: int, h: int) -> tuple[list[int], list[int]]:
        gg = int(g_best[t, h])
        return _beside_ps(alpha[t], caps[t], n, h, gg, ps_count(inst, sh.m, sh.p, n - gg))

    return cost, place


def _algorithm(inst: ElasticInstance, q: bool, exact: bool) -> Any:
    if inst.is_ps:
        return ps_colocated if q else (ps_spread_exact if exact else ps_spread)
    return ring_colocated if q else ring_spread


class FastOracle:
    """The oracle ``fast``: the paper's Algorithms 4-7 over every (m', p', N, q, t, h) with the
    pruning of the module docstring. Call as the other oracles, with an optional ``limit``
    (only schedules cheaper than it are of interest) and ``weight`` (completion term).

    ``exact=True`` replaces Algorithm 4 by the exact minimum over the PS server's worker count
    (:func:`ps_spread_exact`): the whole oracle is then the exact minimization (12)/(20) of
    :mod:`.pricing` (used for the earliest-completion fallbacks)."""

    def __init__(self, inst: ElasticInstance, exact: bool = False, stationary: bool = False):
        """``stationary``: every call's prices and free capacity are constant over time (the
        first start is then as good as any, and only it is looked at)."""
        self.inst, self.exact, self.stationary = inst, exact, stationary
        self.shapes = all_shapes(inst)
        self._rows: dict[int, list[list[int]]] = {}
        self._key: tuple[Any, ...] | None = None
        self._windows: dict[tuple[int, int], Window] = {}
        self.visited = 0  # shapes evaluated (for the record)

    def _window(self, prices: Arr, free: Arr, lo: int, hi: int) -> Window:
        key = (prices, free)
        if self._key is None or self._key[0] is not prices or self._key[1] is not free:
            self._key, self._windows = key, {}
        if (lo, hi) not in self._windows:
            self._windows[(lo, hi)] = Window(self.inst, prices, free, lo, hi, self.stationary)
        return self._windows[(lo, hi)]

    def __call__(
        self,
        inst: ElasticInstance,
        j: int,
        prices: Arr,
        free: Arr,
        window: tuple[int, int],
        limit: float = math.inf,
        weight: float = 0.0,
    ) -> Priced:
        first, hi = max(window[0], inst.jobs[j].arrival), min(window[1], inst.horizon)
        best = Priced(math.inf, None, 0)
        arr = self.shapes[j]
        if first >= hi or not len(arr) or arr[0, 4] > hi - first:
            return best
        if j not in self._rows:
            self._rows[j] = arr.tolist()
        w = self._window(prices, free, first, hi)
        for m, p, n, q, d in self._rows[j]:
            if d > hi - first:
                break
            least = weight * (first + d)
            if best.config is not None and not _may_beat(least, first + d, best):
                break  # shapes come by duration: no later one can beat it
            least += n * w.worker(m, d)[2] + (w.ps_least(p, d) if inst.is_ps else 0.0)
            if least >= limit or n > w.capacity_total(m, d):
                continue
            if q and n > w.most_on_one(m, d):
                continue
            if best.config is not None and not _may_beat(least, first + d, best):
                continue
            sh = Shape(m, p, n, bool(q), d)
            rows = w.fitting(m, d, n, sh.q)
            stop = _starts(best, weight, first, d)
            if stop is not None:
                rows = rows[rows < stop]
            if not len(rows):
                continue
            cand = self._evaluate_rows(w, j, sh, weight, rows)
            if cand.config is not None and _better(cand, best):
                best = cand
        return best

    def _evaluate_rows(self, w: Window, j: int, sh: Shape, weight: float, rows: Arr) -> Priced:
        """The shape at the starts ``rows``; when every price is zero and completion counts,
        the cost grows with the start, so the earliest chunk of starts with a schedule holds
        the best."""
        for chunk in _chunks(rows, weight > 0 and w.free_of_charge):
            self.visited += 1
            cand = _evaluate(Cut(w, chunk), j, sh, weight, self.exact)
            if cand.config is not None:
                return cand
        return Priced(math.inf, None, 0)


def _chunks(rows: Arr, by_time: bool) -> list[Arr]:
    """All rows at once, or (by_time) in chunks of 4, 8, 16, ... starts."""
    if not by_time:
        return [rows]
    out, k, size = [], 0, 4
    while k < len(rows):
        out.append(rows[k : k + size])
        k, size = k + size, 2 * size
    return out


def _starts(best: Priced, weight: float, first: int, d: int) -> int | None:
    """How many starts from ``first`` on can still beat ``best`` (None: all)."""
    if best.config is None:
        return None
    if weight > 0:  # w (t + d) alone must not exceed best's cost
        return max(0, math.floor((best.cost + TIE) / weight) - d - first + 1)
    if best.cost <= TIE:  # only an earlier completion at cost 0 can beat it
        return max(0, best.start + best.config.duration - d - first)
    return None


class Cut:
    """A :class:`Window` seen through some of its starts (``rows``, relative to lo)."""

    def __init__(self, w: Window, rows: Arr):
        self.w, self.rows, self.inst, self.lo = w, rows, w.inst, w.lo

    def starts(self, d: int) -> Arr:
        return self.lo + self.rows

    def worker(self, m: int, d: int) -> tuple[Arr, Arr, float]:
        alpha, caps, least = self.w.worker(m, d)
        return alpha[self.rows], caps[self.rows], least

    def ps(self, p: int, d: int) -> Arr:
        return self.w.ps(p, d)[self.rows]

    def room(self, d: int) -> Arr:
        return self.w.room(d)[self.rows]


def _evaluate(w: Any, j: int, sh: Shape, weight: float, exact: bool) -> Priced:
    cost, place = _algorithm(w.inst, sh.q, exact)(w, sh)
    starts = w.starts(sh.d)
    cost = cost + weight * (starts + sh.d)[:, None]
    k = int(np.argmin(cost))
    t, h = divmod(k, cost.shape[1])
    val = float(cost[t, h])
    if not math.isfinite(val):
        return Priced(math.inf, None, 0)
    y, s = place(t, h)
    inst = w.inst
    u = np.outer(np.array(y, dtype=float), np.array(inst.worker_types[sh.m].demand))
    if inst.is_ps:
        u += np.outer(np.array(s, dtype=float), np.array(inst.ps_types[sh.p].demand))
    return Priced(val, Config(j, sh.m, sh.p, tuple(y), tuple(s), sh.d, u), int(starts[t]))


def _may_beat(least: float, earliest_end: int, best: Priced) -> bool:
    assert best.config is not None
    if least < best.cost - TIE:
        return True
    return least <= best.cost + TIE and earliest_end < best.start + best.config.duration


def _better(a: Priced, b: Priced) -> bool:
    assert a.config is not None
    if b.config is None or a.cost < b.cost - TIE:
        return True
    return a.cost <= b.cost + TIE and a.start + a.config.duration < b.start + b.config.duration


__all__ = ["FastOracle", "Shape", "Window", "fill_excluding", "fill_table", "job_shapes"]
