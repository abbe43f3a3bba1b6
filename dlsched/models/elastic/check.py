"""Checker of the elastic family (seed 003): program (2) (parameter server) and (15)
(Ring-AllReduce) re-derived from the raw instance with plain arithmetic.

Zhou et al., IEEE TCC, Sections 3.3 and 6.1. Every job runs once (2a), with one worker type
(2b) and one PS type (2c) (the representation allows no other), at least one PS (2e) under the
parameter server architecture and none under Ring-AllReduce, enough workers and slots to train
E_j D_j K_j mini-batches at the speed of eq. (1)/(14) (2f) with q_j read from the placement
(2d)/(15a), at most D_j workers (2g), PS bandwidth covering the remote workers (2i), no start
before arrival (2j), integral counts (2k)-(2n), and per-slot per-server capacities (2h)/(15b).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dlsched.errors import InfeasibleSolutionError
from dlsched.models.elastic.instance import ElasticInstance, completes
from dlsched.models.elastic.solution import ElasticSchedule, JobSchedule

#: Absolute slack of a capacity comparison, relative to the capacity.
CAP_TOL = 1e-9


@dataclass(frozen=True)
class ElasticEvaluation:
    objective: float  # sum_j w_j (t_j + d_j)
    completion: tuple[int, ...]  # per job
    makespan: int
    peak_usage: tuple[tuple[float, ...], ...]  # [server][resource], max over slots


def _fail(inst: ElasticInstance, e: JobSchedule, what: str) -> InfeasibleSolutionError:
    return InfeasibleSolutionError(f"job {inst.jobs[e.job].name}: {what}")


def _check_entry(inst: ElasticInstance, e: JobSchedule) -> None:
    job = inst.jobs[e.job]
    h_count = inst.num_servers
    for v in (e.start, e.duration, e.worker_type, e.ps_type, *e.workers, *e.ps):
        if not isinstance(v, int | np.integer) or isinstance(v, bool):
            raise _fail(inst, e, f"non-integral decision {v!r} (2k)-(2n)")
    if len(e.workers) != h_count or len(e.ps) != h_count:
        raise _fail(inst, e, f"placement lists must have one entry per server ({h_count})")
    if min(e.workers) < 0 or min(e.ps) < 0:
        raise _fail(inst, e, "negative worker or PS count (2k)-(2l)")
    if not 0 <= e.worker_type < len(inst.worker_types):
        raise _fail(inst, e, f"worker type {e.worker_type} does not exist (2b)")
    if e.start < job.arrival:
        raise _fail(inst, e, f"starts at {e.start} before its arrival {job.arrival} (2j)")
    if e.duration < 1 or e.end > inst.horizon:
        raise _fail(inst, e, f"runs [{e.start}, {e.end}) outside [0, {inst.horizon}] (2a)")
    n = e.num_workers
    if n < 1:
        raise _fail(inst, e, "has no worker (2f)")
    if n > job.chunks:
        raise _fail(inst, e, f"has {n} workers, more than its {job.chunks} chunks (2g)")
    if inst.is_ps:
        _check_ps(inst, e)
    elif sum(e.ps) or e.ps_type != 0:
        raise _fail(inst, e, "Ring-AllReduce jobs have no parameter servers (15)")
    p = e.ps_type if inst.is_ps else None
    if not completes(inst, e.job, e.worker_type, p, n, e.colocated(), e.duration):
        raise _fail(
            inst, e, f"{n} workers for {e.duration} slots do not train {job.minibatches} (2f)"
        )


def _check_ps(inst: ElasticInstance, e: JobSchedule) -> None:
    if not 0 <= e.ps_type < len(inst.ps_types):
        raise _fail(inst, e, f"PS type {e.ps_type} does not exist (2c)")
    if sum(e.ps) < 1:
        raise _fail(inst, e, "has no parameter server (2e)")
    b = inst.worker_types[e.worker_type].bandwidth
    big_b = inst.ps_types[e.ps_type].bandwidth
    total = sum(e.workers)
    for h, s in enumerate(e.ps):
        if s > 0:
            remote = (total - e.workers[h]) * b
            if remote > s * big_b * (1 + CAP_TOL):
                raise _fail(
                    inst,
                    e,
                    f"PSs on {inst.servers[h].name} reserve {s * big_b} of bandwidth, remote "
                    f"workers need {remote} (2i)",
                )


def usage(inst: ElasticInstance, e: JobSchedule) -> np.ndarray:
    """f_jh^r(l): the [server, resource] amounts the schedule holds in each of its slots."""
    e_m = np.array(inst.worker_types[e.worker_type].demand)
    out = np.outer(np.array(e.workers, dtype=float), e_m)
    if inst.is_ps:
        z_p = np.array(inst.ps_types[e.ps_type].demand)
        out += np.outer(np.array(e.ps, dtype=float), z_p)
    return out


def check_schedule(inst: ElasticInstance, schedule: ElasticSchedule) -> ElasticEvaluation:
    """Verify (2a)-(2n) or (15) and evaluate sum_j w_j c_j; InfeasibleSolutionError if not."""
    seen: dict[int, JobSchedule] = {}
    for e in schedule.entries:
        if not isinstance(e.job, int) or not 0 <= e.job < inst.num_jobs:
            raise InfeasibleSolutionError(f"job index {e.job!r} does not exist")
        if e.job in seen:
            raise _fail(inst, e, "is scheduled twice (2a)")
        _check_entry(inst, e)
        seen[e.job] = e
    missing = [j.name for k, j in enumerate(inst.jobs) if k not in seen]
    if missing:
        raise InfeasibleSolutionError(f"job {missing[0]} is not scheduled (2a)")
    load = np.zeros((inst.horizon, inst.num_servers, len(inst.resources)))
    for e in seen.values():
        load[e.start : e.end] += usage(inst, e)
    cap = np.array([s.capacity for s in inst.servers])
    over = load > cap + CAP_TOL * np.maximum(cap, 1.0)
    if over.any():
        t, h, r = (int(x) for x in np.argwhere(over)[0])
        raise InfeasibleSolutionError(
            f"slot {t}, server {inst.servers[h].name}, resource {inst.resources[r]}: "
            f"{load[t, h, r]:g} used > capacity {cap[h, r]:g} (2h)/(15b)"
        )
    completion = tuple(seen[k].end for k in range(inst.num_jobs))
    objective = sum(j.weight * c for j, c in zip(inst.jobs, completion, strict=True))
    return ElasticEvaluation(
        objective=float(objective),
        completion=completion,
        makespan=max(completion),
        peak_usage=tuple(tuple(float(x) for x in row) for row in load.max(axis=0)),
    )
