"""Lower bounds on the sum of (weighted) completion times of every schedule of an online
workload, shared by the online families (each gives what its model makes of a job; the
families' ``bounds`` modules say why that is valid for their schedules).

One machine (:func:`single_machine`). For jobs of sizes p_j and releases r_j on one machine of
unit speed, preemptive SRPT minimizes sum_j C_j (1|r_j, pmtn|sum C_j: :func:`srpt_total`),
and the preemptive WSPT schedule's mean busy times M_j minimize sum_j w_j M_j over every
schedule (Goemans, IPCO 1996), so sum_j w_j C_j >= sum_j w_j (M_j^WSPT + p_j / 2)
(:func:`wspt_bound`); with spans s_j (the least time over which job j's processing can be
spread), max(p_j, s_j) / 2 for p_j / 2. With equal weights the larger of the two is used.

Pooled (:func:`pooled_value`, :func:`relaxations`). Weigh each resource r of the cluster by
a_r >= 0: a job holding workers of kind m uses at least (sum_r a_r e_mr) times its least
worker-time on kind m of them, and the cluster gives at most sum_r a_r S_r per unit of time,
so the completions of any schedule are those of a preemptive schedule of the pooled sizes on
one machine of unit speed. Any weights are valid; the best found is kept
(:func:`best_weights`).

Both at once (:func:`mixed_bound`): with per-job floors F_j <= C_j (release plus the least
time alone), C_j >= lambda_j (M_j + h_j) + (1 - lambda_j) F_j for every lambda in [0, 1]^n,
searched by projected supergradient steps.

Flow time: the releases are data, so sum (C_j - r_j) >= B - sum r_j for every bound B on
sum C_j. :func:`flow_details` reports a result's flow time against its bound, and
:func:`cached` computes an instance's bound once for every policy run on it.
"""

from __future__ import annotations

import heapq
import itertools
import math
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from dlsched.solvers.base import relative_gap
from dlsched.solvers.deadline import NEVER, Deadline

#: Grid steps on the simplex of class weights (for at most :data:`GRID_CLASSES` classes).
GRID_STEPS = 10
GRID_CLASSES = 4
#: About this many job-evaluations of SRPT go into the search of weights (fewer weights tried
#: on larger instances), at least :data:`MIN_TRIES` weights.
SEARCH_WORK = 600_000
MIN_TRIES = 8
#: Steps of :func:`mixed_bound`: about this many job-evaluations of WSPT, at most
#: :data:`MIX_STEPS` and at least :data:`MIN_TRIES`.
MIX_WORK = 600_000
MIX_STEPS = 300


def srpt_total(releases: Sequence[float], sizes: Sequence[float]) -> float:
    """Sum of completion times of preemptive SRPT on one machine of unit speed."""
    rel, size = list(releases), list(sizes)
    order = sorted(range(len(rel)), key=rel.__getitem__)
    n, inf = len(order), float("inf")
    push, pop = heapq.heappush, heapq.heappop
    heap: list[tuple[float, int]] = []
    now, total, k = 0.0, 0.0, 0
    nxt = rel[order[0]] if n else inf  # the next release, inf when every job is in
    while k < n or heap:
        if not heap:
            now = max(now, nxt)
        while nxt <= now:
            i = order[k]
            push(heap, (size[i], i))
            k += 1
            nxt = rel[order[k]] if k < n else inf
        left, i = pop(heap)
        if now + left <= nxt:
            now += left
            total += now
        else:
            push(heap, (left - (nxt - now), i))
            now = nxt
    return total


def wspt_means(
    releases: Sequence[float], sizes: Sequence[float], weights: Sequence[float]
) -> list[float]:
    """M_j, the mean busy time of each job j in the preemptive WSPT schedule of 1|r_j, pmtn|
    (the available job of largest w_j / p_j runs, ties by index; a job of size 0 has its
    release)."""
    order = sorted(range(len(releases)), key=lambda j: releases[j])
    heap: list[tuple[float, int]] = []
    busy = [0.0] * len(releases)  # integral of t over the job's processing
    left = list(map(float, sizes))
    now, k, n = 0.0, 0, len(order)
    while k < n or heap:
        if not heap:
            now = max(now, releases[order[k]])
        while k < n and releases[order[k]] <= now:
            j = order[k]
            ratio = weights[j] / sizes[j] if sizes[j] > 0 else math.inf
            heapq.heappush(heap, (-ratio, j))
            k += 1
        _, j = heap[0]
        nxt = releases[order[k]] if k < n else math.inf
        run = min(left[j], nxt - now)
        busy[j] += run * (2 * now + run) / 2
        now += run
        left[j] -= run
        if left[j] <= 0:
            heapq.heappop(heap)
    return [busy[j] / p if p > 0 else float(releases[j]) for j, p in enumerate(sizes)]


def _tails(sizes: Sequence[float], spans: Sequence[float] | None) -> list[float]:
    """max(p_j, s_j) / 2: the least time from job j's mean busy time to its completion."""
    return [max(p, spans[j] if spans is not None else 0.0) / 2 for j, p in enumerate(sizes)]


def wspt_bound(
    releases: Sequence[float],
    sizes: Sequence[float],
    weights: Sequence[float],
    spans: Sequence[float] | None = None,
) -> float:
    """Goemans' lower bound on 1|r_j, pmtn|sum w_j C_j, sum_j w_j (M_j + p_j / 2), M_j the mean
    busy time of job j in the preemptive WSPT schedule (:func:`wspt_means`); with ``spans``,
    s_j / 2 for p_j / 2 where larger (s_j: the least time over which job j's processing can
    be spread)."""
    means = wspt_means(releases, sizes, weights)
    tails = _tails(sizes, spans)
    return math.fsum(w * (m + h) for w, m, h in zip(weights, means, tails, strict=True))


def mixed_bound(
    releases: Sequence[float],
    sizes: Sequence[float],
    weights: Sequence[float],
    spans: Sequence[float] | None,
    floors: Sequence[float],
    steps: int = MIX_STEPS,
    deadline: Deadline = NEVER,
) -> float:
    """A lower bound on sum_j w_j C_j of every schedule whose completions satisfy both C_j >=
    F_j (``floors``) and C_j >= M_j + h_j, M_j the job's mean busy time in its image on the
    pooled machine of unit speed (sizes p_j) and h_j = max(p_j, s_j) / 2 (:func:`wspt_bound`).

    For every lambda in [0, 1]^n, C_j >= lambda_j (M_j + h_j) + (1 - lambda_j) F_j, so
    sum w_j C_j >= sum w_j lambda_j M_j + sum w_j (lambda_j h_j + (1 - lambda_j) F_j), and the
    first sum is at least its value in the preemptive WSPT schedule with weights w_j lambda_j,
    which minimizes sum_j v_j M_j over every schedule of the pooled machine for any v >= 0
    (Goemans, IPCO 1996). lambda = 1 is :func:`wspt_bound`, lambda = 0 the floors. The value
    is concave in lambda (a least value over schedules of functions linear in lambda) with the
    supergradient w_j (M_j + h_j - F_j) (M: WSPT's); ``steps`` projected steps along it from
    lambda = 1 (each coordinate moved by 1 / (2 sqrt(k)) of g_j / (|g_j| + h_j) at step k,
    stopping at ``deadline``), then the best lambda rounded to 0 or 1; the largest value met
    is returned: each is a bound."""
    tails = np.array(_tails(sizes, spans))
    w, floor = np.asarray(weights, dtype=float), np.asarray(floors, dtype=float)

    def value(lam: np.ndarray) -> tuple[float, np.ndarray]:
        means = np.array(wspt_means(releases, sizes, (w * lam).tolist()))
        return math.fsum(w * (lam * (means + tails) + (1 - lam) * floor)), means + tails - floor

    lam = np.ones(len(sizes))
    best, where = -math.inf, lam
    for k in range(1, max(1, steps) + 1):
        v, g = value(lam)
        if v > best:
            best, where = v, lam
        if deadline.passed():
            return best
        scale = np.abs(g) + tails
        move = np.divide(g, scale, out=np.zeros_like(g), where=scale > 0)
        lam = np.clip(lam + move / (2 * math.sqrt(k)), 0.0, 1.0)
    return max(best, value(np.round(where))[0])  # the best lambda rounded to 0 or 1


def single_machine(
    releases: Sequence[float],
    sizes: Sequence[float],
    weights: Sequence[float] | None,
    spans: Sequence[float] | None = None,
) -> float:
    """A lower bound on sum_j w_j C_j of 1|r_j, pmtn| with these sizes: :func:`wspt_bound`
    (with ``spans`` when given), and SRPT's optimum when the weights are equal (None: all 1)
    if that is larger."""
    w = [1.0] * len(sizes) if weights is None else list(weights)
    goemans = wspt_bound(releases, sizes, w, spans)
    if len(set(w)) > 1:
        return goemans
    return max(goemans, (w[0] if w else 1.0) * srpt_total(releases, sizes))


def pooled_sizes(work: np.ndarray, cost: np.ndarray, capacity: float) -> np.ndarray:
    """The jobs' sizes on the pooled machine of unit speed at unit costs ``cost`` (per kind of
    worker; sum_r a_r e_mr for resources of weights a_r): min_m cost_m work[n, m] / capacity.
    ``work[n, m]`` is the least time job n holds workers of kind m when it runs on them only
    (``inf``: kind m cannot run job n), ``capacity`` > 0 the units the cluster gives per unit of
    time (sum_r a_r C_r)."""
    units = np.where(np.isfinite(work), work * cost[None, :], np.inf)
    sizes = np.min(units, axis=1) / capacity
    sizes[~np.isfinite(sizes)] = 0.0  # a job no kind can run: no schedule, 0 stays valid
    return sizes


def pooled_value(
    releases: Sequence[float],
    work: np.ndarray,
    cost: np.ndarray,
    capacity: float,
    weights: Sequence[float] | None = None,
    spans: Sequence[float] | None = None,
) -> float:
    """The pooled bound on one machine of unit speed with the sizes of :func:`pooled_sizes`
    (0 when ``capacity`` is not positive); ``spans``: see :func:`relaxations`."""
    if capacity <= 0:
        return 0.0
    sizes = pooled_sizes(work, cost, capacity)
    return single_machine(releases, sizes.tolist(), weights, spans)


def _simplex(classes: int, steps: int) -> list[np.ndarray]:
    """Every weight vector of ``classes`` entries in multiples of 1 / steps summing to 1."""
    out = []
    for cut in itertools.combinations(range(steps + classes - 1), classes - 1):
        parts = np.diff([-1, *cut, steps + classes - 1]) - 1
        out.append(parts / steps)
    return out


def best_weights(
    value: Callable[[np.ndarray], float], classes: int, tries: int, deadline: Deadline = NEVER
) -> tuple[float, np.ndarray]:
    """The largest ``value(a)`` found over class weights a (every one valid): for at most
    :data:`GRID_CLASSES` classes a grid on the simplex (coarser when ``tries`` is short), then
    a pattern search around the best; for more, each class alone and all alike. ``tries``
    evaluations at most (the first always), stopping at ``deadline``."""
    if classes == 1:
        a = np.ones(1)
        return value(a), a
    few = classes <= GRID_CLASSES
    start = _simplex(classes, GRID_STEPS) if few else [np.ones(classes) / classes]
    if few and len(start) > tries:
        start = _simplex(classes, GRID_STEPS // 2)
    if not few:
        start += list(np.eye(classes))
    best, where, used = -math.inf, start[0], 0
    for a in start:
        if used and (used >= tries or deadline.passed()):
            return best, where
        v = value(a)
        used += 1
        if v > best:
            best, where = v, a
    step = 1.0 / GRID_STEPS
    while few and used < tries and step > 1e-3 and not deadline.passed():
        moved = False
        for i, j in itertools.permutations(range(classes), 2):
            a = where.copy()
            shift = min(step, a[j])
            if shift <= 0:
                continue
            a[i] += shift
            a[j] -= shift
            v = value(a)
            used += 1
            if v > best:
                best, where, moved = v, a, True
            if used >= tries or deadline.passed():
                break
        if not moved:
            step /= 2
    return best, where


@dataclass(frozen=True)
class FlowBound:
    """Lower bounds on every schedule's total flow time and total weighted completion time,
    and what they came from (``alone``: the jobs' least times alone, summed; ``pooled``: the
    best pooled sum of completions less the arrivals, at resource ``weights``; ``mixed``:
    :func:`mixed_bound`'s sum of completions less the arrivals at those weights, -inf when
    not computed)."""

    flow: float
    weighted_completion: float
    alone: float
    pooled: float
    weights: tuple[float, ...]
    mixed: float = -math.inf


def relaxations(
    arrivals: Sequence[float],
    weights: Sequence[float],
    alone: Sequence[float],
    work: np.ndarray,
    demand: np.ndarray,
    supply: np.ndarray,
    spans: Sequence[float],
    deadline: Deadline = NEVER,
    mix: bool = False,
) -> FlowBound:
    """The per-job and pooled bounds, the larger of each: ``alone[n]``, the least time from
    job n's arrival to its completion; ``work[n, m]``, the least time it holds workers of kind
    m when it runs on them only (inf: it cannot); ``demand[m, r]``, what one worker of kind m
    holds of resource r; ``supply[r]``, the cluster's total of r; ``spans[n]``, the least time
    over which job n's share of the pooled machine can be spread (its most parallel run).
    Resource weights a are searched (:func:`best_weights`): costs ``demand @ a``, capacity
    ``supply @ a``. ``mix``: also :func:`mixed_bound` at the weights found, with the floors
    arrival + ``alone``."""
    tries = max(MIN_TRIES, SEARCH_WORK // max(1, len(arrivals)))
    steps = min(MIX_STEPS, max(MIN_TRIES, MIX_WORK // max(1, len(arrivals))))
    sum_a = math.fsum(arrivals)
    floors = [r + x for r, x in zip(arrivals, alone, strict=True)]

    def total(a: np.ndarray, w: Sequence[float] | None = None) -> float:
        return pooled_value(arrivals, work, demand @ a, float(supply @ a), w, spans)

    def mixed(a: np.ndarray, w: Sequence[float]) -> float:
        capacity = float(supply @ a)
        if not mix or capacity <= 0 or deadline.passed():
            return -math.inf
        sizes = pooled_sizes(work, demand @ a, capacity).tolist()
        return mixed_bound(arrivals, sizes, w, spans, floors, steps, deadline)

    pooled, a = best_weights(total, len(supply), tries, deadline)
    mixed_flow = mixed(a, [1.0] * len(arrivals)) - sum_a
    flow = max(math.fsum(alone), pooled - sum_a, mixed_flow)
    per_job = math.fsum(w * f for w, f in zip(weights, floors, strict=True))
    if len(set(weights)) <= 1:
        weighted = weights[0] * (flow + sum_a)
    else:
        weighted, b = best_weights(lambda b: total(b, weights), len(supply), tries, deadline)
        weighted = max(weighted, mixed(b, weights))
    return FlowBound(
        flow, max(weighted, per_job), math.fsum(alone), pooled - sum_a, tuple(a), mixed_flow
    )


def total_flow(completion: Sequence[float], jobs: Sequence[Any]) -> float:
    """The total flow time sum_j (c_j - a_j) of jobs with an ``arrival`` completing at
    ``completion`` (in the instance's time unit)."""
    return math.fsum(c - j.arrival for c, j in zip(completion, jobs, strict=True))


def flow_details(
    flow: float, objective: float, bound: FlowBound, seconds: float = 1.0
) -> dict[str, Any]:
    """What an online result reports beside its schedule: its total flow time ``flow`` and
    the bound on it (times ``seconds``, the seconds of one time unit), the gap (flow - bound)
    / flow, the bound on the objective (sum w C) and the objective's gap to it."""
    return {
        "flow_time_s": flow * seconds,
        "flow_time_bound_s": bound.flow * seconds,
        "flow_time_gap": relative_gap(flow, bound.flow),
        "weighted_completion_bound": bound.weighted_completion,
        "weighted_completion_gap": relative_gap(objective, bound.weighted_completion),
    }


#: (id(instance), make) -> (weak reference to it, its bound): the policies compared on one
#: instance share one bound (only a bound no deadline cut is kept).
_BOUNDS: dict[tuple[int, Any], tuple[weakref.ref[Any], Any]] = {}
_Bound = TypeVar("_Bound")


def cached(
    instance: Any, make: Callable[[Any, Deadline], _Bound], deadline: Deadline = NEVER
) -> _Bound:
    """``make(instance, deadline)``, computed once per instance object and ``make`` (each
    family keeps its own bounds here)."""
    key = (id(instance), make)
    hit = _BOUNDS.get(key)
    if hit is not None and hit[0]() is instance:
        return hit[1]
    bound = make(instance, deadline)
    if not deadline.passed():
        _BOUNDS[key] = (weakref.ref(instance, lambda _: _BOUNDS.pop(key, None)), bound)
    return bound


__all__ = [
    "total_flow",
    "FlowBound",
    "best_weights",
    "cached",
    "flow_details",
    "mixed_bound",
    "pooled_sizes",
    "pooled_value",
    "relaxations",
    "single_machine",
    "srpt_total",
    "wspt_bound",
    "wspt_means",
]
