"""HLAS and HLAS-P: Heterogeneity-aware Least-Attained Service (Chen et al., IEEE TCC 2024,
Section IV-C, Algorithms 1-3; Section V-B), on the shared event engine.

Preparation: the GPUs are split into groups by GPU_Grouping (:mod:`.grouping`); job n's
average group speed is s_n = mean_u sum_{m in u} s_nm and its average one-round time
T_n = |D_n| / s_n. Run time: job size H_n(t) = R^r_n(t) T_n (rounds run so far times T_n;
HLAS-P adds the predicted rounds: (R^r_n + R^p_n) T_n). K queues Q_1..Q_K (Q_1 first) hold
the sizes [E_k^L, E_k^H) of :class:`Thresholds`. A new job enters Q_1. When a group is idle
(none of its GPUs trains), it serves the highest non-empty queue: a job whose current round is
partially scheduled first, else first in, first out (by the time the job entered the queue);
it keeps taking jobs in that order while it has free GPUs (Algorithm 3 returns a list; errata),
each job's tasks on the group's fastest free GPUs for that job, at most one task per GPU. A
job's size, hence its queue, is updated when its round ends (demotion).

HLAS-P: each queue has two sub-queues; q^1 (R^p > 0, first, larger R^p first) and q^2 (R^p = 0,
FIFO). While a job runs predicted rounds, R^p falls as R^r grows and its size is unchanged; a
predictor (:mod:`.predictors`) is asked at arrival and whenever R^p reaches 0, and told every
round's end (progress of NAS peers) and every job's end (its history).

Defaults (docs/errata.md): K = 10 queues with linear thresholds E_k^H = k q, the
quantum q the smallest T_n of the instance's job profiles; event-driven decisions (the slots of
Algorithm 1 shrunk to the events). ``group_idle="any"`` is a work-conserving variant: a group
takes work as soon as one of its GPUs is idle.
"""

from __future__ import annotations

import bisect
import heapq
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dlsched.errors import OptionError
from dlsched.models.hare.instance import HareInstance
from dlsched.simulate import Activity

from .common import OnlineHare
from .grouping import Groups
from .predictors import Predictor

#: Default number of queues K.
QUEUES = 10
SPACINGS = ("linear", "geometric")
#: When a group may take work: "all" its GPUs idle (as written) or "any" GPU idle (variant).
GROUP_IDLE = ("all", "any")
#: Relative slack when placing a size on a threshold (H = k q computed in floating point).
SIZE_TOL = 1e-9


@dataclass(frozen=True)
class Thresholds:
    """E_k^H of Q_1..Q_{K-1} (Q_K is unbounded above; E_k^L = E_{k-1}^H, E_1^L = 0)."""

    upper: tuple[float, ...]

    @property
    def queues(self) -> int:
        return len(self.upper) + 1

    def queue_of(self, size: float) -> int:
        """0-based queue index of a job of this size."""
        return bisect.bisect_right(self.upper, size * (1 + SIZE_TOL) + SIZE_TOL)


def make_thresholds(
    quantum: float, queues: Any = QUEUES, spacing: Any = "linear", explicit: Any = None
) -> Thresholds:
    """Linear (E_k^H = k q) or geometric (E_k^H = 2^(k-1) q) thresholds, or an explicit
    increasing list of E_k^H (then K = len + 1)."""
    if explicit is not None:
        ok = isinstance(explicit, list | tuple) and all(
            isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and v > 0
            for v in explicit
        )
        if not ok or list(explicit) != sorted(set(explicit)):
            raise OptionError("thresholds", explicit, "expected increasing positive numbers")
        return Thresholds(tuple(float(v) for v in explicit))
    if isinstance(queues, bool) or not isinstance(queues, int) or not 1 <= queues <= 1000:
        raise OptionError("queues", queues, "expected an integer from 1 to 1000")
    if spacing not in SPACINGS:
        raise OptionError("spacing", spacing, f"expected one of {', '.join(SPACINGS)}")
    k = range(1, queues)
    up = [quantum * (i if spacing == "linear" else 2 ** (i - 1)) for i in k]
    return Thresholds(tuple(up))


def round_times(instance: HareInstance, groups: Groups) -> np.ndarray:
    """T_n = |D_n| / s_n, s_n the mean over groups of sum_{m in u} 1 / (T^c_nm + T^s_nm)."""
    s = 1.0 / (instance.tc + instance.ts)
    mean = np.mean([s[:, list(g)].sum(axis=1) for g in groups], axis=0)
    d = np.array([j.tasks_per_round for j in instance.jobs], dtype=float)
    return np.asarray(d / mean)


def default_quantum(instance: HareInstance, groups: Groups) -> float:
    """The smallest average one-round time T_n over the instance's job profiles."""
    return float(round_times(instance, groups).min())


class HLAS(OnlineHare):
    """Algorithms 1-3 (``predictor`` None) or HLAS-P (with a predictor)."""

    def __init__(
        self,
        instance: HareInstance,
        groups: Groups,
        thresholds: Thresholds,
        predictor: Predictor | None = None,
        group_idle: str = "all",
    ) -> None:
        super().__init__(instance)
        if group_idle not in GROUP_IDLE:
            raise OptionError("group_idle", group_idle, f"expected one of {', '.join(GROUP_IDLE)}")
        self.group_idle = group_idle
        self.groups = groups
        self.group_of = {g: u for u, grp in enumerate(groups) for g in grp}
        self.busy = [0] * len(groups)
        self.thresholds = thresholds
        self.t_bar = round_times(instance, groups)
        self.predictor = predictor
        self.rp: dict[int, int] = {}  # predicted additional rounds R^p
        self.place: dict[int, tuple[int, int]] = {}  # job -> (queue, sub-queue)
        self.entered: dict[int, float] = {}
        self.per_task = instance.tc + instance.ts
        self._heap: list[tuple[tuple[Any, ...], int]] = []
        self._key: dict[int, tuple[Any, ...]] = {}
        self.open = set(range(len(groups)))  # groups that may take work now

    # --- queues --------------------------------------------------------------------------
    def _requeue(self, n: int, now: float) -> None:
        size = (self.jobs[n].rounds_done + self.rp.get(n, 0)) * self.t_bar[n]  # H_n(t)
        place = (self.thresholds.queue_of(size), 0 if self.rp.get(n, 0) > 0 else 1)
        if self.place.get(n) != place:
            self.place[n] = place
            self.entered[n] = now
        self._push(n)

    def _predict(self, n: int) -> None:
        if self.predictor is not None:
            self.rp[n] = self.predictor.predict(n, self.jobs[n].rounds_done)

    def job_arrived(self, n: int, now: float) -> None:
        self._predict(n)
        self._requeue(n, now)

    def round_finished(self, n: int, now: float) -> None:
        st = self.jobs[n]
        if self.predictor is not None:
            self.predictor.observed(n, st.rounds_done)
        if st.done:
            if self.predictor is not None:
                self.predictor.finished(n, st.rounds_done)
            self.place.pop(n, None)
            return
        if self.rp.get(n, 0) > 0:
            self.rp[n] -= 1  # a predicted round ran: R^r + R^p unchanged
        if self.rp.get(n, 0) == 0:
            self._predict(n)
        self._requeue(n, now)

    def gpu_freed(self, g: int, n: int, now: float) -> None:
        u = self.group_of[g]
        self.busy[u] -= 1
        self._update_open(u)

    def priority(self, n: int) -> tuple[Any, ...]:
        """Queue, partially scheduled first, sub-queue, larger R^p first (q^1), FIFO."""
        k, sub = self.place[n]
        st = self.jobs[n]
        partial = 0 < st.left < self.instance.jobs[n].tasks_per_round
        return (k, not partial, sub, -self.rp.get(n, 0), self.entered[n], n)

    # --- the ready jobs in priority order: a heap with stale entries skipped ---------------
    def _push(self, n: int) -> None:
        key = self.priority(n)
        self._key[n] = key
        heapq.heappush(self._heap, (key, n))

    def _pop(self) -> int | None:
        while self._heap:
            key, n = heapq.heappop(self._heap)
            if n in self.ready and self._key.get(n) == key:
                return n
        return None

    def _update_open(self, u: int) -> None:
        cap = 1 if self.group_idle == "all" else len(self.groups[u])
        if self.busy[u] < cap:
            self.open.add(u)
        else:
            self.open.discard(u)

    # --- Algorithm 3 -----------------------------------------------------------------------
    def assign(self, now: float) -> list[Activity]:
        out: list[Activity] = []
        if not self.open or not self.ready:
            return out
        for u in sorted(self.open):
            free = [g for g in self.groups[u] if g in self.free_gpus]
            while free and self.ready:
                n = self._pop()
                if n is None:
                    break
                speed = self.per_task[n]
                for g in sorted(free, key=lambda m: (speed[m], m)):  # noqa: B023
                    if self.jobs[n].left == 0:
                        break
                    out.append(self.start_task(n, g, now))
                    free.remove(g)
                    self.busy[u] += 1
                if self.jobs[n].left > 0:
                    self._push(n)  # partially scheduled: first of its queue from now on
            self._update_open(u)
        return out


__all__ = [
    "GROUP_IDLE",
    "HLAS",
    "QUEUES",
    "SPACINGS",
    "Thresholds",
    "default_quantum",
    "make_thresholds",
    "round_times",
]
