"""Fast local search for R || sum w_j C_j (the single-task special case of Hare_Sched).

A schedule is an assignment job -> GPU; each GPU runs its jobs in Smith order (w / p
non-increasing) without idle time (see special.py for why that order is optimal). With integer
data (:class:`SumWC`) every cost below is an exact integer in float64.

Moves are evaluated in closed form from per-GPU prefix sums, all candidates of a kind at once
(numpy): removing job j from GPU g saves w_j (B_j + p_jg + s_jg) + p_jg A_j, with B_j the
training time of the jobs before j and A_j the weight of the jobs after it; inserting k where
Smith's rule puts it costs the same expression on the new GPU. A swap of j (on g) and k (on h)
is two removals and two insertions, each insertion corrected for the job that left.

:func:`iterated_local_search`: best-improvement relocations, then swaps when no relocation
improves, to a local optimum; then a random kick (a few relocations) and again, keeping the best
assignment, until a deadline.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dlsched.models.hare.instance import HareInstance
from dlsched.solvers.deadline import Deadline

from .scaling import scale_data


@dataclass(frozen=True)
class SumWC:
    """Integer data of R || sum w_j C_j (scaled as in :mod:`scaling`): p[j, m], s[j, m], w[j],
    the common arrival a; ``exact`` False when the times were rounded up."""

    p: np.ndarray
    s: np.ndarray
    w: np.ndarray
    a: int
    unit: int  # time_scale * weight_scale: scaled objective / unit = objective
    exact: bool

    @property
    def n(self) -> int:
        return int(self.p.shape[0])

    @property
    def m(self) -> int:
        return int(self.p.shape[1])

    def smith_order(self, m: int, jobs: np.ndarray) -> np.ndarray:
        """``jobs`` on GPU m in Smith order (w / p non-increasing, ties by index)."""
        jobs = np.asarray(jobs, dtype=np.int64)
        return jobs[np.lexsort((jobs, -self.w[jobs] / self.p[jobs, m]))]

    def gpu_cost(self, m: int, jobs: np.ndarray) -> float:
        """sum w_j C_j of ``jobs`` on GPU m in Smith order, arrival included (scaled)."""
        order = self.smith_order(m, jobs)
        c = self.a + np.cumsum(self.p[order, m]) + self.s[order, m]
        return float(np.dot(self.w[order], c))

    def cost(self, assign: np.ndarray) -> float:
        """Scaled objective of the Smith-ordered schedule of ``assign``."""
        return sum(self.gpu_cost(m, np.flatnonzero(assign == m)) for m in range(self.m))


def sum_wc_data(instance: HareInstance) -> SumWC:
    d = scale_data(instance)
    return SumWC(
        np.array(d.tc, dtype=np.int64),
        np.array(d.ts, dtype=np.int64),
        np.array(d.weight, dtype=np.int64),
        int(d.arrival[0]),
        d.time_scale * d.weight_scale,
        d.exact,
    )


def load_horizon(p: np.ndarray, s: np.ndarray) -> int:
    """Upper bound (integer units, from the arrival) on every GPU's training load in every
    optimal schedule: moving the last job j of GPU m to the end of GPU m' must not pay off, so
    L_m + s_jm <= L_m' + p_jm' + s_jm'; hence L_max <= L_min + Delta with Delta = max_j
    max_{m != m'} (p_jm' + s_jm' - s_jm), and L_min <= floor(sum_j max_m p_jm / |M|)."""
    p, s = np.asarray(p, dtype=np.int64), np.asarray(s, dtype=np.int64)
    n, M = p.shape
    total = int(p.max(axis=1).sum())
    if M == 1:
        return int(p[:, 0].sum())
    gain = (p + s)[:, None, :] - s[:, :, None]  # [j, m, m'] = p_jm' + s_jm' - s_jm
    gain[:, np.arange(M), np.arange(M)] = np.iinfo(np.int64).min
    return min(total // M + max(int(gain.max()), 0), total)


class _Gpu:
    """One GPU's jobs in Smith order with prefix sums: B (training time before), A (weight
    after), and its jobs' ratios (descending) for insertion positions."""

    def __init__(self, data: SumWC, m: int, jobs: np.ndarray) -> None:
        self.m = m
        self.jobs = data.smith_order(m, jobs)
        p = data.p[self.jobs, m]
        w = data.w[self.jobs]
        self.neg_ratio = -w / p  # ascending
        self.cum_p = np.concatenate(([0], np.cumsum(p)))
        self.cum_w = np.concatenate(([0], np.cumsum(w)))
        self.total_w = int(self.cum_w[-1])
        k = np.arange(len(self.jobs))
        self.removal = w * (self.cum_p[k] + p + data.s[self.jobs, m]) + p * (
            self.total_w - self.cum_w[k + 1]
        )

    def insertion(self, data: SumWC, jobs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(cost of inserting each of ``jobs`` alone, its position, B there, A there)."""
        m = self.m
        pos = np.searchsorted(self.neg_ratio, -data.w[jobs] / data.p[jobs, m], side="left")
        before = self.cum_p[pos]
        after = self.total_w - self.cum_w[pos]
        pj = data.p[jobs, m]
        cost = data.w[jobs] * (before + pj + data.s[jobs, m]) + pj * after
        return cost, pos, before


def _best_relocation(data: SumWC, gpus: list[_Gpu], where: np.ndarray) -> tuple[float, int, int]:
    """The best relocation (delta, job, new GPU) over all jobs and GPUs."""
    jobs = np.arange(data.n)
    saving = np.empty(data.n)
    for g in gpus:
        saving[g.jobs] = g.removal
    best = (0.0, -1, -1)
    for h in gpus:
        ins, _, _ = h.insertion(data, jobs)
        delta = ins - saving
        delta[where == h.m] = np.inf
        k = int(np.argmin(delta))
        if delta[k] < best[0]:
            best = (float(delta[k]), k, h.m)
    return best


def _swap_deltas(data: SumWC, g: _Gpu, h: _Gpu) -> np.ndarray:
    """delta[a, b] of swapping g.jobs[a] and h.jobs[b] (exact)."""
    out = np.zeros((len(g.jobs), len(h.jobs)))
    for src, dst, transpose in ((g, h, False), (h, g, True)):
        # jobs of src leave it, jobs of dst arrive on src (minus the job that left src)
        ins, pos, _ = src.insertion(data, dst.jobs)  # arrivals on src, as if nothing left
        rank = np.arange(len(src.jobs))[:, None]
        left_before = rank < pos[None, :]  # the leaving job was before the arrival's position
        pk = data.p[dst.jobs, src.m][None, :]
        wk = data.w[dst.jobs][None, :]
        pj = data.p[src.jobs, src.m][:, None]
        wj = data.w[src.jobs][:, None]
        corr = np.where(left_before, -wk * pj, -pk * wj)
        part = ins[None, :] + corr - src.removal[:, None]
        out += part.T if transpose else part
    return out


def _best_swap(data: SumWC, gpus: list[_Gpu]) -> tuple[float, int, int]:
    best = (0.0, -1, -1)
    for a in range(len(gpus)):
        for b in range(a + 1, len(gpus)):
            g, h = gpus[a], gpus[b]
            if not len(g.jobs) or not len(h.jobs):
                continue
            d = _swap_deltas(data, g, h)
            i, k = np.unravel_index(int(np.argmin(d)), d.shape)
            if d[i, k] < best[0]:
                best = (float(d[i, k]), int(g.jobs[i]), int(h.jobs[k]))
    return best


def descend(data: SumWC, assign: np.ndarray, deadline: Deadline) -> np.ndarray:
    """Best-improvement relocations, then swaps, until neither improves (or ``deadline``
    passes)."""
    assign = np.array(assign, dtype=np.int64)
    gpus = [_Gpu(data, m, np.flatnonzero(assign == m)) for m in range(data.m)]
    while not deadline.passed():
        delta, j, h = _best_relocation(data, gpus, assign)
        if delta < -0.5:  # integer costs: an improvement is at least 1
            g = int(assign[j])
            assign[j] = h
            changed = (g, h)
        else:
            delta, j, k = _best_swap(data, gpus)
            if delta >= -0.5:
                break
            g, h = int(assign[j]), int(assign[k])
            assign[j], assign[k] = h, g
            changed = (g, h)
        for m in changed:
            gpus[m] = _Gpu(data, m, np.flatnonzero(assign == m))
    return assign


def greedy(data: SumWC) -> np.ndarray:
    """Jobs by non-increasing w / min p, each appended to the GPU where it completes first."""
    order = np.lexsort((np.arange(data.n), -data.w / data.p.min(axis=1)))
    load = np.zeros(data.m, dtype=np.int64)
    assign = np.zeros(data.n, dtype=np.int64)
    for j in order:
        g = int(np.argmin(load + data.p[j] + data.s[j]))
        assign[j] = g
        load[g] += data.p[j, g]
    return assign


def assignment_from_sets(data: SumWC, sets: list[tuple[int, np.ndarray]]) -> np.ndarray:
    """An assignment from one set of jobs per GPU that may overlap or leave jobs out (the
    pricing solution of a Lagrangian bound): a job in several sets goes to the GPU where it
    trains fastest among them; a job in none, by non-increasing w / min p, to the GPU where it
    completes first after the loads so far (as :func:`greedy`)."""
    assign = np.full(data.n, -1, dtype=np.int64)
    fastest = np.full(data.n, np.iinfo(np.int64).max)
    for m, jobs in sets:
        jobs = np.asarray(jobs, dtype=np.int64)
        better = jobs[data.p[jobs, m] < fastest[jobs]]
        assign[better], fastest[better] = m, data.p[better, m]
    load = np.array([data.p[assign == m, m].sum() for m in range(data.m)], dtype=np.int64)
    left = np.flatnonzero(assign < 0)
    for j in left[np.lexsort((left, -data.w[left] / data.p[left].min(axis=1)))]:
        g = int(np.argmin(load + data.p[j] + data.s[j]))
        assign[j] = g
        load[g] += data.p[j, g]
    return assign


def marginal_multipliers(data: SumWC, assign: np.ndarray) -> np.ndarray:
    """Multipliers that share the cost of ``assign`` among its jobs: on its GPU (Smith order,
    B_j the training before j, A_j the weight after it), job j gets w_j (a + s_j + p_j) and half
    of each pair term, (w_j B_j + p_j A_j) / 2; they add up to the schedule's cost, every
    column of ``assign`` then having reduced cost 0."""
    pi = np.zeros(data.n)
    for m in range(data.m):
        jobs = data.smith_order(m, np.flatnonzero(np.asarray(assign) == m))
        p, w = data.p[jobs, m], data.w[jobs]
        before, after = np.cumsum(p) - p, w.sum() - np.cumsum(w)
        pi[jobs] = w * (data.a + data.s[jobs, m] + p) + (w * before + p * after) / 2
    return pi


def iterated_local_search(
    data: SumWC,
    start: np.ndarray | None,
    deadline: Deadline,
    seed: int = 0,
    max_stale: int | None = None,
) -> tuple[np.ndarray, float, int]:
    """(best assignment, its scaled cost, local optima visited) until ``deadline`` or
    ``max_stale`` (default 20 + 5 n) kicks in a row without improvement. Kicks relocate 2 to
    2 + n/20 random jobs of the best assignment."""
    rng = np.random.default_rng(seed)
    best = descend(data, greedy(data) if start is None else start, deadline)
    best_c, visits, stale = data.cost(best), 1, 0
    stale_limit = 20 + 5 * data.n if max_stale is None else max_stale
    while data.m > 1 and stale < stale_limit and not deadline.passed():
        nxt = best.copy()
        for j in rng.choice(data.n, size=min(data.n, int(rng.integers(2, 3 + data.n // 20)))):
            nxt[j] = (nxt[j] + rng.integers(1, data.m)) % data.m
        nxt = descend(data, nxt, deadline)
        c = data.cost(nxt)
        visits += 1
        stale += 1
        if c < best_c:
            best, best_c, stale = nxt, c, 0
    return best, best_c, visits


__all__ = [
    "SumWC",
    "assignment_from_sets",
    "marginal_multipliers",
    "descend",
    "greedy",
    "iterated_local_search",
    "load_horizon",
    "sum_wc_data",
]
