"""Certified lower bounds on problem (8): the single-machine SRPT bound of Lemma 1 (seed 001).

Lemma 1's argument: give each job, over its run in any schedule of A, the share g_i / G of one
virtual machine; the job's work (g_i / G) n_i alpha_i >= (g_i / G) n_i alpha_i^min is done by its
completion, so the preemptive single-machine optimum (SRPT, optimal for 1|r_j,pmtn|sum C_j)
on sizes (g_i / G) n_i alpha_i^min is at most OPT_A. With the true alpha_i^min this is the
bound itself (rho = 1); the paper's form OPT_A1(alpha~^min) / rho is also recorded. Each job
also completes no earlier than r_i + n_i alpha_i^min; the larger total is the bound. Times are
(8)'s: a release in the first slot is at r_i = first_slot_s (slot_s with the paper's
[T] = {1, ..., T}), as in the checker.

alpha_i^min is bounded from below by the placement MILP's dual bound (:func:`alpha_min_lower`)
and by :func:`alpha_floor` (each stage's cheapest beta over every row it could have), the
larger of the two: a probe cut by the time limit still leaves a useful bound.

Flow time. The total flow time of a schedule is sum_i (C_i - r_i) = sum_i C_i - sum_i r_i, and
the releases r_i are data: every feasible schedule has sum_i C_i >= B (the bound above), so
every feasible schedule has flow time >= B - sum_i r_i (:func:`flow_time_bound`). The sum of
completion times is dominated by the releases on a long trace (5.5e11 s of 5.53e11 on the
150,000-job workload of benchmarks/RESULTS_ddlwmp.md), so its ratio to B tells policies
apart by the fourth decimal; the flow-time gap (F - (B - sum r)) / F tells them apart. The
same bound holds for the pooled model (:mod:`.online`, ``pooled``): a job there holds g_i of
the G GPUs for n_i alpha~_i^min >= n_i alpha_i^min, which is all Lemma 1's argument uses.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from dlsched.models.ddlwmp.alpha import (
    allreduce_ms,
    alpha_max_ms,
    comp_ms,
    inter_coef,
    intra_coef,
)
from dlsched.models.ddlwmp.instance import Cluster, DdlwmpInstance, Job, Stage
from dlsched.models.ddlwmp.mapping import alpha_tilde_min
from dlsched.online.bounds import srpt_total
from dlsched.solvers import SolverSettings
from dlsched.solvers.deadline import NEVER, Deadline


@lru_cache(maxsize=1024)
def _alpha_min_bound(stages: tuple[Stage, ...], kind: str, cluster: Cluster, limit: float) -> float:
    from dlsched.models.ddlwmp.mapping_methods import exact_mapping

    job = Job("probe", 0.0, 1, stages, kind)
    # a placement uses at most g_i servers; empty servers are interchangeable
    free = (cluster.gpus_per_server,) * min(cluster.servers, job.gpus)
    _, bound, _ = exact_mapping(job, cluster, free, SolverSettings(), Deadline.after(limit))
    return bound if bound is not None else 0.0


def alpha_min_lower(
    job: Job, cluster: Cluster, limit: float = 10.0, deadline: Deadline = NEVER
) -> float:
    """A proven lower bound on alpha_i^min (the placement MILP's dual bound on an empty
    cluster; the optimum itself when the MILP closes), the MILP given ``limit`` seconds or
    what is left of ``deadline`` when that is less (such a shorter probe is not cached); 0
    (alpha is never negative) when ``deadline`` has passed."""
    if deadline.passed():
        return 0.0
    seconds = deadline.seconds(limit)
    probe = _alpha_min_bound if seconds == limit else _alpha_min_bound.__wrapped__
    return max(0.0, probe(job.stages, job.allreduce, cluster, seconds))


def alpha_floor(job: Job, cluster: Cluster) -> float:
    """A lower bound on alpha_i^min in closed form: alpha >= beta^m_s on a server m hosting
    stage s, and beta^m_s (eq. 4-6) is at least comp (4) plus, for each neighbour stage, the
    cheaper of its NIC and NVLink terms (5) (the fraction on m lies in [0, 1]) plus the
    cheapest AllReduce (6) over the x = 1..min(k_s, g) replicas a server can hold."""
    g = cluster.gpus_per_server
    out = 0.0
    for s, st in enumerate(job.stages):
        (ip, inx), (ap, anx) = inter_coef(job, cluster, s), intra_coef(job, cluster, s)
        ring = min(allreduce_ms(job, cluster, s, x) for x in range(1, min(st.replicas, g) + 1))
        out = max(out, comp_ms(job, s) + min(ip, ap) + min(inx, anx) + ring)
    return out


def shape_alpha_lower(
    instance: DdlwmpInstance, limit: float = 10.0, deadline: Deadline = NEVER
) -> np.ndarray:
    """Per job shape (``instance.shapes``): a proven lower bound on alpha^min in ms, the larger
    of :func:`alpha_min_lower` (with ``limit`` and ``deadline``) and :func:`alpha_floor`."""
    c, jobs = instance.cluster, instance.jobs
    reps = [jobs[i] for i in instance.shapes.first]
    return np.array([max(alpha_min_lower(j, c, limit, deadline), alpha_floor(j, c)) for j in reps])


def least_runs(instance: DdlwmpInstance, deadline: Deadline = NEVER) -> np.ndarray:
    """Per job: a lower bound on its run time in seconds in every schedule, placement-aware or
    pooled, n_i alpha_i^min / 1000 with alpha^min bounded by :func:`shape_alpha_lower`."""
    low = shape_alpha_lower(instance, deadline=deadline)
    n = np.array([j.iterations for j in instance.jobs], dtype=float)
    return n * low[instance.shapes.of_job] / 1000.0


@dataclass(frozen=True)
class SrptBound:
    bound: float
    srpt: float  # OPT_A1 with certified alpha^min
    release_plus_run: float  # sum (r_i + n_i alpha_i^min)
    paper_form: float  # OPT_A1(alpha~^min) / rho (Lemma 1)
    rho: float


def srpt_bound(
    instance: DdlwmpInstance, limit: float = 10.0, deadline: Deadline = NEVER
) -> SrptBound:
    """Lemma 1's bound, each job shape's alpha^min probed once (:func:`alpha_min_lower`
    with ``limit`` and ``deadline``, and :func:`alpha_floor`)."""
    c, jobs, shapes = instance.cluster, instance.jobs, instance.shapes
    reps = [jobs[i] for i in shapes.first]
    low = shape_alpha_lower(instance, limit, deadline)
    tilde = np.array([alpha_tilde_min(j, c)[0] for j in reps])
    top = np.array([max(alpha_max_ms(j, c), t) for j, t in zip(reps, tilde, strict=True)])
    # alpha~^min <= rho alpha^min must hold for Lemma 1 (docs/errata.md)
    rho = max(float(t / a) if a > 0 else math.inf for t, a in zip(top, low, strict=True))
    of = shapes.of_job
    rel = np.array([j.release for j in jobs], dtype=float) + c.first_slot_s  # r_i in (8)
    n = np.array([j.iterations for j in jobs], dtype=float)
    share = shapes.gpus[of] / c.total_gpus
    run = n * low[of] / 1000.0  # run_seconds: n_i alpha_i / 1000
    srpt = srpt_total(rel.tolist(), (share * run).tolist())
    direct = sum((rel + run).tolist())
    a1 = srpt_total(rel.tolist(), (share * (n * tilde[of] / 1000.0)).tolist())
    paper = float(a1 / rho) if rho > 0 and rho != math.inf else 0.0
    return SrptBound(max(srpt, direct, paper), srpt, direct, paper, float(rho))


def flow_time_bound(bound: SrptBound, instance: DdlwmpInstance) -> float:
    """A certified lower bound on the total flow time sum_i (C_i - r_i): Lemma 1's bound on
    sum_i C_i less the releases (see the module docstring)."""
    first = instance.cluster.first_slot_s  # the releases as (8) counts them, like the bound
    return max(0.0, bound.bound - math.fsum(j.release + first for j in instance.jobs))


__all__ = [
    "SrptBound",
    "alpha_floor",
    "alpha_min_lower",
    "flow_time_bound",
    "least_runs",
    "shape_alpha_lower",
    "srpt_bound",
]
