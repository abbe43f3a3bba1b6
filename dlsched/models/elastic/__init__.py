"""Elastic ML jobs: worker/PS counts, types and execution windows (seed 003).

Zhou, Pang, Zhang, Wu, Jiao, Zhong, Li. *Online Scheduling Algorithm for Heterogeneous
Distributed Machine Learning Jobs*, IEEE TCC: program (2) (parameter server) and (15)
(Ring-AllReduce), the compact-exponential ILP (8)/(17), A_maxweight, A_dual, A_online.

>>> from dlsched.instances import load
>>> from dlsched.models import run_method
>>> out = run_method(load("elastic/intro-cifar10"), "exact")
>>> str(out.status), out.objective
('optimal', 25.0)

Everything of the family lives in this folder; the core reaches it through :data:`FAMILY`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dlsched.families import Guarantee
from dlsched.models.elastic.instance import (
    ElasticInstance,
    ElasticJob,
    elastic_from_dict,
    elastic_to_dict,
)

if TYPE_CHECKING:
    from dlsched.models import Method
    from dlsched.models.elastic.check import ElasticEvaluation
    from dlsched.result import Outcome
    from dlsched.verify.theorem import Theorem


class ElasticFamily:
    """The elastic family behind the core's :class:`~dlsched.families.Family` protocol."""

    name = "elastic"
    plots = True
    paper = "Zhou et al., Online Scheduling of Heterogeneous Distributed ML Jobs, TCC (seed 003)"
    data = resources.files(__name__).joinpath("data")

    def from_dict(self, data: Mapping[str, Any], source: str) -> ElasticInstance:
        return elastic_from_dict(data, source)

    def to_dict(self, instance: ElasticInstance) -> dict[str, Any]:
        return elastic_to_dict(instance)

    def check(self, instance: ElasticInstance, solution: Any) -> ElasticEvaluation:
        from dlsched.models.elastic.check import check_schedule

        return check_schedule(instance, solution)

    def methods(self) -> Mapping[str, Method]:
        from dlsched.models.elastic.methods import METHODS

        return METHODS

    def generate(self, jobs: int, workers: int, seed: int, **params: Any) -> ElasticInstance:
        from dlsched.models.elastic.generate import generate

        return generate(jobs, workers, seed, **params)

    def plot(self, instance: ElasticInstance, outcome: Outcome, path: Path) -> Path:
        """Per-server Gantt chart of the outcome's schedule (:mod:`.gantt`)."""
        from dlsched.models.elastic.gantt import save_gantt

        return save_gantt(instance, outcome, Path(path))

    def guarantees(self) -> Mapping[str, Guarantee]:
        from dlsched.models.elastic.guarantees import GUARANTEES

        return GUARANTEES

    def theorems(self) -> Sequence[Theorem]:
        from dlsched.models.elastic.theorems import THEOREMS

        return THEOREMS

    def demo(self, quick: bool) -> Sequence[tuple[str, Sequence[str]]]:
        from dlsched.models.elastic.methods import METHODS

        methods = [m for m in DEMO_METHODS if m in METHODS]
        return [(f"elastic/{stem}", methods) for stem in DEMO_INSTANCES]

    def demo_notes(self, quick: bool) -> Sequence[str]:
        import numpy as np

        from dlsched.instances import load
        from dlsched.models.elastic.guarantees import theorem1_record

        notes = []
        for stem, n, win, room in (  # the prices and free capacity of their descriptions
            ("theorem1-counterexample", 3, [[0.0, 0.0], [0.01, 10.0]], [[3, 8], [3, 8]]),
            (
                "theorem1-counterexample-both",
                5,
                [[0.5, 0.5, 0.0], [0.6, 0.5, 2.375]],
                [[5, 5, 0], [5, 8, 16]],
            ),
        ):
            inst = load(f"elastic/{stem}")
            rec = theorem1_record(inst, 0, 0, n, False, np.array(win), np.array(room, float))
            verdict = "VIOLATED" if rec.violations else "holds"
            notes.append(
                f"\nTheorem 1 on elastic/{stem}: A_mincost1 cost {rec.paper:g} (other reading of "
                f"lines 15-19: {rec.other_reading:g}), exact MILP of (13) {rec.exact:g}: {verdict}"
            )
        return notes

    def outcome_details(self, instance: ElasticInstance, solution: Any, evaluation: Any) -> dict:
        return {"completion": list(evaluation.completion), "makespan": evaluation.makespan}


DEMO_INSTANCES = ("intro-cifar10", "ring-2jobs")
DEMO_METHODS = ("lp-bound", "a-online", "a-dual", "fifo", "drf", "tiresias", "antman")

FAMILY = ElasticFamily()


def __getattr__(name: str) -> Any:  # METHODS on demand: importing the family stays light
    if name == "METHODS":
        return FAMILY.methods()
    raise AttributeError(name)


__all__ = ["FAMILY", "METHODS", "ElasticInstance", "ElasticJob"]
