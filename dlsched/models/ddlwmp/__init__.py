"""DDLwMP: online scheduling of distributed DL jobs with mixed parallelism (seed 001).

Luo, Liu, Lee, Shroff. *Prediction-Assisted Online Distributed Deep Learning Workload
Scheduling in GPU Clusters*: the per-iteration time model alpha (eq. 4-7), GPU mapping
(Heavy-Edge and the exact placement MILP), problem (8) solved exactly on small instances, its
lower bounds, and A-SRPT with its baselines on :mod:`dlsched.simulate`.

>>> import dlsched
>>> str(dlsched.solve("ddlwmp/toy-2x4", "exact").status)
'optimal'

Everything of the family lives in this folder; the core reaches it through :data:`FAMILY`.
"""

from __future__ import annotations

from typing import Any

from dlsched.families import LazyFamily
from dlsched.models.ddlwmp.instance import DdlwmpInstance


def _details(instance: DdlwmpInstance, solution: Any, evaluation: Any) -> dict[str, Any]:
    """Makespan and flow time of a schedule (none for a mapping)."""
    if hasattr(evaluation, "makespan"):
        return {"makespan_s": evaluation.makespan, "flow_time_s": evaluation.flow_time}
    return {}


FAMILY = LazyFamily(
    __name__,
    "Luo et al., Prediction-Assisted Online DDL Workload Scheduling (seed 001)",
    from_dict=".forms:ddlwmp_from_dict",
    outcome_details=_details,
    policy=".policy:run_user_policy",
)
__getattr__ = FAMILY.attribute  # METHODS on demand: importing the family stays light

__all__ = ["FAMILY", "METHODS", "DdlwmpInstance"]
