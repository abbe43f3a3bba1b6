"""Baselines of Zhou et al., Section 7, as non-preemptive list policies on the shared engine
:mod:`dlsched.simulate` (one tick per slot), and the greedy of Jain et al. [44] for the
maximum weighted schedule problem.

Each job runs its *ideal* configuration (the paper: "the resource configuration of workers
(and PSs) is the same as that in the ideal case"): the worker type with the shortest v_jm and
the PS type with the shortest U_j^p; the policies differ in how many workers they give and in
which order they start jobs:

- ``fifo``: arrival order with head-of-line blocking, a fixed number of workers
  (``--param workers``, default 4, at most D_j and at most what the empty cluster holds);
- ``drf``: Dominant Resource Fairness: each job's worker count gives it an equal dominant share
  of the cluster among the jobs present (at least one worker), jobs in arrival order;
- ``tiresias``: smallest (work x resources) first, the 2D-LAS priority of Tiresias for jobs
  that have attained no service (no preemption: the paper's model has none);
- ``antman``: jobs of at least the median weight are resource-guaranteed (started first, fixed
  worker count); the others are opportunistic and take as many workers as fit now.

A job starts only where it fits now on every server (the engine enforces capacities) and ends
by the horizon T; when some job never can, no schedule is returned and the outcome names the
jobs left (``details["unscheduled_jobs"]``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from dlsched.errors import OptionError
from dlsched.models import MethodOptions
from dlsched.models.elastic.algorithms import ArrivalQueue
from dlsched.models.elastic.enumerate import Config, ps_count
from dlsched.models.elastic.instance import ElasticInstance, duration
from dlsched.models.elastic.pricing import Pricer
from dlsched.models.elastic.solution import ElasticSchedule, Run
from dlsched.simulate import Activity, Simulator, simulate
from dlsched.solvers.deadline import NEVER, Deadline


def ideal_types(inst: ElasticInstance, j: int) -> tuple[int, int]:
    job = inst.jobs[j]
    m = min(range(len(inst.worker_types)), key=lambda k: (job.minibatch_time[k], k))
    if not inst.is_ps:
        return m, 0
    p = min(range(len(inst.ps_types)), key=lambda k: (job.ps_update_time[k], k))
    return m, p


def place(
    inst: ElasticInstance,
    j: int,
    n: int,
    free: np.ndarray,
    now: int,
    kinds: tuple[int, int] | None = None,
) -> Config | None:
    """n workers (and PSs) of ``kinds`` (worker type, PS type; default the ideal ones)
    fitting ``free`` [H, R] now and ending by T: on one server if one holds them (q = 1),
    else PSs on the roomiest server that works with as many of the workers as fit beside
    them, the rest on the servers with most room."""
    m, p = ideal_types(inst, j) if kinds is None else kinds
    e = np.array(inst.worker_types[m].demand)
    z = np.array(inst.ps_types[p].demand) if inst.is_ps else np.zeros_like(e)
    pos = e > 0
    caps = np.floor(free[:, pos] / e[pos] + 1e-9).min(axis=1).astype(int) if pos.any() else None
    caps = np.full(inst.num_servers, n) if caps is None else np.clip(caps, 0, n)
    p_arg = p if inst.is_ps else None
    one = np.nonzero((free >= n * e + z - 1e-9).all(axis=1))[0]
    if len(one):
        return _config(
            inst,
            j,
            m,
            p,
            {int(one[0]): n},
            {int(one[0]): 1},
            now,
            duration(inst, j, m, p_arg, n, True),
        )
    d = duration(inst, j, m, p_arg, n, False)
    for h in np.argsort(-free.sum(axis=1), kind="stable").tolist():
        rest = caps.sum() - caps[h]
        for g in range(min(int(caps[h]), n - 1), max(-1, n - 1 - rest - 1), -1):
            s = ps_count(inst, m, p, n - g) if inst.is_ps else 0
            if (g * e + s * z <= free[h] + 1e-9).all() and rest >= n - g:
                y = {h: g} if g else {}
                left = n - g
                for k in np.argsort(-caps, kind="stable").tolist():
                    if k != h and left > 0:
                        y[k] = min(int(caps[k]), left)
                        left -= y[k]
                return _config(inst, j, m, p, y, {h: s} if s else {}, now, d)
        if not inst.is_ps:
            break  # Ring-AllReduce has no PS home: one greedy fill suffices
    return None


def _config(
    inst: ElasticInstance, j: int, m: int, p: int, y: dict, s: dict, now: int, d: int
) -> Config | None:
    if now + d > inst.horizon:
        return None
    h_count = inst.num_servers
    yy = tuple(int(y.get(h, 0)) for h in range(h_count))
    ss = tuple(int(s.get(h, 0)) if inst.is_ps else 0 for h in range(h_count))
    u = np.outer(np.array(yy, dtype=float), np.array(inst.worker_types[m].demand))
    if inst.is_ps:
        u += np.outer(np.array(ss, dtype=float), np.array(inst.ps_types[p].demand))
    return Config(j, m, p, yy, ss, d, u)


class ListPolicy(ArrivalQueue):
    """Start waiting jobs, in the order ``key`` gives, with ``count(job)`` workers;
    :class:`~.algorithms.TimeUp` at a decision past ``deadline``."""

    deadline: Deadline = NEVER
    started = 0  # jobs started so far

    def __init__(
        self,
        inst: ElasticInstance,
        key: Callable[[int], Any],
        count: Callable[[int, list[int]], int],
        blocking: bool = False,
        shrink: Callable[[int], bool] = lambda j: False,
    ):
        """``blocking``: stop at the first job that does not fit (head-of-line); ``shrink(j)``:
        job j may start with fewer workers than ``count`` gives (down to one)."""
        self.inst, self.key, self.count, self.blocking = inst, key, count, blocking
        self.shrink = shrink
        self.waiting: list[int] = []
        self._cache: dict[tuple[int, int], int] = {}

    def decide(self, now: float, sim: Simulator) -> list[Activity]:
        from dlsched.models.elastic.algorithms import TimeUp

        if self.deadline.passed():
            raise TimeUp(self.started)
        t = round(now)
        free = np.array(
            [
                [sim.free((h, r)) for r in range(len(self.inst.resources))]
                for h in range(self.inst.num_servers)
            ]
        )
        out = []
        for j in sorted(self.waiting, key=self.key):
            cfg = self._fit(j, free, t)
            if cfg is None:
                if self.blocking:
                    break
                continue
            free -= cfg.usage
            hs, rs = cfg.usage.nonzero()
            use = {(int(h), int(r)): float(cfg.usage[h, r]) for h, r in zip(hs, rs, strict=True)}
            out.append(Activity(j, float(cfg.duration), use, cfg.at(t)))
        started = {a.key for a in out}
        self.started += len(started)
        self.waiting = [j for j in self.waiting if j not in started]
        return out

    def _most(self, j: int, n: int) -> int:
        """n, or fewer when even the empty cluster cannot hold n workers of job j."""
        if (j, n) not in self._cache:
            cap = np.array([s.capacity for s in self.inst.servers], dtype=float)
            k, start = n, self.inst.jobs[j].arrival
            while k > 1 and place(self.inst, j, k, cap, start) is None:
                k -= 1
            self._cache[(j, n)] = k
        return self._cache[(j, n)]

    def _fit(self, j: int, free: np.ndarray, t: int) -> Config | None:
        n = self._most(j, self.count(j, self.waiting))
        for k in range(n, 0 if self.shrink(j) else n - 1, -1):
            cfg = place(self.inst, j, k, free, t)
            if cfg is not None:
                return cfg
        return None


def _workers(options: MethodOptions) -> int:
    value = options.param("workers", 4)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 10_000:
        raise OptionError("--param workers", value, "expected an integer from 1 to 10000")
    return value


def run_policy(inst: ElasticInstance, policy: ListPolicy, options: MethodOptions) -> Run:
    """Simulate ``policy`` within ``options.deadline``; when it passes, no schedule (status
    time_limit)."""
    from dlsched.models.elastic.algorithms import TimeUp, cut_details

    arrivals = [(float(j.arrival), k) for k, j in enumerate(inst.jobs)]
    cap = {(h, r): c for h, s in enumerate(inst.servers) for r, c in enumerate(s.capacity)}
    policy.deadline = options.deadline
    try:
        res = simulate(arrivals, cap, policy, tick=1.0, horizon=float(inst.horizon))
    except TimeUp as cut:
        return None, cut_details(
            options, {}, f"after starting {cut.priced} of {inst.num_jobs} jobs"
        )
    entries = [a.payload for a in res.activities]
    if len(entries) < inst.num_jobs:  # the others could not start and end by T
        left = sorted(set(range(inst.num_jobs)) - {a.key for a in res.activities})
        names = [inst.jobs[j].name for j in left]
        return None, {"unscheduled_jobs": names, "scheduled_jobs": len(entries)}
    return ElasticSchedule.of(entries), {}


def _dominant(inst: ElasticInstance, j: int) -> float:
    """The dominant share of one ideal worker (and its PS share) of the whole cluster."""
    m, p = ideal_types(inst, j)
    total = np.array([s.capacity for s in inst.servers]).sum(axis=0)
    d = np.array(inst.worker_types[m].demand)
    share = np.divide(d, total, out=np.zeros_like(d), where=total > 0)
    return float(share.max()) or 1e-9


def fifo(inst: ElasticInstance, options: MethodOptions) -> Run:
    k = _workers(options)
    policy = ListPolicy(
        inst, lambda j: (inst.jobs[j].arrival, j), lambda j, _: min(k, inst.jobs[j].chunks), True
    )
    return run_policy(inst, policy, options)


def drf(inst: ElasticInstance, options: MethodOptions) -> Run:
    def count(j: int, waiting: list[int]) -> int:
        fair = 1.0 / max(1, len(waiting))
        return max(1, min(inst.jobs[j].chunks, math.floor(fair / _dominant(inst, j))))

    return run_policy(inst, ListPolicy(inst, lambda j: (inst.jobs[j].arrival, j), count), options)


def tiresias(inst: ElasticInstance, options: MethodOptions) -> Run:
    k = _workers(options)

    def key(j: int) -> tuple[float, int]:
        n = min(k, inst.jobs[j].chunks)
        m, _ = ideal_types(inst, j)
        work = inst.jobs[j].minibatches * inst.jobs[j].minibatch_time[m]
        return (work * n * _dominant(inst, j), j)

    policy = ListPolicy(inst, key, lambda j, _: min(k, inst.jobs[j].chunks))
    return run_policy(inst, policy, options)


def antman(inst: ElasticInstance, options: MethodOptions) -> Run:
    k = _workers(options)
    median = float(np.median([j.weight for j in inst.jobs]))
    guaranteed = {j for j, job in enumerate(inst.jobs) if job.weight >= median}

    def key(j: int) -> tuple[int, int, int]:
        return (0 if j in guaranteed else 1, inst.jobs[j].arrival, j)

    def count(j: int, waiting: list[int]) -> int:
        return min(k, inst.jobs[j].chunks) if j in guaranteed else inst.jobs[j].chunks

    policy = ListPolicy(inst, key, count, shrink=lambda j: j not in guaranteed)
    return run_policy(inst, policy, options)


BASELINES: dict[str, Callable[[ElasticInstance, MethodOptions], Run]] = {
    "fifo": fifo,
    "drf": drf,
    "tiresias": tiresias,
    "antman": antman,
}


def greedy_maxweight(
    inst: ElasticInstance, jobs: list[int], window: tuple[int, int]
) -> list[tuple[int, Config, int]]:
    """The greedy of Jain et al. [44] for the maximum weighted schedule problem: jobs by
    decreasing value density (w_j over its least resource consumption), each at its earliest
    completion in what is left of the window, or not at all."""
    from dlsched.models.elastic.algorithms import Ledger, consumption_bounds
    from dlsched.models.elastic.pricing import price_job

    cons = consumption_bounds(inst)
    order = sorted(jobs, key=lambda j: (-inst.jobs[j].weight / max(cons[j], 1e-12), j))
    ledger = Ledger(inst)
    zero = np.zeros_like(ledger.used)
    out = []
    for j in order:
        got = price_job(Pricer(inst, zero, ledger.free(), window), j)
        if got.config is not None:
            ledger.commit(got.config, got.start)
            out.append((j, got.config, got.start))
    return out
