"""Certified lower bounds on problem (8): the single-machine SRPT bound of Lemma 1 (seed 001).

Lemma 1's argument: give each job, over its run in any schedule of A, the share g_i / G of one
virtual machine; the job's work (g_i / G) n_i alpha_i >= (g_i / G) n_i alpha_i^min is done by its
completion, so the preemptive single-machine optimum (SRPT, optimal for 1|r_j,pmtn|sum C_j)
on sizes (g_i / G) n_i alpha_i^min is at most OPT_A. With the true alpha_i^min this is the
bound itself (rho = 1); the paper's form OPT_A1(alpha~^min) / rho is also recorded. Each job
also completes no earlier than r_i + n_i alpha_i^min; the larger total is the bound.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from dlsched.models.ddlwmp.alpha import alpha_max_ms
from dlsched.models.ddlwmp.check import run_seconds
from dlsched.models.ddlwmp.instance import Cluster, DdlwmpInstance, Job, Stage
from dlsched.models.ddlwmp.mapping import alpha_tilde_min
from dlsched.solvers import SolveOptions
from dlsched.solvers.deadline import NEVER, Deadline


def srpt_total(releases: Sequence[float], sizes: Sequence[float]) -> float:
    """Sum of completion times of preemptive SRPT on one machine of unit speed."""
    order = sorted(range(len(releases)), key=lambda i: releases[i])
    heap: list[tuple[float, int]] = []
    now, total, k = 0.0, 0.0, 0
    while k < len(order) or heap:
        if not heap:
            now = max(now, releases[order[k]])
        while k < len(order) and releases[order[k]] <= now:
            heapq.heappush(heap, (sizes[order[k]], order[k]))
            k += 1
        left, i = heapq.heappop(heap)
        nxt = releases[order[k]] if k < len(order) else float("inf")
        if now + left <= nxt:
            now += left
            total += now
        else:
            heapq.heappush(heap, (left - (nxt - now), i))
            now = nxt
    return total


@lru_cache(maxsize=1024)
def _alpha_min_bound(stages: tuple[Stage, ...], kind: str, cluster: Cluster, limit: float) -> float:
    from dlsched.models.ddlwmp.mapping_methods import exact_mapping

    job = Job("probe", 0.0, 1, stages, kind)
    # a placement uses at most g_i servers; empty servers are interchangeable
    free = (cluster.gpus_per_server,) * min(cluster.servers, job.gpus)
    _, bound, _ = exact_mapping(job, cluster, free, SolveOptions(time_limit=limit))
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
    """Lemma 1's bound, each job configuration's alpha^min probed once (:func:`alpha_min_lower`
    with ``limit`` and ``deadline``)."""
    c, jobs = instance.cluster, instance.jobs
    g_total = c.total_gpus
    probed: dict[tuple[tuple[Stage, ...], str], float] = {}
    for j in jobs:
        if (j.stages, j.allreduce) not in probed:
            probed[j.stages, j.allreduce] = alpha_min_lower(j, c, limit, deadline)
    lows = [probed[j.stages, j.allreduce] for j in jobs]
    rel = [j.release for j in jobs]
    srpt = srpt_total(
        rel, [j.gpus / g_total * run_seconds(j, a) for j, a in zip(jobs, lows, strict=True)]
    )
    direct = sum(j.release + run_seconds(j, a) for j, a in zip(jobs, lows, strict=True))
    tilde = [alpha_tilde_min(j, c)[0] for j in jobs]
    rho = max(  # alpha~^min <= rho alpha^min must hold for Lemma 1 (docs/errata.md)
        max(alpha_max_ms(j, c), t) / a if a > 0 else float("inf")
        for j, t, a in zip(jobs, tilde, lows, strict=True)
    )
    a1 = srpt_total(
        rel, [j.gpus / g_total * run_seconds(j, a) for j, a in zip(jobs, tilde, strict=True)]
    )
    paper = a1 / rho if rho > 0 and rho != float("inf") else 0.0
    return SrptBound(max(srpt, direct, paper), srpt, direct, paper, rho)


__all__ = ["SrptBound", "alpha_min_lower", "srpt_bound", "srpt_total"]
