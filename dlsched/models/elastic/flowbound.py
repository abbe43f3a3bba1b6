"""Certified lower bounds on the total flow time sum_j (c_j - a_j) and the total weighted
completion time sum_j w_j c_j of every schedule of an elastic instance (program (2) or (15)),
cheap enough for Gavel's traces: one bound per instance, whatever the heuristic.

Per job. A schedule of job j runs n <= D_j workers of one type m (at most N_m, the most the
empty cluster holds) for d slots with d n rho >= E_j D_j K_j (2f); colocated workers (q = 1)
iterate fastest (eq. (1) and (14) add the gradient term only when q = 0), so d is at least
d_j(m, n) = :func:`.instance.durations` with q = 1, and c_j >= a_j + min_{m, n} d_j(m, n)
(the PS types of the parameter-server architecture minimized over too).

Pooled. The same schedule holds n workers of type m for d slots: n d >= min_n n d_j(m, n) =
W_jm worker-slots, each worker holding e_m of every resource (its PSs hold more; leaving them
out keeps the bound valid). Weigh resource r by a_r >= 0: job j uses at least p_j = min_m
(sum_r a_r e_mr) W_jm units, done by c_j, and the cluster gives at most A = sum_r a_r sum_h
C_hr units per slot. As for the other online families (:mod:`dlsched.online.bounds`, whose
search over the weights is used), the sum of completions is at least that of SRPT with sizes
p_j / A and releases a_j on one machine, and any weights are valid; the best found is kept.

Mean busy times. Count a run of d slots as using p_j / d units in each of its slots (at most
what its workers hold, so still at most A in all): job j then uses the pooled machine at a
rate of at most p_j / d_j^min, and its completion is its mean busy time plus d / 2 >= d_j^min /
2. The mean busy times of any schedule satisfy Goemans' LP relaxation of 1|r_j, pmtn|sum w_j
C_j, whose optimum is the preemptive WSPT schedule's, so sum w_j c_j >= sum w_j (M_j^WSPT +
max(p_j / A, d_j^min) / 2) (:func:`~dlsched.online.bounds.wspt_bound`); with equal
weights, SRPT's optimum too, the larger one kept.

Time-indexed. The LP relaxation of the non-preemptive runs in whole slots on the pooled
resources, one type per run (:mod:`.timebound`), certified by Lagrangian relaxation. The
relaxations above are preemptive: a job's work may move to any slot and any type at its
pooled price, so a long job started before a burst of arrivals seems to yield its workers to
the burst; here a run holds its workers for every slot of it. On Gavel's overloaded traces
it is 1.4 to 1.8 times the larger of the others.

Flow time: the arrivals are data, so sum (c_j - a_j) >= B - sum a_j for every bound B on
sum c_j; every c_j and a_j is a whole slot, so the flow time in slots is an integer and the
bound is rounded up; in seconds, times ``slot_seconds``.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from dlsched.models.elastic.instance import ElasticInstance, least_durations, most_workers
from dlsched.online.bounds import FlowBound, cached, flow_details, relaxations, total_flow
from dlsched.solvers.deadline import NEVER, Deadline

if TYPE_CHECKING:  # pragma: no cover
    from dlsched.result import Outcome


def least_use(inst: ElasticInstance, j: int, most: list[int]) -> tuple[float, np.ndarray]:
    """(least duration d_j over every configuration, W_j: least worker-slots per worker type
    (inf for a type the cluster cannot hold)), every worker colocated (q = 1)."""
    shortest, use = math.inf, np.full(len(inst.worker_types), math.inf)
    for m, d in enumerate(least_durations(inst, j, most)):
        if len(d):
            shortest = min(shortest, float(d.min()))
            use[m] = float((np.arange(1, len(d) + 1) * d).min())
    return shortest, use


def flow_bound(inst: ElasticInstance, deadline: Deadline = NEVER) -> FlowBound:
    """The per-job, pooled and time-indexed bounds of the module docstring (in slots), the
    largest of each (:func:`preemptive_bound`, :func:`~.timebound.time_indexed_bounds`; the
    latter with the jobs' weights too when they differ, in the same pass)."""
    from dlsched.models.elastic.timebound import time_indexed_bounds

    base = preemptive_bound(inst, deadline)
    weights = [job.weight for job in inst.jobs]
    both = len(set(weights)) > 1  # unit weights and the jobs' own, in one pass
    got = time_indexed_bounds(inst, [[1.0] * inst.num_jobs, *([weights] if both else [])], deadline)
    unit = got[0].value
    if not math.isfinite(unit):  # a job cannot end by T: no schedule, nothing to add
        return base
    flow = max(base.flow, math.ceil(unit - math.fsum(float(j.arrival) for j in inst.jobs)))
    weighted = got[1].value if both else (weights[0] if weights else 1.0) * unit
    return replace(base, flow=flow, weighted_completion=max(base.weighted_completion, weighted))


def preemptive_bound(inst: ElasticInstance, deadline: Deadline = NEVER) -> FlowBound:
    """The per-job and pooled bounds of the module docstring (in slots), the larger of each
    (:func:`~dlsched.online.bounds.relaxations`)."""
    most = most_workers(inst)
    got = [least_use(inst, j, most) for j in range(inst.num_jobs)]
    least = [d for d, _ in got]
    return relaxations(
        [float(job.arrival) for job in inst.jobs],
        [job.weight for job in inst.jobs],
        least,
        np.array([u for _, u in got]),
        np.array([t.demand for t in inst.worker_types], dtype=float),
        np.array([s.capacity for s in inst.servers], dtype=float).sum(axis=0),
        least,  # a run of d slots holds its workers alike in each: spread over d >= the least
        deadline,
    )


def flow_report(outcome: Outcome, inst: ElasticInstance, deadline: Deadline) -> Outcome:
    """``outcome`` (a heuristic's, verified) with its total flow time in seconds, the bound of
    :func:`flow_bound` on it (computed within ``deadline``), the gap, and the bound on the
    objective, in its details (:func:`~dlsched.online.bounds.flow_details`)."""
    if outcome.evaluation is None:
        return outcome
    done = outcome.evaluation.completion
    flow = total_flow(done, inst.jobs)
    bound = cached(inst, flow_bound, deadline)
    extra = flow_details(flow, float(outcome.evaluation.objective), bound, inst.slot_seconds)
    return replace(outcome, details={**outcome.details, **extra})


__all__ = ["flow_bound", "flow_report", "least_use", "preemptive_bound"]
