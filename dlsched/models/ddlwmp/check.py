"""The independent checker of the ddlwmp family (problem (8) of Luo et al., seed 001).

- a :class:`~dlsched.models.ddlwmp.solution.JobMapping` is feasible when every job's replicas
  are all placed (2) on the free GPUs of each server; its objective is sum_i alpha_i (ms);
- a :class:`~dlsched.models.ddlwmp.solution.Schedule` is feasible when starts respect releases
  (1) and the slot grid, every replica is placed (2), and at every slot no server hosts more
  than g GPUs of running jobs (3); a job holds its GPUs for :func:`busy_slots` whole slots from
  its start. Its objective is sum_i (t_i + n_i alpha_i) in seconds, alpha_i of the placement
  actually used.

Everything is re-derived from the raw instance with plain arithmetic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from dlsched.errors import InfeasibleSolutionError
from dlsched.models.ddlwmp.alpha import Placement, alpha_ms
from dlsched.models.ddlwmp.instance import REL_TOL, DdlwmpInstance, Job
from dlsched.models.ddlwmp.solution import JobMapping, Schedule


def busy_slots(duration_s: float, slot_s: float) -> int:
    """Whole slots a job of ``duration_s`` seconds holds its GPUs (constraint (3))."""
    return max(1, math.ceil(duration_s / slot_s))


def run_seconds(job: Job, alpha: float) -> float:
    """n_i alpha_i in seconds (alpha in ms)."""
    return job.iterations * alpha / 1000.0


@dataclass(frozen=True)
class MappingEvaluation:
    objective: float  # sum of alpha_i, ms
    alphas: tuple[float, ...]


@dataclass(frozen=True)
class ScheduleEvaluation:
    objective: float  # sum of completion times, s
    alphas: tuple[float, ...]
    completions: tuple[float, ...]
    makespan: float
    flow_time: float  # sum of (completion - release)


def _fail(instance: DdlwmpInstance, what: str) -> InfeasibleSolutionError:
    return InfeasibleSolutionError(f"instance '{instance.name}': {what}")


def check_placement(instance: DdlwmpInstance, i: int, placement: Placement) -> dict[int, int]:
    """Constraint (2) for job i; returns GPUs used per server."""
    job, c = instance.jobs[i], instance.cluster
    usage: dict[int, int] = {}
    sums = [0] * len(job.stages)
    for m, row in placement:
        if not (0 <= m < c.servers) or m in usage:
            raise _fail(instance, f"job {job.name}: bad or repeated server {m!r}")
        if len(row) != len(job.stages) or any(int(v) != v or v < 0 for v in row):
            raise _fail(instance, f"job {job.name}: server {m} counts {row!r} malformed")
        usage[m] = sum(row)
        for s, v in enumerate(row):
            sums[s] += v
    for s, st in enumerate(job.stages):
        if sums[s] != st.replicas:
            raise _fail(instance, f"job {job.name}: stage {s} has {sums[s]} of {st.replicas}")
    if not usage or not any(usage.values()):
        raise _fail(instance, f"job {job.name}: no GPU")
    return usage


def check_mapping(instance: DdlwmpInstance, sol: JobMapping) -> MappingEvaluation:
    if len(sol.placements) != instance.num_jobs:
        raise _fail(instance, f"{len(sol.placements)} placements for {instance.num_jobs} jobs")
    free = instance.cluster.free()
    alphas = []
    for i, p in enumerate(sol.placements):
        for m, u in check_placement(instance, i, p).items():
            if u > free[m]:
                raise _fail(instance, f"job {instance.jobs[i].name}: {u} GPUs on server {m}")
        alphas.append(alpha_ms(instance.jobs[i], instance.cluster, p))
    return MappingEvaluation(float(sum(alphas)), tuple(alphas))


def _capacity(instance: DdlwmpInstance, spans: list[tuple[int, int, dict[int, int]]]) -> None:
    """Constraint (3) by a sweep over slot boundaries per server (ends before starts)."""
    events: list[tuple[int, int, int, int]] = []
    for a, b, usage in spans:
        for m, u in usage.items():
            events.append((m, a, 1, u))
            events.append((m, b, 0, -u))
    events.sort()
    load: dict[int, int] = {}
    g = instance.cluster.gpus_per_server
    for m, t, _, u in events:
        load[m] = load.get(m, 0) + u
        if load[m] > g:
            raise _fail(instance, f"server {m} hosts {load[m]} > {g} GPUs at slot {t}")


def check_schedule(instance: DdlwmpInstance, sol: Schedule) -> ScheduleEvaluation:
    n, c = instance.num_jobs, instance.cluster
    if len(sol.starts) != n or len(sol.placements) != n:
        raise _fail(instance, f"schedule lists {len(sol.starts)} starts for {n} jobs")
    alphas, completions, spans = [], [], []
    for i, (job, t, p) in enumerate(zip(instance.jobs, sol.starts, sol.placements, strict=True)):
        if not (math.isfinite(t) and t >= job.release - REL_TOL * max(1.0, job.release)):
            raise _fail(instance, f"job {job.name} starts at {t} before release {job.release}")
        k = t / c.slot_s
        if abs(k - round(k)) > REL_TOL * max(1.0, abs(k)):
            raise _fail(instance, f"job {job.name} starts at {t}, off the {c.slot_s} s grid")
        usage = check_placement(instance, i, p)
        a = alpha_ms(job, c, p)
        dur = run_seconds(job, a)
        spans.append((round(k), round(k) + busy_slots(dur, c.slot_s), usage))
        alphas.append(a)
        completions.append(t + dur)
    _capacity(instance, spans)
    total = float(sum(completions))
    flow = total - sum(j.release for j in instance.jobs)
    return ScheduleEvaluation(total, tuple(alphas), tuple(completions), max(completions), flow)


def check(instance: DdlwmpInstance, solution: Any) -> MappingEvaluation | ScheduleEvaluation:
    if isinstance(solution, JobMapping):
        return check_mapping(instance, solution)
    if isinstance(solution, Schedule):
        return check_schedule(instance, solution)
    raise InfeasibleSolutionError(f"not a ddlwmp solution: {type(solution).__name__}")


__all__ = [
    "MappingEvaluation",
    "ScheduleEvaluation",
    "busy_slots",
    "check",
    "check_mapping",
    "check_placement",
    "check_schedule",
    "run_seconds",
]
