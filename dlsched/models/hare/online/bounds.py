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

Pooled (:func:`~dlsched.online.bounds.pooled_value`,
:func:`~dlsched.online.bounds.relaxations`). Weigh GPU m by a capacity a_m >= 0. A task of job n
on GPU m holds it for T^c_nm, i.e. a_m T^c_nm units of capacity, at least u_n = min_m a_m
T^c_nm; the job needs p_n = |R_n| |D_n| u_n units, done by C_n, and the GPUs give at most A =
sum_m a_m units per unit of time. So the completions of any schedule are those of a preemptive
schedule of sizes p_n / A with releases a_n on one machine of unit speed, and the sum of
completion times is at least that of SRPT there (optimal for 1|r_j, pmtn|sum C_j). Any a is
valid; the bound takes the best found (:func:`~dlsched.online.bounds.best_weights`), weights per
class of GPUs with the same training times (Gavel's three types on a trace). With unrelated
speeds (Gavel's K80 runs a ResNet-18 at a tenth of a V100's speed and a recommendation model at
1.5 times), a_m = 1 (GPU-time) counts every GPU as the fastest and is loose; the best weights
are near each type's typical speed.

Mean busy times (:func:`~dlsched.online.bounds.wspt_bound` with spans). Count a task of job n on
GPU m as using u_n / T^c_nm <= a_m units per unit of time (so still at most A in all, and p_n
per job). At most |D_n| tasks of job n run at once (a round's), so it uses the machine at a rate
of at most p_n / s_n, s_n = |R_n| |D_n| / (sum of 1 / T^c_nm over its |D_n| fastest GPUs); its
completion is then at least its mean busy time M_n plus s_n / 2 (the latest M_n for a given C_n
puts the use at the highest rate just before C_n). The mean busy times of any schedule satisfy
the LP relaxation of 1|r_j, pmtn|sum w_j C_j whose optimum is the preemptive WSPT schedule's
(Goemans, IPCO 1996), so sum w_n C_n >= sum w_n (M_n^WSPT + max(p_n, s_n) / 2); without spans
(s = p) it is Goemans' bound itself. With equal weights SRPT's optimum is the other pooled bound,
the larger one is used.

The per-job bound gives sum_n w_n (a_n + |R_n| rho_n).

Both at once (:func:`~dlsched.online.bounds.mixed_bound`). Every schedule has, job by job,
C_n >= F_n = a_n + |R_n| rho_n and C_n >= M_n + h_n (h_n = max(p_n, s_n) / 2, M_n in its pooled
image), hence C_n >= lambda_n (M_n + h_n) + (1 - lambda_n) F_n for any lambda_n in [0, 1];
summed with the weights, the M part is at least its value in the preemptive WSPT schedule with
weights w_n lambda_n (Goemans' LP again, for any weights >= 0). Each lambda gives a bound;
lambda = 1 is the mean busy time bound, lambda = 0 the per-job one, and in between a job whose
own floor is the larger (a long job that the pooled machine would finish early) counts its floor
without holding back the others (the search over lambda:
:func:`~dlsched.online.bounds.mixed_bound`). It is taken at the pooled weights found for the
other pooled bounds.

The largest of the per-job, pooled and mixed bounds is reported, for the flow time
(weights 1) and for the weighted completion time.

Flow time: the arrivals are data, so sum (C_n - a_n) >= B - sum a_n for every bound B on
sum C_n (as ddlwmp's, docs/traces.md).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any

import numpy as np

from dlsched.models.hare.instance import HareInstance
from dlsched.online.bounds import FlowBound, cached, flow_details, relaxations, total_flow
from dlsched.solvers.deadline import NEVER, Deadline


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


def flow_report(
    instance: HareInstance, completion: Sequence[float], objective: float, deadline: Deadline
) -> dict[str, Any]:
    """:func:`flow_details` of a verified online schedule of ``instance`` (its completions
    and objective), the bound of :func:`flow_bound` computed within ``deadline``."""
    flow = total_flow(completion, instance.jobs)
    return flow_details(flow, objective, cached(instance, flow_bound, deadline))


__all__ = ["flow_bound", "flow_report", "round_floor"]
