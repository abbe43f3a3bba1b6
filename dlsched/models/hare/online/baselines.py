"""Online baselines of Chen et al., IEEE TCC 2024, Section VI-D, on the shared event engine.
None of them knows a job's rounds or future arrivals; the readings are recorded in
docs/errata.md.

- ``online-fifo``: Gavel's FIFO (Section VI-A): jobs in arrival order, no overtaking; the head
  job waits until min(|D_r|, |M|) GPUs are idle, takes the fastest idle ones (T^c + T^s of that
  job) and keeps them until it is done; each round's tasks are dealt onto them by earliest
  finish. It is the offline ``gavel-fifo`` run on the engine (the same schedule).
- ``2d-las``: Tiresias's discretized 2D attained service: service = GPU time of the tasks run
  so far, K queues on it (the thresholds of HLAS, quantum = the smallest one-round GPU time
  |D_n| mean_m T^c_nm), FIFO by arrival in a queue; a round needs min(|D_r|, |M|) idle GPUs at
  once (gang, scale-fixed), takes the lowest-indexed ones (heterogeneity-oblivious) and frees
  each when its tasks are trained; priorities are revisited at every round (preemption at round
  boundaries), and a job that does not fit is skipped for the next (work-conserving).
- ``sched-homo-unit``: Sched_Homo with unit job sizes: Smith's rule on weight / 1 (ties by job
  index), gang on the lowest-indexed idle GPUs, job-level non-preemption, waits for the first
  job in that order. With equal job sizes it is the offline ``sched-homo``.
- ``sched-allox-unit``: AlloX with unit job sizes: whenever GPUs are idle, the waiting jobs are
  matched to (idle GPU, position) slots at cost position x (one round on that GPU); each idle
  GPU starts the job of its first slot and runs it alone to completion (no intra-job
  parallelism). The matching takes the 64 longest-waiting jobs (:data:`ALLOX_WINDOW`) so that
  a decision stays cheap under heavy load.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np

from dlsched.models.hare.instance import HareInstance
from dlsched.simulate import Activity

from .common import OnlineHare, deal
from .hlas import Thresholds

#: AlloX matches at most this many waiting jobs (the longest-waiting) per decision.
ALLOX_WINDOW = 64


class Planned(OnlineHare):
    """Jobs own GPUs; a round's tasks are dealt onto the owned GPUs up front (a count per GPU)
    and started back to back. ``hold`` keeps a job's GPUs between rounds until it is done.
    Subclasses keep the waiting jobs (:meth:`enqueue`) and start new ones (:meth:`start_new`)
    on :attr:`idle` GPUs (free and owned by nobody)."""

    hold = True

    def __init__(self, instance: HareInstance) -> None:
        super().__init__(instance)
        self.owner: dict[int, int] = {}
        self.plan: dict[int, Counter[int]] = {}
        self.gpus_of: dict[int, list[int]] = {}
        self.idle: set[int] = set(range(instance.num_gpus))
        self.relaunch: list[int] = []
        self.to_resume: set[int] = set()

    def job_arrived(self, n: int, now: float) -> None:
        self.enqueue(n)

    def gpu_freed(self, g: int, n: int, now: float) -> None:
        if g in self.owner:
            self.to_resume.add(self.owner[g])
        else:
            self.idle.add(g)

    def round_finished(self, n: int, now: float) -> None:
        if self.jobs[n].done or not self.hold:
            for g in self.gpus_of.pop(n, []):
                self._release(g, n)
            if not self.jobs[n].done:
                self.enqueue(n)
        else:
            self.relaunch.append(n)

    def _release(self, g: int, n: int) -> None:
        """Job n gives GPU g back (if it still owns it)."""
        if self.owner.get(g) == n:
            del self.owner[g]
            if g in self.free_gpus:
                self.idle.add(g)

    def launch(self, n: int, gpus: list[int], now: float) -> list[Activity]:
        job = self.instance.jobs[n]
        self.plan[n] = Counter(g for g, _ in deal(job.tasks_per_round, gpus, job.train_time))
        self.gpus_of[n] = gpus
        for g in gpus:
            self.owner[g] = n
            self.idle.discard(g)
        return self.resume(n, now)

    def resume(self, n: int, now: float) -> list[Activity]:
        """Start job n's next planned task on each of its free GPUs; free what it is done with
        (unless it holds its GPUs)."""
        out = []
        for g in self.gpus_of.get(n, []):
            if g in self.free_gpus and self.plan[n][g] > 0:
                self.plan[n][g] -= 1
                out.append(self.start_task(n, g, now))
            elif not self.hold and g in self.free_gpus:
                self._release(g, n)
        return out

    def assign(self, now: float) -> list[Activity]:
        out = []
        for n in self.relaunch:
            out.extend(self.launch(n, self.gpus_of[n], now))
        self.relaunch = []
        for n in sorted(self.to_resume):
            out.extend(self.resume(n, now))
        self.to_resume.clear()
        if self.idle:
            out.extend(self.start_new(now))
        return out

    def enqueue(self, n: int) -> None:
        raise NotImplementedError

    def start_new(self, now: float) -> list[Activity]:
        raise NotImplementedError

    def need(self, n: int) -> int:
        return min(self.instance.jobs[n].tasks_per_round, self.instance.num_gpus)

    def lowest_idle(self, count: int) -> list[int]:
        return heapq.nsmallest(count, self.idle)


class Gang(Planned):
    """Waits for the first job by ``key`` (job index -> sortable) to get min(|D_r|, |M|) idle
    GPUs (``fastest``: its fastest ones, else the lowest-indexed); no overtaking."""

    def __init__(self, instance: HareInstance, key: Callable[[int], Any], fastest: bool) -> None:
        super().__init__(instance)
        self.key, self.fastest = key, fastest
        self.waiting: list[tuple[Any, int]] = []

    def enqueue(self, n: int) -> None:
        heapq.heappush(self.waiting, (self.key(n), n))

    def start_new(self, now: float) -> list[Activity]:
        out: list[Activity] = []
        while self.waiting:
            n = self.waiting[0][1]
            need = self.need(n)
            if len(self.idle) < need:
                break
            heapq.heappop(self.waiting)
            if self.fastest:
                per = self.instance.tc[n] + self.instance.ts[n]
                chosen = heapq.nsmallest(need, self.idle, key=lambda g: (per[g], g))  # noqa: B023
            else:
                chosen = self.lowest_idle(need)
            out.extend(self.launch(n, sorted(chosen), now))
        return out


class TwoDLAS(Planned):
    """Tiresias's 2DAS on rounds: discretized attained GPU time, gang per round, backfilling.
    Waiting jobs are kept in one heap per gang size, so the best job that fits is found by
    looking at the heads only."""

    hold = False

    def __init__(self, instance: HareInstance, thresholds: Thresholds) -> None:
        super().__init__(instance)
        self.thresholds = thresholds
        self.service: dict[int, float] = {}
        self.by_need: dict[int, list[tuple[Any, int]]] = {}

    def gpu_freed(self, g: int, n: int, now: float) -> None:
        self.service[n] = self.service.get(n, 0.0) + self.instance.jobs[n].train_time[g]
        super().gpu_freed(g, n, now)

    def enqueue(self, n: int) -> None:
        key = (self.thresholds.queue_of(self.service.get(n, 0.0)), self.instance.jobs[n].arrival)
        heapq.heappush(self.by_need.setdefault(self.need(n), []), ((*key, n), n))

    def start_new(self, now: float) -> list[Activity]:
        out: list[Activity] = []
        while self.idle:
            heads = [
                (h[0], need) for need, h in self.by_need.items() if h and need <= len(self.idle)
            ]
            if not heads:
                break
            (_, n), need = min(heads)
            heapq.heappop(self.by_need[need])
            out.extend(self.launch(n, self.lowest_idle(need), now))
        return out


class AlloXUnit(Planned):
    """AlloX's min-cost matching with unit job sizes, one GPU per job, re-solved on events over
    the :data:`ALLOX_WINDOW` longest-waiting jobs."""

    def __init__(self, instance: HareInstance) -> None:
        super().__init__(instance)
        self.waiting: list[int] = []

    def enqueue(self, n: int) -> None:
        self.waiting.append(n)

    def start_new(self, now: float) -> list[Activity]:
        from scipy.optimize import linear_sum_assignment  # only this policy needs SciPy

        if not self.waiting:
            return []
        idle, waiting = sorted(self.idle), self.waiting[:ALLOX_WINDOW]
        jobs = self.instance.jobs
        one_round = [
            [jobs[n].tasks_per_round * jobs[n].train_time[g] + jobs[n].sync_time[g] for g in idle]
            for n in waiting
        ]
        p = np.array(one_round)
        q = np.arange(1, len(waiting) + 1)
        cost = (p[:, :, None] * q[None, None, :]).reshape(len(waiting), -1)  # slot = (gpu, q)
        rows, cols = linear_sum_assignment(cost)
        first: dict[int, tuple[int, int]] = {}  # gpu -> (position from last, job): largest runs
        for r, c in zip(rows, cols, strict=True):
            g, pos = idle[c // len(waiting)], c % len(waiting)
            if g not in first or pos > first[g][0]:
                first[g] = (pos, waiting[r])
        out: list[Activity] = []
        for g, (_, n) in sorted(first.items()):
            self.waiting.remove(n)
            out.extend(self.launch(n, [g], now))
        return out


def online_fifo(instance: HareInstance) -> OnlineHare:
    jobs = instance.jobs
    return Gang(instance, lambda n: (jobs[n].arrival, n), fastest=True)


def sched_homo_unit(instance: HareInstance) -> OnlineHare:
    jobs = instance.jobs
    return Gang(instance, lambda n: (1.0 / jobs[n].weight, n), fastest=False)


def sched_allox_unit(instance: HareInstance) -> OnlineHare:
    return AlloXUnit(instance)


def two_d_las(instance: HareInstance, thresholds: Thresholds) -> OnlineHare:
    return TwoDLAS(instance, thresholds)


def default_2dlas_quantum(instance: HareInstance) -> float:
    """The smallest one-round GPU time |D_n| mean_m T^c_nm over the job profiles."""
    d = np.array([j.tasks_per_round for j in instance.jobs], dtype=float)
    return float((d * instance.tc.mean(axis=1)).min())


__all__ = [
    "AlloXUnit",
    "Gang",
    "Planned",
    "TwoDLAS",
    "default_2dlas_quantum",
    "online_fifo",
    "sched_allox_unit",
    "sched_homo_unit",
    "two_d_las",
]
