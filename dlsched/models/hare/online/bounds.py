"""Certified lower bounds on the total flow time sum_n (C_n - a_n) and the total weighted
completion time sum_n w_n C_n of every schedule of a hare instance (Hare_Sched (4)-(8)), cheap
enough for Gavel's traces: one bound per instance, whatever the policy.

Per job (:func:`round_floor`). A round of job n ends when the last of its |D_n| tasks has
trained and synchronized (6)-(7); a GPU trains one task at a time (8), so a GPU m that trains
c of them ends its part no sooner than c T^c_nm + T^s_nm after the round's start. The round
lasts at least the least over ways of sharing the |D_n| tasks of the largest such term: the
|D_n|-th smallest of {c T^c_nm + T^s_nm : m, c >= 1} (each GPU's terms increase with c, so the
|D_n| smallest are a choice of c_m per GPU; taking them is the best sharing). Rounds run one
after another from the arrival, so C_n - a_n >= |R_n| rho_n.

Pooled (:func:`pooled_value`, :func:`relaxations`). Weigh GPU m by a capacity a_m >= 0. A
task of job n on GPU m holds it for T^c_nm, i.e. a_m T^c_nm units of capacity, at least u_n =
min_m a_m T^c_nm; the job needs p_n = |R_n| |D_n| u_n units, done by C_n, and the GPUs give at
most A = sum_m a_m units per unit of time. So the completions of any schedule are those of a
preemptive schedule of sizes p_n / A with releases a_n on one machine of unit speed, and the
sum of completion times is at least that of SRPT there (optimal for 1|r_j, pmtn|sum C_j). Any
a is valid; the bound takes the best found (:func:`best_weights`), weights per class of GPUs
with the same training times (Gavel's three types on a trace). With unrelated speeds (Gavel's
K80 runs a ResNet-18 at a tenth of a V100's speed and a recommendation model at 1.5 times),
a_m = 1 (GPU-time) counts every GPU as the fastest and is loose; the best weights are near
each type's typical speed.

Mean busy times (:func:`wspt_bound` with spans). Count a task of job n on GPU m as using
u_n / T^c_nm <= a_m units per unit of time (so still at most A in all, and p_n per job). At
most |D_n| tasks of job n run at once (a round's), so it uses the machine at a rate of at most
p_n / s_n, s_n = |R_n| |D_n| / (sum of 1 / T^c_nm over its |D_n| fastest GPUs); its completion
is then at least its mean busy time M_n plus s_n / 2 (the latest M_n for a given C_n puts the
use at the highest rate just before C_n). The mean busy times of any schedule satisfy the LP
relaxation of 1|r_j, pmtn|sum w_j C_j whose optimum is the preemptive WSPT schedule's
(Goemans, IPCO 1996), so sum w_n C_n >= sum w_n (M_n^WSPT + max(p_n, s_n) / 2); without spans
(s = p) it is Goemans' bound itself. With equal weights SRPT's optimum is the other pooled
bound, the larger one is used.

The per-job bound gives sum_n w_n (a_n + |R_n| rho_n).

Both at once (:func:`mixed_bound`). Every schedule has, job by job, C_n >= F_n = a_n +
|R_n| rho_n and C_n >= M_n + h_n (h_n = max(p_n, s_n) / 2, M_n in its pooled image), hence
C_n >= lambda_n (M_n + h_n) + (1 - lambda_n) F_n for any lambda_n in [0, 1]; summed with the
weights, the M part is at least its value in the preemptive WSPT schedule with weights
w_n lambda_n (Goemans' LP again, for any weights >= 0). Each lambda gives a bound; lambda = 1
is the mean busy time bound, lambda = 0 the per-job one, and in between a job whose own floor
is the larger (a long job that the pooled machine would finish early) counts its floor
without holding back the others (the search over lambda: :func:`mixed_bound`). It is taken at
the pooled weights found for the other pooled bounds.

The largest of the per-job, pooled and mixed bounds is reported, for the flow time
(weights 1) and for the weighted completion time.

Flow time: the arrivals are data, so sum (C_n - a_n) >= B - sum a_n for every bound B on
sum C_n (as ddlwmp's, docs/traces.md).
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

from dlsched.models.ddlwmp.bounds import srpt_total
from dlsched.models.hare.instance import HareInstance
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


def _classes(instance: HareInstance) -> tuple[np.ndarray, np.ndarray]:
    """GPUs of equal training times grouped: (class of each GPU, GPUs per class)."""
    _, of, counts = np.unique(instance.tc.T, axis=0, return_inverse=True, return_counts=True)
    return np.asarray(of).reshape(-1), counts


def round_floor(train: Sequence[float], sync: Sequence[float], tasks: int) -> float:
    """rho: the least time one round of ``tasks`` tasks can take on GPUs of these training
    and synchronization times (the tasks-th smallest of c T^c_m + T^s_m, c >= 1)."""
    kinds: dict[tuple[float, float], int] = {}
    for c, s in zip(train, sync, strict=True):
        kinds[(c, s)] = kinds.get((c, s), 0) + 1
    heap = [(c + s, c, s, 1) for (c, s) in kinds]
    heapq.heapify(heap)
    done = 0
    while True:
        value, c, s, k = heapq.heappop(heap)
        done += kinds[(c, s)]
        if done >= tasks:
            return float(value)
        heapq.heappush(heap, (value + c, c, s, k + 1))


@dataclass(frozen=True)
class FlowBound:
    """Lower bounds on every schedule's total flow time and total weighted completion time,
    and what they came from (``alone``: sum_n |R_n| rho_n; ``pooled``: the best pooled sum of
    completions less the arrivals, at class ``weights``; ``mixed``: :func:`mixed_bound`'s
    sum of completions less the arrivals at those weights, -inf when not computed)."""

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


def flow_bound(instance: HareInstance, deadline: Deadline = NEVER) -> FlowBound:
    """The per-job and pooled bounds of the module docstring (classes of GPUs as the kinds
    of workers, each its own resource), the larger of each."""
    jobs = instance.jobs
    alone = [j.rounds * round_floor(j.train_time, j.sync_time, j.tasks_per_round) for j in jobs]
    of, counts = _classes(instance)
    first = np.array([np.flatnonzero(of == k)[0] for k in range(len(counts))])
    tasks = np.array([j.rounds * j.tasks_per_round for j in jobs], dtype=float)
    work = tasks[:, None] * instance.tc[:, first]  # GPU time of job n on class k only
    speed = -np.sort(-1.0 / instance.tc, axis=1)  # tasks per unit of time, fastest GPU first
    top = np.cumsum(speed, axis=1)
    most = [top[n, min(j.tasks_per_round, instance.num_gpus) - 1] for n, j in enumerate(jobs)]
    return relaxations(
        [j.arrival for j in jobs],
        [j.weight for j in jobs],
        alone,
        work,
        np.eye(len(counts)),
        counts.astype(float),
        (tasks / np.array(most)).tolist(),  # its tasks at most |D_n| at once, fastest GPUs
        deadline,
        mix=True,
    )


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
    """``make(instance, deadline)``, computed once per instance object (and ``make``: the
    ddlwmp family keeps its own bound here too)."""
    key = (id(instance), make)
    hit = _BOUNDS.get(key)
    if hit is not None and hit[0]() is instance:
        return hit[1]
    bound = make(instance, deadline)
    if not deadline.passed():
        _BOUNDS[key] = (weakref.ref(instance, lambda _: _BOUNDS.pop(key, None)), bound)
    return bound


def flow_report(
    instance: HareInstance, completion: Sequence[float], objective: float, deadline: Deadline
) -> dict[str, Any]:
    """:func:`flow_details` of a verified online schedule of ``instance`` (its completions
    and objective), the bound of :func:`flow_bound` computed within ``deadline``."""
    flow = math.fsum(c - j.arrival for c, j in zip(completion, instance.jobs, strict=True))
    return flow_details(flow, objective, cached(instance, flow_bound, deadline))


__all__ = [
    "FlowBound",
    "best_weights",
    "cached",
    "flow_bound",
    "flow_details",
    "flow_report",
    "mixed_bound",
    "pooled_sizes",
    "pooled_value",
    "relaxations",
    "round_floor",
    "single_machine",
    "wspt_bound",
    "wspt_means",
]
