"""Job-subset lower bounds for Hare_Sched: exact optima of groups of jobs, summed.

Why it is a bound: the objective is a sum over jobs, and a schedule of all jobs restricted to
a subset S of them is a feasible schedule of the instance with only S (its tasks keep their
GPUs and starts; fewer tasks compete for the GPUs; barriers and arrivals are per job). So the
cost of S in an optimal schedule is at least OPT(S), and for any partition S_1, ..., S_k of the
jobs, OPT >= OPT(S_1) + ... + OPT(S_k). A proven lower bound of OPT(S_i) may stand in for it.

Which partition: jobs are sorted by arrival and cut into consecutive blocks of about
``block_tasks`` tasks; a *segment* is a run of consecutive blocks with at most ``max_tasks``
tasks, or two consecutive blocks with at most ``pair_tasks`` (a block is one job when that job
alone is larger than a block: with data-parallel jobs of 12-20 tasks, no run of two would
otherwise fit in ``max_tasks``). Each segment is solved with the exact CP-SAT route (pooled,
its own LP bound) under a share of the time budget, smallest first, and its proven bound (the
optimum when proven) is kept. A segment's run is told what the smaller segments inside it
proved: the best partition of its blocks into them bounds its optimum (the same argument), so
that sum is stated in its model as a lower bound, each part's bound on its jobs' weighted
completions, and their schedules put together are its hint when better than the quick ones.
The best partition of the whole into segments is a longest path over the blocks (dynamic
programming), since every partition into segments is a partition of the jobs.

When the arrivals are spread (load below saturation), jobs of distant blocks barely interact
and the bound meets the optimum: then the CP-SAT route stops as soon as its incumbent reaches it.
When every job competes with every other (all arrivals within a few rounds' time) the bound
can be weaker than the time-indexed LP; the route takes the larger of the two.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

from dlsched.models.hare.instance import HareInstance
from dlsched.models.hare.solution import TaskSchedule
from dlsched.solvers.base import SolverSettings
from dlsched.solvers.certify import certify
from dlsched.solvers.deadline import Deadline

#: A segment gets at least this many seconds (when that much is left), and none starts with
#: less left.
MIN_SEGMENT_SECONDS = 0.05


@dataclass(frozen=True)
class Segment:
    blocks: tuple[int, int]  # first block, one past the last
    jobs: tuple[int, ...]  # job indices in the full instance
    tasks: int
    status: str
    objective: float | None
    bound: float  # proven lower bound on OPT(jobs); 0 when nothing was proven
    seconds: float


@dataclass(frozen=True)
class SubsetBound:
    bound: float  # proven <= OPT of the full instance
    partition: tuple[Segment, ...]  # the segments whose bounds add up to ``bound``
    segments: tuple[Segment, ...] = field(default=())  # every segment solved
    seconds: float = 0.0
    schedule: TaskSchedule | None = None  # the partition's schedules put together (repaired)


def sub_instance(instance: HareInstance, jobs: tuple[int, ...]) -> HareInstance:
    """The instance restricted to ``jobs`` (same GPUs)."""
    return HareInstance(
        f"{instance.name}[{','.join(map(str, jobs))}]",
        instance.gpus,
        tuple(instance.jobs[n] for n in jobs),
    )


def _tasks(instance: HareInstance, jobs: tuple[int, ...] | list[int]) -> int:
    return sum(instance.jobs[n].rounds * instance.jobs[n].tasks_per_round for n in jobs)


def arrival_blocks(instance: HareInstance, block_tasks: int) -> list[tuple[int, ...]]:
    """Jobs by arrival (then index), cut into consecutive blocks (never inside a job).

    Each block holds between ``block_tasks`` / 2 and 3 ``block_tasks`` / 2 tasks where the jobs
    allow it, and among those sizes ends at the widest gap between consecutive arrivals (jobs
    across a wide gap compete least, so the blocks' optima add up closest to the optimum).
    """
    jobs = instance.jobs
    order = sorted(range(instance.num_jobs), key=lambda n: (jobs[n].arrival, n))
    size = [_tasks(instance, [n]) for n in order]
    lo, hi = max(1, block_tasks // 2), max(1, (3 * block_tasks) // 2)
    blocks: list[tuple[int, ...]] = []
    i = 0
    while i < len(order):
        best_e, best_gap, count = i + 1, -math.inf, 0
        for e in range(i + 1, len(order) + 1):
            count += size[e - 1]
            if count > hi and e > i + 1:
                break
            if count < lo and e < len(order):
                continue
            gap = (
                math.inf if e == len(order) else jobs[order[e]].arrival - jobs[order[e - 1]].arrival
            )
            if gap > best_gap:
                best_e, best_gap = e, gap
        blocks.append(tuple(order[i:best_e]))
        i = best_e
    return blocks


def segment_spans(sizes: list[int], max_tasks: int, pair_tasks: int) -> list[tuple[int, int]]:
    """The segments (first block, one past the last) to solve, smallest first: every single
    block, every run of consecutive blocks with at most ``max_tasks`` tasks, and every pair of
    consecutive blocks with at most ``pair_tasks`` (a block may be one job larger than a block,
    e.g. a data-parallel job of 20 tasks: its pairs would never be tried otherwise); never all
    of them."""
    k = len(sizes)
    before = [0, *accumulate(sizes)]  # tasks of blocks 0..i-1

    def tasks(span: tuple[int, int]) -> int:
        return before[span[1]] - before[span[0]]

    spans = []
    for i in range(k):
        for j in range(i + 1, k + 1):
            t = tasks((i, j))
            wanted = j - i == 1 or t <= max_tasks or (j - i == 2 and t <= pair_tasks)
            if wanted and (i, j) != (0, k):
                spans.append((i, j))
            if j - i >= 2 and t > max_tasks:  # longer runs from i only have more tasks
                break
    return sorted(spans, key=lambda s: (tasks(s), s))


def segment_share(left: float, count: int, pair: bool) -> float:
    """The share of the ``left`` seconds one of ``count`` segments still to solve gets: an equal
    part, twice that for a segment of several blocks, at least :data:`MIN_SEGMENT_SECONDS`,
    at most all of it."""
    part = (2.0 if pair else 1.0) / count
    return min(1.0, max(part, MIN_SEGMENT_SECONDS / left))


def best_partition(k: int, bounds: dict[tuple[int, int], float]) -> list[tuple[int, int]] | None:
    """The partition of blocks 0..k-1 into solved segments with the largest sum of bounds
    (a longest path over the blocks); None if some block is not covered."""
    best: list[float] = [0.0] + [-math.inf] * k
    back: list[tuple[int, int] | None] = [None] * (k + 1)
    for j in range(1, k + 1):
        for i in range(j):
            if (i, j) in bounds and best[i] > -math.inf:
                v = best[i] + bounds[(i, j)]
                if v > best[j]:
                    best[j], back[j] = v, (i, j)
    if best[k] == -math.inf:
        return None
    parts: list[tuple[int, int]] = []
    j = k
    while j > 0:
        span = back[j]
        assert span is not None
        parts.append(span)
        j = span[0]
    return parts[::-1]


def subset_bound(
    instance: HareInstance,
    settings: SolverSettings,
    *,
    deadline: Deadline,
    block_tasks: int = 10,
    max_tasks: int = 30,
    pair_tasks: int = 40,
) -> SubsetBound:
    """The job-subset bound of the module docstring within ``deadline``, shared by the
    segments, small ones first (each gets its share of what is left, :func:`segment_share`),
    each solved with ``settings``; segments: :func:`segment_spans`."""
    t0 = time.perf_counter()
    blocks = arrival_blocks(instance, block_tasks)
    sizes = [_tasks(instance, b) for b in blocks]
    k = len(blocks)
    if k < 2:  # one block is the whole instance: nothing to decompose
        return SubsetBound(0.0, (), (), time.perf_counter() - t0)
    spans = segment_spans(sizes, max_tasks, pair_tasks)
    solved: dict[tuple[int, int], tuple[Segment, TaskSchedule | None]] = {}
    for idx, (i, j) in enumerate(spans):
        left = deadline.left()
        if left is not None and left <= MIN_SEGMENT_SECONDS:
            break
        share = 1.0 if left is None else segment_share(left, len(spans) - idx, j - i > 1)
        solved[(i, j)] = _solve_segment(
            instance, blocks, (i, j), solved, settings, deadline.share_of_rest(share)
        )
    parts = best_partition(k, {span: seg.bound for span, (seg, _) in solved.items()})
    if parts is None:  # some single block was not reached within the time limit
        return SubsetBound(0.0, (), tuple(s for s, _ in solved.values()), time.perf_counter() - t0)
    partition = tuple(solved[p][0] for p in parts)
    schedule = _merge(instance, [(solved[p][0].jobs, solved[p][1]) for p in parts])
    return SubsetBound(
        sum(s.bound for s in partition),
        partition,
        tuple(s for s, _ in solved.values()),
        time.perf_counter() - t0,
        _repaired(instance, schedule),
    )


def _solve_segment(
    instance: HareInstance,
    blocks: list[tuple[int, ...]],
    span: tuple[int, int],
    solved: dict[tuple[int, int], tuple[Segment, TaskSchedule | None]],
    settings: SolverSettings,
    deadline: Deadline,
) -> tuple[Segment, TaskSchedule | None]:
    """One segment by the CP-SAT route within ``deadline`` (its quick hint included), told
    what the segments inside it proved: the best partition of its blocks into solved segments
    bounds it (stated in the model as its lower bound, each part's bound on its jobs' sum), and
    their schedules put together are a hint when better than the quick ones. Its bound is never
    below that partition's."""
    from .cpsat import PriorBounds, solve_cpsat_native
    from .hint import best_hint
    from .scaling import scale_data, scaled_bound, scaled_objective

    i, j = span
    jobs = tuple(sorted(n for b in blocks[i:j] for n in b))
    sub = sub_instance(instance, jobs)
    local = {n: x for x, n in enumerate(jobs)}
    inner = {(a - i, b - i): seg_sched for (a, b), seg_sched in solved.items() if i <= a and b <= j}
    parts = (
        best_partition(j - i, {s: seg.bound for s, (seg, _) in inner.items()}) if inner else None
    )
    hint = best_hint(sub)[1]
    prior = None
    if parts is not None and len(parts) > 1:
        d = scale_data(sub)
        unit = d.unit
        segs = [inner[p][0] for p in parts]
        partial = tuple(
            (tuple(local[n] for n in s.jobs), scaled_bound(s.bound, unit))
            for s in segs
            if s.bound > 0
        )
        prior = PriorBounds(scaled_bound(sum(s.bound for s in segs), unit), partial)
        merged = _repaired(
            sub,
            _merge(
                sub,
                [
                    (tuple(local[n] for n in s.jobs), inner[p][1])
                    for s, p in zip(segs, parts, strict=True)
                ],
            ),
        )
        if merged is not None and scaled_objective(d, sub, merged) < scaled_objective(d, sub, hint):
            hint = merged
    s0 = time.perf_counter()
    res = solve_cpsat_native(sub, settings, deadline, hint, prior=prior)
    cert = certify(res.objective, res.proof, instance=sub.name, route="subset-bound")
    seg = Segment(
        span,
        jobs,
        sub.num_tasks,
        str(cert.status),
        res.objective,
        0.0 if cert.bound is None else float(cert.bound),  # a proven bound, never more
        time.perf_counter() - s0,
    )
    return seg, res.schedule


def _repaired(instance: HareInstance, schedule: TaskSchedule | None) -> TaskSchedule | None:
    """A merged schedule, or when its segments collide, a list schedule in its order."""
    from dlsched.errors import InfeasibleSolutionError
    from dlsched.models.hare.check import check_schedule

    if schedule is None:
        return None
    try:
        check_schedule(instance, schedule)
    except InfeasibleSolutionError:  # the segments collide: list-schedule in their order
        from .rounding import list_schedule

        order = [e.task for e in sorted(schedule.entries, key=lambda e: (e.start, e.task))]
        schedule = list_schedule(instance, order, "earliest-finish")
    return schedule


def _merge(
    instance: HareInstance, parts: list[tuple[tuple[int, ...], TaskSchedule | None]]
) -> TaskSchedule | None:
    """The segments' schedules in the full instance's job indices (None if one is missing)."""
    items: list[tuple[Any, int, float]] = []
    for jobs, sched in parts:
        if sched is None:
            return None
        for e in sched.entries:
            items.append(((jobs[e.job], e.round, e.index), e.gpu, e.start))
    return TaskSchedule.from_items(items)


__all__ = [
    "Segment",
    "SubsetBound",
    "arrival_blocks",
    "best_partition",
    "segment_spans",
    "sub_instance",
    "subset_bound",
]
