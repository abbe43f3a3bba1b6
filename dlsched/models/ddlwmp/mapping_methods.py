"""The mapping routes of the ddlwmp family: every job mapped onto the free GPUs, objective
sum_i alpha_i (ms); each job's alpha and mapping go in the details."""

from __future__ import annotations

from typing import Any

from dlsched.errors import OptionError
from dlsched.models import MethodOptions
from dlsched.models.ddlwmp.alpha import Placement, alpha_ms
from dlsched.models.ddlwmp.instance import Cluster, DdlwmpInstance, Job
from dlsched.models.ddlwmp.mapping import (
    big_m,
    build_mapping_model,
    decode_mapping,
    heavy_edge,
    most_free_caps,
)
from dlsched.models.ddlwmp.mapping_cpsat import solve_mapping_cpsat
from dlsched.models.ddlwmp.solution import JobMapping
from dlsched.result import Outcome, verified_outcome
from dlsched.solvers import SolverSettings, solve
from dlsched.solvers.base import Status
from dlsched.solvers.certify import Proof
from dlsched.solvers.cpsat import load_cpsat
from dlsched.solvers.deadline import Deadline


def _details(instance: DdlwmpInstance, placements: list[Placement]) -> dict[str, Any]:
    return {
        "alpha_ms": {
            j.name: alpha_ms(j, instance.cluster, p)
            for j, p in zip(instance.jobs, placements, strict=True)
        },
        "mapping": {
            j.name: {str(m): list(r) for m, r in p}
            for j, p in zip(instance.jobs, placements, strict=True)
        },
    }


#: the placement solvers; ``auto`` is CP-SAT, the faster on the Table II cases
#: (benchmarks/RESULTS_ddlwmp.md, section 1: both routes side by side)
MAPPING_SOLVERS = ("auto", "cpsat", "highs")


def exact_mapping(
    job: Job,
    cluster: Cluster,
    free: tuple[int, ...],
    settings: SolverSettings,
    deadline: Deadline,
    solver: str = "auto",
) -> tuple[Placement | None, float | None, bool]:
    """(placement, proven lower bound on alpha, hit the limit) of the placement ILP within
    ``deadline`` (its building included), by the native CP-SAT model (:mod:`.mapping_cpsat`,
    Heavy-Edge as its hint) or the Pyomo MILP solved by HiGHS."""
    if solver not in MAPPING_SOLVERS:
        raise OptionError("solver", solver, f"expected one of {', '.join(MAPPING_SOLVERS)}")
    if solver in ("auto", "cpsat"):
        hint = heavy_edge(job, most_free_caps(free, job.gpus))
        return solve_mapping_cpsat(
            job, cluster, free, big_m(job, cluster), settings, deadline, hint
        )
    return _highs_mapping(job, cluster, free, settings, deadline)


def _highs_mapping(
    job: Job, cluster: Cluster, free: tuple[int, ...], settings: SolverSettings, deadline: Deadline
) -> tuple[Placement | None, float | None, bool]:
    mdl = build_mapping_model(job, cluster, free)
    # HiGHS's default feasibility tolerance (1e-6) lets alpha sit 1e-6 below the bottleneck
    # beta, and its bound with it: summed over jobs that exceeds certify's EPSILON
    tight = {"mip_feasibility_tolerance": 1e-9, "primal_feasibility_tolerance": 1e-9}
    res = solve(
        mdl, "highs", deadline.solve_options(settings.with_(extra={**tight, **settings.extra}))
    )
    place = decode_mapping(mdl, job, dict(res.values)) if res.has_solution else None
    return place, res.bound, res.status == Status.TIME_LIMIT


def run_mapping_exact(instance: DdlwmpInstance, opts: MethodOptions) -> Outcome:
    """Each job's placement ILP in turn, with what is left of the time limit but a grace (kept
    for the fallback and the check); a job the limit
    leaves without one (not reached, or its solver found none in time) takes its Heavy-Edge
    mapping, the one CP-SAT starts from, and adds no bound (``details["heavy_edge_jobs"]``)."""
    deadline = opts.deadline
    solver = opts.param("solver", "auto")
    if solver in ("auto", "cpsat"):
        load_cpsat()  # before the first look at the deadline: the import counts in it
    work = deadline.sooner(deadline.grace())  # a grace kept for Heavy-Edge and the check
    free = instance.cluster.free()
    placements: list[Placement] = []
    bound, hit, fallback = 0.0, False, 0
    for job in instance.jobs:
        place, b = None, None
        if not work.passed():
            place, b, limit = exact_mapping(job, instance.cluster, free, opts.solve, work, solver)
            hit = hit or limit
        if place is None:
            place = heavy_edge(job, most_free_caps(free, job.gpus))
            hit, fallback = True, fallback + 1
        placements.append(place)
        bound += b if b is not None else float("-inf")
    return verified_outcome(
        instance,
        "mapping-exact",
        JobMapping(tuple(placements)),
        wall_time=deadline.elapsed(),
        proof=Proof(bound=bound, hit_limit=hit),
        details={**_details(instance, placements), "heavy_edge_jobs": fallback},
    )


def run_heavy_edge(instance: DdlwmpInstance, opts: MethodOptions) -> Outcome:
    free = instance.cluster.free()
    placements = [heavy_edge(j, most_free_caps(free, j.gpus)) for j in instance.jobs]
    return verified_outcome(
        instance,
        "heavy-edge",
        JobMapping(tuple(placements)),
        wall_time=opts.deadline.elapsed(),
        details=_details(instance, placements),
    )


__all__ = ["MAPPING_SOLVERS", "exact_mapping", "run_heavy_edge", "run_mapping_exact"]
