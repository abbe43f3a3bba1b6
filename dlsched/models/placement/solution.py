"""Placement results (P1, seed 000). Only the family checker (:mod:`.check`) decides
whether they are feasible and what they cost."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

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
