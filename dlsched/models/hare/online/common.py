"""What every online hare policy shares: round bookkeeping on the shared event engine, the
dealing of a round's tasks onto GPUs, and the conversion of the engine's record into a hare
:class:`~dlsched.models.hare.solution.TaskSchedule`.

Non-clairvoyance is structural: a policy never reads ``HareJob.rounds`` or ``HareJob.arrival``
(but for the clairvoyant SRTF baselines of :mod:`.listrules`, which read an arrived job's
rounds and say so).
It learns that a job exists when the engine reports its arrival, and whether the job goes on
after a round only when that round has finished (:meth:`OnlineHare.on_complete` asks the
instance, the way Tiresias and the paper's Section IV-A learn it, "after each training round,
we know whether this job continues to run or not"). Per-task training and synchronization times
are profiled (the paper's profiler, Section III) and may be read.

Resources of the engine: one per GPU index, capacity 1, held while a task trains (Hare_Sched
(8)); synchronization does not hold the GPU. A zero-resource ``barrier`` activity per round
lasts from the end of the round's last training until the round's last synchronization ends,
so the engine reports the round's end as an event (a round whose synchronization is over when
its last task stops training ends at once, before the policy decides).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from dlsched.models.hare.instance import HareInstance
from dlsched.models.hare.solution import TaskSchedule
from dlsched.simulate import Activity, SimResult, Simulator, Started, simulate

TRAIN = "train"
BARRIER = "barrier"


def deal(
    tasks: int, gpus: Sequence[int], train: Sequence[float], free: dict[int, float] | None = None
) -> list[tuple[int, float]]:
    """Deal ``tasks`` tasks of one round onto ``gpus`` by earliest finish (ties: lowest GPU
    index), several per GPU when there are fewer GPUs than tasks. ``free`` (GPU -> time it
    frees, default 0) is not modified. Returns (gpu, offset) per task in dealing order."""
    at = {g: (free or {}).get(g, 0.0) for g in gpus}
    out = []
    for _ in range(tasks):
        g = min(gpus, key=lambda m: (at[m] + train[m], m))
        out.append((g, at[g]))
        at[g] += train[g]
    return out


def task_gpu_time(tasks: int, gpus: Sequence[int], train: Sequence[float]) -> float:
    """Section IV-B's attained service of one round: the GPU time of its tasks dealt by
    :func:`deal` on ``gpus`` (Fig. 10: 8 and 12 on GPUs 1-2, 9 and 7.2 on GPUs 3-4)."""
    return sum(train[g] for g, _ in deal(tasks, gpus, train))


@dataclass
class JobState:
    """What a policy knows of an arrived job."""

    arrived_at: float
    rounds_done: int = 0
    left: int = 0  # tasks of the current round not yet started
    running: int = 0  # tasks of the current round still training
    round_end: float = 0.0  # latest finish (train + sync) of the current round's tasks so far
    done: bool = False

    def ready(self) -> bool:
        """The current round may start tasks (the previous one has finished)."""
        return not self.done and self.left > 0


class OnlineHare:
    """Base policy: rounds, barriers and the record; subclasses implement :meth:`assign`
    (start tasks of ready jobs on free GPUs) and may react to :meth:`round_finished`."""

    def __init__(self, instance: HareInstance) -> None:
        self.instance = instance
        self.jobs: dict[int, JobState] = {}
        self._barriers: list[Activity] = []
        self.free_gpus: set[int] = set(range(instance.num_gpus))
        self.ready: set[int] = set()  # jobs whose current round has tasks to start

    # --- engine callbacks ------------------------------------------------------------------
    def on_arrival(self, job: Hashable, now: float, sim: Simulator) -> None:
        n = int(job)  # type: ignore[call-overload]
        self.jobs[n] = JobState(arrived_at=now, left=self.instance.jobs[n].tasks_per_round)
        self.ready.add(n)
        self.job_arrived(n, now)

    def on_complete(self, act: Started, now: float, sim: Simulator) -> None:
        kind, n = act.key[0], act.key[1]  # type: ignore[index]
        st = self.jobs[n]
        if kind == TRAIN:
            g = act.payload
            self.free_gpus.add(g)
            st.running -= 1
            st.round_end = max(st.round_end, now + self.instance.jobs[n].sync_time[g])
            self.gpu_freed(g, n, now)
            if st.running == 0 and st.left == 0:
                if st.round_end > now:
                    self._barriers.append(Activity((BARRIER, n), st.round_end - now, {}))
                else:  # no synchronization left: the round ends now, before decide
                    self._end_round(n, now)
            return
        self._end_round(n, now)

    def _end_round(self, n: int, now: float) -> None:
        st = self.jobs[n]
        st.rounds_done += 1
        st.round_end = 0.0
        if st.rounds_done < self.instance.jobs[n].rounds:  # learnt only now (non-clairvoyant)
            st.left = self.instance.jobs[n].tasks_per_round
            self.ready.add(n)
        else:
            st.done = True
        self.round_finished(n, now)

    def decide(self, now: float, sim: Simulator) -> list[Activity]:
        out, self._barriers = self._barriers, []
        out.extend(self.assign(now))
        return out

    # --- helpers for subclasses -------------------------------------------------------------
    def start_task(self, n: int, g: int, now: float) -> Activity:
        """Start the next task of job n's current round on GPU g."""
        st = self.jobs[n]
        job = self.instance.jobs[n]
        k = job.tasks_per_round - st.left
        st.left -= 1
        st.running += 1
        if st.left == 0:
            self.ready.discard(n)
        self.free_gpus.discard(g)
        return Activity((TRAIN, n, st.rounds_done, k), job.train_time[g], {g: 1.0}, g)

    def ready_jobs(self) -> list[int]:
        return sorted(self.ready)

    # --- hooks -------------------------------------------------------------------------------
    def job_arrived(self, n: int, now: float) -> None:
        """A job arrived (its state exists)."""

    def gpu_freed(self, g: int, n: int, now: float) -> None:
        """GPU g finished training a task of job n."""

    def round_finished(self, n: int, now: float) -> None:
        """Job n's round finished (``done`` says whether it was its last)."""

    def assign(self, now: float) -> list[Activity]:
        raise NotImplementedError


def run_policy(instance: HareInstance, policy: OnlineHare) -> tuple[TaskSchedule, SimResult]:
    """Simulate ``policy`` on the instance's arrivals; the schedule is what trained where."""
    arrivals = [(j.arrival, n) for n, j in enumerate(instance.jobs)]
    capacity = dict.fromkeys(range(instance.num_gpus), 1.0)
    res = simulate(arrivals, capacity, policy)
    items = [
        ((a.key[1], a.key[2], a.key[3]), a.payload, a.start)  # type: ignore[index]
        for a in res.activities
        if a.key[0] == TRAIN  # type: ignore[index]
    ]
    return TaskSchedule.from_items(items), res


def average_jct(instance: HareInstance, completion: Sequence[float]) -> float:
    """Average job completion time (C_n - a_n), the paper's online metric."""
    return sum(c - j.arrival for c, j in zip(completion, instance.jobs, strict=True)) / len(
        completion
    )


__all__ = ["JobState", "OnlineHare", "average_jct", "deal", "run_policy", "task_gpu_time"]
