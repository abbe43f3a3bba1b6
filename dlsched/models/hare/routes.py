"""The hare routes: ``run(instance, MethodOptions) -> Outcome`` for every entry of
:data:`dlsched.models.hare.methods.METHODS` (the table names them; this module, with the
solvers it imports, loads only when one of them runs).

Chen et al., *Hare*, HPDC 2022, Section 5. Every schedule passes :func:`check_schedule`; the
reported objective is the checker's. Relaxation methods return no schedule: ``objective`` is
None and ``bound`` the certified lower bound (the relaxation's value when solved to
optimality, its dual bound otherwise); ``details`` carry the rest.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from dlsched.errors import OptionError
from dlsched.models import MethodOptions
from dlsched.models.hare.instance import HareInstance, is_single_task_case
from dlsched.models.hare.solution import TaskSchedule
from dlsched.result import Outcome, verified_outcome
from dlsched.solvers import SolveResult, Status, solve
from dlsched.solvers.base import SolverSettings
from dlsched.solvers.certify import Proof
from dlsched.solvers.cpsat import load_cpsat
from dlsched.solvers.deadline import Deadline

from .baselines import baseline_outcome
from .budget import HINT_SHARE
from .common import RouteResult, before_checking, forked, push_to_feasible
from .cpsat_model import CpsatConfig
from .hint import best_hint
from .pipeline import choose_strategy, solve_exact
from .relaxation import (
    RelaxedSolution,
    combinatorial_bound,
    fastest_round,
    solve_relaxation,
    solve_strong_relaxation,
)
from .rounding import GPU_RULES, H_RULES, algorithm1, list_schedule, priority_order
from .scaling import objective_unit, scale_data

#: The exact method's routes (``--param route=``, the default first); ``highs`` is accepted
#: as another name of ``milp``.
ROUTES = ("auto", "cpsat", "milp", "special")


def greedy_schedule(instance: HareInstance) -> Any:
    """A quick feasible schedule (hint and horizon check): tasks by (arrival, round, weight),
    earliest-finish GPU."""
    key = {
        i: (instance.jobs[i[0]].arrival, i[1], -instance.jobs[i[0]].weight, i[0], i[2])
        for i in instance.tasks
    }
    order = sorted(instance.tasks, key=key.__getitem__)
    return list_schedule(instance, order, "earliest-finish")


def run_exact_cpsat(
    instance: HareInstance, options: MethodOptions, name: str = "exact-cpsat", branch: bool = False
) -> Outcome:
    """The pipeline of :mod:`pipeline` with the strategy it chooses by size and shape
    (:func:`pipeline.choose_strategy`); without ``branch`` (exact-cpsat, route=cpsat) its
    CP-SAT stages only. The hint's baselines stop at :data:`HINT_SHARE` of the method's
    deadline; the pipeline gets all that is left then, up to :func:`common.before_checking`
    (its schedule is checked after it)."""
    deadline = options.deadline
    scale_data(instance)  # refuses data the integer model cannot hold, before any work
    load_cpsat()  # before the stages ask the deadline whether to build: the import counts
    hint = (
        best_hint(instance, deadline.share_from_start(HINT_SHARE))[1]
        if options.param("hint", True)
        else None
    )
    # stage switches of the pipeline, on by default (booleans: checked by run_method)
    config = CpsatConfig(pooled=options.param("pooled", True), lp_bound=options.param("lp", True))
    strategy = choose_strategy(instance, options.solve)
    if not branch:
        strategy = replace(strategy, branch_share=0.0, reason="cp-sat stages (exact-cpsat)")
    solved = solve_exact(
        instance,
        options.solve,
        before_checking(deadline),
        hint,
        strategy=strategy,
        subsets=options.param("subsets", True),
        config=config,
    )
    return _route_outcome(instance, name, deadline, solved, route="cpsat")


def _route_outcome(
    instance: HareInstance,
    name: str,
    deadline: Deadline,
    solved: RouteResult,
    route: str | None = None,
) -> Outcome:
    """Verify a route's schedule; the route's objective must equal the checker's unless the
    data had to be rounded up (``scale_exact`` False) or the route says its objective may be
    slack (``objective_is_upper``, CP-SAT without a proof at zero gap), where it bounds it
    from above."""
    exact = solved.info.get("scale_exact", True)
    return verified_outcome(
        instance,
        name,
        solved.schedule,
        wall_time=deadline.elapsed(),
        proof=solved.proof,
        claimed=solved.objective,
        claimed_is_upper=not exact or bool(solved.info.get("objective_is_upper")),
        details={"route": route, **solved.info} if route else solved.info,
    )


def _milp_schedule(
    instance: HareInstance, transform: str, settings: SolverSettings, deadline: Deadline
) -> tuple[SolveResult, TaskSchedule | None, float]:
    """Build the pyomo.gdp model, solve it with HiGHS in the time left to ``deadline``, decode
    the incumbent."""
    from .model import build_exact_gdp, decode, to_milp  # Pyomo, when this route runs

    model = to_milp(build_exact_gdp(instance), transform)
    res = solve(model, "highs", deadline.solve_options(settings))
    if not res.has_solution:
        return replace(res, values={}), None, 0.0
    sched, shift = push_to_feasible(instance, decode(model, res.values))
    return replace(res, values={}), sched, shift


def run_exact_milp(
    instance: HareInstance, options: MethodOptions, name: str = "exact-milp"
) -> Outcome:
    """The pyomo.gdp model on HiGHS. Its completion variables are epigraphs, tight only at an
    optimum: a time-limited incumbent's own objective bounds the decoded schedule's from above,
    and the checker's value is the one reported. Building the model counts against the time
    limit; if the limit passes first, the greedy schedule and the combinatorial bound are
    returned with status time_limit (the child is killed in time for it: :func:`common.forked`)."""
    deadline = options.deadline
    transform = options.param("transformation", "bigm")
    if transform not in ("bigm", "hull"):
        raise OptionError("transformation", transform, "expected bigm or hull")
    child = forked(deadline)
    got = child.run(_milp_schedule, instance, transform, options.solve, child)
    details: dict[str, Any] = {"route": "milp", "transformation": transform}
    if got is None:
        bound = combinatorial_bound(instance)["bound"]
        return verified_outcome(
            instance,
            name,
            greedy_schedule(instance),
            wall_time=deadline.elapsed(),
            proof=Proof(bound=bound, hit_limit=True),
            details={**details, "model_built": False, "returned": "greedy"},
        )
    res, sched, shift = got
    proof = Proof.of(res, unit=objective_unit(scale_data(instance)))
    return verified_outcome(
        instance,
        name,
        sched,
        wall_time=deadline.elapsed(),
        proof=proof,
        solver=res,
        claimed=res.objective if sched is not None else None,
        claimed_is_upper=True,
        details={**details, "horizon": instance.horizon(), "tolerance_shift": shift},
    )


def run_exact_special(
    instance: HareInstance, options: MethodOptions, name: str = "exact"
) -> Outcome:
    """R || sum w_j C_j (one task per job, common arrival): assignment model, see special.py."""
    from .special import solve_single_task

    solved = solve_single_task(instance, options.solve, deadline=options.deadline)
    return _route_outcome(instance, name, options.deadline, solved)


def run_exact(instance: HareInstance, options: MethodOptions) -> Outcome:
    """route=auto (default): the special-case route when the instance is R || sum w_j C_j,
    otherwise the pipeline with the strategy it chooses (branch and bound first on small
    instances, then CP-SAT); cpsat (the CP-SAT stages only) | milp (highs) | special force a
    route. ``backend`` is the route's former name (deprecated)."""
    route = options.route("hare exact", ROUTES, {"highs": "milp"})
    if route == "auto":
        if not is_single_task_case(instance):
            return run_exact_cpsat(instance, options, "exact", branch=True)
        route = "special"
    if route == "special":
        if not is_single_task_case(instance):
            raise OptionError("route", route, "special needs one task per job, common arrival")
        return run_exact_special(instance, options, "exact")
    if route == "cpsat":
        return run_exact_cpsat(instance, options, "exact")
    return run_exact_milp(instance, options, "exact")


def _relaxation_outcome(
    instance: HareInstance, name: str, rel: RelaxedSolution, wall: float, details: dict[str, Any]
) -> Outcome:
    return verified_outcome(
        instance,
        name,
        None,
        status=rel.status,
        wall_time=wall,
        proof=Proof(bound=rel.bound),
        solver=rel.solver,
        details={"relaxation_value": rel.value, **rel.info, **details},
    )


def run_relaxation(instance: HareInstance, options: MethodOptions) -> Outcome:
    backend = options.param("backend", "highs")
    if backend not in ("highs", "scip"):
        raise OptionError("backend", backend, "relaxation takes highs or scip")
    rel = _relaxation_within_limit(instance, options, backend)
    return _relaxation_outcome(instance, "relaxation", rel, options.deadline.elapsed(), {})


def _relaxation_within_limit(
    instance: HareInstance, options: MethodOptions, backend: str
) -> RelaxedSolution:
    """RL on the solver ``backend`` within the method's deadline (:func:`common.forked`: the
    rest follows it), model building included; when the limit passes first, the combinatorial
    bound (no solver) with status time_limit and no x^."""
    child = forked(options.deadline)
    rel = child.run(solve_relaxation, instance, options.solve, child, backend)
    return rel if rel is not None else _no_relaxation(instance)


def _no_relaxation(instance: HareInstance) -> RelaxedSolution:
    """What is left when RL was not solved in time: the combinatorial bound, and no x^."""
    bound = combinatorial_bound(instance)["bound"]
    info = {"model_built": False, "bound_from": "combinatorial (RL not solved in time)"}
    return RelaxedSolution(Status.TIME_LIMIT, None, bound, {}, {}, None, info)


def run_relaxation_strong(instance: HareInstance, options: MethodOptions) -> Outcome:
    got = _strong_within_limit(instance, options)
    if got is None:
        got = (_no_relaxation(instance), _no_relaxation(instance), [])
    first, last, history = got
    base = first.bound
    gain = None if base is None or last.bound is None else last.bound - base
    return _relaxation_outcome(
        instance,
        "relaxation-strong",
        last,
        options.deadline.elapsed(),
        {
            "bound_rl": base,
            "bound_strong": last.bound,
            "subset_gain": gain,
            "separation_rounds": history,
        },
    )


def _strong_within_limit(instance: HareInstance, options: MethodOptions) -> Any:
    """RL and its separation rounds (at most ``max_rounds``) within the method's deadline
    (:func:`common.forked`), model building included; None when the limit passes first."""
    rounds = int(options.param("max_rounds", 50))
    child = forked(options.deadline)
    return child.run(solve_strong_relaxation, instance, options.solve, child, rounds)


def hare_variant(h: str, gpu_rule: str, name: str, relaxation: str = "rl") -> Any:
    def run(instance: HareInstance, options: MethodOptions) -> Outcome:
        deadline = options.deadline
        hh = options.param("h", h)
        rule = options.param("gpu_rule", gpu_rule)
        if hh not in H_RULES:
            raise OptionError("h", hh, f"expected one of {', '.join(H_RULES)}")
        if rule not in GPU_RULES:
            raise OptionError("gpu_rule", rule, f"expected one of {', '.join(GPU_RULES)}")
        source = options.param("relaxation", relaxation)
        if source == "rl":
            backend = options.param("backend", "highs")
            rel = _relaxation_within_limit(instance, options, backend)
            x_hat, y_hat, bound = rel.x, rel.y, rel.bound
            rl_info = {"relaxation_status": str(rel.status), "relaxation_value": rel.value}
        elif source == "strong":  # RL + Queyranne subset inequalities (variant hare-strong)
            got = _strong_within_limit(instance, options)
            _, rel, hist = got or (None, _no_relaxation(instance), [])
            x_hat, y_hat, bound = rel.x, rel.y, rel.bound
            rl_info = {
                "relaxation_status": str(rel.status),
                "relaxation_value": rel.value,
                "separation_rounds": len(hist),
            }
        elif source == "chain":  # no solver: earliest round starts of each job alone
            x_hat, y_hat = _chain_starts(instance)
            bound = combinatorial_bound(instance)["bound"]
            rl_info = {"relaxation_status": "combinatorial"}
        else:
            raise OptionError("relaxation", source, "expected rl, strong or chain")
        if not x_hat:  # the relaxation ran out of time: Algorithm 1 on the chain start times
            x_hat, y_hat = _chain_starts(instance)
            rl_info["relaxation_fallback"] = (
                f"no RL solution ({rl_info['relaxation_status']}): "
                "x^ from each job's chain on its fastest GPU"
            )
        rng = np.random.default_rng(options.solve.seed) if options.param("random_ties") else None
        t1 = deadline.elapsed()
        sched = algorithm1(instance, x_hat, y_hat, h=hh, gpu_rule=rule, rng=rng)
        t2 = deadline.elapsed()
        return verified_outcome(
            instance,
            name,
            sched,
            wall_time=deadline.elapsed(),
            proof=Proof(bound=bound),
            details={
                "h": hh,
                "gpu_rule": rule,
                "relaxation": source,
                "alpha": instance.alpha(),
                "relaxation_time": t1,
                "rounding_time": t2 - t1,
                **rl_info,
            },
        )

    return run


def _chain_starts(instance: HareInstance) -> tuple[dict[Any, float], dict[Any, int]]:
    """Each job alone on the GPU of its fastest round (:func:`relaxation.fastest_round`)."""
    gpus, fast = fastest_round(instance.tc.tolist(), instance.ts.tolist())
    x, y = {}, {}
    for n, j in enumerate(instance.jobs):
        for r in range(j.rounds):
            for k in range(j.tasks_per_round):
                x[(n, r, k)], y[(n, r, k)] = j.arrival + r * fast[n], gpus[n]
    return x, y


def baseline(name: str) -> Any:
    def run(instance: HareInstance, options: MethodOptions) -> Outcome:
        return baseline_outcome(name, instance, options)

    return run


def run_greedy(instance: HareInstance, options: MethodOptions) -> Outcome:
    sched = greedy_schedule(instance)
    return verified_outcome(instance, "greedy", sched, wall_time=options.deadline.elapsed())


__all__ = [
    "ROUTES",
    "baseline",
    "greedy_schedule",
    "hare_variant",
    "priority_order",
    "run_exact",
    "run_exact_cpsat",
    "run_exact_milp",
    "run_greedy",
    "run_relaxation",
    "run_relaxation_strong",
]
