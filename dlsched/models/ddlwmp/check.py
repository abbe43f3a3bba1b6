"""The independent checker of the ddlwmp family (problem (8) of Luo et al., seed 001).

- a :class:`~dlsched.models.ddlwmp.solution.JobMapping` is feasible when every job's replicas
  are all placed (2) on the free GPUs of each server; its objective is sum_i alpha_i (ms);
- a :class:`~dlsched.models.ddlwmp.solution.Schedule` is feasible when starts respect releases
  (1) and the slot grid, every replica is placed (2), and at every slot no server hosts more
  than g GPUs of running jobs (3); a job holds its GPUs for :func:`busy_slots` whole slots from
  its start. Its objective is sum_i (t_i + n_i alpha_i) in seconds, alpha_i of the placement
  actually used and t_i counted from the first slot's number (1 in the paper's [T], so a job
  started in the first slot has t_i = slot_s; 0 when the instance says ``slots="from-0"``);
- a :class:`~dlsched.models.ddlwmp.solution.PooledSchedule` (the pooled cluster) is feasible
  when starts respect releases and the slot grid and at every slot the running jobs hold at
  most the G GPUs of the one pool, each job for the busy slots of n_i alpha~_i^min (Heavy-Edge
  on the fewest servers, Section IV-B). Its objective is sum_i (t_i + n_i alpha~_i^min).

Everything is re-derived from the raw instance with plain arithmetic; alpha is computed once
per (stage table, rows of the placement), which is all it depends on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dlsched.errors import InfeasibleSolutionError
from dlsched.models.ddlwmp.alpha import Placement, alpha_ms
from dlsched.models.ddlwmp.instance import REL_TOL, DdlwmpInstance, Job
from dlsched.models.ddlwmp.solution import JobMapping, PooledSchedule, Schedule


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


def check_placement(
    instance: DdlwmpInstance, i: int, placement: Placement, good: set[Any] | None = None
) -> dict[int, int]:
    """Constraint (2) for job i; returns GPUs used per server. ``good``: rows already found
    well formed (a schedule's jobs share rows), which are not looked at again."""
    job, c = instance.jobs[i], instance.cluster
    usage: dict[int, int] = {}
    rows = []
    for m, row in placement:
        if not (0 <= m < c.servers) or m in usage:
            raise _fail(instance, f"job {job.name}: bad or repeated server {m!r}")
        if len(row) != len(job.stages) or not _well_formed(row, good):
            raise _fail(instance, f"job {job.name}: server {m} counts {row!r} malformed")
        usage[m] = sum(row)
        rows.append(row)
    sums = [sum(col) for col in zip(*rows, strict=True)] if rows else [0] * len(job.stages)
    for s, st in enumerate(job.stages):
        if sums[s] != st.replicas:
            raise _fail(instance, f"job {job.name}: stage {s} has {sums[s]} of {st.replicas}")
    if not usage or not any(usage.values()):
        raise _fail(instance, f"job {job.name}: no GPU")
    return usage


def _well_formed(row: Any, good: set[Any] | None) -> bool:
    """Every count of ``row`` a whole number >= 0."""
    try:
        if good is not None and row in good:
            return True
    except TypeError:  # a row that is no tuple: checked every time
        good = None
    if any(int(v) != v or v < 0 for v in row):
        return False
    if good is not None:
        good.add(row)
    return True


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


def _capacity(instance: DdlwmpInstance, spans: _Spans, cap: int) -> None:
    """Constraint (3) by a sweep over slot boundaries per resource (ends before starts), all
    at once: sorted by (resource, slot, start), the running sum of the amounts is each
    resource's load, since every resource's amounts add up to 0."""
    if not spans.res:
        return
    m, a, b, u = (np.array(col, dtype=np.int64) for col in spans.columns())
    res, slot = np.concatenate([m, m]), np.concatenate([a, b])
    kind = np.concatenate([np.ones_like(a), np.zeros_like(b)])
    order = np.lexsort((kind, slot, res))
    load = np.cumsum(np.concatenate([u, -u])[order])
    over = np.flatnonzero(load > cap)
    if len(over):
        k = order[over[0]]
        raise _fail(
            instance, f"server {res[k]} hosts {load[over[0]]} > {cap} GPUs at slot {slot[k]}"
        )


class _Spans:
    """What each job holds: (resource, first slot, end slot, amount), column by column."""

    def __init__(self) -> None:
        self.res: list[int] = []
        self.start: list[int] = []
        self.end: list[int] = []
        self.amount: list[int] = []

    def add(self, first: int, end: int, usage: dict[int, int]) -> None:
        for m, u in usage.items():
            self.res.append(m)
            self.start.append(first)
            self.end.append(end)
            self.amount.append(u)

    def columns(self) -> tuple[list[int], ...]:
        return self.res, self.start, self.end, self.amount


def _start_slot(instance: DdlwmpInstance, job: Job, t: float) -> int:
    """The slot of a start ``t`` that respects the release (1) and lies on the grid."""
    if not (math.isfinite(t) and t >= job.release - REL_TOL * max(1.0, job.release)):
        raise _fail(instance, f"job {job.name} starts at {t} before release {job.release}")
    slot = instance.cluster.slot_s
    k = t / slot
    if abs(k - round(k)) > REL_TOL * max(1.0, abs(k)):
        raise _fail(instance, f"job {job.name} starts at {t}, off the {slot} s grid")
    return round(k)


def _evaluation(
    instance: DdlwmpInstance, starts: tuple[float, ...], alphas: list[float]
) -> ScheduleEvaluation:
    """Completion times t_i + n_i alpha_i, t_i counted from the first slot's number
    (:attr:`~dlsched.models.ddlwmp.instance.Cluster.first_slot_s`), and the flow times."""
    first = instance.cluster.first_slot_s
    completions = [
        t + first + run_seconds(j, a) for j, t, a in zip(instance.jobs, starts, alphas, strict=True)
    ]
    total = float(sum(completions))
    flow = total - sum(j.release + first for j in instance.jobs)
    return ScheduleEvaluation(total, tuple(alphas), tuple(completions), max(completions), flow)


def check_schedule(instance: DdlwmpInstance, sol: Schedule) -> ScheduleEvaluation:
    """A schedule of problem (8) (of the pooled cluster when ``sol`` is a PooledSchedule)."""
    if isinstance(sol, PooledSchedule):
        return check_pooled(instance, sol)
    n, c = instance.num_jobs, instance.cluster
    if len(sol.starts) != n or len(sol.placements) != n:
        raise _fail(instance, f"schedule lists {len(sol.starts)} starts for {n} jobs")
    alphas, spans = [], _Spans()
    known: dict[Any, float] = {}
    good: set[Any] = set()
    for i, (job, t, p) in enumerate(zip(instance.jobs, sol.starts, sol.placements, strict=True)):
        k = _start_slot(instance, job, t)
        usage = check_placement(instance, i, p, good)
        key = (id(job.stages), job.allreduce, tuple(tuple(row) for _, row in p))
        a = known.get(key)
        if a is None:
            a = known[key] = alpha_ms(job, c, p)
        spans.add(k, k + busy_slots(run_seconds(job, a), c.slot_s), usage)
        alphas.append(a)
    _capacity(instance, spans, c.gpus_per_server)
    return _evaluation(instance, sol.starts, alphas)


def check_pooled(instance: DdlwmpInstance, sol: PooledSchedule) -> ScheduleEvaluation:
    """A schedule of the pooled cluster: one resource of G GPUs, job i holding g_i of them
    for the busy slots of n_i alpha~_i^min."""
    from dlsched.models.ddlwmp.mapping import alpha_tilde_min

    n, c = instance.num_jobs, instance.cluster
    if len(sol.starts) != n:
        raise _fail(instance, f"schedule lists {len(sol.starts)} starts for {n} jobs")
    alphas, spans = [], _Spans()
    known: dict[tuple[int, str], tuple[float, int]] = {}
    for job, t in zip(instance.jobs, sol.starts, strict=True):
        k = _start_slot(instance, job, t)
        shape = known.get((id(job.stages), job.allreduce))
        if shape is None:
            shape = known[id(job.stages), job.allreduce] = (alpha_tilde_min(job, c)[0], job.gpus)
        a, g = shape
        spans.add(k, k + busy_slots(run_seconds(job, a), c.slot_s), {0: g})
        alphas.append(a)
    _capacity(instance, spans, c.total_gpus)
    return _evaluation(instance, sol.starts, alphas)


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
    "check_pooled",
    "check_schedule",
    "run_seconds",
]
