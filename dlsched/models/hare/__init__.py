"""Hare_Sched: offline task scheduling of DL jobs on heterogeneous GPUs (seed 002).

Chen et al., *Hare: Exploiting Inter-job and Intra-job Parallelism of Distributed Machine
Learning on Heterogeneous GPUs*, HPDC 2022, Section 5.

>>> import dlsched
>>> out = dlsched.solve("hare/toy-2gpu", "exact")
>>> str(out.status), out.objective
('optimal', 13.5)

Everything of the family lives in this folder; the core reaches it through :data:`FAMILY`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dlsched.families import LazyFamily
from dlsched.models.hare.generate import GPU_TYPES, generate
from dlsched.models.hare.instance import HareInstance, HareJob

FAMILY = LazyFamily(
    __name__,
    "Chen et al., Hare, HPDC 2022 (seed 002)",
    check=".check:check_schedule",
    methods=(
        ".methods:METHODS",
        ".online.methods:ONLINE_METHODS",
        ".online.methods:LIST_METHODS",
    ),
    metaopt=".metaopt:worst_cases",
    policy=".online.policy:run_user_policy",
)
__getattr__ = FAMILY.attribute  # METHODS on demand: importing the family stays light


def plot(instance: HareInstance, outcome: Any, path: Path | str) -> Path:
    """Gantt chart of an outcome's schedule saved to ``path``."""
    return FAMILY.plot(instance, outcome, Path(path))


__all__ = ["FAMILY", "GPU_TYPES", "METHODS", "HareInstance", "HareJob", "generate", "plot"]
