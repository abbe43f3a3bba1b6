"""Hare_Sched: offline task scheduling of DL jobs on heterogeneous GPUs (seed 002).

Chen et al., *Hare: Exploiting Inter-job and Intra-job Parallelism of Distributed Machine
Learning on Heterogeneous GPUs*, HPDC 2022, Section 5.

>>> from dlsched.instances import load
>>> from dlsched.models import run_method
>>> out = run_method(load("hare/toy-2gpu"), "exact")
>>> str(out.status), out.objective
('optimal', 13.5)

Everything of the family lives in this folder; the core reaches it through :data:`FAMILY`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dlsched.families import Guarantee
from dlsched.models.hare.generate import GPU_TYPES, generate
from dlsched.models.hare.instance import HareInstance, HareJob, hare_from_dict, hare_to_dict

if TYPE_CHECKING:
    from dlsched.models import Method
    from dlsched.models.hare.check import HareEvaluation
    from dlsched.result import Outcome
    from dlsched.verify.theorem import Theorem


class HareFamily:
    """The hare family behind the core's :class:`~dlsched.families.Family` protocol."""

    name = "hare"
    plots = True
    paper = "Chen et al., Hare, HPDC 2022 (seed 002)"
    data = resources.files(__name__).joinpath("data")

    def from_dict(self, data: Mapping[str, Any], source: str) -> HareInstance:
        return hare_from_dict(data, source)

    def to_dict(self, instance: HareInstance) -> dict[str, Any]:
        return hare_to_dict(instance)

    def check(self, instance: HareInstance, solution: Any) -> HareEvaluation:
        from dlsched.models.hare.check import check_schedule

        return check_schedule(instance, solution)

    def methods(self) -> Mapping[str, Method]:
        from dlsched.models.hare.methods import METHODS
        from dlsched.models.hare.online.methods import ONLINE_METHODS

        return {**METHODS, **ONLINE_METHODS}

    def generate(self, jobs: int, workers: int, seed: int, **params: Any) -> HareInstance:
        return generate(jobs, workers, seed, **params)

    def plot(self, instance: HareInstance, outcome: Outcome, path: Path) -> Path:
        from dlsched.models.hare.gantt import save_gantt

        return save_gantt(instance, outcome, Path(path))

    def guarantees(self) -> Mapping[str, Guarantee]:
        from dlsched.models.hare.guarantees import GUARANTEES

        return GUARANTEES

    def theorems(self) -> Sequence[Theorem]:
        from dlsched.models.hare.theorems import THEOREMS

        return THEOREMS

    def demo(self, quick: bool) -> Sequence[tuple[str, Sequence[str]]]:
        from dlsched.models.hare.online.demo import ONLINE_DEMO

        return [
            (
                "hare/toy-2gpu",
                ["relaxation", "hare", "hare-strong", "gavel-fifo", "srtf", "sched-homo"]
                + ["sched-allox"],
            ),
            ("hare/theorem4-counterexample", ["relaxation", "hare", "hare-strong", "sched-homo"]),
            ("hare/tcc2024-fig12", list(ONLINE_DEMO)),
            *([] if quick else [("hare/tcc2024-fig9", list(ONLINE_DEMO))]),
        ]

    def demo_notes(self, quick: bool) -> Sequence[str]:
        from dlsched.instances import load
        from dlsched.models.hare.guarantees import theorem4_record
        from dlsched.models.hare.online.demo import fig12_note

        name = "hare/theorem4-counterexample"
        rec = theorem4_record(load(name))
        ratio = rec.ratio.get("hare")
        verdict = "VIOLATED" if rec.violations else "holds"
        return [
            f"\nTheorem 4 on {name}: alpha = {rec.alpha:g}, guarantee alpha(2+alpha) = "
            f"{rec.guarantee:g}, Algorithm 1 / optimum = "
            f"{'n/a' if ratio is None else f'{ratio:.4f}'}: {verdict}",
            fig12_note(),
        ]

    def outcome_details(self, instance: HareInstance, solution: Any, evaluation: Any) -> dict:
        return {}


FAMILY = HareFamily()


def __getattr__(name: str) -> Any:  # METHODS on demand: importing the family stays light
    if name == "METHODS":
        return FAMILY.methods()
    raise AttributeError(name)


def plot(instance: HareInstance, outcome: Any, path: Path | str) -> Path:
    """Gantt chart of an outcome's schedule saved to ``path``."""
    return FAMILY.plot(instance, outcome, Path(path))


__all__ = ["FAMILY", "GPU_TYPES", "METHODS", "HareInstance", "HareJob", "generate", "plot"]
