"""The CP-SAT stages of the exact route (the ``exact-cpsat`` route's end): the time-indexed LP
bound, then the CP-SAT model of :mod:`.cpsat_model` with everything proved so far stated in it.

:func:`lp_bound_stage` and :func:`cpsat_stage` are two stages of :mod:`pipeline`;
:func:`solve_cpsat_native` runs them one after the other for a caller without the pipeline (a
job subset of :mod:`decompose`, the warm start, tests). Both take the instance's
:class:`~.cpsat_model.CpsatConfig`, the solver's settings and a required Deadline.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from dlsched.models.hare.instance import HareInstance
from dlsched.models.hare.solution import TaskSchedule
from dlsched.solvers.base import SolverSettings
from dlsched.solvers.certify import ContradictionError, Proof
from dlsched.solvers.cpsat import run_cpsat
from dlsched.solvers.deadline import Deadline

from .budget import BUILD_SHARE, LP_MIN_BUDGET, LP_SECONDS, LP_SHARE
from .common import NEAR_LIMIT, RouteResult
from .cpsat_model import DEFAULT_CONFIG, BuildTimeUp, CpsatConfig, CpsatHare, build_cpsat
from .cpsat_model.hints import add_hint, read_schedule
from .relaxation import combinatorial_bound
from .scaling import ScaledData, objective_unit, scale_data, scaled_bound, scaled_objective


@dataclass(frozen=True)
class PriorBounds:
    """What earlier stages proved, in scaled objective units: ``lower`` on the objective, and
    ``partial`` (jobs, bound) pairs on sums of weighted completions (see decompose.py)."""

    lower: int | None = None
    partial: tuple[tuple[tuple[int, ...], int], ...] = ()
    info: dict[str, Any] = field(default_factory=dict)


def solve_cpsat_native(
    instance: HareInstance,
    settings: SolverSettings,
    deadline: Deadline,
    hint: TaskSchedule | None = None,
    *,
    prior: PriorBounds | None = None,
    config: CpsatConfig = DEFAULT_CONFIG,
) -> RouteResult:
    """The LP-bound and CP-SAT stages within ``deadline`` (the LP bound with
    :data:`LP_SHARE` of it, if ``config.lp_bound``): the best schedule, its objective and what
    was proved. ``prior``: bounds proved by earlier stages, stated in the model."""
    deadline = deadline.share_of_rest(1.0)  # all that is left, from now
    prior = prior or PriorBounds()
    if config.lp_bound:
        prior = lp_bound_stage(
            instance, settings, deadline.share_of_rest(LP_SHARE), hint, prior, config
        )
    return cpsat_stage(instance, settings, deadline, hint, prior, config)


def model_data(
    instance: HareInstance, hint: TaskSchedule | None, config: CpsatConfig
) -> tuple[ScaledData, int | None]:
    """The scaled data of the model and its upper bound: with a ``hint`` (exact data,
    ``config.use_upper``) its objective, and a horizon that holds it."""
    d = scale_data(instance)
    if hint is None or not d.exact or not config.use_upper:
        return d, None
    span = max(
        e.start + instance.tc[e.job, e.gpu] + instance.ts[e.job, e.gpu] for e in hint.entries
    )
    upper = scaled_objective(d, instance, hint)
    return replace(d, horizon=max(d.horizon, math.ceil(span * d.time_scale))), upper


def lp_bound_stage(
    instance: HareInstance,
    settings: SolverSettings,
    budget: Deadline,
    hint: TaskSchedule | None,
    prior: PriorBounds,
    config: CpsatConfig,
) -> PriorBounds:
    """The time-indexed LP bound (exact data) in ``budget``, at most :data:`LP_SECONDS`: the
    prior bounds raised to it, and what it reports (:func:`lp_info`). The LP is built in Python
    before its solver's limit starts; below :data:`LP_MIN_BUDGET` seconds it would overrun the
    route's limit, so it is skipped."""
    d, upper = model_data(instance, hint, config)
    seconds = budget.seconds(cap=LP_SECONDS)
    if not d.exact or seconds is None or seconds < LP_MIN_BUDGET:
        return prior
    from .lowerbound import time_indexed_bound

    kw: dict[str, Any] = {"time_limit": seconds, "threads": max(1, settings.threads)}
    lb = time_indexed_bound(instance, d, upper, **{**kw, **config.lp_options})
    if lb is None:
        return prior
    lower = max(prior.lower or 0, lb.scaled) if prior.lower is not None else lb.scaled
    return PriorBounds(lower, prior.partial, {**prior.info, **lp_info(lb, d)})


def lp_info(lb: Any, d: ScaledData) -> dict[str, Any]:
    """What the LP stage reports: its bound, grid and time."""
    return {
        "lp_bound": lb.bound,
        "lp_bound_grid": lb.grid / d.time_scale,
        "lp_bound_seconds": lb.seconds,
    }


#: The keys of :func:`lp_info`, None where the LP bound did not run or found nothing.
NO_LP = dict.fromkeys(("lp_bound", "lp_bound_grid", "lp_bound_seconds"))


def cpsat_stage(
    instance: HareInstance,
    settings: SolverSettings,
    deadline: Deadline,
    hint: TaskSchedule | None,
    prior: PriorBounds,
    config: CpsatConfig,
) -> RouteResult:
    """The CP-SAT model with ``prior`` stated, built in at most :data:`BUILD_SHARE` of what is
    left to ``deadline`` (else the hint is returned, ``cpsat_status`` "not built"), then CP-SAT
    with what is left then and the threads, seed and gap of ``settings``. With a ``hint`` (and
    exact data) its objective bounds the model (``config.use_upper``); the hint is returned if
    CP-SAT finds nothing at least as good."""
    d, upper = model_data(instance, hint, config)
    info = {**NO_LP, **prior.info, **_scaling(d)}
    try:
        built = build_cpsat(
            instance,
            d,
            config,
            upper=upper,
            lower=prior.lower,
            partial=prior.partial,
            deadline=deadline.share_of_rest(BUILD_SHARE),
        )
    except BuildTimeUp:  # no time to build the model and run it: the hint, as if CP-SAT ran dry
        proof = _proof(instance, d, None, prior.lower, near_limit=True)
        info.update(cpsat_status="not built (time limit)", returned="hint")
        return RouteResult(hint, None if upper is None else upper / d.unit, proof, info)
    if hint is not None:
        add_hint(built, instance, hint)
    return _run(instance, settings, deadline, built, hint, upper, prior.lower, info, config)


def _run(
    instance: HareInstance,
    settings: SolverSettings,
    deadline: Deadline,
    built: CpsatHare,
    hint: TaskSchedule | None,
    upper: int | None,
    lower: int | None,
    info: dict[str, Any],
    config: CpsatConfig,
) -> RouteResult:
    """CP-SAT on the built model until ``deadline``; its schedule (or the hint when it found
    none at least as good), objective, proof and report."""
    d = built.data
    run = run_cpsat(
        built.model,
        deadline.solve_options(settings),
        label=f"exact-cpsat on {instance.name}",
        params={"linearization_level": 2} if config.redundant else None,
    )
    info = {
        **info,
        "cpsat_status": run.status_name,
        # C_n >= every last finish (6) leaves C_n free to lie above the schedule's completion
        # in a solution CP-SAT did not prove optimal with no gap: its objective then only
        # bounds the schedule's cost from above (at a proven optimum they are equal)
        "objective_is_upper": not (run.proven_optimal and settings.mip_gap == 0),
        "solver_wall_time": deadline.elapsed(),
        "num_workers": run.workers,
        "upper_from_hint": None if upper is None else upper / d.unit,
        "symmetry_classes": [c for c in built.gpu_classes if len(c) > 1],
    }
    if run.infeasible and hint is None:
        raise ContradictionError(instance.name, "exact-cpsat", "every hare instance is feasible")
    proof = _proof(instance, d, run, lower, deadline.almost_passed(NEAR_LIMIT))
    if not run.has_solution:
        # nothing at least as good as the hint (objective <= upper) was found; INFEASIBLE
        # with the hint in hand is a contradiction that certify() turns into an error
        objective = None if upper is None else upper / d.unit
        return RouteResult(hint, objective, proof, {**info, "returned": "hint"})
    assert run.objective is not None
    schedule = read_schedule(built, instance, run.value)
    return RouteResult(schedule, run.objective / d.unit, proof, info)


def _scaling(d: ScaledData) -> dict[str, Any]:
    """How the data were scaled, as the stage reports it."""
    return {
        "time_scale": d.time_scale,
        "weight_scale": d.weight_scale,
        "scale_exact": d.exact,
        "horizon": d.horizon / d.time_scale,
    }


def _proof(
    instance: HareInstance, d: ScaledData, run: Any, lower: int | None, near_limit: bool
) -> Proof:
    """What the CP-SAT stage proved: CP-SAT's bound (``run`` None: the model was not run),
    raised to the earlier stages' and to the combinatorial bound (all valid); none on
    rounded-up data, where bounds bound nothing."""
    own = 0 if run is None else run.bound
    bound = None
    if own is not None and d.exact:
        combinatorial = scaled_bound(combinatorial_bound(instance)["bound"], d.unit)
        bound = max(own, lower or 0, combinatorial) / d.unit
    ran = run is not None
    return Proof(
        bound=bound,
        claimed_optimal=ran and run.proven_optimal,
        infeasible=ran and run.infeasible,
        hit_limit=near_limit or (ran and run.hit_limit),
        unit=objective_unit(d),
    )


__all__ = [
    "DEFAULT_CONFIG",
    "CpsatConfig",
    "PriorBounds",
    "cpsat_stage",
    "lp_bound_stage",
    "solve_cpsat_native",
]
