"""DDLwMP: online scheduling of distributed DL jobs with mixed parallelism (seed 001).

Luo, Liu, Lee, Shroff. *Prediction-Assisted Online Distributed Deep Learning Workload
Scheduling in GPU Clusters*: the per-iteration time model alpha (eq. 4-7), GPU mapping
(Heavy-Edge and the exact placement MILP), problem (8) solved exactly on small instances, its
lower bounds, and A-SRPT with its baselines on :mod:`dlsched.simulate`.

>>> from dlsched.instances import load
>>> from dlsched.models import run_method
>>> out = run_method(load("ddlwmp/toy-2x4"), "exact")
>>> str(out.status)
'optimal'

Everything of the family lives in this folder; the core reaches it through :data:`FAMILY`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dlsched.families import Guarantee
from dlsched.models.ddlwmp.instance import DdlwmpInstance, ddlwmp_from_dict, ddlwmp_to_dict

if TYPE_CHECKING:
    from dlsched.models import Method
    from dlsched.result import Outcome
    from dlsched.verify.theorem import Theorem


class DdlwmpFamily:
    """The ddlwmp family behind the core's :class:`~dlsched.families.Family` protocol."""

    name = "ddlwmp"
    plots = True
    paper = "Luo et al., Prediction-Assisted Online DDL Workload Scheduling (seed 001)"
    data = resources.files(__name__).joinpath("data")

    def from_dict(self, data: Mapping[str, Any], source: str) -> DdlwmpInstance:
        return ddlwmp_from_dict(data, source)

    def to_dict(self, instance: DdlwmpInstance) -> dict[str, Any]:
        return ddlwmp_to_dict(instance)

    def check(self, instance: DdlwmpInstance, solution: Any) -> Any:
        from dlsched.models.ddlwmp.check import check

        return check(instance, solution)

    def methods(self) -> Mapping[str, Method]:
        from dlsched.models.ddlwmp.methods import METHODS

        return METHODS

    def generate(self, jobs: int, workers: int, seed: int, **params: Any) -> DdlwmpInstance:
        from dlsched.models.ddlwmp.generate import generate

        return generate(jobs, workers, seed, **params)

    def plot(self, instance: DdlwmpInstance, outcome: Outcome, path: Path) -> Path:
        from dlsched.models.ddlwmp.gantt import save_gantt

        return save_gantt(instance, outcome, Path(path))

    def guarantees(self) -> Mapping[str, Guarantee]:
        from dlsched.models.ddlwmp.guarantees import GUARANTEES

        return GUARANTEES

    def theorems(self) -> Sequence[Theorem]:
        from dlsched.models.ddlwmp.theorems import THEOREMS

        return THEOREMS

    def demo(self, quick: bool) -> Sequence[tuple[str, Sequence[str]]]:
        from dlsched.models.ddlwmp.online import POLICIES

        return [("ddlwmp/toy-2x4", ["lp-bound", "srpt-bound", *POLICIES])]

    def demo_notes(self, quick: bool) -> Sequence[str]:
        from dlsched.instances import load
        from dlsched.models import run_method
        from dlsched.models.ddlwmp.guarantees import theorem1

        inst = load("ddlwmp/toy-2x4")
        opt = run_method(inst, "exact").objective
        got = run_method(inst, "a-srpt").objective
        ratio = got / opt if got is not None and opt is not None else float("nan")
        rec = theorem1(inst)
        verdict = "holds" if ratio <= rec.bound else "VIOLATED"
        return [
            f"\nTheorem 1 on ddlwmp/toy-2x4: tau = {rec.tau:g}, rho = {rec.rho:.3f}, "
            f"g_max/G = {rec.g_max}/{rec.total_gpus}, guarantee {rec.bound:.4g}, "
            f"A-SRPT / optimum = {ratio:.4f}: {verdict}"
        ]

    def outcome_details(self, instance: DdlwmpInstance, solution: Any, evaluation: Any) -> dict:
        if hasattr(evaluation, "makespan"):
            return {"makespan_s": evaluation.makespan, "flow_time_s": evaluation.flow_time}
        return {}


FAMILY = DdlwmpFamily()


def __getattr__(name: str) -> Any:  # METHODS on demand: importing the family stays light
    if name == "METHODS":
        return FAMILY.methods()
    raise AttributeError(name)


__all__ = ["FAMILY", "METHODS", "DdlwmpInstance"]
