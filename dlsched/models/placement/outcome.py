"""Turn a placement from any source into a verified :class:`~dlsched.result.Outcome`."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from dlsched.check import check_placement
from dlsched.errors import InfeasibleSolutionError
from dlsched.instances import instance_hash
from dlsched.instances.placement import PlacementInstance
from dlsched.result import Outcome
from dlsched.schedule import Placement
from dlsched.solvers.base import SolveResult, Status


def placement_outcome(
    instance: PlacementInstance,
    method: str,
    placement: Placement | None,
    *,
    status: Status,
    wall_time: float,
    bound: float | None = None,
    claimed: float | None = None,
    solver: SolveResult | None = None,
    details: Mapping[str, Any] | None = None,
    balance: str = "proportional",
) -> Outcome:
    """Check ``placement`` from the raw instance; the checker's value is the objective.

    ``claimed`` is what the producer believes the objective is; a disagreement beyond 1e-6
    relative is a bug somewhere and raises instead of being reported.
    """
    evaluation = None
    objective = None
    if placement is not None:
        evaluation = check_placement(instance, placement, balance=balance)
        objective = evaluation.avg_jct
        if claimed is not None and not math.isclose(claimed, objective, rel_tol=1e-6, abs_tol=1e-9):
            raise InfeasibleSolutionError(
                f"{method}: producer claims average JCT {claimed!r}, the checker finds "
                f"{objective!r} for the same placement"
            )
        if bound is not None and bound > objective * (1 + 1e-6) + 1e-9:
            raise InfeasibleSolutionError(
                f"{method}: lower bound {bound!r} exceeds the verified objective {objective!r}"
            )
    metrics: dict[str, Any] = {}
    if evaluation is not None and placement is not None:
        from dlsched.models.placement.metrics import fairness_degree, heterogeneity_degree

        metrics = {
            "jct": dict(zip((j.name for j in instance.jobs), evaluation.jct, strict=True)),
            "computation_total": sum(evaluation.computation) / instance.num_jobs,
            "communication_total": sum(evaluation.communication) / instance.num_jobs,
            "workers_per_job": list(evaluation.workers),
            "fairness": fairness_degree(instance, evaluation.jct),
            "heterogeneity": heterogeneity_degree(instance),
            "data_split": balance,
            # the load-balancing decision pi*_{i,k} (eq. 12, Algorithm 2 line 19), samples/epoch
            "samples_per_worker": {
                job.name: {
                    instance.workers[k].name: round(x, 6)
                    for k, x in zip(placement.workers_of(i), evaluation.data_split[i], strict=True)
                }
                for i, job in enumerate(instance.jobs)
            },
        }
    return Outcome(
        method=method,
        instance=instance.name,
        instance_hash=instance_hash(instance),
        status=status,
        objective=objective,
        bound=bound,
        wall_time=wall_time,
        solution=placement,
        evaluation=evaluation,
        solver=solver,
        details={**metrics, **dict(details or {})},
    )
