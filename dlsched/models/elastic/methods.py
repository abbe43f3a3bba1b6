"""The elastic methods: ``run(instance, MethodOptions) -> Outcome`` for every entry of METHODS.

Zhou et al., IEEE TCC (seed 003). Every schedule passes :func:`.check.check_schedule`; the
reported objective is the checker's. ``lp-bound`` returns no schedule: its ``bound`` is the
certified Lagrangian bound of column generation, ``details`` carry the rest (status
``infeasible`` when a job has no schedule at all); ``lp-round`` and ``lp-random-round``
(:mod:`.rounding`) round its last master LP into a schedule. A heuristic whose commitments
leave some job no room before the horizon returns no schedule either
(:func:`no_schedule_outcome`); a heuristic's schedule is reported with its total flow time
(``flow_time_s``) and, with a bound asked for (:attr:`~dlsched.models.MethodOptions.bound`,
``dlsched solve --bound``), beside it a certified lower bound on it and the gap
(:mod:`.flowbound`: ``flow_time_bound_s``, ``flow_time_gap``; ``weighted_completion_bound`` and
its gap for the objective) and the seconds the bound took, ``bound_time``, apart from
``wall_time`` (the bound is computed once per instance object, shared by the methods run on it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from dlsched.errors import OptionError
from dlsched.models import Method, MethodOptions, method_table
from dlsched.models.elastic.enumerate import MAX_CONFIGS, EnumerationTimeUp, enumerate_all
from dlsched.models.elastic.exact import Column, all_columns, build_packing, schedule_of
from dlsched.models.elastic.instance import ElasticInstance
from dlsched.models.elastic.solution import ElasticSchedule
from dlsched.online.bounds import total_flow
from dlsched.result import Outcome, on_request, verified_outcome
from dlsched.solvers import SolveResult, SolverSettings, Status, solve
from dlsched.solvers.certify import Proof
from dlsched.solvers.deadline import Deadline

if TYPE_CHECKING:  # pragma: no cover
    from dlsched.models.elastic.colgen import ColumnGeneration


def _positive_int(options: MethodOptions, name: str, default: int) -> int:
    value = options.param(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise OptionError(f"--param {name}", value, "expected a positive integer")
    return value


def objective_unit(inst: ElasticInstance) -> float | None:
    """1 when every weight is an integer (completions are integral slots), else None."""
    return 1.0 if all(float(j.weight).is_integer() for j in inst.jobs) else None


def _solve_packing(
    inst: ElasticInstance, columns: Sequence[Column], settings: SolverSettings, deadline: Deadline
) -> tuple[SolveResult, list[int]]:
    """The packing ILP built, then solved by HiGHS in what building left of ``deadline``."""
    model = build_packing(inst, columns)
    res = solve(model, "highs", deadline.solve_options(settings))
    chosen = []
    if res.has_solution:
        chosen = [k for k in range(len(columns)) if res.value(model.x[k]) > 0.5]
    return replace(res, values={}), chosen


def _cut_outcome(
    instance: ElasticInstance,
    deadline: Deadline,
    quick: tuple[float, ElasticSchedule | None],
    details: dict[str, Any],
) -> Outcome:
    """``exact`` stopped by the time limit before the packing ILP answered: the quick
    incumbent and bound of :func:`_quick` (infeasibility when the bound is infinite)."""
    bound, incumbent = quick
    details = {**details, "alone_bound": bound}
    if incumbent is not None:
        details["incumbent"] = "smith-list"
    else:
        details["reason"] = f"time limit reached during {details['stopped_in']}"
    if math.isinf(bound):  # a job cannot complete by T even alone: (2) is infeasible
        details["reason"] = "a job cannot complete by T even alone on the empty cluster"
    return verified_outcome(
        instance,
        "exact",
        incumbent,
        wall_time=deadline.elapsed(),
        proof=Proof(
            bound=bound,
            hit_limit=True,
            infeasible=math.isinf(bound),
            unit=objective_unit(instance),
        ),
        details=details,
    )


def _quick(instance: ElasticInstance, deadline: Deadline) -> tuple[float, ElasticSchedule | None]:
    """What ``exact`` holds before enumerating, in milliseconds per job: the alone bound and
    the Smith-order list schedule (:func:`.algorithms.alone_bound`,
    :func:`.algorithms.smith_list`), both by ``deadline``: past it, the bound sums the jobs
    reached and there is no incumbent."""
    from dlsched.models.elastic.algorithms import alone_bound, alone_completions, smith_list

    completions = alone_completions(instance, deadline)
    bound = alone_bound(instance, completions)
    return bound, None if math.isinf(bound) else smith_list(instance, completions, deadline)


def run_exact(instance: ElasticInstance, options: MethodOptions) -> Outcome:
    """Gamma_j enumerated (dominance applied), then the packing ILP (8)/(17) on HiGHS; both
    within the time limit (cut: the quick incumbent and bound of :func:`_quick`); the ILP is
    built and solved in a child, killed at the limit."""
    deadline = options.deadline
    cap = _positive_int(options, "max_configs", MAX_CONFIGS)
    quick = _quick(instance, deadline)
    try:
        gammas = enumerate_all(instance, cap, deadline)
    except EnumerationTimeUp as cut:
        return _cut_outcome(
            instance, deadline, quick, {"stopped_in": "enumeration", "jobs_enumerated": cut.done}
        )
    details: dict[str, Any] = {
        "configs_generated": sum(g.generated for g in gammas),
        "configs_kept": sum(len(g.configs) for g in gammas),
        "columns": sum(g.num_schedules(instance) for g in gammas),
    }
    details["dominated_removed"] = details["configs_generated"] - details["configs_kept"]
    empty = [instance.jobs[g.job].name for g in gammas if g.num_schedules(instance) == 0]
    if empty:  # a job with no feasible schedule by the horizon: (2) is infeasible
        return verified_outcome(
            instance,
            "exact",
            None,
            wall_time=deadline.elapsed(),
            proof=Proof(infeasible=True),
            details={**details, "no_schedule": empty, "reason": f"no schedule of {empty} by T"},
        )
    columns = all_columns(instance, gammas)
    child = deadline.for_fork()
    got = child.run(_solve_packing, instance, columns, options.solve, child)
    if got is None:
        details = {**details, "model_built": False, "stopped_in": "building the packing ILP"}
        return _cut_outcome(instance, deadline, quick, details)
    res, chosen = got
    schedule, claimed = _better(instance, columns, chosen, quick[1], details)
    bound = quick[0] if res.bound is None else max(quick[0], res.bound)
    return verified_outcome(
        instance,
        "exact",
        schedule,
        wall_time=deadline.elapsed(),
        proof=Proof.of(res, bound=bound, unit=objective_unit(instance)),
        solver=res,
        claimed=claimed,
        details=details,
    )


def _better(
    instance: ElasticInstance,
    columns: Sequence[Column],
    chosen: list[int],
    incumbent: ElasticSchedule | None,
    details: dict[str, Any],
) -> tuple[ElasticSchedule | None, float | None]:
    """The packing ILP's schedule and cost, or the quick incumbent when it is better (a time-
    limited ILP may hold none or a worse one; ``details["incumbent"]`` says which)."""
    from dlsched.models.elastic.check import check_schedule

    schedule = claimed = None
    if chosen:
        schedule = schedule_of(columns, chosen)
        claimed = sum(columns[k].cost(instance) for k in chosen)
    if incumbent is not None:
        value = check_schedule(instance, incumbent).objective
        if claimed is None or value < claimed:
            details["incumbent"] = "smith-list"
            return incumbent, value
    return schedule, claimed


def lp_iterations(options: MethodOptions) -> int:
    """``--param max_iterations`` (default 500): the master LPs :func:`solve_lp` may solve."""
    return _positive_int(options, "max_iterations", 500)


def solve_lp(
    instance: ElasticInstance, settings: SolverSettings, deadline: Deadline, max_iterations: int
) -> ColumnGeneration:
    """The LP relaxation of (8)/(17) by column generation within ``deadline``, at most
    ``max_iterations`` master LPs (:func:`lp_iterations`); what ``lp-bound`` reports and the
    roundings of :mod:`.rounding` round."""
    from dlsched.models.elastic.colgen import column_generation

    return column_generation(instance, settings, deadline, max_iterations=max_iterations)


def run_lp_bound(instance: ElasticInstance, options: MethodOptions) -> Outcome:
    """The LP relaxation of (8)/(17) by column generation; certified Lagrangian bound."""
    cg = solve_lp(instance, options.solve, options.deadline, lp_iterations(options))
    return verified_outcome(
        instance,
        "lp-bound",
        None,
        status=Status.OPTIMAL if cg.converged else Status.TIME_LIMIT,
        wall_time=options.deadline.elapsed(),
        # an infinite Lagrangian bound: some job has no schedule at all, (2) is infeasible
        proof=Proof(bound=cg.bound, hit_limit=not cg.converged, infeasible=cg.bound == math.inf),
        details=cg.details(),
    )


def no_schedule_outcome(
    instance: ElasticInstance, method: str, info: dict[str, Any], wall_time: float
) -> Outcome:
    """The outcome of a heuristic whose commitments left ``info["unscheduled_jobs"]`` no room
    before the horizon: no schedule, status ``infeasible`` when one of them cannot complete by
    T even alone on the empty cluster (a proof that (2)/(15) is infeasible), else
    ``no_solution`` (the instance may still be feasible, which ``exact`` decides). The reason is
    ``details["reason"]`` (also ``details["no_schedule"]``)."""
    from dlsched.models.elastic.algorithms import alone_infeasible

    by_name = {j.name: k for k, j in enumerate(instance.jobs)}
    left = [by_name[name] for name in info["unscheduled_jobs"]]
    proven = alone_infeasible(instance, left)
    names = ", ".join(instance.jobs[j].name for j in (proven or left))
    horizon = f"the horizon T = {instance.horizon}"
    if proven:
        reason = f"job(s) {names} cannot complete by {horizon} even alone on the empty cluster"
    else:
        reason = (
            f"no schedule found: what {method} committed first leaves job(s) {names} no room "
            f"to complete by {horizon} (the instance may still be feasible: see exact)"
        )
    return verified_outcome(
        instance,
        method,
        None,
        wall_time=wall_time,
        proof=Proof(infeasible=bool(proven)),
        status=None if proven else Status.NO_SOLUTION,
        details={**info, "no_schedule": reason, "reason": reason},
    )


def _heuristic(name: str) -> Callable[[ElasticInstance, MethodOptions], Outcome]:
    """The method of an algorithm or baseline: its schedule verified, or no schedule."""

    def run(instance: ElasticInstance, options: MethodOptions) -> Outcome:
        from dlsched.models.elastic.algorithms import ALGORITHMS
        from dlsched.models.elastic.anytype import sjf_any
        from dlsched.models.elastic.baselines import BASELINES

        runs = {**ALGORITHMS, **BASELINES, "sjf-any": sjf_any}
        schedule, info = runs[name](instance, options)
        wall = options.deadline.elapsed()
        if schedule is None and info.get("hit_limit"):  # cut by its limit: status time_limit
            return verified_outcome(
                instance, name, None, wall_time=wall, proof=Proof(hit_limit=True), details=info
            )
        if schedule is None:
            return no_schedule_outcome(instance, name, info, wall)
        out = with_flow(verified_outcome(instance, name, schedule, wall_time=wall, details=info))

        def bounded() -> Outcome:
            from dlsched.models.elastic.flowbound import flow_report

            return flow_report(out, instance, options.deadline)

        return on_request(out, options.bound, bounded, options.clock)

    return run


def with_flow(out: Outcome) -> Outcome:
    """A heuristic's verified ``out`` with its total flow time sum_j (c_j - a_j) in seconds,
    ``details["flow_time_s"]``."""
    inst, done = out.instance_object, out.evaluation.completion
    flow = total_flow(done, inst.jobs)
    return replace(out, details={**out.details, "flow_time_s": flow * inst.slot_seconds})


def _heuristic_method(name: str, summary: str, params: tuple[str, ...] = ()) -> Method:
    """The method of the algorithm or baseline ``name`` (:func:`_heuristic`)."""
    return Method(name, _heuristic(name), summary, params=params)


#: What ``lp-round`` and ``lp-random-round`` round (:mod:`.rounding`).
_ROUNDS = (
    "LP relaxation of the packing ILP (8)/(17), minimization form of (2)/(15), by column "
    "generation with exact pricing (12)/(20) (lp-bound's last master)"
)
_GUARANTEE = (
    "none (Raghavan-Thompson 1987 bounds the picks before repair only: expected cost = LP "
    "value, capacities met in expectation; the repair that restores (8a)/(17a) is unbounded)"
)

METHODS: dict[str, Method] = method_table(
    Method(
        "exact",
        run_exact,
        "certified optimum of (2)/(15): Gamma_j enumerated with dominance, packing ILP "
        "(8)/(17) on HiGHS (max_configs caps the enumeration)",
        exact=True,
        params=("max_configs",),
    ),
    Method(
        "lp-bound",
        run_lp_bound,
        "LP relaxation of (8)/(17) by column generation with exact pricing (12)/(20): "
        "certified lower bound (no schedule)",
        params=("max_iterations",),
    ),
    *(
        Method(
            name,
            f"dlsched.models.elastic.rounding:{run}",
            f"{how}, then repaired: heaviest job first, its pick if it fits what is left, "
            "else its cheapest schedule in what is left at the LP's duals, completion term "
            "included (pricing (12)/(20)); no room before T: no schedule. details: lp_value, "
            "ratio_to_lp (objective / LP, >= 1: minimization)",
            params=("max_iterations",),
            rounds=_ROUNDS,
            guarantee=_GUARANTEE,
        )
        for name, run, how in (
            ("lp-round", "run_lp_round", "each job's LP column of largest value"),
            (
                "lp-random-round",
                "run_lp_random_round",
                "each job's LP column drawn with probability its LP value (--seed)",
            ),
        )
    ),
    _heuristic_method(
        "a-online",
        "Algorithm 1: batches at tau_i = 2^(i-1), A_dual run from alpha tau_i on, on the "
        "shared slotted simulator; a job the next round cannot complete by T is placed at "
        "once at its earliest completion (details: fallback_jobs); if commitments leave a "
        "job no room before T, no schedule (details: no_schedule). oracle=fast (default, "
        "Algorithms 4-7 vectorised)|paper (the same as loops)|exact|a-mincost1|a-mincost2|"
        "a-ramincost1|a-ramincost2 (one algorithm alone); alpha defaults to Theorem 5's",
        params=("oracle", "alpha"),
    ),
    _heuristic_method(
        "a-dual",
        "Algorithm 2 offline: alpha rounds of A_maxweight on windows of tau slots, tau = 1, "
        "2, 4, ... until every job is scheduled (oracle=fast|paper|exact, or one of "
        "Algorithms 4-7 alone: a-mincost1|a-mincost2|a-ramincost1|a-ramincost2)",
        params=("oracle", "alpha"),
    ),
    _heuristic_method(
        "a-maxweight",
        "Algorithm 3 over the whole horizon (price function (11)); rejected jobs follow "
        "at their earliest completion (oracle=fast|paper|exact|a-mincost1|a-mincost2|"
        "a-ramincost1|a-ramincost2)",
        params=("oracle",),
    ),
    _heuristic_method("fifo", "FIFO, fixed worker count (head-of-line)", params=("workers",)),
    _heuristic_method("drf", "Dominant Resource Fairness worker counts, arrival order"),
    _heuristic_method(
        "tiresias",
        "Tiresias: smallest work x resources first (no preemption)",
        params=("workers",),
    ),
    _heuristic_method(
        "antman",
        "AntMan: resource-guaranteed jobs first, opportunistic jobs take what fits",
        params=("workers",),
    ),
    _heuristic_method(
        "sjf-any",
        "not of the paper: shortest job first on any worker type, online and clairvoyant "
        "about job sizes (as SJF/SRTF baselines), non-preemptive; each job the run that "
        "ends soonest (while more jobs wait than workers are free, least workers x slots "
        "within slack of the shortest), waits beyond "
        "stretch x its least duration; jobs longer than long slots hold at most share of "
        "each resource together",
        params=("stretch", "long", "share", "slack"),
    ),
)

__all__ = [
    "METHODS",
    "lp_iterations",
    "no_schedule_outcome",
    "run_exact",
    "run_lp_bound",
    "solve_lp",
    "with_flow",
]
