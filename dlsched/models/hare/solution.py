"""Task schedules of the hare family (Hare_Sched, seed 002). Only :mod:`dlsched.check` decides
whether they are feasible and what they cost."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dlsched import answers as a

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from dlsched.models.hare.instance import HareInstance

Task = tuple[int, int, int]


@dataclass(frozen=True)
class TaskEntry:
    """Task (job, round, index) trains on ``gpu`` (an index into ``instance.gpus``) from
    ``start``."""

    job: int
    round: int
    index: int
    gpu: int
    start: float

    @property
    def task(self) -> Task:
        return (self.job, self.round, self.index)


@dataclass(frozen=True)
class TaskSchedule:
    """A schedule of every task: GPU assignment y and start time x of Hare_Sched (4)-(8)."""

    entries: tuple[TaskEntry, ...]

    @classmethod
    def from_mapping(cls, assignment: Mapping[Task, tuple[int, float]]) -> TaskSchedule:
        """Build from ``{(n, r, k): (gpu, start)}``."""
        return cls.from_items((t, g, s) for t, (g, s) in assignment.items())

    @classmethod
    def from_items(cls, items: Iterable[tuple[Task, int, float]]) -> TaskSchedule:
        entries = [TaskEntry(t[0], t[1], t[2], int(g), float(s)) for t, g, s in items]
        entries.sort(key=lambda e: (e.start, e.gpu, e.task))
        return cls(tuple(entries))

    def as_dict(self) -> dict[Task, tuple[int, float]]:
        return {e.task: (e.gpu, e.start) for e in self.entries}

    def on_gpu(self, m: int) -> tuple[TaskEntry, ...]:
        """Tasks of GPU m in order of start."""
        return tuple(sorted((e for e in self.entries if e.gpu == m), key=lambda e: e.start))

    def to_json(self, instance: HareInstance) -> dict[str, Any]:
        queues: list[list[TaskEntry]] = [[] for _ in instance.gpus]
        for e in self.entries:  # each GPU's tasks in one pass, then by start (as on_gpu)
            queues[e.gpu].append(e)
        return {
            "tasks": [
                {
                    "job": instance.jobs[e.job].name,
                    "round": e.round,
                    "index": e.index,
                    "gpu": instance.gpus[e.gpu],
                    "start": e.start,
                    "train_end": e.start + instance.jobs[e.job].train_time[e.gpu],
                    "finish": e.start
                    + instance.jobs[e.job].train_time[e.gpu]
                    + instance.jobs[e.job].sync_time[e.gpu],
                }
                for e in self.entries
            ],
            "gpus": {
                g: [
                    f"{instance.jobs[e.job].name}/r{e.round}/t{e.index}"
                    for e in sorted(queue, key=lambda e: e.start)
                ]
                for g, queue in zip(instance.gpus, queues, strict=True)
            },
        }

    def to_frame(self, instance: HareInstance) -> pd.DataFrame:
        import pandas as pd

        rows = []
        for e in self.entries:
            job = instance.jobs[e.job]
            tc, ts = job.train_time[e.gpu], job.sync_time[e.gpu]
            rows.append(
                {
                    "job": job.name,
                    "round": e.round,
                    "index": e.index,
                    "gpu": instance.gpus[e.gpu],
                    "start": e.start,
                    "train_end": e.start + tc,
                    "finish": e.start + tc + ts,
                }
            )
        return pd.DataFrame(rows)


#: What a rule of the family returns, as its error names it.
FORM = "a TaskSchedule or {'tasks': [{'job', 'round', 'index', 'gpu', 'start'}, ...]}"


def solution_from_json(instance: HareInstance, data: Any, source: str) -> TaskSchedule:
    """A user's answer as a :class:`TaskSchedule`: one itself, or ``{"tasks": [{"job",
    "round", "index", "gpu", "start"}, ...]}`` (``dlsched solve --json``'s ``solution``; a
    job and a GPU by name or index; ``train_end``, ``finish`` and ``gpus`` may be left out:
    the checker derives them). UserCodeError naming the field if malformed."""
    if isinstance(data, TaskSchedule):
        return data
    given = a.answer(source, data, "hare", FORM)
    tasks = a.items(source, "tasks", a.get(source, "", given, "tasks"))
    jobs = [j.name for j in instance.jobs]
    out = []
    for k, raw in enumerate(tasks):
        f = f"tasks[{k}]"
        entry = a.mapping(source, f, raw)
        job = a.index(source, f"{f}.job", a.get(source, f, entry, "job"), jobs, "job")
        rnd = a.integer(source, f"{f}.round", a.get(source, f, entry, "round"))
        i = a.integer(source, f"{f}.index", a.get(source, f, entry, "index"))
        gpu = a.index(source, f"{f}.gpu", a.get(source, f, entry, "gpu"), instance.gpus, "GPU")
        start = a.number(source, f"{f}.start", a.get(source, f, entry, "start"))
        out.append(((job, rnd, i), gpu, start))
    return TaskSchedule.from_items(out)
