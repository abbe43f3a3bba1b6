"""A user's online elastic policy (Zhou et al., TCC) on the shared slotted engine: what it
sees, what it may start, :func:`fit` (a placement helper) and :func:`run_user_policy`.

At every slot while a job waits (and at the slots it asked to be woken at) the policy's
``decide(view)`` receives an :class:`ElasticView` and returns the jobs to start now, each a
:class:`Start` (a waiting job's worker type and workers per server, and under the parameter
server architecture its PS type and PSs per server), or a :class:`~dlsched.online.policy.Wake`
(rounded up to a whole slot). A started job holds its workers (and PSs) for its duration d_j,
the fewest slots that train its E_j D_j K_j mini-batches at the speed of that configuration
(eq. (1) or (14), (2f)), and must end by the horizon T; it cannot be stopped.

Online and clairvoyant about arrived jobs, as the paper's A_online is: an
:class:`ElasticJobView` carries an arrived job's whole profile (epochs, chunks, mini-batches,
per-type mini-batch times, gradient size), so its duration on any configuration follows; jobs
not yet arrived are not seen. :func:`fit` places a job as the family's baselines do (one server
if one holds it, else spread; the ideal types by default) on what is free.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, cast

import numpy as np

from dlsched.models import MethodOptions
from dlsched.models.elastic.baselines import ideal_types, place
from dlsched.models.elastic.instance import ElasticInstance, ElasticJob, NodeType, Server, duration
from dlsched.models.elastic.solution import ElasticSchedule, JobSchedule
from dlsched.online.policy import checked, decisions, hook, index, policy_name, refused
from dlsched.result import Outcome, on_request, verified_outcome
from dlsched.simulate import Activity, Simulator, Started, simulate

#: What one start looks like, in the errors of a wrong decision.
FORM = (
    "Start(job=<index of a waiting job in view.jobs>, worker_type=<index>, workers={server: "
    "count}, ps_type=<index>, ps={server: count}) fitting the free resources and ending by T"
)


@dataclass(frozen=True, slots=True)
class Start:
    """Start waiting job ``job`` now with ``workers[h]`` workers of type ``worker_type`` on
    server h (and ``ps[h]`` parameter servers of type ``ps_type``; none under Ring-AllReduce)."""

    job: int
    worker_type: int
    workers: Mapping[int, int]
    ps_type: int = 0
    ps: Mapping[int, int] | None = None


@dataclass(frozen=True, slots=True)
class ElasticCluster:
    """What every policy knows of the cluster: the architecture, the horizon T (slots), the
    resources, the servers (capacities C_h^r), the worker and PS types (demands, bandwidth)."""

    architecture: str
    horizon: int
    resources: tuple[str, ...]
    servers: tuple[Server, ...]
    worker_types: tuple[NodeType, ...]
    ps_types: tuple[NodeType, ...]
    slot_seconds: float

    @property
    def is_ps(self) -> bool:
        return self.architecture == "ps"

    @property
    def num_servers(self) -> int:
        return len(self.servers)

    @property
    def capacity(self) -> tuple[tuple[float, ...], ...]:
        return tuple(s.capacity for s in self.servers)


@dataclass(frozen=True, slots=True)
class ElasticJobView:
    """An arrived job as an online (clairvoyant) policy knows it: its profile, and its run
    once started (``start``, ``end``: slots; None while waiting)."""

    index: int
    profile: ElasticJob  # name, arrival, weight, epochs, chunks, ... (instance format)
    start: int | None = None
    end: int | None = None

    @property
    def waiting(self) -> bool:
        return self.start is None


@dataclass(frozen=True, slots=True)
class ElasticView:
    """The state at a decision: slot ``now``, the arrived unfinished jobs in arrival order,
    the free amount of each resource per server (``free[h][r]``) and the cluster."""

    now: int
    jobs: tuple[ElasticJobView, ...]
    free: tuple[tuple[float, ...], ...]
    cluster: ElasticCluster

    @property
    def waiting(self) -> tuple[ElasticJobView, ...]:
        return tuple(j for j in self.jobs if j.start is None)


class _Known:
    """The cluster and one arrived job, read as an instance by the family's placement."""

    def __init__(self, cluster: ElasticCluster, job: ElasticJobView) -> None:
        self.cluster = cluster
        self.jobs = {job.index: job.profile}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.cluster, name)


def usage(cluster: ElasticCluster, start: Start) -> np.ndarray:
    """[H, R]: what ``start`` holds on each server."""
    h = cluster.num_servers
    y = np.zeros(h)
    for m, n in start.workers.items():
        y[m] += n
    out = np.outer(y, np.array(cluster.worker_types[start.worker_type].demand, dtype=float))
    if cluster.is_ps and start.ps:
        s = np.zeros(h)
        for m, n in start.ps.items():
            s[m] += n
        out += np.outer(s, np.array(cluster.ps_types[start.ps_type].demand, dtype=float))
    return out


def fit(
    view: ElasticView,
    job: ElasticJobView,
    workers: int,
    worker_type: int | None = None,
    ps_type: int | None = None,
    *,
    after: Iterable[Start] = (),
    empty: bool = False,
) -> Start | None:
    """``workers`` workers of ``job`` placed as the family's baselines place them (one server
    if one holds them, else spread, with the PSs they need) on what is free once the starts
    ``after`` have started (``empty``: on the empty cluster, from the job's arrival), ending by
    T; the ideal types (shortest mini-batch and PS update times) unless given. None: no room."""
    cluster = view.cluster
    if empty:
        free, at = np.array(cluster.capacity, dtype=float), job.profile.arrival
    else:
        free, at = np.array(view.free, dtype=float), view.now
        for s in after:
            free -= usage(cluster, s)
    known = cast(ElasticInstance, _Known(cluster, job))
    m, p = ideal_types(known, job.index)
    kinds = (m if worker_type is None else worker_type, p if ps_type is None else ps_type)
    cfg = place(known, job.index, workers, free, at, kinds)
    if cfg is None:
        return None
    y = {h: n for h, n in enumerate(cfg.workers) if n}
    ps = {h: n for h, n in enumerate(cfg.ps) if n} if cluster.is_ps else None
    return Start(job.index, cfg.worker_type, y, cfg.ps_type, ps)


class UserElastic:
    """The engine policy (one decision per slot while a job waits) that asks a user's policy:
    builds the views, checks every start against the free resources and the horizon."""

    def __init__(self, inst: ElasticInstance, user: Any) -> None:
        self.inst, self.user = inst, user
        self.cluster = ElasticCluster(
            inst.architecture,
            inst.horizon,
            inst.resources,
            inst.servers,
            inst.worker_types,
            inst.ps_types,
            inst.slot_seconds,
        )
        self.views: dict[int, ElasticJobView] = {}
        self.waiting = 0
        self.last = 0

    def pending(self) -> bool:
        return self.waiting > 0

    def on_arrival(self, job: Hashable, now: float, sim: Simulator) -> None:
        j = int(job)  # type: ignore[call-overload]
        self.views[j] = view = ElasticJobView(j, self.inst.jobs[j])
        self.waiting += 1
        if (arrived := hook(self.user, "on_arrival")) is not None:
            arrived(view)

    def on_complete(self, act: Started, now: float, sim: Simulator) -> None:
        view = self.views.pop(int(act.key))  # type: ignore[call-overload]
        if (complete := hook(self.user, "on_complete")) is not None:
            complete(view)

    def decide(self, now: float, sim: Simulator) -> list[Activity]:
        t = self.last = round(now)
        r = len(self.inst.resources)
        free = tuple(
            tuple(sim.free((h, k)) for k in range(r)) for h in range(self.inst.num_servers)
        )
        view = ElasticView(t, tuple(self.views.values()), free, self.cluster)
        starts, wakes = decisions(self.user.decide(view), Start, FORM, now)
        out = [self.activity(s, t, sim) for s in starts]
        for at in wakes:
            sim.wake(float(math.ceil(at - 1e-9)))
        return out

    def activity(self, s: Start, t: int, sim: Simulator) -> Activity:
        """The activity of start ``s``, checked: a waiting job, known types and servers, room
        now, an end by T."""
        inst = self.inst
        j = index(s.job, self.views, "arrived unfinished job", FORM)
        if self.views[j].start is not None:
            raise refused(FORM, s, f"job {j} is already running at t={t}")
        m = index(s.worker_type, inst.worker_types, "worker type", FORM)
        y = self.counts(s, s.workers, "workers")
        ps = self.counts(s, s.ps or {}, "ps") if inst.is_ps else ()
        p = index(s.ps_type, inst.ps_types, "PS type", FORM) if inst.is_ps else 0
        n = sum(y)
        if n < 1:
            raise refused(FORM, s, "no worker")
        colocated = len({h for h, k in enumerate(y) if k} | {h for h, k in enumerate(ps) if k}) <= 1
        d = duration(inst, j, m, p if inst.is_ps else None, n, colocated)
        if t + d > inst.horizon:
            raise refused(FORM, s, f"it would run {d} slots from t={t}, past T={inst.horizon}")
        u = usage(self.cluster, s)
        use = {(h, r): float(u[h, r]) for h, r in zip(*u.nonzero(), strict=True)}
        if not sim.fits(use):
            raise refused(FORM, s, f"it does not fit the free resources at t={t}")
        self.waiting -= 1
        self.views[j] = replace(self.views[j], start=t, end=t + d)
        return Activity(j, float(d), use, JobSchedule(j, t, d, m, p, y, tuple(ps) or (0,) * len(y)))

    def counts(self, s: Start, per: Any, what: str) -> tuple[int, ...]:
        """Counts per server of a start's ``workers`` or ``ps`` mapping, checked."""
        if not isinstance(per, Mapping):
            raise refused(FORM, s, f"{what} is not a mapping of server index to count")
        out = [0] * self.inst.num_servers
        for h, k in per.items():
            h = index(h, out, "server", FORM)
            if not isinstance(k, int) or isinstance(k, bool) or k < 0:
                raise refused(FORM, s, f"{what} on server {h} is not a count")
            out[h] += k
        return tuple(out)


def _unstarted(
    inst: ElasticInstance, policy: Any, started: set[int], options: MethodOptions
) -> Outcome:
    """No schedule: some job had not started when the horizon T came (every elastic run ends
    there), reported as the family's heuristics report it: ``infeasible`` when one of them
    cannot end by T even alone on the empty cluster, else ``no_solution``, the jobs named."""
    from dlsched.models.elastic.methods import no_schedule_outcome

    names = [inst.jobs[j].name for j in range(inst.num_jobs) if j not in started]
    info = {"unscheduled_jobs": names, "scheduled_jobs": len(started)}
    return no_schedule_outcome(inst, policy_name(policy), info, options.deadline.elapsed())


def run_user_policy(instance: ElasticInstance, policy: Any, options: MethodOptions) -> Outcome:
    """Simulate a user's policy (``decide(view)``, optional ``on_arrival(job)`` and
    ``on_complete(job)``) on the instance, slot by slot up to T; its verified Outcome as the
    family's heuristics report theirs (flow time ``flow_time_s`` in seconds; with
    ``options.bound`` the certified bound and gap of :func:`.flowbound.flow_report`,
    ``bound_time`` apart from ``wall_time``); jobs still waiting at T: no schedule (status
    ``no_solution``, or ``infeasible`` when proven), as the family's heuristics end.
    UserCodeError for a wrong decision; the policy's own exceptions propagate."""
    from dlsched.models.elastic.flowbound import flow_report
    from dlsched.models.elastic.methods import with_flow

    engine = UserElastic(instance, checked(policy))
    arrivals = [(float(j.arrival), k) for k, j in enumerate(instance.jobs)]
    cap = {(h, r): c for h, s in enumerate(instance.servers) for r, c in enumerate(s.capacity)}
    res = simulate(arrivals, cap, engine, tick=1.0, horizon=float(instance.horizon))
    if len(res.activities) < instance.num_jobs:
        started = {int(a.key) for a in res.activities}  # type: ignore[call-overload]
        return _unstarted(instance, policy, started, options)
    schedule = ElasticSchedule.of(a.payload for a in res.activities)
    name, deadline = policy_name(policy), options.deadline
    out = verified_outcome(instance, name, schedule, wall_time=deadline.elapsed())
    out = with_flow(out)
    return on_request(
        out, options.bound, lambda: flow_report(out, instance, deadline), options.clock
    )


__all__ = [
    "FORM",
    "ElasticCluster",
    "ElasticJobView",
    "ElasticView",
    "Start",
    "UserElastic",
    "fit",
    "run_user_policy",
    "usage",
]
