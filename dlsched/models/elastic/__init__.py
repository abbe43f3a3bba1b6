"""Elastic ML jobs: worker/PS counts, types and execution windows (seed 003).

Zhou, Pang, Zhang, Wu, Jiao, Zhong, Li. *Online Scheduling Algorithm for Heterogeneous
Distributed Machine Learning Jobs*, IEEE TCC: program (2) (parameter server) and (15)
(Ring-AllReduce), the compact-exponential ILP (8)/(17), A_maxweight, A_dual, A_online.

>>> import dlsched
>>> out = dlsched.solve("elastic/intro-cifar10", "exact")
>>> str(out.status), out.objective
('optimal', 25.0)

Everything of the family lives in this folder; the core reaches it through :data:`FAMILY`.
"""

from __future__ import annotations

from typing import Any

from dlsched.families import LazyFamily
from dlsched.models.elastic.instance import ElasticInstance, ElasticJob


def _details(instance: ElasticInstance, solution: Any, evaluation: Any) -> dict[str, Any]:
    """Each job's completion slot and the makespan."""
    return {"completion": list(evaluation.completion), "makespan": evaluation.makespan}


FAMILY = LazyFamily(
    __name__,
    "Zhou et al., Online Scheduling of Heterogeneous Distributed ML Jobs, TCC (seed 003)",
    check=".check:check_schedule",
    outcome_details=_details,
    policy=".policy:run_user_policy",
)
__getattr__ = FAMILY.attribute  # METHODS on demand: importing the family stays light

__all__ = ["FAMILY", "METHODS", "ElasticInstance", "ElasticJob"]
