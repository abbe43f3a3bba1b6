"""A user's online ddlwmp policy (Luo et al., prediction-assisted, non-preemptive) on the
shared event engine: what it sees, what it may start, and :func:`run_user_policy`.

At each decision (after every batch of simultaneous releases and completions, all on the slot
grid, and at the slot boundaries it asked to be woken at) the policy's ``decide(view)``
receives a :class:`DdlwmpView` and returns the jobs to start now, each a :class:`Start` (a
waiting job on GPUs of the servers it names, or, naming none, on the servers with the most free
GPUs as the paper's baselines place), or a :class:`~dlsched.online.policy.Wake` (rounded up to
the next slot boundary). A started job holds its g_i GPUs until it has run its iterations on
the placement Heavy-Edge maps its stages onto (its per-iteration time alpha_i, eq. (4)-(7)); it
cannot be stopped.

Non-clairvoyant as the paper's policies: a :class:`DdlwmpJobView` carries a job's release, GPUs,
model, stages and AllReduce (its profile), its *predicted* iterations n~_i (the instance's
``predicted_iterations``; an instance without them predicts n_i) and the per-iteration times
alpha~^min and alpha^max that follow from its profile, never its true number of iterations n_i
nor when a running job will end: that is learnt only when it does (it leaves the view;
``on_complete`` receives its last view). Future releases are not seen.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from dlsched.models import MethodOptions
from dlsched.models.ddlwmp.instance import DdlwmpInstance, Stage
from dlsched.models.ddlwmp.online import ClusterPolicy, flow_report, recorded
from dlsched.online.policy import checked, decisions, hook, index, policy_name, refused, starved
from dlsched.result import Outcome, on_request, verified_outcome
from dlsched.simulate import Activity, Simulator, Started, simulate

#: What one start looks like, in the errors of a wrong decision.
FORM = (
    "Start(job=<index of a waiting job in view.jobs>, servers=None or {server index: GPUs}, "
    "the GPUs summing to the job's and free)"
)


@dataclass(frozen=True, slots=True)
class Start:
    """Start waiting job ``job`` now on ``servers`` (server index -> GPUs, summing to its
    g_i, each at most the server's free GPUs); None: on the servers with the most free GPUs."""

    job: int
    servers: Mapping[int, int] | None = None


@dataclass(frozen=True, slots=True)
class DdlwmpJobView:
    """What an online policy knows of a released job (module docstring): its profile and its
    predicted iterations, never its true iterations nor its end."""

    index: int
    name: str
    release: float
    gpus: int  # g_i
    predicted_iterations: float  # n~_i
    model: str
    allreduce: str
    stages: tuple[Stage, ...]
    group: str
    user: str
    alpha_min_ms: float  # alpha~_i^min: an iteration on the best placement of g_i GPUs
    alpha_max_ms: float  # alpha_i^max: on the worst
    start: float | None = None  # when it started (None: waiting)
    servers: tuple[tuple[int, int], ...] = ()  # (server, GPUs) it holds while running

    @property
    def waiting(self) -> bool:
        return self.start is None


@dataclass(frozen=True, slots=True)
class DdlwmpView:
    """The state at a decision: time ``now`` (seconds from the first slot's beginning), the
    released unfinished jobs in release order (waiting and running), the free GPUs of each
    server, the GPUs per server and the slot length."""

    now: float
    jobs: tuple[DdlwmpJobView, ...]
    free: tuple[int, ...]
    gpus_per_server: int
    slot_s: float

    @property
    def waiting(self) -> tuple[DdlwmpJobView, ...]:
        """The jobs not started yet, in release order."""
        return tuple(j for j in self.jobs if j.start is None)

    @property
    def free_gpus(self) -> int:
        return sum(self.free)


class UserDdlwmp(ClusterPolicy):
    """The engine policy that asks a user's policy: builds the views, checks every start and
    maps it with Heavy-Edge (:meth:`~.online.ClusterPolicy.map_on`)."""

    def __init__(self, instance: DdlwmpInstance, user: Any) -> None:
        super().__init__(instance)
        self.user = user
        self.views: dict[int, DdlwmpJobView] = {}
        self.last = 0.0

    def view_of(self, i: int) -> DdlwmpJobView:
        job, f = self.inst.jobs[i], self.info[i]
        return DdlwmpJobView(
            i,
            job.name,
            job.release,
            f.gpus,
            f.predicted,
            job.model,
            job.allreduce,
            job.stages,
            job.group,
            job.user,
            f.alpha_tilde,
            f.alpha_max,
        )

    def on_arrival(self, job: Hashable, now: float, sim: Simulator) -> None:
        i = int(job)  # type: ignore[call-overload]
        self.views[i] = view = self.view_of(i)
        if (arrived := hook(self.user, "on_arrival")) is not None:
            arrived(view)

    def on_complete(self, act: Started, now: float, sim: Simulator) -> None:
        super().on_complete(act, now, sim)
        view = self.views.pop(int(act.key))  # type: ignore[call-overload]
        if (complete := hook(self.user, "on_complete")) is not None:
            complete(view)

    def decide(self, now: float, sim: Simulator) -> list[Activity]:
        self.last = now
        self._timers.discard(now)
        view = DdlwmpView(now, tuple(self.views.values()), tuple(self.free), self.g, self.slot)
        starts, wakes = decisions(self.user.decide(view), Start, FORM, now)
        out = [self.activity(s, now) for s in starts]
        for at in wakes:
            self.timer(now, at, sim)
        return out

    def activity(self, s: Start, now: float) -> Activity:
        """The activity of start ``s``, checked: a waiting job, GPUs free on real servers."""
        i = index(s.job, self.views, "released unfinished job", FORM)
        if self.views[i].start is not None:
            raise refused(FORM, s, f"job {i} is already running at t={now:g}")
        need = self.info[i].gpus
        if s.servers is None:
            if need > self.total_free:
                raise refused(FORM, s, f"{need} GPUs needed, {self.total_free} free at t={now:g}")
            placement, alpha = self.place(i, most=True)
        else:
            placement, alpha = self.map_on(i, self.caps_of(s, need, now))
        act = self.start(i, placement, alpha)
        held = tuple((m, sum(r)) for m, r in placement)
        self.views[i] = replace(self.views[i], start=now, servers=held)
        return act

    def caps_of(self, s: Start, need: int, now: float) -> list[tuple[int, int]]:
        """The (server, GPUs) pairs of ``s.servers``, checked against the free GPUs."""
        if not isinstance(s.servers, Mapping):
            raise refused(FORM, s, "servers is not a mapping")
        caps = []
        for m, count in s.servers.items():
            m = index(m, self.free, "server", FORM)
            whole = isinstance(count, int) and not isinstance(count, bool)
            if not whole or count < 0 or count > self.free[m]:
                raise refused(FORM, s, f"server {m} has {self.free[m]} free GPUs at t={now:g}")
            if count:
                caps.append((m, count))
        if sum(c for _, c in caps) != need:
            raise refused(FORM, s, f"job {s.job} needs {need} GPUs")
        return caps


def run_user_policy(instance: DdlwmpInstance, policy: Any, options: MethodOptions) -> Outcome:
    """Simulate a user's policy (``decide(view)``, optional ``on_arrival(job)`` and
    ``on_complete(job)``) on the instance (placement-aware); its verified Outcome as the
    family's online methods report theirs (flow time ``flow_time_s``; with ``options.bound`` the
    certified bound and gap of :func:`~.online.flow_report`, ``bound_time`` apart from
    ``wall_time``). UserCodeError for a wrong decision or jobs left waiting; the policy's own
    exceptions propagate."""
    engine = UserDdlwmp(instance, checked(policy))
    arrivals = [(j.release, i) for i, j in enumerate(instance.jobs)]
    res = simulate(arrivals, engine.capacity(), engine)
    started = {int(a.key) for a in res.activities}  # type: ignore[call-overload]
    left = [j.name for i, j in enumerate(instance.jobs) if i not in started]
    if left:
        raise starved(engine.last, left)
    name = policy_name(policy)
    schedule, stats = recorded(instance, engine, res, name)
    deadline = options.deadline
    out = verified_outcome(instance, name, schedule, wall_time=deadline.elapsed(), details=stats)
    return on_request(
        out, options.bound, lambda: flow_report(out, instance, deadline), options.clock
    )


__all__ = ["FORM", "DdlwmpJobView", "DdlwmpView", "Start", "UserDdlwmp", "run_user_policy"]
