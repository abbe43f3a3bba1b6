"""The placement family: P1 job placement with proportional load balancing (seed 000).

Liu, Wang, Huang, Pan. *Sampling-Based Multi-Job Placement for Heterogeneous Deep Learning
Clusters*. IEEE TPDS 35(6), 2024. DOI 10.1109/TPDS.2024.3390109.
"""

from __future__ import annotations

from dlsched.models.placement.categories import categories, num_categories, rank, unrank
from dlsched.models.placement.generator import generate
from dlsched.models.placement.methods import METHODS
from dlsched.models.placement.metrics import (
    equal_share_jct,
    fairness_degree,
    heterogeneity_degree,
)

__all__ = [
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
