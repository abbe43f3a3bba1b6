"""Example online policies, one per online family, written as a user writes one: a class with
``decide(view)`` returning what to start now (see docs/user-policies.md).

Each sees only the family's view: the time, the arrived unfinished jobs with what an online
scheduler may know of them, and the free resources. None of them is told a job's size where
the family's paper keeps it hidden (hare online: its rounds; ddlwmp: its true iterations).

Run one with ``dlsched.families.get(family).run_policy(instance, Policy(), MethodOptions())``.
"""

from __future__ import annotations

from typing import Any


def _deal(tasks: int, gpus: list[int], train: tuple[float, ...]) -> dict[int, int]:
    """How many of a round's ``tasks`` each GPU trains when they are dealt by earliest finish
    (ties: the lower GPU index)."""
    at = dict.fromkeys(gpus, 0.0)
    count = dict.fromkeys(gpus, 0)
    for _ in range(tasks):
        g = min(gpus, key=lambda m: (at[m] + train[m], m))
        at[g] += train[g]
        count[g] += 1
    return count


class HareFifo:
    """hare online: Gavel's FIFO (the family's ``online-fifo``). Jobs in arrival order, no
    overtaking: the first waiting job waits for min(|D_n|, GPUs) idle GPUs, takes the fastest
    for it (training + synchronization time, ties: lower index) and keeps them until it ends;
    each round's tasks are dealt onto them by earliest finish.

    It sees (``HareView``) the time, the free GPUs, and per arrived job its tasks per round, the
    rounds done, the tasks left in the current round and the per-GPU profiled times; never its
    number of rounds (a job that ends just leaves the view)."""

    name = "hare-fifo"

    def __init__(self) -> None:
        self.owned: dict[int, list[int]] = {}  # job -> its GPUs
        self.owner: dict[int, int] = {}  # GPU -> the job that holds it
        self.plan: dict[int, dict[int, int]] = {}  # job -> tasks left per GPU this round
        self.round: dict[int, int] = {}  # job -> the round planned

    def decide(self, view: Any) -> list[Any]:
        from dlsched.models.hare.online.policy import Start

        free = set(view.free_gpus)
        # the jobs started come first in view.jobs (arrival order, no overtaking)
        for job in view.jobs:
            n = job.index
            if n not in self.owned:  # the first job not started: it waits for idle GPUs
                need = min(job.tasks_per_round, len(view.gpus))
                idle = [g for g in free if g not in self.owner]
                if len(idle) < need:
                    break  # no overtaking
                per = [c + s for c, s in zip(job.train_time, job.sync_time, strict=True)]
                self.owned[n] = sorted(sorted(idle, key=lambda g: (per[g], g))[:need])  # noqa: B023
                self.owner.update(dict.fromkeys(self.owned[n], n))
            elif not job.ready or self.round[n] == job.rounds_done:
                continue
            self.round[n] = job.rounds_done  # a round to deal onto its GPUs
            self.plan[n] = _deal(job.tasks_per_round, self.owned[n], job.train_time)
        starts = []
        for g in sorted(free):  # each free GPU: the next task its job planned there
            n = self.owner.get(g, -1)
            if n >= 0 and self.plan[n][g] > 0:
                self.plan[n][g] -= 1
                starts.append(Start(n, g))
        return starts

    def on_complete(self, job: Any) -> None:
        """A job ended: its GPUs are idle again."""
        for g in self.owned.pop(job.index):
            del self.owner[g]
        del self.plan[job.index], self.round[job.index]


class DdlwmpFifo:
    """ddlwmp: work-conserving first come, first served (the family's ``wcs-subtime``): every
    waiting job, in release order, starts as soon as its GPUs are free, on the servers with the
    most free GPUs (Heavy-Edge maps its stages there).

    It sees (``DdlwmpView``) the time, the free GPUs per server, and per released job its GPUs,
    its profile and its *predicted* iterations; never its true iterations nor when a running job
    will end."""

    name = "ddlwmp-fifo"

    def decide(self, view: Any) -> list[Any]:
        from dlsched.models.ddlwmp.policy import Start

        free, starts = view.free_gpus, []
        for job in view.waiting:
            if job.gpus <= free:
                starts.append(Start(job.index))
                free -= job.gpus
        return starts


class ElasticFifo:
    """elastic: FIFO with head-of-line blocking (the family's ``fifo``): jobs in arrival order,
    each with ``workers`` workers of its ideal type (fewer when even the empty cluster cannot
    hold them), placed as the family's baselines place; the first that does not fit waits and
    so do the jobs behind it.

    It sees (``ElasticView``) the slot, the free resources per server and the cluster, and per
    arrived job its whole profile (the paper's setting: online, clairvoyant about arrived
    jobs); never a job that has not arrived."""

    name = "elastic-fifo"

    def __init__(self, workers: int = 4) -> None:
        self.workers = workers

    def decide(self, view: Any) -> list[Any]:
        from dlsched.models.elastic.policy import fit

        starts: list[Any] = []
        for job in view.waiting:
            n = min(self.workers, job.profile.chunks)
            while n > 1 and fit(view, job, n, empty=True) is None:
                n -= 1
            start = fit(view, job, n, after=starts)
            if start is None:
                break
            starts.append(start)
        return starts


__all__ = ["DdlwmpFifo", "ElasticFifo", "HareFifo"]
