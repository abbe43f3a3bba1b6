"""The exact route of Hare_Sched as a pipeline of stages, each a valid bound or a schedule.

0. Strategy (:func:`choose_strategy`): from the instance's size and shape, whether the
   chronological branch and bound runs first and how many CP-SAT workers the later stages use.
   The route's time limit is one :class:`~dlsched.solvers.deadline.Deadline`; each stage gets
   a budget split from it (the shares are the constants below, all in this module but the
   hint's, :data:`methods.HINT_SHARE`, and those inside the LP stage, :data:`cpsat.LP_SHARE`).
1. Hint: the best of the quick schedules (:func:`cpsat.best_hint`), unless given.
1b. Branch and bound (:mod:`branch`, small instances with exact data): a short CP-SAT warm
   start (which may prove the instance by itself), then the search from the better of its and
   the hint's cost; when the search ends, its incumbent is proven optimal and returned. When its
   share of the time limit runs out, its best schedule becomes the hint of the next stages.
2. Job subsets (:mod:`decompose`, above :data:`SUBSET_MIN_TASKS` tasks, at most
   :data:`SUBSET_SHARE` of the time limit): groups of jobs by arrival solved exactly, their
   optima summed. The merged schedule replaces the hint when better; if the hint meets the
   bound it is returned, proven, without a search.
2b. On the same instances: the time-indexed LP bound of stage 3 (its usual share), then a
   large-neighbourhood search (:mod:`lns`, :data:`LNS_SHARE` of the time limit, when the hint
   is more than :data:`LNS_MIN_GAP` above the bound): windows of jobs re-solved with the rest
   fixed, wider ones once every window of a size is a local optimum; its schedule is the next
   hint (and is returned, proven, if it meets the bound).
3. Time-indexed LP bound (unless stage 2b ran it), then CP-SAT with everything proved so far
   stated in the model (:func:`cpsat.solve_cpsat_native`).

Imports go one way: pipeline -> decompose, lns -> cpsat -> lowerbound, scaling;
pipeline -> branch.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from dlsched.models.hare.instance import HareInstance
from dlsched.models.hare.solution import TaskSchedule
from dlsched.solvers.base import SolveOptions, Status
from dlsched.solvers.certify import Proof
from dlsched.solvers.deadline import Deadline
from dlsched.solvers.progress import note

from . import branch
from .branch import MAX_ROUND_TASKS, branch_and_bound
from .budget import (
    BRANCH_SHARE_LARGE,
    BRANCH_SHARE_SMALL,
    BRANCH_SMALL_TASKS,
    LNS_SHARE,
    SUBSET_SHARE,
    WARM_SECONDS,
    WARM_SHARE,
    WARM_WORKERS,
)
from .common import RouteResult, budget
from .cpsat import PriorBounds, _scaled_bound, lp_info, lp_stage, solve_cpsat_native
from .decompose import SubsetBound, subset_bound
from .lns import improve
from .scaling import objective_unit, scale_data, scaled_objective

#: The job-subset stage runs above this many tasks: below it one segment (max_tasks = 30 in
#: decompose.subset_bound) would be the whole instance, and its 0.3 share of the time limit
#: delayed the proof on hetero-4gpu-6jobs (17 tasks).
SUBSET_MIN_TASKS = 30
#: The search runs only when the hint is more than this fraction above the bound: near the
#: bound (span80-s354 there) the final CP-SAT stage did slightly better without it, and it is
#: what proves the spread instances. A choice from two single runs, not a tuned threshold.
LNS_MIN_GAP = 0.02

#: The branch and bound runs first up to this many tasks and GPUs. A choice, not a measured
#: threshold: at 19-20 tasks on 4 GPUs it needs up to about 5 s (benchmarks/RESULTS_hare.md,
#: section 7), and its cost grows quickly with the number of jobs and tasks.
BRANCH_MAX_TASKS = 30
BRANCH_MAX_GPUS = 8
#: CP-SAT workers chosen by the route (unless ``options.threads`` asks for more): the full
#: portfolio from :data:`PORTFOLIO_MIN_TASKS` tasks on (on 30 and 60 tasks it ended with the
#: best bound or incumbent of 1, 2 and 8 workers, benchmarks/RESULTS_hare.md section 8), one
#: worker on the tiniest models (proven in milliseconds; the portfolio only adds start-up).
PORTFOLIO_WORKERS, PORTFOLIO_MIN_TASKS = 8, 9


@dataclass(frozen=True)
class Strategy:
    """What :func:`solve_exact` runs: ``branch_share`` of its time left for the branch and
    bound (0: skipped) and ``workers`` CP-SAT workers for the later stages."""

    branch_share: float
    workers: int
    reason: str
    warm_start: bool = True


def choose_strategy(instance: HareInstance, options: SolveOptions) -> Strategy:
    """The route's choice by size and shape (no user flag): the branch and bound on small
    instances with exact data and rounds of at most :data:`branch.MAX_ROUND_TASKS` tasks
    once the search is compiled (until then CP-SAT, while it compiles in the background);
    CP-SAT workers by the number of tasks, never fewer than ``options.threads``."""
    tasks, gpus = instance.num_tasks, instance.num_gpus
    workers = max(options.threads, PORTFOLIO_WORKERS if tasks >= PORTFOLIO_MIN_TASKS else 1)
    small_rounds = all(j.tasks_per_round <= MAX_ROUND_TASKS for j in instance.jobs)
    if not (scale_data(instance).exact and small_rounds):
        return Strategy(0.0, workers, "cp-sat (inexact data or large rounds)")
    if tasks > BRANCH_MAX_TASKS or gpus > BRANCH_MAX_GPUS:
        return Strategy(
            0.0, workers, f"cp-sat (above {BRANCH_MAX_TASKS} tasks or {BRANCH_MAX_GPUS} GPUs)"
        )
    if not branch.search_compiled():  # a fresh install: nobody waits for the compiler
        branch.compile_in_background()
        return Strategy(0.0, workers, "cp-sat (the branch and bound is being compiled)")
    if tasks <= BRANCH_SMALL_TASKS:
        return Strategy(BRANCH_SHARE_SMALL, workers, "branch and bound (small instance)", False)
    return Strategy(BRANCH_SHARE_LARGE, workers, "CP-SAT warm start, then branch and bound")


def solve_exact(
    instance: HareInstance,
    options: SolveOptions,
    hint: TaskSchedule | None = None,
    *,
    deadline: Deadline | None = None,
    subsets: bool = True,
    subset_options: dict[str, Any] | None = None,
    strategy: Strategy | None = None,
    **cpsat_options: Any,
) -> RouteResult:
    """Stages 1b-3 of the module docstring within ``deadline`` (default: ``options.time_limit``
    from now; its shares are of what is left when this starts), with the threads, seed and gap
    of ``options``; ``subset_options``: keyword arguments for :func:`decompose.subset_bound`
    (``block_tasks``, ``max_tasks``) and ``min_tasks`` in place of :data:`SUBSET_MIN_TASKS`;
    ``strategy``: in place of :func:`choose_strategy`'s; ``cpsat_options`` go to
    :func:`cpsat.solve_cpsat_native`. What the route chose is in the result's ``info``
    (``strategy``, ``num_workers_chosen``, ``branch_*``)."""
    info: dict[str, Any] = {}
    deadline = budget(options, deadline).stage(1.0)  # all that is left, from now
    res = _solve_exact(
        instance, options, deadline, hint, subsets, subset_options, strategy, cpsat_options, info
    )
    return RouteResult(res.schedule, res.objective, res.proof, {**info, **res.info})


def _solve_exact(
    instance: HareInstance,
    options: SolveOptions,
    deadline: Deadline,
    hint: TaskSchedule | None,
    subsets: bool,
    subset_options: dict[str, Any] | None,
    strategy: Strategy | None,
    cpsat_options: dict[str, Any],
    info: dict[str, Any],
) -> RouteResult:
    """:func:`solve_exact`; what the route chose goes into ``info``."""
    kw = dict(subset_options or {})
    min_tasks = kw.pop("min_tasks", SUBSET_MIN_TASKS)
    d = scale_data(instance)
    strategy = choose_strategy(instance, options) if strategy is None else strategy
    info.update(strategy=strategy.reason, num_workers_chosen=strategy.workers)
    if strategy.branch_share > 0:
        done, hint, branch_info = _branch_stage(instance, d, hint, options, deadline, strategy)
        info.update(branch_info)
        if done is not None:
            return done
    options = _with_workers(options, strategy.workers)
    rest = deadline.stage(1.0)  # the later stages' shares are of what is left now
    if not (subsets and d.exact and instance.num_tasks > min_tasks):
        skipped = PriorBounds(info={"subset_bound": None})  # the stage did not run
        note("CP-SAT")
        return solve_cpsat_native(
            instance, options, hint, deadline=rest, prior=skipped, **cpsat_options
        )
    note("bounds on job subsets")
    sub = subset_bound(instance, options, deadline=rest.share(SUBSET_SHARE), **kw)
    hint = _better(instance, hint, sub.schedule)
    prior = _prior(sub, d.time_scale * d.weight_scale)
    done = _proven_hint(instance, d, hint, prior)
    if done is not None:
        return done
    cpsat_options = dict(cpsat_options)
    if cpsat_options.get("lp_bound", True) and hint is not None:
        prior = _with_lp(instance, d, hint, prior, options, rest, cpsat_options)
        cpsat_options["lp_bound"] = False  # done here, before the search moves the hint
    if hint is not None and not rest.unlimited and _wide_gap(instance, d, hint, prior):
        note("neighbourhood search")
        got = improve(instance, hint, rest.portion(LNS_SHARE), options=options)
        hint = got.schedule
        lns_info = {
            "lns_steps": got.steps,
            "lns_improvements": got.improvements,
            "lns_window_tasks": got.window_tasks,
        }
        prior = replace(prior, info={**prior.info, **lns_info, "lns_seconds": got.seconds})
        done = _proven_hint(instance, d, hint, prior)
        if done is not None:
            return done
    note("CP-SAT")
    return solve_cpsat_native(instance, options, hint, deadline=rest, prior=prior, **cpsat_options)


def _with_lp(
    instance: HareInstance,
    d: Any,
    hint: TaskSchedule,
    prior: PriorBounds,
    options: SolveOptions,
    deadline: Deadline,
    cpsat_options: dict[str, Any],
) -> PriorBounds:
    """Stage 3's time-indexed LP bound (:func:`cpsat.lp_stage`, its usual share of the time
    left to ``deadline``), run before the search: the prior bounds raised to it, and what it
    reports."""
    note("time-indexed LP bound")
    upper = scaled_objective(d, instance, hint)
    lb = lp_stage(instance, d, upper, options, cpsat_options.get("lp_options"), deadline)
    lower = prior.lower if lb is None else max(prior.lower or 0, lb.scaled)
    return PriorBounds(lower, prior.partial, {**prior.info, **lp_info(lb, d, {})})


def _wide_gap(
    instance: HareInstance, d: Any, hint: TaskSchedule | None, prior: PriorBounds
) -> bool:
    """Whether the search of stage 2b runs: a hint more than :data:`LNS_MIN_GAP` above the
    proven bound (or no bound)."""
    if hint is None or LNS_SHARE <= 0:
        return False
    upper = scaled_objective(d, instance, hint)
    return prior.lower is None or upper - prior.lower > LNS_MIN_GAP * upper


def _proven_hint(
    instance: HareInstance, d: Any, hint: TaskSchedule | None, prior: PriorBounds
) -> RouteResult | None:
    """The hint, proven optimal without a search, when it meets the proven lower bound (a
    bound above it is a contradiction that certify() reports)."""
    if hint is None or prior.lower is None:
        return None
    upper = scaled_objective(d, instance, hint)
    if prior.lower < upper:
        return None
    unit = d.time_scale * d.weight_scale
    proof = Proof(bound=prior.lower / unit, unit=objective_unit(d))
    return RouteResult(hint, upper / unit, proof, {**prior.info, "returned": "hint"})


def _with_workers(options: SolveOptions, workers: int) -> SolveOptions:
    """The options of the later stages: ``workers`` CP-SAT workers (CP-SAT's ``num_workers``,
    unless ``options.extra`` sets it; HiGHS keeps ``options.threads``)."""
    return replace(options, extra={"num_workers": workers, **options.extra})


def _branch_stage(
    instance: HareInstance,
    d: Any,
    hint: TaskSchedule | None,
    options: SolveOptions,
    deadline: Deadline,
    strategy: Strategy,
) -> tuple[RouteResult | None, TaskSchedule | None, dict[str, Any]]:
    """Stage 1b: (the proven result or None, the hint for the next stages, what it did).

    If ``strategy.warm_start``, first a short CP-SAT run (:func:`_warm_start`); then the search
    below the better of its schedule and ``hint``, until ``strategy.branch_share`` of the time
    left to ``deadline`` (warm start included)."""
    stage = deadline.stage(strategy.branch_share)
    info: dict[str, Any] = {}
    if strategy.warm_start:
        first = _warm_start(instance, hint, options, deadline.stage(1.0))
        info["warm_start_seconds"] = stage.elapsed()
        if first.certified(instance.name, "exact").status == Status.OPTIMAL:
            return first, first.schedule, {**info, "returned_by": "cp-sat warm start"}
        hint = _better(instance, hint, first.schedule)
    unit = d.time_scale * d.weight_scale
    upper = (
        scaled_objective(d, instance, hint)
        if hint is not None
        else d.horizon * sum(d.weight) + 1  # above every left-justified schedule
    )
    got = branch_and_bound(instance, d, upper, stage)
    info.update(
        branch_proven=got.proven,
        branch_nodes=got.nodes,
        branch_seconds=got.seconds,
        time_scale=d.time_scale,
        weight_scale=d.weight_scale,
        scale_exact=d.exact,
    )
    best = got.schedule if got.schedule is not None else hint
    if got.proven and best is not None:
        value = got.objective if got.objective is not None else upper
        proof = Proof(bound=value / unit, claimed_optimal=True, unit=objective_unit(d))
        by = "branch and bound" if got.schedule is not None else "hint, proven by branch and bound"
        return RouteResult(best, value / unit, proof, {**info, "returned_by": by}), best, info
    return None, best, info


def _warm_start(
    instance: HareInstance, hint: TaskSchedule | None, options: SolveOptions, deadline: Deadline
) -> RouteResult:
    """A short CP-SAT run (:data:`WARM_WORKERS` workers, :data:`WARM_SECONDS` or
    :data:`WARM_SHARE` of ``deadline``'s limit, no LP stage) before a search that may not end:
    its incumbent cuts the search (from the list schedules' cost the search on
    hetero-4gpu-6jobs visits about twice as many nodes) and seeds the later stages."""
    warm = deadline.portion(WARM_SHARE, cap=WARM_SECONDS)
    workers = {"num_workers": WARM_WORKERS, **options.extra}
    note("CP-SAT warm start")
    return solve_cpsat_native(
        instance, replace(options, extra=workers), hint, deadline=warm, lp_bound=False
    )


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
