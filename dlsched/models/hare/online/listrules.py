"""List rules on rounds, the family's own online baselines (not the paper's algorithms), on
the shared event engine: shortest remaining time first (SRTF), the clairvoyant baseline of the
literature (Tiresias compares its non-clairvoyant 2D-LAS with it), and least attained service
first (LAS), its non-clairvoyant counterpart.

Online: a decision at time t uses only the jobs arrived by t (the engine reports each arrival)
and what ran so far. The SRTF rules are clairvoyant about sizes, and only about them: they read
each arrived job's number of rounds |R_n| (the other policies of this package do not), so its
remaining time is known, (|R_n| - rounds done) |D_n| min_m (T^c_nm + T^s_nm). The LAS rule
is not: its priority is the service attained, rounds done x |D_n| min_m (T^c_nm + T^s_nm)
(each round counted at the job's fastest, wherever it ran).

- ``online-srtf``: whenever GPUs are free, the ready jobs in order of remaining time (ties: job
  index) each start the ready tasks of their current round on their fastest free GPUs (T^c + T^s of
  the job, ties: GPU index), one task per GPU, until no GPU is free.
- ``srtf-fit``: the same, but a job takes a GPU only if its round time there is at most
  ``slowdown`` times its fastest (T^c_nm + T^s_nm <= slowdown min_m' (T^c_nm' + T^s_nm'),
  default :data:`SLOWDOWN`); a GPU that no ready job fits stays idle. On unrelated speeds
  (Gavel's K80 runs a ResNet-18 at a tenth of a V100's speed and a recommendation model at
  the V100's) this keeps each GPU type for the jobs it runs well: a task waits for a fast GPU
  rather than take a slow one for a round many times as long.
- ``las-fit``: ``srtf-fit`` with the least attained service first (ties: job index, the
  arrival order on a trace): non-clairvoyant, like Tiresias's LAS without its discretized
  queues, placed as ``srtf-fit`` places.

A decision costs O((tasks started + stale entries) log) with one heap of ready jobs per class
of GPUs with equal times for every job (:func:`.grouping.gpu_classes`): the next job
served is the best head among the classes with a free GPU, as in a scan of every ready job.
"""

from __future__ import annotations

import heapq
import math
from typing import Any

import numpy as np

from dlsched.errors import OptionError
from dlsched.models.hare.instance import HareInstance
from dlsched.simulate import Activity

from .common import OnlineHare
from .grouping import gpu_classes

#: ``srtf-fit``'s default most slowdown of a GPU over a job's fastest: measured on Gavel's
#: traces (docs/traces.md), where 1.5 to 3.5 do about as well and all are far better than no
#: limit; a choice made on those traces, not derived.
SLOWDOWN = 3.0


class ListRule(OnlineHare):
    """A list rule on rounds: the ready jobs by :meth:`priority` (smallest first, fixed
    between a job's round ends), each on its fastest free GPUs; ``slowdown``: the most a GPU's
    round time may exceed the job's fastest for the job to take it (``inf``: any free GPU)."""

    def __init__(self, instance: HareInstance, slowdown: float = math.inf) -> None:
        super().__init__(instance)
        self.per = instance.tc + instance.ts
        self.best = self.per.min(axis=1)
        classes = gpu_classes(np.vstack([instance.tc, instance.ts]))
        count = len(classes)
        self.cls = np.empty(instance.num_gpus, dtype=int)
        for k, members in enumerate(classes):
            self.cls[list(members)] = k
        first = [members[0] for members in classes]
        # per job: its acceptable classes in tiers of equal round time, fastest first
        self.tiers: list[list[list[int]]] = []
        for n in range(instance.num_jobs):
            times = self.per[n][first]
            ok = [k for k in range(count) if times[k] <= slowdown * self.best[n]]
            by: dict[float, list[int]] = {}
            for k in sorted(ok, key=lambda k: (times[k], k)):  # noqa: B023
                by.setdefault(float(times[k]), []).append(k)
            self.tiers.append(list(by.values()))
        self.heaps: list[list[tuple[float, int, int]]] = [[] for _ in range(count)]
        self.version: dict[int, int] = {}

    def priority(self, n: int) -> float:
        raise NotImplementedError

    def rounds_work(self, n: int, rounds: int) -> float:
        """``rounds`` rounds of job n at its fastest, its tasks one after another: rounds x
        |D_n| min_m (T^c_nm + T^s_nm)."""
        return float(rounds * self.instance.jobs[n].tasks_per_round * self.best[n])

    def _queue(self, n: int) -> None:
        v = self.version[n] = self.version.get(n, 0) + 1
        key = self.priority(n)
        for tier in self.tiers[n]:
            for k in tier:
                heapq.heappush(self.heaps[k], (key, n, v))

    def job_arrived(self, n: int, now: float) -> None:
        self._queue(n)

    def round_finished(self, n: int, now: float) -> None:
        if not self.jobs[n].done:
            self._queue(n)

    def _head(self, k: int) -> tuple[float, int, int] | None:
        heap = self.heaps[k]
        while heap and (heap[0][1] not in self.ready or heap[0][2] != self.version[heap[0][1]]):
            heapq.heappop(heap)
        return heap[0] if heap else None

    def assign(self, now: float) -> list[Activity]:
        free: dict[int, list[int]] = {}
        for g in sorted(self.free_gpus):
            free.setdefault(int(self.cls[g]), []).append(g)
        out: list[Activity] = []
        while free:  # the head of a class with a free GPU takes one of them at least
            heads = [h for k in free if (h := self._head(k)) is not None]
            if not heads:
                break
            _, n, _ = min(heads)
            for tier in self.tiers[n]:
                gpus = sorted(g for k in tier for g in free.get(k, ()))
                for g in gpus[: self.jobs[n].left]:
                    out.append(self.start_task(n, g, now))
                    free[int(self.cls[g])].remove(g)
                for k in tier:
                    if k in free and not free[k]:
                        del free[k]
                if self.jobs[n].left == 0:
                    break
        return out


class ShortestRemaining(ListRule):
    """SRTF: job n's remaining time on its fastest GPUs (clairvoyant: it reads |R_n|)."""

    def priority(self, n: int) -> float:
        return self.rounds_work(n, self.instance.jobs[n].rounds - self.jobs[n].rounds_done)


class LeastAttained(ListRule):
    """LAS: job n's attained service, its rounds done at its fastest (non-clairvoyant)."""

    def priority(self, n: int) -> float:
        return self.rounds_work(n, self.jobs[n].rounds_done)


def _slowdown(slowdown: Any) -> float:
    ok = isinstance(slowdown, int | float) and not isinstance(slowdown, bool)
    if not ok or not slowdown >= 1:
        raise OptionError("slowdown", slowdown, "expected a number >= 1")
    return float(slowdown)


def srtf(instance: HareInstance, slowdown: float = math.inf) -> OnlineHare:
    """The ``online-srtf`` (``slowdown`` inf) and ``srtf-fit`` policies."""
    return ShortestRemaining(instance, _slowdown(slowdown))


def las(instance: HareInstance, slowdown: float = SLOWDOWN) -> OnlineHare:
    """The ``las-fit`` policy."""
    return LeastAttained(instance, _slowdown(slowdown))


__all__ = ["SLOWDOWN", "LeastAttained", "ListRule", "ShortestRemaining", "las", "srtf"]
