"""The DDLwMP family's program for :func:`dlsched.model`: problem (8), time-indexed (the
family's ``programs`` part). Its equations are :data:`.model.EQUATIONS`, beside the builder."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dlsched.errors import InfeasibleSolutionError
from dlsched.models.program import Program, ProgramInfo


def _time_indexed(instance: Any, prune: bool = True) -> Any:
    """Program (8) over every job's best placement per usage; ``prune``: only the start slots
    of schedules that beat the best online policy's (as the exact route does; the optimum is
    kept, but a constraint that raises it above that schedule's cost makes the model
    infeasible: build with ``prune=False`` then)."""
    from dlsched.models.ddlwmp.methods import best_online_schedule
    from dlsched.models.ddlwmp.model import build_time_indexed, job_options

    options = [job_options(instance, i) for i in range(instance.num_jobs)]
    upper = best_online_schedule(instance)[0] if prune else None
    m = build_time_indexed(instance, options, upper=upper)
    m._options = options  # decoding needs each start's placement
    return m


def _schedule(instance: Any, m: Any, values: Mapping[str, float]) -> Any:
    """The schedule of the chosen starts z[i, o, t]; a job started other than once cannot be
    written as a schedule, so (2) is reported here."""
    from dlsched.models.ddlwmp.model import decode
    from dlsched.models.ddlwmp.solution import Schedule

    runs = [0] * instance.num_jobs
    for i, o, t in m.STARTS:
        runs[i] += values.get(m.z[i, o, t].name, 0.0) > 0.5
    for i, count in enumerate(runs):
        if count != 1:
            raise InfeasibleSolutionError(
                f"instance '{instance.name}': job {instance.jobs[i].name} starts {count} times "
                "in the model's answer; (2): every job runs once"
            )
    starts, places = decode(instance, m, m._options, dict(values))
    return Schedule(tuple(starts), tuple(places))


PROGRAMS = (
    Program(
        ProgramInfo(
            "ddlwmp-8",
            "ddlwmp",
            "(8), (1)-(3)",
            "problem (8), time-indexed: z[i, o, t] = job i starts at slot t with the best "
            "placement o of one usage; prune=False keeps every start slot",
        ),
        _time_indexed,
        "dlsched.models.ddlwmp.model:EQUATIONS",
        _schedule,
        ties="(8)",
        exact_objective=True,
        params=("prune",),
    ),
)

__all__ = ["PROGRAMS"]
