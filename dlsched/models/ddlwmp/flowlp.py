"""A certified lower bound on the total flow time of problem (8) that sees each job's GPUs: an
interval-indexed LP of mean busy times with every job's rate capped (Goemans' argument on the
pooled cluster), beside Lemma 1's (:mod:`.bounds`); :func:`flow_bound` is the larger.

Lemma 1 pools the cluster into one machine of speed 1 where a job may run G / g_i times faster
than it can: on a crowded trace its SRPT schedule clears the backlog's long one-GPU jobs at the
speed of the whole cluster, and its other term, sum (r_i + p_i), knows no queue. The LP below
keeps both: a job never holds more than its g_i GPUs at once, and the GPUs are shared.

The relaxation. p_i = n_i alpha_i^min / 1000 (:func:`.bounds.least_runs`) is at most job i's
run in any schedule, placement-aware or pooled (a run lasts n_i alpha_i >= n_i alpha_i^min,
rounded up to whole slots). Cut time into intervals I_k = [s_k, e_k) (any breakpoints; the
last interval is unbounded) and, for a feasible schedule, let job i count only the last p_i
seconds of its run, [C_i - p_i, C_i), at g_i GPUs; let y_ik be the share of these g_i p_i
GPU-seconds that lies in I_k. Then

- sum_k y_ik = 1 for each job (its counted work is all done),
- sum_i g_i p_i y_ik <= G (e_k - s_k) for each bounded interval (the jobs running at any time
  hold at most the G GPUs, on their servers or in the pool),
- 0 <= y_ik <= (e_k - max(s_k, r_i)) / p_i, and y_ik = 0 when e_k <= r_i (the counted work
  lies after the release, at g_i GPUs: at most g_i GPU-seconds a second),
- the mean of the counted seconds is C_i - p_i / 2, and every counted second in I_k is at
  or after t_ik = max(s_k, r_i), so C_i - r_i >= sum_k y_ik (t_ik - r_i) + p_i / 2.

With f_i = C_i - r_i, also f_i >= p_i (a run lasts at least p_i). So the LP min sum_i f_i
subject to these constraints, f_i >= p_i and f_i >= sum_k y_ik (t_ik - r_i) + p_i / 2 is at most
the total flow time of every feasible schedule (its f_i and y_ik are a solution): the same
argument as the mean-busy-time bound of online hare and elastic (Goemans, IPCO 1996: C >= M +
s / 2 for a job whose rate is at most 1 / s of its work), with the rate cap of each job kept
in the LP instead of a preemptive WSPT schedule on one machine that ignores it. A job with
p_i = 0 is left out (its flow time is >= 0). The value taken is
:func:`dlsched.solvers.highs.safe_dual_bound` of the solver's row duals (any duals give a
valid bound, so the solver's tolerances only weaken it; see :func:`certified`), and nothing
when the deadline cuts the solve or leaves no time for it.

The breakpoints: :data:`RELEASE_SHARE` of them at quantiles of the releases, the others after
the last release up to it plus the work over G plus the longest p_i, denser near its start;
their number keeps the LP within :data:`MAX_COLUMNS` columns (at most :data:`MAX_INTERVALS`),
and on an instance too large for :data:`MIN_INTERVALS` the LP is skipped (150,000 jobs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from dlsched.models.ddlwmp.bounds import flow_time_bound, least_runs, srpt_bound
from dlsched.models.ddlwmp.instance import DdlwmpInstance
from dlsched.online.bounds import cached
from dlsched.solvers.base import SolverSettings
from dlsched.solvers.deadline import NEVER, Deadline
from dlsched.solvers.highs import MatrixModel, safe_dual_bound, solve_matrix

#: The LP's size: at most this many columns (job, interval) ...
MAX_COLUMNS = 200_000
#: ... and at most this many intervals; with fewer than MIN_INTERVALS the LP is skipped.
MAX_INTERVALS = 400
MIN_INTERVALS = 16
#: The share of the breakpoints placed at quantiles of the releases.
RELEASE_SHARE = 0.5
#: The links' duals are scaled by 1 - LINK_SHRINK before the safe dual bound is taken.
LINK_SHRINK = 1e-9


def breakpoints(release: np.ndarray, area: float, longest: float, count: int) -> np.ndarray:
    """``count`` or fewer increasing breakpoints s_k: quantiles of the releases, then up to the
    last release + ``area`` (GPU-seconds over the cluster's G) + ``longest``, squared spacing
    (denser near the last release)."""
    first = max(2, int(count * RELEASE_SHARE))
    last = float(release.max())
    drain = area + longest
    after = last + drain * np.linspace(0.0, 1.0, max(2, count - first + 1))[1:] ** 2
    return np.unique(np.concatenate([np.quantile(release, np.linspace(0, 1, first)), after]))


def interval_model(
    release: np.ndarray, gpus: np.ndarray, run: np.ndarray, total_gpus: int, points: np.ndarray
) -> MatrixModel:
    """The LP of the module docstring on n jobs (``release``, ``gpus``, ``run`` p_i > 0) and
    intervals [points[k], points[k + 1]), the last unbounded: columns y_ik job by job, then
    f_0 .. f_n-1; rows: the n jobs' shares (= 1), the intervals' GPU-seconds, then the n
    links f_i - sum_k y_ik (t_ik - r_i) >= p_i / 2."""
    ends = np.append(points[1:], math.inf)
    cols, starts, counts = [], [], []
    for r in release.tolist():
        k = np.nonzero(ends > r)[0]
        cols.append(k)
        starts.append(np.maximum(points[k], r))
        counts.append(len(k))
    job = np.repeat(np.arange(len(release)), counts)
    k = np.concatenate(cols)
    wait = np.concatenate(starts) - release[job]  # t_ik - r_i
    n, width, m = len(release), len(points), len(k)
    y, f = np.arange(m), m + np.arange(n)
    rows = np.concatenate([job, n + k, n + width + job, n + width + np.arange(n)])
    columns = np.concatenate([y, y, y, f])
    values = np.concatenate([np.ones(m), (gpus * run)[job], -wait, np.ones(n)])
    matrix = sp.csc_matrix((values, (rows, columns)), shape=(2 * n + width, m + n))
    capacity = total_gpus * (ends - points)  # inf for the last interval
    return MatrixModel(
        cost=np.concatenate([np.zeros(m), np.ones(n)]),
        matrix=matrix,
        row_lower=np.concatenate([np.ones(n), np.full(width, -math.inf), run / 2]),
        row_upper=np.concatenate([np.ones(n), capacity, np.full(n, math.inf)]),
        col_lower=np.concatenate([np.zeros(m), run]),  # f_i >= p_i: C_i - r_i >= p_i
        col_upper=np.concatenate(
            [np.minimum(1.0, (ends[k] - wait - release[job]) / run[job]), np.full(n, math.inf)]
        ),  # y <= 1: sum_k y_ik = 1
    )


def certified(model: MatrixModel, row_dual: np.ndarray | None, jobs: int) -> float | None:
    """:func:`~dlsched.solvers.highs.safe_dual_bound` of the solver's duals, the links' (the
    last ``jobs`` rows) scaled by 1 - :data:`LINK_SHRINK`: f_i is unbounded above, so its
    reduced cost 1 - (link dual) must be positive beyond rounding for the bound to be finite;
    any multipliers give a valid bound."""
    if row_dual is None:
        return None
    duals = np.array(row_dual, dtype=float)
    duals[-jobs:] *= 1.0 - LINK_SHRINK
    bound = safe_dual_bound(model, duals)
    return bound if math.isfinite(bound) else None


def interval_flow_bound(instance: DdlwmpInstance, deadline: Deadline = NEVER) -> float | None:
    """The LP bound of the module docstring on the total flow time (seconds), or None when the
    instance is too large, the deadline passed, or the solver proved nothing."""
    run = least_runs(instance, deadline)
    keep = run > 0
    n = int(keep.sum())
    count = min(MAX_INTERVALS, 2 * MAX_COLUMNS // max(n, 1))
    if n == 0 or count < MIN_INTERVALS or deadline.passed():
        return None
    release = np.array([j.release for j in instance.jobs], dtype=float)[keep]
    gpus = instance.shapes.gpus[instance.shapes.of_job][keep].astype(float)
    run = run[keep]
    total = instance.cluster.total_gpus
    points = breakpoints(release, float(gpus @ run) / total, float(run.max()), count)
    model = interval_model(release, gpus, run, total, points)
    res = solve_matrix(model, deadline.solve_options(SolverSettings(threads=1)))
    bound = certified(model, res.row_dual, n)
    return None if bound is None else max(0.0, bound)


@dataclass(frozen=True)
class FlowBound:
    """The certified lower bound on the total flow time (s): the larger of Lemma 1's
    (:func:`.bounds.flow_time_bound`) and the interval LP's (None when not computed)."""

    flow: float
    lemma1: float
    interval_lp: float | None


def compute_flow_bound(instance: DdlwmpInstance, deadline: Deadline = NEVER) -> FlowBound:
    """:class:`FlowBound` of ``instance``, within ``deadline`` (Lemma 1 first)."""
    lemma1 = flow_time_bound(srpt_bound(instance, deadline=deadline), instance)
    lp = interval_flow_bound(instance, deadline)
    return FlowBound(max(lemma1, lp or 0.0), lemma1, lp)


def flow_bound(instance: DdlwmpInstance, deadline: Deadline = NEVER) -> FlowBound:
    """:func:`compute_flow_bound`, once per instance object (a bound the deadline cut is not
    kept): the policies run on one instance share it."""
    return cached(instance, compute_flow_bound, deadline)


__all__ = [
    "FlowBound",
    "breakpoints",
    "certified",
    "compute_flow_bound",
    "flow_bound",
    "interval_flow_bound",
    "interval_model",
]
