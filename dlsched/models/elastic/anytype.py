"""``sjf-any``: shortest job first on any worker type, an online baseline for clusters of
several worker types (not an algorithm of Zhou et al.; docs/traces.md).

Online and clairvoyant about job sizes, as the SJF and SRTF baselines of the literature are
(Tiresias compares with SRTF): at each slot it knows the jobs arrived so far, their sizes and
the free resources, nothing of later arrivals. Non-preemptive, as the model (a run holds its
workers until it ends). At each slot, the waiting jobs in order of least duration d_j (the
shortest run of the job on the empty cluster, :func:`.flowbound.least_use`) each get, if it
fits now, the run that ends soonest over every worker type (and PS type):

- on type m, the worker count n of the shortest duration with the free workers (every
  worker colocated); while more jobs wait than workers are free (of every type, as many as
  fit in what is free), of the counts whose duration is at most (1 + ``slack``) times that,
  the one of least n x d instead, the fewest workers among equal ones (in a queue, a job
  that ends in one slot on one worker does not take eight, and more jobs start now;
  Ring-AllReduce workers beyond the first cost a slower iteration each);
  placed as the baselines place (:func:`.baselines.
  place`: one server if one holds it, else spread); among types that end it as soon, the type
  slowest for the job (a type fast for it is mostly fast for others: it is kept for them);
- the job waits when that run would last more than ``stretch`` times d_j (a slow type is not
  worth it; the next slot may free a fast one);
- a *long* job (d_j above ``long`` slots) starts only while the long jobs running hold at most
  ``share`` of each resource of the cluster with it: non-preemptive long runs taking every fast
  worker would leave a later burst of short jobs only the slow ones.

Near the horizon (when waiting ``stretch`` d_j more slots would pass T) a job takes any run
that fits, so that waiting never costs a schedule. Each job runs once: the schedule is checked
by :func:`.check.check_schedule` as every method's.
"""

from __future__ import annotations

import numpy as np

from dlsched.errors import OptionError
from dlsched.models import MethodOptions
from dlsched.models.elastic.baselines import ListPolicy, place, run_policy
from dlsched.models.elastic.enumerate import Config
from dlsched.models.elastic.flowbound import least_use
from dlsched.models.elastic.instance import ElasticInstance, durations, most_workers
from dlsched.models.elastic.solution import Run

#: Defaults of the parameters (``--param``): see the module docstring.
STRETCH = 3.0
LONG = 20.0
SHARE = 0.5
RESERVE = 1.0  # the slack parameter's default (a reserve, not a tolerance)


class AnyType(ListPolicy):
    """The policy of the module docstring on the shared slotted engine."""

    def __init__(
        self,
        inst: ElasticInstance,
        stretch: float = STRETCH,
        long: float = LONG,
        share: float = SHARE,
        slack: float = RESERVE,
    ):
        most = most_workers(inst)
        self.least = [least_use(inst, j, most)[0] for j in range(inst.num_jobs)]
        super().__init__(inst, lambda j: (self.least[j], j), lambda j, _: 1)
        self.stretch, self.long, self.share, self.slack = stretch, long, share, slack
        self.total = np.array([s.capacity for s in inst.servers], dtype=float).sum(axis=0)
        self.held: list[tuple[int, np.ndarray]] = []  # (end, use per resource): long runs

    def _fit(self, j: int, free: np.ndarray, t: int) -> Config | None:
        near = t + self.stretch * self.least[j] >= self.inst.horizon
        long = self.least[j] > self.long and not near
        room = None
        if long:
            self.held = [(end, use) for end, use in self.held if end > t]
            room = self.share * self.total - sum((use for _, use in self.held), np.zeros(1))
        slack = self.slack if len(self.waiting) > self._free_workers(free) else 0.0
        best = None
        for m in range(len(self.inst.worker_types)):
            for p in self.inst.ps_choices():
                cfg = self._candidate(j, m, p, free, t, room, slack)
                if cfg is not None and (best is None or self._better(cfg, best)):
                    best = cfg
        if best is None or (not near and best.duration > self.stretch * self.least[j]):
            return None
        if long:
            use = best.usage.sum(axis=0)
            if room is not None and (use > room + 1e-9).any():  # its PSs too
                return None
            self.held.append((t + best.duration, use))
        return best

    def _better(self, a: Config, b: Config) -> bool:
        """Sooner, else on the type slower for this job (fast for it is fast for others)."""
        v = self.inst.jobs[a.job].minibatch_time
        return (a.duration, -v[a.worker_type]) < (b.duration, -v[b.worker_type])

    def _fits(self, m: int, free: np.ndarray) -> int:
        """How many workers of type m fit in ``free`` [H, R]."""
        e = np.array(self.inst.worker_types[m].demand)
        pos = e > 0
        if not pos.any():
            return 0
        return int(np.floor(free[:, pos] / e[pos] + 1e-9).min(axis=1).clip(0).sum())

    def _free_workers(self, free: np.ndarray) -> int:
        return sum(self._fits(m, free) for m in range(len(self.inst.worker_types)))

    def _candidate(
        self,
        j: int,
        m: int,
        p: int,
        free: np.ndarray,
        t: int,
        room: np.ndarray | None,
        slack: float,
    ) -> Config | None:
        """Job j's run on workers of type m (PS type p) now: the least n x d within
        ``slack`` of the shortest; the fastest when that one does not fit or end by T."""
        e = np.array(self.inst.worker_types[m].demand)
        pos = e > 0
        top = min(self.inst.jobs[j].chunks, self._fits(m, free))
        if room is not None and top >= 1:
            top = min(top, int(np.floor((room[pos] / e[pos]).min() + 1e-9)))
        if top < 1:
            return None
        n = np.arange(1, top + 1)
        d = durations(self.inst, j, m, p if self.inst.is_ps else None, n, True)
        within = d <= (1 + slack) * d.min()
        k = int(n[within][np.argmin((n * d)[within])])  # least n x d, then fewest workers
        cfg = place(self.inst, j, k, free, t, (m, p))
        if cfg is None and k != top:
            cfg = place(self.inst, j, top, free, t, (m, p))
        return cfg


def _number(options: MethodOptions, name: str, default: float, low: float, high: float) -> float:
    value = options.param(name, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise OptionError(f"--param {name}", value, f"expected a number from {low:g} to {high:g}")
    return float(value)


def sjf_any(inst: ElasticInstance, options: MethodOptions) -> Run:
    """The policy of the module docstring; ``--param`` stretch (>= 1), long (slots), share
    (0 to 1) and slack (>= 0)."""
    policy = AnyType(
        inst,
        _number(options, "stretch", STRETCH, 1.0, 1e6),
        _number(options, "long", LONG, 0.0, 1e6),
        _number(options, "share", SHARE, 0.0, 1.0),
        _number(options, "slack", RESERVE, 0.0, 1e6),
    )
    return run_policy(inst, policy, options)


__all__ = ["LONG", "RESERVE", "SHARE", "STRETCH", "AnyType", "sjf_any"]
