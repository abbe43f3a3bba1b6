"""Placement results (P1, seed 000). Only the family checker (:mod:`.check`) decides
whether they are feasible and what they cost."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dlsched import answers as a

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from dlsched.models.placement.instance import PlacementInstance


@dataclass(frozen=True)
class Placement:
    """A P1 placement: ``assignment[k]`` is the index of the job that worker k serves.

    The data split is not stored: ``balance`` names the rule that implies it, proportional
    load balancing (eq. 12, the paper's) or ``"equal"`` parts (Optimus without balancing).
    """

    assignment: tuple[int, ...]
    balance: str = "proportional"

    @classmethod
    def from_groups(cls, num_workers: int, workers_of_job: Sequence[Sequence[int]]) -> Placement:
        a = [-1] * num_workers
        for i, ks in enumerate(workers_of_job):
            for k in ks:
                a[k] = i
        return cls(tuple(a))

    def workers_of(self, i: int) -> tuple[int, ...]:
        return tuple(k for k, j in enumerate(self.assignment) if j == i)

    def counts(self, num_jobs: int) -> tuple[int, ...]:
        c = [0] * num_jobs
        for j in self.assignment:
            if 0 <= j < num_jobs:
                c[j] += 1
        return tuple(c)

    def to_json(self, instance: PlacementInstance) -> dict[str, Any]:
        return {
            "assignment": list(self.assignment),
            "jobs": {
                job.name: [instance.workers[k].name for k in self.workers_of(i)]
                for i, job in enumerate(instance.jobs)
            },
        }

    def to_frame(self, instance: PlacementInstance) -> pd.DataFrame:
        import pandas as pd

        rows = [
            {
                "worker": w.name,
                "gpu": w.gpu,
                "node": w.node,
                "job": instance.jobs[self.assignment[k]].name,
                "throughput": instance.throughput[self.assignment[k]][k],
            }
            for k, w in enumerate(instance.workers)
        ]
        return pd.DataFrame(rows)


#: What a rule of the family returns, as its error names it.
FORM = "a Placement or {'jobs': {job: [worker, ...]}}"


def solution_from_json(instance: PlacementInstance, data: Any, source: str) -> Placement:
    """A user's answer as a :class:`Placement`: one itself, ``{"jobs": {job: [worker, ...]}}``
    (each job's workers, by name or index; ``dlsched solve --json``'s ``solution``, whose
    ``assignment`` may be left out), or ``{"assignment": [job index of each worker]}``;
    ``balance`` ("proportional", the default, or "equal") may be given. UserCodeError naming
    the field if malformed."""
    if isinstance(data, Placement):
        return data
    entry = a.answer(source, data, "placement", FORM)
    balance = a.get(source, "", entry, "balance", "proportional")
    if balance not in ("proportional", "equal"):
        raise a.wrong(source, "balance", balance, "expected 'proportional' or 'equal'")
    if "jobs" not in entry:
        raw = a.items(source, "assignment", a.get(source, "", entry, "assignment"))
        jobs = [a.integer(source, f"assignment[{k}]", i, -1) for k, i in enumerate(raw)]
        return Placement(tuple(jobs), balance)
    names = [w.name for w in instance.workers]
    assignment = [-1] * len(names)
    for job, workers in a.mapping(source, "jobs", entry["jobs"]).items():
        f = f"jobs.{job}"
        i = a.index(source, f, job, [j.name for j in instance.jobs], "job")
        for n, w in enumerate(a.items(source, f, workers)):
            k = a.index(source, f"{f}[{n}]", w, names, "worker")
            if assignment[k] != -1:
                raise a.wrong(source, f"{f}[{n}]", w, "the worker is given to two jobs")
            assignment[k] = i
    return Placement(tuple(assignment), balance)
