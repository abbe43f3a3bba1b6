"""The placement family: P1 job placement with proportional load balancing (seed 000).

Liu, Wang, Huang, Pan. *Sampling-Based Multi-Job Placement for Heterogeneous Deep Learning
Clusters*. IEEE TPDS 35(6), 2024. DOI 10.1109/TPDS.2024.3390109.

Everything of the family lives in this folder; the core reaches it through :data:`FAMILY`.
"""

from __future__ import annotations

from dlsched.families import LazyFamily
from dlsched.models.placement.categories import categories, num_categories, rank, unrank
from dlsched.models.placement.generator import generate
from dlsched.models.placement.metrics import (
    equal_share_jct,
    fairness_degree,
    heterogeneity_degree,
)

FAMILY = LazyFamily(
    __name__,
    "Liu et al., Sampling-Based Multi-Job Placement, TPDS 2024 (seed 000)",
    check=".check:check_placement",
    generate=generate,
    plot=".picture:save_picture",
    draw=".picture:picture",
    outcome_details=".outcome:placement_details",
)
__getattr__ = FAMILY.attribute  # METHODS on demand: importing the family stays light

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
