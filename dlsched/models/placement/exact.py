"""Exact P1 / P2: the certified global optimum of eq. (8)/(14) (seed 000).

Three independent routes that must agree:

- ``columns``: P1 over worker *types* (:mod:`dlsched.models.placement.structure`): a Lagrangian
  bound from prices on the types, then one integer master over every column whose reduced
  cost fits in the gap (:mod:`dlsched.models.placement.columns`). It needs the count vectors
  of one job to be enumerable (few worker types, as in the paper's clusters); ``auto`` takes it
  whenever they are.

- ``scip``: the MINLP of :func:`build_p1` with the convex epigraph t_i V_i >= T_i |Pi_i|,
  solved to global optimality by SCIP.
- ``highs``: outer approximation with HiGHS only. The master MILP keeps supporting lines of
  the convex t >= W/V; each master solution adds the tangent at its V_i. Every master optimum
  is a lower bound (tangents under-estimate a convex function and the rest of the model is an
  exact linearisation); every master solution, evaluated exactly, is an upper bound. V_i takes
  finitely many values, so the loop ends with matching bounds.

P3 (18) with K_i fixed is an LP (transportation polytope) solved by HiGHS.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from dlsched.errors import OptionError
from dlsched.models.placement import columns
from dlsched.models.placement.categories import validate_category
from dlsched.models.placement.evaluate import Evaluator
from dlsched.models.placement.instance import PlacementInstance
from dlsched.models.placement.model import (
    add_tangent,
    build_p1,
    build_p3,
    counts_from_values,
    expand_counts,
)
from dlsched.models.placement.solution import Placement
from dlsched.models.placement.structure import structure
from dlsched.result import Outcome, verified_outcome
from dlsched.solvers import solve
from dlsched.solvers.base import SolveOptions, SolveResult, SolverSettings, Status
from dlsched.solvers.certify import ContradictionError, Proof, tolerance
from dlsched.solvers.deadline import Deadline
from dlsched.solvers.pyomo_backend import PyomoSolver

EXACT_ROUTES = ("scip", "highs", "columns")
#: ``route="auto"``: the column route when its columns can be enumerated (few worker types;
#: benchmarks/RESULTS_placement.md), else SCIP up to this many workers and outer approximation
#: over HiGHS above (SCIP is faster on small K, its bound lags on K = 100).
AUTO_SCIP_MAX_WORKERS = 20


def auto_route(instance: PlacementInstance) -> str:
    if columns.applies(structure(instance)):
        return "columns"
    return "scip" if instance.num_workers <= AUTO_SCIP_MAX_WORKERS else "highs"


def _feasible(instance: PlacementInstance, route: str, proof: Proof) -> Proof:
    """``proof``, what a P1 route proved. P1 with K >= S (checked on load) is always feasible,
    so a proof of infeasibility is a contradiction, raised here rather than reported."""
    if proof.infeasible:
        raise ContradictionError(instance.name, route, "P1 proven infeasible, but K >= S")
    return proof


def solve_exact(
    instance: PlacementInstance,
    category: tuple[int, ...] | None = None,
    route: str = "auto",
    settings: SolverSettings | None = None,
    *,
    deadline: Deadline,
) -> Outcome:
    """P1 (P2 with ``category``) by ``route`` within ``deadline``, model building included,
    the solvers told ``settings``."""
    if route == "auto":
        route = auto_route(instance)
    if route not in EXACT_ROUTES:
        raise OptionError(
            "route",
            route,
            f"exact P1 is nonlinear; use one of {', '.join(EXACT_ROUTES)} "
            "(scip: global MINLP, highs: outer approximation, columns: Lagrangian bound and "
            "reduced-cost enumeration over worker types)",
        )
    run = {"columns": _solve_columns, "scip": _solve_scip, "highs": _solve_oa}[route]
    return run(instance, category, settings or SolverSettings(), deadline)


def _method_name(category: tuple[int, ...] | None) -> str:
    return "exact" if category is None else "exact-p2"


def _fallback(
    instance: PlacementInstance, category: tuple[int, ...] | None
) -> tuple[tuple[int, ...], str]:
    """A placement found without solving, and its name: Optimus-LB's for P1, the first K_i
    workers of each job for P2."""
    from dlsched.models.placement.heuristics import optimus_lb

    if category is None:
        return optimus_lb(instance), "optimus-lb"
    return _category_start(instance, category), "first K_i workers"


def _stopped(
    instance: PlacementInstance,
    category: tuple[int, ...] | None,
    fallback: tuple[tuple[int, ...] | None, str],
    deadline: Deadline,
    details: dict[str, Any],
) -> Outcome:
    """The outcome of a route whose forked child was killed at the limit: the ``fallback``
    placement (None: none), no bound."""
    placement, returned = fallback
    return verified_outcome(
        instance,
        _method_name(category),
        None if placement is None else Placement(placement),
        wall_time=deadline.elapsed(),
        proof=Proof(hit_limit=True),
        details={**details, "category": list(category) if category else None, "returned": returned},
    )


def _solve_scip(
    instance: PlacementInstance,
    category: tuple[int, ...] | None,
    settings: SolverSettings,
    deadline: Deadline,
) -> Outcome:
    # a P2 stopped at the limit returns no placement
    fallback = _fallback(instance, None) if category is None else (None, "nothing")
    child = deadline.for_fork()
    got = child.run(_scip_run, instance, category, settings, child)
    details: dict[str, Any] = {
        "route": "scip-minlp",
        "category": list(category) if category else None,
    }
    if got is None:  # SCIP overran its own limit and was stopped: a greedy incumbent only
        details["stopped"] = "SCIP overran the time limit"
        return _stopped(instance, category, fallback, deadline, details)
    res, placement, groups = got
    return verified_outcome(
        instance,
        _method_name(category),
        placement,
        wall_time=deadline.elapsed(),
        proof=_feasible(instance, "scip-minlp", Proof.of(res)),
        solver=res,
        details={**details, "groups": groups},
    )


def _scip_run(
    instance: PlacementInstance,
    category: tuple[int, ...] | None,
    settings: SolverSettings,
    deadline: Deadline,
) -> tuple[SolveResult, Placement | None, int]:
    """Build P1 as an MINLP and solve it with SCIP in what building left of ``deadline`` (run
    in a child: SCIP has overrun its own time limit on badly scaled data)."""
    m = build_p1(instance, category, computation="nonlinear")
    extra = {"numerics/feastol": 1e-9, **settings.extra}
    res = solve(m, "scip", deadline.solve_options(settings.with_(extra=extra)))
    placement = None
    if res.has_solution:
        counts = counts_from_values(m, dict(res.values))
        placement = Placement(expand_counts(m._groups, counts, instance.num_workers))
    return replace(res, values={}), placement, len(m._groups.members)


@dataclass
class _OuterApproximation:
    """The state of the outer-approximation loop: the best verified placement (an upper
    bound), the best proven master bound, and what the loop did."""

    evaluator: Evaluator
    best_val: float = float("inf")
    best_assign: tuple[int, ...] | None = None
    lower: float = -float("inf")
    status: Status = Status.FEASIBLE
    last: SolveResult | None = None
    iterations: int = 0
    cuts: int = 0
    master_times: list[float] = field(default_factory=list)

    def closed(self) -> bool:
        return self.best_assign is not None and self.best_val - self.lower <= tolerance(
            self.best_val
        )


def _solve_oa(
    instance: PlacementInstance,
    category: tuple[int, ...] | None,
    settings: SolverSettings,
    deadline: Deadline,
) -> Outcome:
    """:func:`_outer_approximation` in a child under the time limit (building the model and
    loading it into HiGHS cannot stop itself: seconds on K = 400); stopped there, the
    :func:`_fallback` placement."""
    fallback = _fallback(instance, category)
    child = deadline.for_fork()
    got = child.run(_outer_approximation, instance, category, settings, child)
    if got is not None:
        return got
    details = {"route": "highs-outer-approximation", "stopped": "the model overran the limit"}
    return _stopped(instance, category, fallback, deadline, details)


def _outer_approximation(
    instance: PlacementInstance,
    category: tuple[int, ...] | None,
    settings: SolverSettings,
    deadline: Deadline,
    max_iterations: int = 500,
) -> Outcome:
    """Outer approximation over HiGHS. Intermediate masters only collect cut points: a loose
    gap is enough and each master's bound is still valid. Once a master adds no cut, it is
    re-solved tightly; the loop ends when the proven lower bound meets the best verified
    objective."""
    m = build_p1(instance, category, computation="tangents")
    state = _OuterApproximation(Evaluator(instance))
    gap_now = max(settings.mip_gap, 1e-4)
    while state.iterations < max_iterations:
        state.iterations += 1
        if deadline.passed():
            state.status = Status.TIME_LIMIT
            break
        res = _master(m, instance, state, deadline.solve_options(settings.with_(mip_gap=gap_now)))
        if state.closed():
            state.status = Status.OPTIMAL
            break
        # OPTIMAL, or FEASIBLE = converged at the requested (loose) gap
        if res.status not in (Status.OPTIMAL, Status.FEASIBLE, Status.INFEASIBLE):
            state.status = Status.TIME_LIMIT if res.status == Status.TIME_LIMIT else res.status
            break
        added = _tangent_cuts(m, instance, res)
        state.cuts += added
        if added == 0:
            if gap_now > min(settings.mip_gap, 1e-9):
                gap_now = min(settings.mip_gap, 1e-9)  # final, tight master
                continue
            break
    return _oa_outcome(instance, category, m, state, deadline.elapsed())


def _master(
    m: Any, instance: PlacementInstance, state: _OuterApproximation, options: SolveOptions
) -> SolveResult:
    """Solve the master once (cut off at the incumbent) under ``options`` (the time left) and
    update the bounds."""
    extra = dict(options.extra)
    if state.best_val < float("inf"):
        extra.setdefault("objective_bound", state.best_val * (1 + 1e-9))  # MIP cutoff
    res = PyomoSolver("highs").solve(m, options.with_(extra=extra))
    state.master_times.append(round(res.wall_time, 3))
    state.last = res
    if state.best_assign is None:  # no cutoff yet: infeasible would be P1's
        _feasible(instance, "highs-outer-approximation", Proof.of(res))
    proven = (Status.OPTIMAL, Status.FEASIBLE, Status.TIME_LIMIT, Status.INFEASIBLE)
    if res.bound is not None and res.status in proven:
        state.lower = max(state.lower, res.bound)
    if res.status == Status.INFEASIBLE:  # the cutoff removed everything: incumbent optimal
        state.lower = max(state.lower, state.best_val)
    if res.has_solution:
        counts = counts_from_values(m, dict(res.values))
        assign = expand_counts(m._groups, counts, instance.num_workers)
        val = float(state.evaluator.avg_jct(np.array(assign))[0])
        if val < state.best_val:
            state.best_val, state.best_assign = val, assign
    return res


def _tangent_cuts(m: Any, instance: PlacementInstance, res: SolveResult) -> int:
    """Add the tangent of t >= W/V at each job's master V_i where the master under-estimates
    it; the number added."""
    added = 0
    if not res.has_solution:
        return added
    for i in range(instance.num_jobs):
        v = float(res.values[m.V[i].name])
        t = float(res.values[m.t[i].name])
        w = float(instance.work[i])
        if t < w / v * (1 - 1e-10):
            add_tangent(m, i, v)
            added += 1
    return added


def _oa_outcome(
    instance: PlacementInstance,
    category: tuple[int, ...] | None,
    m: Any,
    state: _OuterApproximation,
    wall_time: float,
) -> Outcome:
    """The verified outcome of the loop; a heuristic incumbent if no master found one."""
    returned = "master"
    if state.best_assign is None:
        state.best_assign, returned = _fallback(instance, category)
        state.best_val = float(state.evaluator.avg_jct(np.array([state.best_assign]))[0])
    bound = state.lower if state.lower > -float("inf") else None
    proof = Proof(bound=bound, hit_limit=state.status == Status.TIME_LIMIT)
    return verified_outcome(
        instance,
        _method_name(category),
        Placement(state.best_assign),
        wall_time=wall_time,
        proof=proof,
        claimed=state.best_val,
        solver=state.last,
        details={
            "route": "highs-outer-approximation",
            "returned": returned,
            "iterations": state.iterations,
            "cuts_added": state.cuts,
            "master_seconds": state.master_times,
            "category": list(category) if category else None,
            "groups": len(m._groups.members),
        },
    )


def _category_start(instance: PlacementInstance, category: tuple[int, ...]) -> tuple[int, ...]:
    """A feasible P2 placement: job i takes the next K_i workers in index order."""
    return tuple(int(i) for i in np.repeat(np.arange(len(category)), category))


def _solve_columns(
    instance: PlacementInstance,
    category: tuple[int, ...] | None,
    settings: SolverSettings,
    deadline: Deadline,
) -> Outcome:
    st = structure(instance, category)
    if not columns.applies(st):
        raise OptionError(
            "route",
            "columns",
            f"{st.grid_size:.3g} count vectors over {st.num_types} worker types for "
            f"{len(st.class_jobs)} distinct jobs are too many to enumerate (at most "
            f"{columns.MAX_GRID:,}, and {columns.MAX_PRICED:,} over all jobs): use scip or highs",
        )
    if category is not None:
        validate_category(tuple(category), instance.num_workers, instance.num_jobs)
    start = _fallback(instance, category)
    # in a child: pricing every column (millions of them on K = 400) cannot stop itself
    child = deadline.for_fork()
    got = child.run(columns.run, instance, category, settings, start[0], child)
    if got is None:  # stopped at the limit: the start placement, no bound
        details = {"route": "columns", "stopped": "pricing overran the time limit"}
        return _stopped(instance, category, start, deadline, details)
    s = instance.num_jobs
    bound = got.bound / s if np.isfinite(got.bound) else None
    return verified_outcome(
        instance,
        _method_name(category),
        Placement(got.assignment) if got.assignment is not None else None,
        wall_time=deadline.elapsed(),
        proof=Proof(bound=bound, hit_limit=got.hit_limit),
        claimed=got.value / s,
        details={**got.details, "category": list(category) if category else None},
    )


class P3TimeUp(Exception):
    """P3's LP stopped by its time limit before its optimum."""


def solve_p3(
    instance: PlacementInstance, category: tuple[int, ...], options: SolveOptions | None = None
) -> tuple[float, Placement, Status]:
    """P3 optimum (total throughput) for one category, and an optimal placement;
    :class:`P3TimeUp` when the LP's time limit came first."""
    m = build_p3(instance, category)
    res = solve(m, "highs", options or SolveOptions())
    if res.status == Status.TIME_LIMIT:
        raise P3TimeUp
    if res.status != Status.OPTIMAL or res.objective is None:
        raise OptionError("--category", ",".join(map(str, category)), f"P3 LP ended {res.status}")
    s, k = instance.num_jobs, instance.num_workers
    sigma = np.array([[res.values[m.sigma[i, kk].name] for kk in range(k)] for i in range(s)])
    if np.abs(sigma - np.round(sigma)).max() > 1e-6:  # a vertex of a TU polytope is integral
        raise RuntimeError("P3 LP returned a fractional vertex")
    assignment = tuple(int(np.argmax(sigma[:, kk])) for kk in range(k))
    return float(res.objective), Placement(assignment), res.status
