"""The placement family's program for :func:`dlsched.model`: P1 (8)/(14), or P2 (17) with a
category (the family's ``programs`` part). Its equations are
:data:`.model.P1_EQUATIONS`, beside the builder."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dlsched.errors import InfeasibleSolutionError
from dlsched.models.program import Program, ProgramInfo


def _p1(
    instance: Any, category: tuple[int, ...] | None = None, symmetry_breaking: bool = True
) -> Any:
    from dlsched.models.placement.model import build_p1

    return build_p1(instance, category, "nonlinear", symmetry_breaking=symmetry_breaking)


def _placement(instance: Any, m: Any, values: Mapping[str, float]) -> Any:
    """The placement of P1's counts n[i, g]; a group whose workers the counts do not give out
    exactly once cannot be written as a placement, so (8c)-(8d) is reported here."""
    from dlsched.models.placement.model import counts_from_values, expand_counts
    from dlsched.models.placement.solution import Placement

    counts = counts_from_values(m, dict(values))
    for g, cap in enumerate(m._groups.cap):
        given = int(counts[:, g].sum())
        if given != cap:
            first = instance.workers[m._groups.members[g][0]].name
            raise InfeasibleSolutionError(
                f"instance '{instance.name}': the {cap} workers like {first} serve {given} "
                "job slots in the model's answer; (8c)-(8d): every worker serves exactly one job"
            )
    return Placement(expand_counts(m._groups, counts, instance.num_workers))


PROGRAMS = (
    Program(
        ProgramInfo(
            "p1",
            "placement",
            "(8)/(14), (8b)-(8d), (13), (5)-(6)",
            "P1: workers for each job with proportional load balancing, min average JCT "
            "(a convex MINLP, solved by scip); category=(K_1, .., K_S) makes it P2 (17)",
        ),
        _p1,
        "dlsched.models.placement.model:P1_EQUATIONS",
        _placement,
        ties="(13) and (14)",
        params=("category", "symmetry_breaking"),
        backends=("scip",),
    ),
)

__all__ = ["PROGRAMS"]
