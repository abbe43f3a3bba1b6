"""The placement figures every verified :class:`~dlsched.result.Outcome` carries."""

from __future__ import annotations

from typing import Any

from dlsched.models.placement.check import PlacementEvaluation
from dlsched.models.placement.instance import PlacementInstance
from dlsched.models.placement.solution import Placement


def placement_details(
    instance: PlacementInstance, placement: Placement, evaluation: PlacementEvaluation
) -> dict[str, Any]:
    """Per-job JCT, the split of computation and communication, F (33), H (35) and the
    load-balancing decision of a checked placement, for every placement Outcome."""
    from dlsched.models.placement.metrics import fairness_degree, heterogeneity_degree

    return {
        "jct": dict(zip((j.name for j in instance.jobs), evaluation.jct, strict=True)),
        "computation_total": sum(evaluation.computation) / instance.num_jobs,
        "communication_total": sum(evaluation.communication) / instance.num_jobs,
        "workers_per_job": list(evaluation.workers),
        "fairness": fairness_degree(instance, evaluation.jct),
        "heterogeneity": heterogeneity_degree(instance),
        "data_split": placement.balance,
        # the load-balancing decision pi*_{i,k} (eq. 12, Algorithm 2 line 19), samples/epoch
        "samples_per_worker": {
            job.name: {
                instance.workers[k].name: round(x, 6)
                for k, x in zip(placement.workers_of(i), evaluation.data_split[i], strict=True)
            }
            for i, job in enumerate(instance.jobs)
        },
    }
