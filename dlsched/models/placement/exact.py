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

import time
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
from dlsched.solvers.base import SolveOptions, SolveResult, Status
from dlsched.solvers.certify import ContradictionError, Proof, tolerance
from dlsched.solvers.deadline import within_time_limit
from dlsched.solvers.pyomo_backend import PyomoSolver

EXACT_BACKENDS = ("scip", "highs", "columns")
#: ``backend="auto"``: the column route when its columns can be enumerated (few worker types;
#: benchmarks/RESULTS_placement.md), else SCIP up to this many workers and outer approximation
#: over HiGHS above (SCIP is faster on small K, its bound lags on K = 100).
AUTO_SCIP_MAX_WORKERS = 20


def auto_backend(instance: PlacementInstance) -> str:
    if columns.applies(structure(instance)):
        return "columns"
    return "scip" if instance.num_workers <= AUTO_SCIP_MAX_WORKERS else "highs"


def _proof(
    instance: PlacementInstance,
    route: str,
    bound: float | None,
    *,
    claimed_optimal: bool = False,
    infeasible: bool = False,
    hit_limit: bool = False,
) -> Proof:
    """What a P1 route proved. P1 with K >= S (checked on load) is always feasible, so a
    proof of infeasibility is a contradiction, raised here rather than reported."""
    if infeasible:
        raise ContradictionError(instance.name, route, "P1 proven infeasible, but K >= S")
    return Proof(bound=bound, claimed_optimal=claimed_optimal, hit_limit=hit_limit)


def solve_exact(
    instance: PlacementInstance,
    category: tuple[int, ...] | None = None,
    backend: str = "auto",
    options: SolveOptions | None = None,
) -> Outcome:
    if backend == "auto":
        backend = auto_backend(instance)
    if backend not in EXACT_BACKENDS:
        raise OptionError(
            "backend",
            backend,
            f"exact P1 is nonlinear; use one of {', '.join(EXACT_BACKENDS)} "
            "(scip: global MINLP, highs: outer approximation, columns: Lagrangian bound and "
            "reduced-cost enumeration over worker types)",
        )
    options = options or SolveOptions()
    if backend == "columns":
        return _solve_columns(instance, category, options)
    return (
        _solve_scip(instance, category, options)
        if backend == "scip"
        else _solve_oa(instance, category, options)
    )


def _method_name(category: tuple[int, ...] | None) -> str:
    return "exact" if category is None else "exact-p2"


def _solve_scip(
    instance: PlacementInstance, category: tuple[int, ...] | None, options: SolveOptions
) -> Outcome:
    t0 = time.perf_counter()
    got = within_time_limit(
        _scip_run, instance, category, options, time_limit=options.time_limit, t0=t0
    )
    details: dict[str, Any] = {
        "route": "scip-minlp",
        "category": list(category) if category else None,
    }
    if got is None:  # SCIP overran its own limit and was stopped: a greedy incumbent only
        from dlsched.models.placement.heuristics import optimus_lb

        fallback = Placement(optimus_lb(instance)) if category is None else None
        return verified_outcome(
            instance,
            _method_name(category),
            fallback,
            wall_time=time.perf_counter() - t0,
            proof=Proof(hit_limit=True),
            details={**details, "stopped": "SCIP overran the time limit", "returned": "optimus-lb"},
        )
    res, placement, groups = got
    proof = _proof(
        instance,
        "scip-minlp",
        res.bound,
        claimed_optimal=res.status == Status.OPTIMAL,
        infeasible=res.status == Status.INFEASIBLE,
        hit_limit=res.status == Status.TIME_LIMIT,
    )
    return verified_outcome(
        instance,
        _method_name(category),
        placement,
        wall_time=time.perf_counter() - t0,
        proof=proof,
        solver=res,
        details={**details, "groups": groups},
    )


def _scip_run(
    instance: PlacementInstance, category: tuple[int, ...] | None, options: SolveOptions
) -> tuple[SolveResult, Placement | None, int]:
    """Build P1 as an MINLP and solve it with SCIP (run in a child: SCIP has overrun its own
    time limit on badly scaled data)."""
    m = build_p1(instance, category, computation="nonlinear")
    extra = {"numerics/feastol": 1e-9, **options.extra}
    res = solve(m, "scip", options.with_(extra=extra))
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
    options: SolveOptions,
    max_iterations: int = 500,
) -> Outcome:
    """Outer approximation over HiGHS. Intermediate masters only collect cut points: a loose
    gap is enough and each master's bound is still valid. Once a master adds no cut, it is
    re-solved tightly; the loop ends when the proven lower bound meets the best verified
    objective."""
    t0 = time.perf_counter()
    m = build_p1(instance, category, computation="tangents")
    state = _OuterApproximation(Evaluator(instance))
    gap_now = max(options.mip_gap, 1e-4)
    while state.iterations < max_iterations:
        state.iterations += 1
        elapsed = time.perf_counter() - t0
        if options.time_limit is not None and elapsed >= options.time_limit:
            state.status = Status.TIME_LIMIT
            break
        res = _master(m, instance, state, options.with_(mip_gap=gap_now), elapsed)
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
            if gap_now > min(options.mip_gap, 1e-9):
                gap_now = min(options.mip_gap, 1e-9)  # final, tight master
                continue
            break
    return _oa_outcome(instance, category, m, state, time.perf_counter() - t0)


def _master(
    m: Any,
    instance: PlacementInstance,
    state: _OuterApproximation,
    options: SolveOptions,
    elapsed: float,
) -> SolveResult:
    """Solve the master once (cut off at the incumbent) and update the bounds."""
    extra = dict(options.extra)
    if state.best_val < float("inf"):
        extra.setdefault("objective_bound", state.best_val * (1 + 1e-9))  # MIP cutoff
    res = PyomoSolver("highs").solve(
        m, options.with_(time_limit=options.remaining(elapsed), extra=extra)
    )
    state.master_times.append(round(res.wall_time, 3))
    state.last = res
    if res.status == Status.INFEASIBLE and state.best_assign is None:
        _proof(instance, "highs-outer-approximation", None, infeasible=True)
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
        from dlsched.models.placement.heuristics import optimus_lb

        returned = "optimus-lb" if category is None else "first K_i workers"
        state.best_assign = (
            optimus_lb(instance) if category is None else _category_start(instance, category)
        )
        state.best_val = float(state.evaluator.avg_jct(np.array([state.best_assign]))[0])
    bound = state.lower if state.lower > -float("inf") else None
    proof = _proof(
        instance, "highs-outer-approximation", bound, hit_limit=state.status == Status.TIME_LIMIT
    )
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
    instance: PlacementInstance, category: tuple[int, ...] | None, options: SolveOptions
) -> Outcome:
    t0 = time.perf_counter()
    st = structure(instance, category)
    if not columns.applies(st):
        raise OptionError(
            "backend",
            "columns",
            f"{st.grid_size:.3g} count vectors over {st.num_types} worker types for "
            f"{len(st.class_jobs)} distinct jobs are too many to enumerate (at most "
            f"{columns.MAX_GRID:,}, and {columns.MAX_PRICED:,} over all jobs): use scip or highs",
        )
    if category is not None:
        validate_category(tuple(category), instance.num_workers, instance.num_jobs)
    from dlsched.models.placement.heuristics import optimus_lb

    start = optimus_lb(instance) if category is None else _category_start(instance, category)
    deadline = t0 + (options.time_limit if options.time_limit is not None else float("inf"))
    got = columns.run(instance, category, options, start, deadline)
    s = instance.num_jobs
    bound = got.bound / s if np.isfinite(got.bound) else None
    return verified_outcome(
        instance,
        _method_name(category),
        Placement(got.assignment) if got.assignment is not None else None,
        wall_time=time.perf_counter() - t0,
        proof=_proof(instance, "columns", bound, hit_limit=got.hit_limit),
        claimed=got.value / s,
        details={**got.details, "category": list(category) if category else None},
    )


def solve_p3(
    instance: PlacementInstance, category: tuple[int, ...], options: SolveOptions | None = None
) -> tuple[float, Placement, Status]:
    """P3 optimum (total throughput) for one category, and an optimal placement."""
    m = build_p3(instance, category)
    res = solve(m, "highs", options or SolveOptions())
    if res.status != Status.OPTIMAL or res.objective is None:
        raise OptionError("--category", ",".join(map(str, category)), f"P3 LP ended {res.status}")
    s, k = instance.num_jobs, instance.num_workers
    sigma = np.array([[res.values[m.sigma[i, kk].name] for kk in range(k)] for i in range(s)])
    if np.abs(sigma - np.round(sigma)).max() > 1e-6:  # a vertex of a TU polytope is integral
        raise RuntimeError("P3 LP returned a fractional vertex")
    assignment = tuple(int(np.argmax(sigma[:, kk])) for kk in range(k))
    return float(res.objective), Placement(assignment), res.status
