"""The exact route of Hare_Sched as a pipeline of stages, each a valid bound or a schedule.

1. Hint: the best of the quick schedules (:func:`cpsat.best_hint`), unless given.
2. Job subsets (:mod:`decompose`, above :data:`SUBSET_MIN_TASKS` tasks, at most 0.3 of the time
   limit): groups of jobs by arrival solved exactly, their optima summed. The merged schedule
   replaces the hint when better; if the hint meets the bound it is returned, proven, without a
   search.
3. Time-indexed LP bound, then CP-SAT with everything proved so far stated in the model
   (:func:`cpsat.solve_cpsat_native`).

Imports go one way: pipeline -> decompose -> cpsat -> lowerbound, scaling.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from dlsched.models.hare.instance import HareInstance
from dlsched.models.hare.solution import TaskSchedule
from dlsched.solvers.base import SolveOptions
from dlsched.solvers.certify import Proof

from .common import RouteResult
from .cpsat import PriorBounds, _scaled_bound, solve_cpsat_native
from .decompose import SubsetBound, subset_bound
from .scaling import objective_unit, scale_data, scaled_objective

#: The job-subset stage runs above this many tasks: below it one segment (max_tasks = 30 in
#: decompose.subset_bound) would be the whole instance, and its 0.3 share of the time limit
#: delayed the proof on hetero-4gpu-6jobs (17 tasks).
SUBSET_MIN_TASKS = 30


def solve_exact(
    instance: HareInstance,
    options: SolveOptions,
    hint: TaskSchedule | None = None,
    *,
    subsets: bool = True,
    subset_options: dict[str, Any] | None = None,
    **cpsat_options: Any,
) -> RouteResult:
    """Stages 2-3 of the module docstring; ``subset_options``: keyword arguments for
    :func:`decompose.subset_bound` (``block_tasks``, ``max_tasks``) and ``min_tasks`` in place
    of :data:`SUBSET_MIN_TASKS`; ``cpsat_options`` go to :func:`cpsat.solve_cpsat_native`."""
    t0 = time.perf_counter()
    kw = dict(subset_options or {})
    min_tasks = kw.pop("min_tasks", SUBSET_MIN_TASKS)
    d = scale_data(instance)
    if not (subsets and d.exact and instance.num_tasks > min_tasks):
        skipped = PriorBounds(info={"subset_bound": None})  # the stage did not run
        return solve_cpsat_native(instance, options, hint, prior=skipped, **cpsat_options)
    share = None if options.time_limit is None else 0.3 * options.time_limit
    sub = subset_bound(instance, replace(options, time_limit=share), **kw)
    hint = _better(instance, hint, sub.schedule)
    prior = _prior(sub, d.time_scale * d.weight_scale)
    if hint is not None and prior.lower is not None:
        upper = scaled_objective(d, instance, hint)
        if prior.lower >= upper:  # proven without a search (a bound above is a contradiction)
            unit = d.time_scale * d.weight_scale
            proof = Proof(bound=prior.lower / unit, unit=objective_unit(*_scales(d)))
            return RouteResult(hint, upper / unit, proof, {**prior.info, "returned": "hint"})
    rest = None if options.time_limit is None else options.time_limit - (time.perf_counter() - t0)
    opts = options if rest is None else replace(options, time_limit=max(rest, 0.01))
    return solve_cpsat_native(instance, opts, hint, prior=prior, **cpsat_options)


def _scales(d: Any) -> tuple[int, int, bool]:
    return d.time_scale, d.weight_scale, d.exact


def _better(
    instance: HareInstance, hint: TaskSchedule | None, merged: TaskSchedule | None
) -> TaskSchedule | None:
    """The better of the hint and the subsets' merged schedule (either may be None)."""
    if merged is None:
        return hint
    if hint is None:
        return merged
    d = scale_data(instance)
    return (
        merged
        if scaled_objective(d, instance, merged) < scaled_objective(d, instance, hint)
        else hint
    )


def _prior(sub: SubsetBound, unit: int) -> PriorBounds:
    """The subset stage's bounds in scaled units, and what it reports."""
    info = {
        "subset_bound": sub.bound,
        "subset_bound_seconds": sub.seconds,
        "subset_partition": [list(g.jobs) for g in sub.partition],
    }
    if not sub.partition:
        return PriorBounds(info=info)
    partial = tuple((g.jobs, _scaled_bound(g.bound, unit)) for g in sub.partition if g.bound > 0)
    return PriorBounds(_scaled_bound(sub.bound, unit), partial, info)


__all__ = ["SUBSET_MIN_TASKS", "solve_exact"]
