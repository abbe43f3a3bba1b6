"""Gamma_j: every schedule of one job that is feasible on the empty cluster, dominated ones
removed (Zhou et al., Section 5.1, the compact-exponential ILP (8)/(17)).

A schedule l is a *configuration* (worker type m, PS type p, workers y_h and PSs s_h per server,
duration d) and a start t. Its usage f_jh^r(l) does not change over its slots, so l' dominates l
when both start at t, d' <= d and f(l') <= f(l) on every server and resource: l' occupies a subset
of l's slots with no more resources and completes no later. Removing dominated configurations
removes exactly the dominated schedules, and changes neither the ILP optimum nor its LP value
(any weight on a dominated column moves to its dominator).

Two reductions are applied while generating, each a dominance of the same kind:

- d is the fewest slots of (2f) for the configuration: a longer d is dominated;
- the PSs sit on one server (the paper's own A_mincost1 does the same): a PS set S needs
  s_h = max(1, ceil(sum_{h' != h} y_h' b_m / B_p)) on each h in S by (2i) and (2e), so S
  containing h is dominated by {h} alone (no fewer PSs on h, q_j no better).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from dlsched.errors import DlschedError
from dlsched.models.elastic.instance import ElasticInstance, duration
from dlsched.models.elastic.solution import JobSchedule
from dlsched.solvers.deadline import NEVER, Deadline

#: Default cap on the candidate configurations examined for one job (before dominance).
MAX_CONFIGS = 100_000


class EnumerationTooLarge(DlschedError):
    """Gamma_j has more configurations than the cap: the exact route does not apply."""


class EnumerationTimeUp(Exception):
    """The enumeration passed its deadline; ``done`` jobs had their Gamma_j complete."""

    def __init__(self, done: int = 0) -> None:
        super().__init__("deadline passed")
        self.done = done


def _check(deadline: Deadline) -> None:
    if deadline.passed():
        raise EnumerationTimeUp()


@dataclass(frozen=True)
class Config:
    """A configuration of job ``job``: everything of a schedule but its start."""

    job: int
    worker_type: int
    ps_type: int
    workers: tuple[int, ...]
    ps: tuple[int, ...]
    duration: int
    usage: np.ndarray = field(compare=False, repr=False)  # [server, resource]

    def at(self, start: int) -> JobSchedule:
        return JobSchedule(
            self.job, start, self.duration, self.worker_type, self.ps_type, self.workers, self.ps
        )

    def starts(self, inst: ElasticInstance) -> range:
        """Every start t with a_j <= t and t + d <= T."""
        return range(inst.jobs[self.job].arrival, inst.horizon - self.duration + 1)


@dataclass(frozen=True)
class Gamma:
    """The configurations of one job, and how many were generated before dominance."""

    job: int
    configs: tuple[Config, ...]
    generated: int

    def num_schedules(self, inst: ElasticInstance) -> int:
        return sum(len(c.starts(inst)) for c in self.configs)


def worker_caps(inst: ElasticInstance, m: int, limit: int) -> list[int]:
    """Most type-m workers each server holds alone (at most ``limit``)."""
    e = inst.worker_types[m].demand
    out = []
    for s in inst.servers:
        fits = [math.floor(c / x + 1e-9) for c, x in zip(s.capacity, e, strict=True) if x > 0]
        out.append(min([limit, *fits]))
    return out


def compositions(caps: list[int], low: int, high: int) -> Iterator[tuple[int, ...]]:
    """Vectors y with 0 <= y_h <= caps[h] and low <= sum(y) <= high."""

    def rec(h: int, left: int) -> Iterator[tuple[int, ...]]:
        if h == len(caps):
            yield ()
            return
        rest = sum(caps[h + 1 :])
        for y in range(min(caps[h], left) + 1):
            if high - left + y + rest < low:  # cannot reach ``low`` any more
                continue
            for tail in rec(h + 1, left - y):
                yield (y, *tail)

    yield from rec(0, high)


def ps_count(inst: ElasticInstance, m: int, p: int, remote_workers: int) -> int:
    """Fewest type-p PSs on one server meeting (2e) and (2i) for ``remote_workers``."""
    need = remote_workers * inst.worker_types[m].bandwidth / inst.ps_types[p].bandwidth
    return max(1, math.ceil(need * (1 - 1e-12)))


def _fits(inst: ElasticInstance, usage: np.ndarray) -> bool:
    cap = np.array([s.capacity for s in inst.servers])
    return bool((usage <= cap + 1e-9 * np.maximum(cap, 1.0)).all())


def _usage(inst: ElasticInstance, m: int, p: int | None, y: tuple, s: tuple) -> np.ndarray:
    u = np.outer(np.array(y, dtype=float), np.array(inst.worker_types[m].demand))
    if p is not None:
        u += np.outer(np.array(s, dtype=float), np.array(inst.ps_types[p].demand))
    return u


def _ps_configs(inst: ElasticInstance, j: int, m: int, y: tuple[int, ...]) -> Iterator[Config]:
    """The configurations of worker placement ``y`` under PS: each PS type on each server."""
    n, room, h_count = sum(y), inst.horizon - inst.jobs[j].arrival, inst.num_servers
    for p in inst.ps_choices():
        for h in range(h_count):
            s = [0] * h_count
            s[h] = ps_count(inst, m, p, n - y[h])
            d = duration(inst, j, m, p, n, y[h] == n)
            u = _usage(inst, m, p, y, tuple(s))
            if d <= room and _fits(inst, u):
                yield Config(j, m, p, y, tuple(s), d, u)


def _ring_config(inst: ElasticInstance, j: int, m: int, y: tuple[int, ...]) -> Iterator[Config]:
    """The configuration of worker placement ``y`` under Ring-AllReduce (if it fits T)."""
    n = sum(y)
    d = duration(inst, j, m, None, n, sum(1 for v in y if v) == 1)
    if d <= inst.horizon - inst.jobs[j].arrival:
        yield Config(j, m, 0, y, (0,) * len(y), d, _usage(inst, m, None, y, ()))


def _raw_configs(
    inst: ElasticInstance, j: int, max_configs: int, deadline: Deadline = NEVER
) -> Iterator[Config]:
    """Every candidate configuration; :class:`EnumerationTooLarge` once more than
    ``max_configs`` candidates (fitting or not) have been examined, :class:`EnumerationTimeUp`
    past ``deadline``."""
    chunks = inst.jobs[j].chunks
    per_placement = len(inst.ps_choices()) * inst.num_servers if inst.is_ps else 1
    examined = 0
    for m in range(len(inst.worker_types)):
        for y in compositions(worker_caps(inst, m, chunks), 1, chunks):
            examined += per_placement
            _check(deadline)
            if examined > max_configs:
                raise EnumerationTooLarge(
                    f"job {inst.jobs[j].name}: Gamma_j has more than {max_configs} candidate "
                    f"configurations (up to D_j = {chunks} workers over {inst.num_servers} "
                    "servers); the exact route does not apply: use lp-bound (column "
                    "generation) or a-online, or raise --param max_configs"
                )
            yield from (_ps_configs if inst.is_ps else _ring_config)(inst, j, m, y)


def pareto(configs: list[Config], deadline: Deadline = NEVER) -> list[Config]:
    """The configurations no other one dominates (ties: the first one is kept);
    :class:`EnumerationTimeUp` past ``deadline``."""
    if not configs:
        return []
    d = np.array([c.duration for c in configs], dtype=float)
    u = np.array([c.usage.ravel() for c in configs])
    keep = []
    for i in range(len(configs)):
        _check(deadline)
        le = (d <= d[i]) & (u <= u[i] + 1e-12).all(axis=1)
        eq = (d == d[i]) & (np.abs(u - u[i]) <= 1e-12).all(axis=1)
        le[i] = False
        strict = le & ~eq
        earlier_twin = eq.copy()
        earlier_twin[i:] = False
        if not strict.any() and not earlier_twin.any():
            keep.append(configs[i])
    return keep


def gamma(
    inst: ElasticInstance, j: int, max_configs: int = MAX_CONFIGS, deadline: Deadline = NEVER
) -> Gamma:
    """Gamma_j of job j (configurations; starts by :meth:`Config.starts`), dominance applied.

    Raises :class:`EnumerationTooLarge` once more than ``max_configs`` candidates are examined,
    :class:`EnumerationTimeUp` past ``deadline``.
    """
    raw = list(_raw_configs(inst, j, max_configs, deadline))
    return Gamma(j, tuple(pareto(raw, deadline)), len(raw))


def enumerate_all(
    inst: ElasticInstance, max_configs: int = MAX_CONFIGS, deadline: Deadline = NEVER
) -> list[Gamma]:
    """Gamma_j of every job; :class:`EnumerationTimeUp` (with how many jobs were done) past
    ``deadline``."""
    out: list[Gamma] = []
    try:
        for j in range(inst.num_jobs):
            out.append(gamma(inst, j, max_configs, deadline))
    except EnumerationTimeUp:
        raise EnumerationTimeUp(len(out)) from None
    return out
