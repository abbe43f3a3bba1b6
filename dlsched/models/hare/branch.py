"""Chronological branch and bound for small Hare_Sched instances (a few jobs, tens of tasks).

Chen et al., *Hare*, HPDC 2022, Section 5.1, model (4)-(8) on the integer data of
:mod:`scaling` (exact scaling only). CP-SAT and the time-indexed LP prove these instances
slowly: the barrier of a round is the *latest* finish of its tasks and every job competes for
the fast GPUs, so the LP relaxations sit 10-15 % below the optimum (benchmarks/READING_hare.md).
This search enumerates schedules task by task in order of start and proves by exhaustion.

**Enumeration.** A node is a prefix of a schedule: the tasks placed so far, each with a GPU and
a start. A child appends one more task of some job (the next one of its current round; tasks of
one round are interchangeable, so only their count matters) on some GPU m, starting at
s = max(free_m, release of its round, start of the previous task). Every schedule is dominated
by one so generated: sort any feasible schedule by start and re-place its tasks in that order
with this rule; by induction every start only moves earlier (each term of the max is no later
than in the schedule), so the result is feasible and no costlier (the objective is
non-decreasing in every finish). An optimal schedule is therefore among the leaves.

**Bound.** The cost of the finished jobs plus, for each unfinished job, w_n times the earliest
completion of that job alone: the rest of its current round on GPUs free from max(free_m,
release), its tasks split over the GPUs in the best way (tasks of the round on one GPU run one
after the other), then each further round at least ``rho_n``, the shortest round of the job
on idle GPUs; at each node, the stronger queue bound (:meth:`_Search.queue_bound`): every
task left takes a distinct place in some GPU's queue, behind the shortest trainings left on
that GPU, and is costed by an assignment. A node whose bound reaches the incumbent is cut.

**Dominance (exact, no loss).** (a) Two prefixes with the same task counts per job: if one has
every GPU free no later, every job's release and partial round finish no later, and no higher
cost of finished jobs, every completion of the other can be replayed from it at no higher
cost; the other is cut. Free times and releases are raised to the current start (nothing can
start earlier any more), and a partial round's latest finish to the alone end of the round
(every completion finishes the round no earlier, so its barrier is unchanged), which makes
more prefixes comparable. (b) Equal starts in a row are
placed in one order only (lower (job, GPU) first): the other order places the first task no
later and the second at the same start. (c) A task put on GPU m at s while another job's next
task could train entirely in the idle time before s on m (and its sync there is no longer than
its shortest training plus sync anywhere) is cut: moving that task into the gap makes it finish
no later wherever it was, and frees its GPU. (d) Identical GPUs (equal columns) with equal free
times are interchangeable: only the first is tried.

Each cut keeps some schedule at least as good among the explored ones (a well-founded argument:
every replacement moves starts earlier on the integer grid), so a search that ends proves its
incumbent optimal. A search stopped by the deadline proves nothing and only its incumbent is
used.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

from dlsched.models.hare.instance import HareInstance
from dlsched.models.hare.solution import TaskSchedule
from dlsched.solvers.progress import note

from .scaling import ScaledData

#: Largest number of tasks per round the search accepts: the scope it was measured on (its
#: bounds no longer enumerate a round's splits, so they would not need the limit).
MAX_ROUND_TASKS = 4
#: Entries of the bound's cache (per job, round position and GPU availability) before it
#: is emptied.
CACHE_SIZE = 2_000_000
#: The queue bound's float sum, times 1 + this, is taken off before it is rounded up to an
#: integer: far above the rounding error of its terms (entries within a few ulps, a few hundred
#: of them summed) at every magnitude.
FLOAT_SLACK = 1e-9


@dataclass(frozen=True)
class BranchResult:
    """``objective``: the best schedule's cost in scaled units (None if none beat ``upper``);
    ``proven``: the search ended, so nothing costs less than min(objective, upper)."""

    schedule: TaskSchedule | None
    objective: int | None
    proven: bool
    nodes: int
    seconds: float


def applicable(instance: HareInstance) -> bool:
    """Rounds of at most :data:`MAX_ROUND_TASKS` tasks."""
    return all(j.tasks_per_round <= MAX_ROUND_TASKS for j in instance.jobs)


def _slots(tc: tuple[int, ...], ts: tuple[int, ...], k: int) -> list[tuple[int, int]]:
    """The places of up to k interchangeable tasks: (GPU m, c tc_m + ts_m) for c = 1 .. k,
    the finish of the c-th of them run one after the other on m, counted from m's free time."""
    return [(m, c * tc[m] + ts[m]) for m in range(len(tc)) for c in range(1, k + 1)]


def _best_end(slots: list[tuple[int, int]], avail: Sequence[int], k: int) -> int:
    """The earliest the last of k tasks can finish, GPU m free from avail[m]: the k-th
    smallest place. The k smallest places take a prefix 1 .. c_m on every GPU (its places
    grow with c), so they are a split of the k tasks over the GPUs, and none ends later."""
    if k == 1:
        return min([avail[m] + v for m, v in slots])
    return sorted([avail[m] + v for m, v in slots])[k - 1]


class _Search:
    """The depth-first search of the module docstring (state kept in lists, undone on return)."""

    def __init__(self, instance: HareInstance, d: ScaledData, upper: int, deadline: float | None):
        self.n_jobs, self.n_gpus = instance.num_jobs, instance.num_gpus
        self.size = [j.tasks_per_round for j in instance.jobs]
        self.rounds = [j.rounds for j in instance.jobs]
        self.total = [j.rounds * j.tasks_per_round for j in instance.jobs]
        self.tc, self.ts, self.w = d.tc, d.ts, d.weight
        self.slots = [
            [_slots(d.tc[n], d.ts[n], k) for k in range(self.size[n] + 1)]
            for n in range(self.n_jobs)
        ]
        zero = [0] * self.n_gpus
        self.rho = [
            _best_end(self.slots[n][self.size[n]], zero, self.size[n]) for n in range(self.n_jobs)
        ]
        self.fmin = [
            min(a + b for a, b in zip(d.tc[n], d.ts[n], strict=True)) for n in range(self.n_jobs)
        ]
        self.movable = [
            [m for m in range(self.n_gpus) if d.ts[n][m] <= self.fmin[n]]
            for n in range(self.n_jobs)
        ]
        cols = [(tuple(c[m] for c in d.tc), tuple(c[m] for c in d.ts)) for m in range(self.n_gpus)]
        self.twin = [
            next(k for k in range(m) if cols[k] == cols[m]) if cols[m] in cols[:m] else -1
            for m in range(self.n_gpus)
        ]
        self.by_training = [
            sorted((row[m], n) for n, row in enumerate(d.tc)) for m in range(self.n_gpus)
        ]
        self.best = upper
        self.moves: list[tuple[int, int, int]] = []
        self.best_moves: list[tuple[int, int, int]] | None = None
        self.seen: dict[tuple[int, ...], np.ndarray] = {}
        self.tc_np = np.array(d.tc, dtype=np.int64)
        self.tcs_np = self.tc_np + np.array(d.ts, dtype=np.int64)
        self.w_np = np.array(d.weight, dtype=np.int64)
        self.deadline = deadline
        self.nodes = 0
        self.cache: dict[tuple[int, int, tuple[int, ...]], int] = {}
        self.by_counts: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray, int, int]] = {}
        self.stopped = False

    def alone(
        self, counts: list[int], free: list[int], rel: list[int], pm: list[int]
    ) -> list[tuple[int, int, int]]:
        """(job, earliest end of its current round alone, the rounds after it at rho_n each)
        for every unfinished job."""
        out = []
        cache = self.cache
        base = tuple(free)
        low = min(free)
        for n in range(self.n_jobs):
            c = counts[n]
            if c == self.total[n]:
                continue
            r, k = divmod(c, self.size[n])
            r0 = rel[n]
            avail = base if r0 <= low else tuple([f if f > r0 else r0 for f in free])
            key = (n, k, avail)
            end = cache.get(key)
            if end is None:
                end = cache[key] = _best_end(
                    self.slots[n][self.size[n] - k], avail, self.size[n] - k
                )
            if pm[n] > end:
                end = pm[n]
            out.append((n, end, (self.rounds[n] - r - 1) * self.rho[n]))
        if len(cache) > CACHE_SIZE:
            cache.clear()
        return out

    def queue_bound(
        self, counts: list[int], free: list[int], rel: list[int], jobs: list[tuple[int, int, int]]
    ) -> int:
        """The alone bound with the GPUs' queues. Every task left (all rounds) is the p-th task
        (from 0) started on some GPU m from now on, no two tasks in the same place, so it
        starts at or after free_m plus the p shortest trainings on m among the tasks left
        (:meth:`_ahead`: the p tasks before it on m are tasks left, each holding m for its
        training), and at or after its round's release: rel_n for the current round, e_n +
        i rho_n for the i-th round after it (from 0; e_n the alone end of the current round,
        each round at least rho_n). Job n ends no earlier than its alone bound e_n + t_n, and
        than each of its tasks' finish plus the rounds after that task's at rho_n each; hence
        no earlier than the mean over its K_n tasks left of the larger of the two: each task
        carries w_n / K_n of it. The cheapest assignment of tasks to places (scipy's
        linear_sum_assignment, float costs) bounds the sum of w_n C_n of the unfinished jobs;
        the scaled objective is an integer, so the bound is rounded up after taking off a
        relative :data:`FLOAT_SLACK`."""
        key = tuple(counts)
        fixed = self.by_counts.get(key)
        if fixed is None:
            fixed = self.by_counts[key] = self._fixed(counts)
        ahead, busy, q, _ = fixed
        release, tail, floor, weight = self._rows(counts, rel, jobs)
        starts = np.maximum((np.asarray(free)[:, None] + ahead)[None, :, :], release[:, None, None])
        fin = starts + (busy + tail[:, None])[:, :, None]
        cost = (np.maximum(fin, floor[:, None, None]) * weight[:, None, None]).reshape(q, -1)
        r, c = linear_sum_assignment(cost)
        total = float(cost[r, c].sum())
        return math.ceil(total - FLOAT_SLACK * (1.0 + abs(total)))

    def _fixed(self, counts: list[int]) -> tuple[np.ndarray, np.ndarray, int, int]:
        """What the search needs of the task counts alone: :meth:`_ahead`, each task left's
        training plus sync per GPU (tasks in :meth:`_rows`' order), their number, and the
        weight of the unfinished jobs."""
        rows = [n for n in range(self.n_jobs) for _ in range(self.total[n] - counts[n])]
        weight = sum(w for w, c, t in zip(self.w, counts, self.total, strict=True) if c < t)
        return self._ahead(counts, len(rows)), self.tcs_np[rows], len(rows), weight

    def _rows(
        self, counts: list[int], rel: list[int], jobs: list[tuple[int, int, int]]
    ) -> np.ndarray:
        """(4, tasks left, job by job): round release, later rounds at rho_n, job's alone
        bound and w_n / K_n (:meth:`queue_bound`)."""
        release: list[int] = []
        tail: list[int] = []
        floor: list[int] = []
        weight: list[float] = []
        for n, e, t in jobs:
            size, rho = self.size[n], self.rho[n]
            k = size - counts[n] % size
            left = self.total[n] - counts[n]
            floor += [e + t] * left
            weight += [self.w[n] / left] * left
            release += [rel[n]] * k
            tail += [t] * k
            for i in range((left - k) // size):
                release += [e + i * rho] * size
                tail += [t - (i + 1) * rho] * size
        return np.array([release, tail, floor, weight])

    def _ahead(self, counts: list[int], q: int) -> np.ndarray:
        """(M, q): column p, row m: the sum of the p shortest trainings on m among every task
        left (all rounds of the unfinished jobs), a lower bound on the GPU time taken on m by
        the p tasks started there before the p-th (counted from 0)."""
        out = []
        for order in self.by_training:
            row, acc, need = [0], 0, q - 1
            for tc, n in order:
                c = min(self.total[n] - counts[n], need)
                row += range(acc + tc, acc + tc * c + 1, tc)
                acc, need = acc + tc * c, need - c
                if not need:
                    break
            out.append(row)
        return np.array(out, dtype=np.int64)

    def dominated(self, counts: list[int], vec: tuple[int, ...], cost: int) -> bool:
        """Dominance (a) against the prefixes kept for the same counts; keeps ``vec`` if not
        (called after :meth:`queue_bound`, which fills ``by_counts``).
        A prefix later by at most delta in every time and cheaper by delta times the weight of
        the unfinished jobs dominates too (replay the other's completion delta later)."""
        key = tuple(counts)
        v = np.array((*vec, cost), dtype=np.int64)
        front = self.seen.get(key)
        if front is None:
            self.seen[key] = v[None, :]
            return False
        weight = self.by_counts[key][3]
        times, costs = front[:, :-1], front[:, -1]
        late = np.maximum((times - v[:-1]).max(axis=1), 0)
        if (costs + late * weight <= cost).any():
            return True
        early = np.maximum((v[:-1] - times).max(axis=1), 0)
        keep = cost + early * weight > costs
        self.seen[key] = np.vstack([front[keep], v])
        return False

    def run(self, counts, free, rel, pm, cost, tau, last, jobs) -> None:  # type: ignore[no-untyped-def]
        """Expand a node whose bound is below the incumbent (``jobs``: its :meth:`alone`
        list): its children in order of start, each cut as soon as its bound reaches the
        incumbent."""
        self.nodes += 1
        deadline = self.deadline
        if deadline is not None and not self.nodes & 255 and time.perf_counter() >= deadline:
            self.stopped = True
        if self.stopped or cost + self.queue_bound(counts, free, rel, jobs) >= self.best:
            return
        if self.dominated(counts, (*free, *rel, *self._barriers(jobs)), cost):
            return
        kids = []
        for n, m, s in self._children(counts, free, rel, tau, last):
            child = self._place(n, m, s, counts, free, rel, pm, cost)
            c2, f2, r2, p2, cost2 = child
            if c2 == self.total:
                if cost2 < self.best:
                    self.best, self.best_moves = cost2, [*self.moves, (n, m, s)]
                continue
            alone = self.alone(c2, f2, r2, p2)
            lb = cost2 + sum(self.w[j] * (end + tail) for j, end, tail in alone)  # alone bound
            if lb < self.best:
                kids.append((s, lb, n, m, child, alone))
        kids.sort(key=lambda kid: kid[:4])
        for s, lb, n, m, (c2, f2, r2, p2, cost2), alone in kids:
            if lb >= self.best:
                continue
            self.moves.append((n, m, s))
            self.run(c2, f2, r2, p2, cost2, s, (n, m), alone)
            self.moves.pop()

    def _barriers(self, jobs: list[tuple[int, int, int]]) -> list[int]:
        """Per job, the alone end of its current round (0 if done): a lower bound on its
        barrier whatever the rest of the schedule, so it stands for the partial round's
        latest finish in dominance (a)."""
        ends = [0] * self.n_jobs
        for n, e, _ in jobs:
            ends[n] = e
        return ends

    def _children(self, counts, free, rel, tau, last):  # type: ignore[no-untyped-def]
        kids = []
        first_end = self._first_end(counts, free, rel)
        for n in range(self.n_jobs):
            if counts[n] == self.total[n]:
                continue
            for m in range(self.n_gpus):
                t = self.twin[m]
                if t >= 0 and free[t] == free[m]:
                    continue  # (d)
                s = max(free[m], rel[n], tau)
                if s == tau and last is not None and (n, m) < last:
                    continue  # (b)
                if s >= first_end:
                    continue  # (c)
                kids.append((s, n, m))
        kids.sort()
        return [(n, m, s) for s, n, m in kids]

    def _first_end(self, counts, free, rel) -> float:  # type: ignore[no-untyped-def]
        """The earliest end of training of any job's next task on any GPU where its sync is
        no longer than its shortest training plus sync: no child starts at or after it (c)."""
        best = float("inf")
        for n in range(self.n_jobs):
            if counts[n] == self.total[n]:
                continue
            for m in self.movable[n]:
                e = max(free[m], rel[n]) + self.tc[n][m]
                if e < best:
                    best = e
        return best

    def _place(self, n, m, s, counts, free, rel, pm, cost):  # type: ignore[no-untyped-def]
        """The child state after task n's next task on GPU m at s (times raised to s)."""
        size = self.size[n]
        finish = s + self.tc[n][m] + self.ts[n][m]
        r, k = divmod(counts[n], size)
        c2 = list(counts)
        c2[n] += 1
        f2 = [f if f > s else s for f in free]
        f2[m] = s + self.tc[n][m]
        p2 = list(pm)
        p2[n] = max(pm[n], finish)
        r2 = list(rel)
        cost2 = cost
        if k + 1 == size:  # the round is complete: its latest finish is the next barrier
            r2[n], p2[n] = p2[n], 0
            if r + 1 == self.rounds[n]:  # the job is done: only its cost matters now
                cost2 += self.w[n] * r2[n]
                r2[n] = 0
        for j in range(self.n_jobs):
            if c2[j] < self.total[j] and r2[j] < s:
                r2[j] = s
        return c2, f2, r2, p2, cost2


def _schedule(
    instance: HareInstance, d: ScaledData, moves: list[tuple[int, int, int]]
) -> TaskSchedule:
    """The moves (job, GPU, scaled start) as a schedule, tasks numbered in order."""
    placed = [0] * instance.num_jobs
    items = []
    for n, m, s in moves:
        r, k = divmod(placed[n], instance.jobs[n].tasks_per_round)
        placed[n] += 1
        items.append(((n, r, k), m, s / d.time_scale))
    return TaskSchedule.from_items(items)


def branch_and_bound(
    instance: HareInstance, d: ScaledData, upper: int, deadline: float | None = None
) -> BranchResult:
    """Search for a schedule of scaled cost below ``upper`` (the cost of a known schedule);
    ``proven`` when the search ended before ``deadline`` (a ``time.perf_counter()`` value).
    Needs exactly scaled data and :func:`applicable`."""
    if not d.exact or not applicable(instance):
        raise ValueError("branch_and_bound needs exactly scaled data and small rounds")
    t0 = time.perf_counter()
    search = _Search(instance, d, upper, deadline)
    unit = d.time_scale * d.weight_scale
    note(
        lambda: (
            f"branch and bound: {search.nodes:,} nodes, searching below {search.best / unit:.10g}"
        )
    )
    n_jobs = instance.num_jobs
    state = ([0] * n_jobs, [0] * instance.num_gpus, list(d.arrival), [0] * n_jobs)
    search.run(*state, 0, 0, None, search.alone(*state))
    search.seen.clear()
    moves = search.best_moves
    return BranchResult(
        None if moves is None else _schedule(instance, d, moves),
        None if moves is None else search.best,
        not search.stopped,
        search.nodes,
        time.perf_counter() - t0,
    )


__all__ = ["MAX_ROUND_TASKS", "BranchResult", "applicable", "branch_and_bound"]
