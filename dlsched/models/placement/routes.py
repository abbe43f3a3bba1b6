"""The placement routes: ``run(instance, MethodOptions) -> Outcome`` for every entry of
:data:`dlsched.models.placement.methods.METHODS` (the table names them; this module, with the
solvers it imports, loads only when one of them runs); every one returns a checker-verified
Outcome."""

from __future__ import annotations

from typing import Any

import numpy as np

from dlsched.errors import OptionError
from dlsched.models import MethodOptions
from dlsched.models.placement import heuristics as H
from dlsched.models.placement.categories import num_categories, validate_category
from dlsched.models.placement.instance import PlacementInstance
from dlsched.models.placement.solution import Placement
from dlsched.result import Outcome, no_solution, verified_outcome
from dlsched.solvers import solve
from dlsched.solvers.base import Status
from dlsched.solvers.certify import Proof
from dlsched.solvers.deadline import Deadline


def _category(instance: PlacementInstance, opts: MethodOptions) -> tuple[int, ...] | None:
    cat = opts.param("category")
    if cat is None:
        return None
    cat = tuple(int(c) for c in cat)
    validate_category(cat, instance.num_workers, instance.num_jobs)
    return cat


def run_exact(instance: PlacementInstance, opts: MethodOptions) -> Outcome:
    from dlsched.models.placement.exact import EXACT_ROUTES, solve_exact  # Pyomo, SCIP, HiGHS

    route = opts.route("placement exact", ("auto", *EXACT_ROUTES), {"oa": "highs"})
    return solve_exact(
        instance, _category(instance, opts), route, opts.solve, deadline=opts.deadline
    )


def run_p3(instance: PlacementInstance, opts: MethodOptions) -> Outcome:
    from dlsched.models.placement.exact import P3TimeUp, solve_p3

    cat = _category(instance, opts)
    if cat is None:
        raise OptionError("--category", None, "p3 needs a category K_1,...,K_S")
    try:
        value, placement, lp_status = solve_p3(
            instance, cat, opts.deadline.solve_options(opts.solve)
        )
    except P3TimeUp:
        reason = "time limit reached before P3's LP was solved"
        wall = opts.deadline.elapsed()
        return no_solution(instance, "p3", reason, wall_time=wall, hit_limit=True)
    return verified_outcome(
        instance,
        "p3",
        placement,
        wall_time=opts.deadline.elapsed(),
        details={"category": list(cat), "p3_total_throughput": value, "p3_status": str(lp_status)},
    )


def _market_details(best: H.CategoryResult, examined: list[H.CategoryResult]) -> dict[str, Any]:
    return {
        "category": list(best.category),
        "category_index": best.index,
        "categories_examined": len(examined),
        "total_throughput": best.throughput,
        "pricing_rounds_max": max(r.rounds for r in examined),
        "pricing_rounds_over_pmax": max(r.rounds / r.p_max for r in examined),
    }


def _market_outcome(
    instance: PlacementInstance,
    name: str,
    deadline: Deadline,
    best: H.CategoryResult | None,
    examined: list[H.CategoryResult],
    hit_limit: bool,
    details: dict[str, Any],
) -> Outcome:
    """The verified outcome of a category search (HAS, JPS): the best placement of the
    categories examined, status time_limit when the limit cut the search (with no placement,
    why in ``details["reason"]``, when it cut the search before any category was done)."""
    wall = deadline.elapsed()
    if best is None:
        reason = f"time limit reached before the first category's pricing ended ({wall:.1f} s)"
        return no_solution(
            instance,
            name,
            reason,
            wall_time=wall,
            hit_limit=True,
            details={**details, "categories_examined": 0},
        )
    return verified_outcome(
        instance,
        name,
        Placement(best.assignment),
        wall_time=wall,
        proof=Proof(hit_limit=hit_limit),
        claimed=best.avg_jct,
        details={**_market_details(best, examined), **details},
    )


def _run_has(instance: PlacementInstance, opts: MethodOptions, variant: str) -> Outcome:
    only = _category(instance, opts)
    total = 1 if only is not None else num_categories(instance.num_workers, instance.num_jobs)
    name = "has" if variant == "clearing" else f"has-{variant}"
    best: H.CategoryResult | None
    try:
        best, examined = H.has(instance, only, variant, opts.deadline)
    except H.TimeUp as cut:
        examined = cut.results
        best = H.lowest_jct(examined) if examined else None
    except H.PricingDidNotTerminate as e:  # the paper's rules on some markets (E000-8, E000-9)
        wall = opts.deadline.elapsed()
        return no_solution(
            instance, name, str(e), wall_time=wall, details={"categories_total": total}
        )
    hit = len(examined) < total
    details = {"categories_total": total}
    return _market_outcome(instance, name, opts.deadline, best, examined, hit, details)


def run_has(instance: PlacementInstance, opts: MethodOptions) -> Outcome:
    return _run_has(instance, opts, "clearing")


def run_has_paper(instance: PlacementInstance, opts: MethodOptions) -> Outcome:
    return _run_has(instance, opts, "paper")


def run_has_literal(instance: PlacementInstance, opts: MethodOptions) -> Outcome:
    return _run_has(instance, opts, "literal")


def run_jps(instance: PlacementInstance, opts: MethodOptions) -> Outcome:
    alpha = float(opts.param("alpha", 0.7))
    beta = float(opts.param("beta", 1.0))
    samples = int(opts.param("samples", 20))
    rng = np.random.default_rng(opts.solve.seed)
    best: H.CategoryResult | None
    try:
        best, examined = H.jps(instance, alpha, beta, samples, rng, opts.deadline)
    except H.TimeUp as cut:
        examined = cut.results
        best = H.jps_choice(examined, beta) if examined else None
    drawn = min(samples, H.jps_pool(instance, alpha))  # alpha checked by H.jps
    details = {
        "alpha": alpha,
        "beta": beta,
        "samples": samples,
        "samples_drawn": drawn,  # at most the size of Psi's rear
        "seed": opts.solve.seed,
    }
    if best is not None:
        details["fairness_selected"] = best.fairness
    hit = len(examined) < drawn
    return _market_outcome(instance, "jps", opts.deadline, best, examined, hit, details)


def run_optimus(instance: PlacementInstance, opts: MethodOptions) -> Outcome:
    a = H.optimus(instance)
    return verified_outcome(
        instance,
        "optimus",
        Placement(a, balance="equal"),
        wall_time=opts.deadline.elapsed(),
        details={"data_split": "equal"},
    )


def run_optimus_lb(instance: PlacementInstance, opts: MethodOptions) -> Outcome:
    a = H.optimus_lb(instance)
    return verified_outcome(
        instance,
        "optimus-lb",
        Placement(a),
        wall_time=opts.deadline.elapsed(),
        details={"data_split": "proportional"},
    )


def run_las(instance: PlacementInstance, opts: MethodOptions) -> Outcome:
    """Max-min fair placement (Section IV-A), lexicographic: max min ratio, then max sum; both
    LPs within the one time limit."""
    from dlsched.models.placement.model import build_las, counts_from_values, expand_counts

    deadline = opts.deadline
    m1 = build_las(instance)
    r1 = solve(m1, "highs", deadline.solve_options(opts.solve))
    if r1.status != Status.OPTIMAL or r1.objective is None:
        return verified_outcome(
            instance, "las", None, status=r1.status, wall_time=deadline.elapsed(), solver=r1
        )
    res, m = r1, m1
    if not deadline.passed():  # the second LP only when time is left for it
        m2 = build_las(instance, min_ratio=r1.objective * (1 - 1e-9))
        r2 = solve(m2, "highs", deadline.solve_options(opts.solve))
        res, m = (r2, m2) if r2.has_solution else (r1, m1)
    a = expand_counts(m._groups, counts_from_values(m, dict(res.values)), instance.num_workers)
    return verified_outcome(
        instance,
        "las",
        Placement(a),
        wall_time=deadline.elapsed(),
        solver=res,
        details={"las_max_min_ratio": r1.objective},
    )


def run_exhaustive(instance: PlacementInstance, opts: MethodOptions) -> Outcome:
    """All S^K assignments; the optimum when every one was examined before the time limit,
    else the best of those examined (status time_limit; with no placement before the first)."""
    a, n, complete = H.exhaustive_search(instance, opts.deadline)
    wall = opts.deadline.elapsed()
    details: dict[str, Any] = {"assignments_examined": n}
    if a is None:
        reason = f"time limit reached before the first surjective assignment ({wall:.1f} s)"
        return no_solution(
            instance, "exhaustive", reason, wall_time=wall, hit_limit=True, details=details
        )
    from dlsched.models.placement.check import check_placement

    value = check_placement(instance, Placement(a)).avg_jct
    return verified_outcome(
        instance,
        "exhaustive",
        Placement(a),
        wall_time=wall,
        # every assignment examined: the best is the optimum
        proof=Proof(bound=value) if complete else Proof(hit_limit=True),
        details=details,
    )
