"""A user's online, non-clairvoyant hare policy (Chen et al., TCC 2024) on the shared event
engine: what it sees, what it may start, and :func:`run_user_policy`.

At each decision (after every batch of simultaneous events: an arrival, a task's training
ending, a round ending) the policy's ``decide(view)`` receives a :class:`HareView` and returns
the tasks to start now, each a :class:`Start` (the next task of a job's current round on a
free GPU), or a :class:`~dlsched.online.policy.Wake`. A task holds its GPU while it trains
(T^c_nm); its synchronization (T^s_nm) holds nothing; a job's next round becomes ready when
every task of the current one has trained and synchronized (Hare_Sched (6)-(8)).

Non-clairvoyant as the paper's policies: a :class:`HareJobView` carries a job's arrival, weight,
tasks per round |D_n|, rounds done, the tasks of the current round left to start and training,
the profiled per-GPU training and synchronization times and the service attained (the GPU time
of its trained tasks), never its number of rounds |R_n| nor its remaining work: a job is seen to
go on after a round only when the round has ended (it is then ready again) or to end (it leaves
the view; ``on_complete`` receives its last view). Future arrivals are not seen.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dlsched.models import MethodOptions
from dlsched.models.hare.instance import HareInstance
from dlsched.online.policy import checked, decisions, hook, index, policy_name, refused, starved
from dlsched.result import Outcome
from dlsched.simulate import Activity, Simulator

from .common import OnlineHare, run_policy
from .methods import online_outcome

#: What one start looks like, in the errors of a wrong decision.
FORM = "Start(job=<index of a ready job in view.jobs>, gpu=<index of a free GPU>)"


@dataclass(frozen=True, slots=True)
class Start:
    """Start the next task of job ``job``'s current round on GPU ``gpu`` (indices), now."""

    job: int
    gpu: int


@dataclass(frozen=True, slots=True)
class HareJobView:
    """What an online, non-clairvoyant policy knows of an arrived job (see the module
    docstring): no number of rounds, no remaining work."""

    index: int
    name: str
    arrival: float
    weight: float
    tasks_per_round: int
    rounds_done: int
    left: int  # tasks of the current round not yet started
    training: int  # tasks of the current round still training
    train_time: tuple[float, ...]  # T^c_nm per GPU (profiled)
    sync_time: tuple[float, ...]  # T^s_nm per GPU (profiled)
    attained: float  # GPU time of the job's trained tasks so far

    @property
    def ready(self) -> bool:
        """Whether a task of the job may start now (its current round has tasks left)."""
        return self.left > 0


@dataclass(frozen=True, slots=True)
class HareView:
    """The state at a decision: time ``now``, the arrived unfinished jobs in arrival order,
    the free GPUs (indices, increasing), the job each GPU trains a task of (None: free), and
    the GPUs' names."""

    now: float
    jobs: tuple[HareJobView, ...]
    free_gpus: tuple[int, ...]
    training: tuple[int | None, ...]
    gpus: tuple[str, ...]

    @property
    def ready(self) -> tuple[HareJobView, ...]:
        """The jobs with a task to start, in arrival order."""
        return tuple(j for j in self.jobs if j.left > 0)


class UserHare(OnlineHare):
    """The engine policy that asks a user's policy: builds the views from the round
    bookkeeping of :class:`~.common.OnlineHare`, checks every start, starts it."""

    def __init__(self, instance: HareInstance, user: Any) -> None:
        super().__init__(instance)
        self.user = user
        self.views: dict[int, HareJobView] = {}  # arrived, unfinished; in arrival order
        self.attained: dict[int, float] = {}
        self.gpu_job: list[int | None] = [None] * instance.num_gpus
        self.sim: Simulator | None = None
        self.last = 0.0

    def view_of(self, n: int) -> HareJobView:
        job, st = self.instance.jobs[n], self.jobs[n]
        return HareJobView(
            n,
            job.name,
            st.arrived_at,
            job.weight,
            job.tasks_per_round,
            st.rounds_done,
            st.left,
            st.running,
            job.train_time,
            job.sync_time,
            self.attained.get(n, 0.0),
        )

    def job_arrived(self, n: int, now: float) -> None:
        self.views[n] = view = self.view_of(n)
        if (arrived := hook(self.user, "on_arrival")) is not None:
            arrived(view)

    def gpu_freed(self, g: int, n: int, now: float) -> None:
        self.gpu_job[g] = None
        self.attained[n] = self.attained.get(n, 0.0) + self.instance.jobs[n].train_time[g]
        self.views[n] = self.view_of(n)

    def round_finished(self, n: int, now: float) -> None:
        view = self.view_of(n)
        if not self.jobs[n].done:
            self.views[n] = view
            return
        del self.views[n]
        if (complete := hook(self.user, "on_complete")) is not None:
            complete(view)

    def decide(self, now: float, sim: Simulator) -> list[Activity]:
        self.sim, self.last = sim, now
        return super().decide(now, sim)

    def assign(self, now: float) -> list[Activity]:
        view = HareView(
            now,
            tuple(self.views.values()),
            tuple(sorted(self.free_gpus)),
            tuple(self.gpu_job),
            self.instance.gpus,
        )
        starts, wakes = decisions(self.user.decide(view), Start, FORM, now)
        out = [self.activity(s, now) for s in starts]
        assert self.sim is not None
        for at in wakes:
            self.sim.wake(at)
        return out

    def activity(self, s: Start, now: float) -> Activity:
        """The activity of start ``s``, checked: a known ready job, a free GPU."""
        n = index(s.job, self.views, "arrived unfinished job", FORM)
        g = index(s.gpu, self.instance.gpus, "GPU", FORM)
        if g not in self.free_gpus:
            raise refused(FORM, s, f"GPU {g} is busy at t={now:g}")
        if self.jobs[n].left == 0:
            raise refused(FORM, s, f"job {n} has no task ready at t={now:g}")
        act = self.start_task(n, g, now)
        self.gpu_job[g] = n
        self.views[n] = self.view_of(n)
        return act


def run_user_policy(instance: HareInstance, policy: Any, options: MethodOptions) -> Outcome:
    """Simulate a user's policy (``decide(view)``, optional ``on_arrival(job)`` and
    ``on_complete(job)``) on the instance; its verified Outcome as the family's online
    methods report theirs (:func:`~.methods.online_outcome`: flow time, and with
    ``options.bound`` the certified bound and gap). UserCodeError for a wrong decision or jobs
    left waiting; the policy's own exceptions propagate."""
    engine = UserHare(instance, checked(policy))
    t1 = options.deadline.elapsed()
    schedule, sim = run_policy(instance, engine)
    left = [instance.jobs[n].name for n in range(instance.num_jobs) if n not in engine.jobs]
    left += [instance.jobs[n].name for n, st in engine.jobs.items() if not st.done]
    if left:
        raise starved(engine.last, left)
    return online_outcome(instance, policy_name(policy), schedule, sim, options, {}, t1)


__all__ = ["FORM", "HareJobView", "HareView", "Start", "UserHare", "run_user_policy"]
