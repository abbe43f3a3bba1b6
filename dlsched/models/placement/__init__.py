"""The placement family: P1 job placement with proportional load balancing (seed 000).

Liu, Wang, Huang, Pan. *Sampling-Based Multi-Job Placement for Heterogeneous Deep Learning
Clusters*. IEEE TPDS 35(6), 2024. DOI 10.1109/TPDS.2024.3390109.

Everything of the family lives in this folder; the core reaches it through :data:`FAMILY`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dlsched.errors import OptionError
from dlsched.families import Guarantee
from dlsched.models.placement.categories import categories, num_categories, rank, unrank
from dlsched.models.placement.generator import generate
from dlsched.models.placement.instance import (
    PlacementInstance,
    placement_from_dict,
    placement_to_dict,
)
from dlsched.models.placement.metrics import (
    equal_share_jct,
    fairness_degree,
    heterogeneity_degree,
)

if TYPE_CHECKING:
    from dlsched.models import Method
    from dlsched.models.placement.check import PlacementEvaluation
    from dlsched.result import Outcome
    from dlsched.verify.theorem import Theorem


class PlacementFamily:
    """The placement family behind the core's :class:`~dlsched.families.Family` protocol."""

    name = "placement"
    plots = False
    paper = "Liu et al., Sampling-Based Multi-Job Placement, TPDS 2024 (seed 000)"
    data = resources.files(__name__).joinpath("data")

    def from_dict(self, data: Mapping[str, Any], source: str) -> PlacementInstance:
        return placement_from_dict(data, source)

    def to_dict(self, instance: PlacementInstance) -> dict[str, Any]:
        return placement_to_dict(instance)

    def check(self, instance: PlacementInstance, solution: Any) -> PlacementEvaluation:
        from dlsched.models.placement.check import check_placement

        return check_placement(instance, solution)

    def methods(self) -> Mapping[str, Method]:
        from dlsched.models.placement.methods import METHODS

        return METHODS

    def generate(self, jobs: int, workers: int, seed: int, **params: Any) -> PlacementInstance:
        return generate(jobs, workers, seed, **params)

    def plot(self, instance: PlacementInstance, outcome: Outcome, path: Path) -> Path:
        raise OptionError("--plot", str(path), "the placement family has no plot")

    def guarantees(self) -> Mapping[str, Guarantee]:
        return {}  # Theorems 1-2 are per category: dlsched.models.placement.guarantees

    def theorems(self) -> Sequence[Theorem]:
        from dlsched.models.placement.theorems import THEOREMS

        return THEOREMS

    def demo(self, quick: bool) -> Sequence[tuple[str, Sequence[str]]]:
        rows = [
            ("placement/liu2024-motivating", ["has", "jps", "optimus", "optimus-lb", "las"]),
            ("placement/liu2024-s4k15-seed0", ["has", "jps", "optimus", "optimus-lb", "las"]),
            ("placement/liu2024-s4k30-seed0", ["has", "jps", "optimus", "optimus-lb", "las"]),
            ("placement/liu2024-s5k100-seed0", ["jps", "optimus", "optimus-lb", "las"]),
        ]
        rows[0][1].append("exhaustive")
        return rows[:2] if quick else rows

    def demo_notes(self, quick: bool) -> Sequence[str]:
        return []

    def outcome_details(self, instance: PlacementInstance, solution: Any, evaluation: Any) -> dict:
        from dlsched.models.placement.outcome import placement_details

        return placement_details(instance, solution, evaluation)


FAMILY = PlacementFamily()


def __getattr__(name: str) -> Any:  # METHODS on demand: importing the family stays light
    if name == "METHODS":
        return FAMILY.methods()
    raise AttributeError(name)


__all__ = [
    "FAMILY",
    "METHODS",
    "categories",
    "equal_share_jct",
    "fairness_degree",
    "generate",
    "heterogeneity_degree",
    "num_categories",
    "rank",
    "unrank",
]
