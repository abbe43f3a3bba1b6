"""The exact route of Hare_Sched as a list of stages, run in order by :func:`solve_exact`.

:data:`STAGES` is the list: each :class:`Stage` has a name (its progress note), its budget
(a :class:`Split` of the route's :class:`~dlsched.solvers.deadline.Deadline`, the shares named
in :mod:`budget`), when it runs, and what it does to the :class:`ExactState` (the hint, the
bounds proved so far, what the route reports, and the result once a stage proved one). What
every stage reads and no stage changes is the :class:`ExactRoute`. The hint (:mod:`hint`) comes
before the list, from the method's deadline (:mod:`routes`).

1. Branch and bound (:mod:`branch`, small instances with exact data, :func:`choose_strategy`):
   a short CP-SAT warm start (which may prove the instance by itself), then the search from
   the better of its and the hint's cost; when the search ends, its incumbent is proven
   optimal and returned. When its share of the time runs out, its best schedule becomes the
   hint of the next stages. Its share is ``strategy.branch_share`` of the time left.
2. Job subsets (:mod:`decompose`, above :data:`SUBSET_MIN_TASKS` tasks): groups of jobs by
   arrival solved exactly, their optima summed. The merged schedule replaces the hint when
   better; if the hint meets the bound it is returned, proven, without a search. The shares of
   this stage and the next ones are of the time left when it starts.
3. Time-indexed LP bound (:func:`cpsat.lp_bound_stage`): the bound raised to it.
4. Neighbourhood search (:mod:`lns`, after the subsets, when the hint is more than
   :data:`LNS_MIN_GAP` above the bound): windows of jobs re-solved with the rest fixed; its
   schedule is the next hint (and is returned, proven, if it meets the bound).
5. CP-SAT (:func:`cpsat.cpsat_stage`) with everything proved so far stated in the model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from dlsched.models.hare.instance import HareInstance
from dlsched.models.hare.solution import TaskSchedule
from dlsched.solvers.base import SolverSettings, Status
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
    LP_SHARE,
    SUBSET_SHARE,
    WARM_SECONDS,
    WARM_SHARE,
    WARM_WORKERS,
)
from .common import RouteResult
from .cpsat import DEFAULT_CONFIG, PriorBounds, cpsat_stage, lp_bound_stage, solve_cpsat_native
from .cpsat_model import CpsatConfig
from .decompose import SubsetBound, subset_bound
from .lns import improve
from .scaling import ScaledData, objective_unit, scale_data, scaled_bound, scaled_objective

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
#: CP-SAT workers chosen by the route (unless ``settings.threads`` asks for more): the full
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


def choose_strategy(instance: HareInstance, settings: SolverSettings) -> Strategy:
    """The route's choice by size and shape (no user flag): the branch and bound on small
    instances with exact data and rounds of at most :data:`branch.MAX_ROUND_TASKS` tasks
    once the search is compiled (until then CP-SAT, while it compiles in the background);
    CP-SAT workers by the number of tasks, never fewer than ``settings.threads``."""
    tasks, gpus = instance.num_tasks, instance.num_gpus
    workers = max(settings.threads, PORTFOLIO_WORKERS if tasks >= PORTFOLIO_MIN_TASKS else 1)
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


@dataclass(frozen=True)
class ExactRoute:
    """What every stage of one run reads: the instance and its scaled data, the strategy, the
    solver settings given (``settings``) and those of the stages after the branch and bound
    (``cpsat_settings``: the strategy's CP-SAT workers), the CP-SAT switches, the keyword
    arguments of :func:`decompose.subset_bound`, whether the subset stage runs, and whether the
    route has a time limit."""

    instance: HareInstance
    data: ScaledData
    strategy: Strategy
    settings: SolverSettings
    cpsat_settings: SolverSettings
    config: CpsatConfig
    subset_options: Mapping[str, Any]
    decomposes: bool
    unlimited: bool


@dataclass(frozen=True)
class ExactState:
    """What flows from stage to stage: the best schedule so far (the next stage's hint), the
    bounds proved (``prior``, with what the bound stages report), what the route reports, and
    the route's result once a stage has one."""

    hint: TaskSchedule | None
    prior: PriorBounds
    info: Mapping[str, Any] = field(default_factory=dict)
    result: RouteResult | None = None


@dataclass(frozen=True)
class Split:
    """A stage's budget from the route's deadline, named by the :class:`Deadline` operation
    that cuts it: ``share_of_rest`` (of what is left now), ``share_from_start`` (of the limit,
    counted from the stages' start) or ``share_of_limit`` (of the limit, from now, at most
    ``cap`` seconds)."""

    kind: str
    share: float
    cap: float | None = None

    def of(self, deadline: Deadline) -> Deadline:
        if self.kind == "share_of_limit":
            return deadline.share_of_limit(self.share, cap=self.cap)
        if self.kind == "share_from_start":
            return deadline.share_from_start(self.share)
        return deadline.share_of_rest(self.share)


@dataclass(frozen=True)
class Stage:
    """One stage: ``name`` (its progress note), ``split`` (its budget), ``opens`` (the stages
    from this one on split the time left when it is reached, whether it runs or not), ``when``
    it runs and what it does (``run``)."""

    name: str
    split: Split
    opens: bool
    when: Callable[[ExactRoute, ExactState], bool]
    run: Callable[[ExactRoute, ExactState, Deadline], ExactState]


def solve_exact(
    instance: HareInstance,
    settings: SolverSettings,
    deadline: Deadline,
    hint: TaskSchedule | None = None,
    *,
    strategy: Strategy | None = None,
    subsets: bool = True,
    subset_options: Mapping[str, Any] | None = None,
    config: CpsatConfig = DEFAULT_CONFIG,
) -> RouteResult:
    """:data:`STAGES` in order within ``deadline`` (its shares are of what is left when this
    starts), with the threads, seed and gap of ``settings``, from ``hint``. ``strategy``: in
    place of :func:`choose_strategy`'s; ``subsets`` False skips the subset stage;
    ``subset_options``: keyword arguments of :func:`decompose.subset_bound` (``block_tasks``,
    ``max_tasks``) and ``min_tasks`` in place of :data:`SUBSET_MIN_TASKS`; ``config``: the
    CP-SAT stages' switches. What the route chose is in the result's ``info`` (``strategy``,
    ``num_workers_chosen``, ``branch_*``)."""
    route = exact_route(instance, settings, deadline, strategy, subsets, subset_options, config)
    info = {"strategy": route.strategy.reason, "num_workers_chosen": route.strategy.workers}
    state = ExactState(hint, PriorBounds(info={"subset_bound": None}), info)
    deadline = deadline.share_of_rest(1.0)  # all that is left, from now
    plan = deadline
    for stage in STAGES:
        if stage.opens:
            plan = deadline.share_of_rest(1.0)  # the shares from here on are of what is left now
        if state.result is None and stage.when(route, state):
            note(stage.name)
            state = stage.run(route, state, stage.split.of(plan))
    assert state.result is not None  # the CP-SAT stage always has one
    res = state.result
    return RouteResult(res.schedule, res.objective, res.proof, {**state.info, **res.info})


def exact_route(
    instance: HareInstance,
    settings: SolverSettings,
    deadline: Deadline,
    strategy: Strategy | None,
    subsets: bool,
    subset_options: Mapping[str, Any] | None,
    config: CpsatConfig,
) -> ExactRoute:
    """The :class:`ExactRoute` of one run."""
    kw = dict(subset_options or {})
    min_tasks = kw.pop("min_tasks", SUBSET_MIN_TASKS)
    d = scale_data(instance)
    strategy = choose_strategy(instance, settings) if strategy is None else strategy
    # CP-SAT's num_workers, unless settings.extra sets it; HiGHS keeps settings.threads
    later = replace(settings, extra={"num_workers": strategy.workers, **settings.extra})
    decomposes = subsets and d.exact and instance.num_tasks > min_tasks
    return ExactRoute(
        instance, d, strategy, settings, later, config, kw, decomposes, deadline.unlimited
    )


# --- the stages, in the order of STAGES ---------------------------------------------------------


def branch_stage(route: ExactRoute, state: ExactState, budget: Deadline) -> ExactState:
    """Stage 1: if ``strategy.warm_start``, first :func:`warm_start`; then the search below the
    better of its schedule and the hint, until ``strategy.branch_share`` of ``budget`` (warm
    start included)."""
    instance, d, hint = route.instance, route.data, state.hint
    search = budget.share_from_start(route.strategy.branch_share)
    info: dict[str, Any] = {}
    if route.strategy.warm_start:
        first = warm_start(route, hint, budget.share_of_limit(WARM_SHARE, cap=WARM_SECONDS))
        info["warm_start_seconds"] = search.elapsed()
        if first.certified(instance.name, "exact").status == Status.OPTIMAL:
            info["returned_by"] = "cp-sat warm start"
            return replace(state, info={**state.info, **info}, result=first)
        hint = better(d, instance, hint, first.schedule)
    upper = (
        scaled_objective(d, instance, hint) if hint is not None else d.horizon * sum(d.weight) + 1
    )
    got = branch_and_bound(instance, d, upper, search)  # upper: above every left-justified one
    info.update(
        branch_proven=got.proven,
        branch_nodes=got.nodes,
        branch_seconds=got.seconds,
        time_scale=d.time_scale,
        weight_scale=d.weight_scale,
        scale_exact=d.exact,
    )
    best = got.schedule if got.schedule is not None else hint
    state = replace(state, hint=best, info={**state.info, **info})
    if not (got.proven and best is not None):
        return state
    value = got.objective if got.objective is not None else upper
    proof = Proof(bound=value / d.unit, claimed_optimal=True, unit=objective_unit(d))
    by = "branch and bound" if got.schedule is not None else "hint, proven by branch and bound"
    done = RouteResult(best, value / d.unit, proof, {**info, "returned_by": by})
    return replace(state, result=done)


def warm_start(route: ExactRoute, hint: TaskSchedule | None, budget: Deadline) -> RouteResult:
    """A short CP-SAT run (:data:`WARM_WORKERS` workers, ``budget``: :data:`WARM_SECONDS` or
    :data:`WARM_SHARE` of the stage's time, no LP bound) before a search that may not end: its
    incumbent cuts the search (from the list schedules' cost the search on hetero-4gpu-6jobs
    visits about twice as many nodes) and seeds the later stages."""
    workers = replace(route.settings, extra={"num_workers": WARM_WORKERS, **route.settings.extra})
    note("CP-SAT warm start")
    config = CpsatConfig(lp_bound=False)
    return solve_cpsat_native(route.instance, workers, budget, hint, config=config)


def subset_stage(route: ExactRoute, state: ExactState, budget: Deadline) -> ExactState:
    """Stage 2: the job-subset bound (:func:`decompose.subset_bound`) in ``budget``; its merged
    schedule is the hint when better, returned if it meets the bound."""
    instance = route.instance
    sub = subset_bound(instance, route.cpsat_settings, deadline=budget, **route.subset_options)
    hint = better(route.data, instance, state.hint, sub.schedule)
    prior = subset_prior(sub, route.data.unit)
    return proven_hint(route, replace(state, hint=hint, prior=prior))


def lp_stage(route: ExactRoute, state: ExactState, budget: Deadline) -> ExactState:
    """Stage 3: the time-indexed LP bound in ``budget``, before the search moves the hint."""
    prior = lp_bound_stage(
        route.instance, route.cpsat_settings, budget, state.hint, state.prior, route.config
    )
    return replace(state, prior=prior)


def lns_stage(route: ExactRoute, state: ExactState, budget: Deadline) -> ExactState:
    """Stage 4: the neighbourhood search from the hint in ``budget``; its schedule is the next
    hint, returned if it meets the bound."""
    assert state.hint is not None  # see wide_gap
    got = improve(route.instance, state.hint, budget, settings=route.cpsat_settings)
    lns_info = {
        "lns_steps": got.steps,
        "lns_improvements": got.improvements,
        "lns_window_tasks": got.window_tasks,
        "lns_seconds": got.seconds,
    }
    prior = replace(state.prior, info={**state.prior.info, **lns_info})
    return proven_hint(route, replace(state, hint=got.schedule, prior=prior))


def final_stage(route: ExactRoute, state: ExactState, budget: Deadline) -> ExactState:
    """Stage 5: CP-SAT with everything proved so far stated in the model."""
    res = cpsat_stage(
        route.instance, route.cpsat_settings, budget, state.hint, state.prior, route.config
    )
    return replace(state, result=res)


def wide_gap(
    d: ScaledData, instance: HareInstance, hint: TaskSchedule | None, prior: PriorBounds
) -> bool:
    """Whether the search of stage 4 runs: a hint more than :data:`LNS_MIN_GAP` above the
    proven bound (or no bound)."""
    if hint is None or LNS_SHARE <= 0:
        return False
    upper = scaled_objective(d, instance, hint)
    return prior.lower is None or upper - prior.lower > LNS_MIN_GAP * upper


#: The exact route after its hint, in order (see the module docstring).
STAGES = (
    Stage(
        "branch and bound",
        Split("share_of_rest", 1.0),  # strategy.branch_share of it, the warm start included
        True,
        lambda r, s: r.strategy.branch_share > 0,
        branch_stage,
    ),
    Stage(
        "bounds on job subsets",
        Split("share_from_start", SUBSET_SHARE),
        True,
        lambda r, s: r.decomposes,
        subset_stage,
    ),
    Stage(
        "time-indexed LP bound",
        Split("share_of_rest", LP_SHARE),
        False,
        lambda r, s: r.config.lp_bound,
        lp_stage,
    ),
    Stage(
        "neighbourhood search",
        Split("share_of_limit", LNS_SHARE),
        False,
        lambda r, s: (
            r.decomposes and not r.unlimited and wide_gap(r.data, r.instance, s.hint, s.prior)
        ),
        lns_stage,
    ),
    Stage("CP-SAT", Split("share_of_rest", 1.0), False, lambda r, s: True, final_stage),
)


# --- what the stages share ----------------------------------------------------------------------


def proven_hint(route: ExactRoute, state: ExactState) -> ExactState:
    """The state with the hint as the route's result, proven optimal without a search, when it
    meets the proven lower bound (a bound above it is a contradiction that certify() reports)."""
    hint, prior, d = state.hint, state.prior, route.data
    if hint is None or prior.lower is None:
        return state
    upper = scaled_objective(d, route.instance, hint)
    if prior.lower < upper:
        return state
    proof = Proof(bound=prior.lower / d.unit, unit=objective_unit(d))
    done = RouteResult(hint, upper / d.unit, proof, {**prior.info, "returned": "hint"})
    return replace(state, result=done)


def better(
    d: ScaledData, instance: HareInstance, hint: TaskSchedule | None, other: TaskSchedule | None
) -> TaskSchedule | None:
    """The better of the hint and another schedule (either may be None)."""
    if other is None:
        return hint
    if hint is None:
        return other
    return (
        other
        if scaled_objective(d, instance, other) < scaled_objective(d, instance, hint)
        else hint
    )


def subset_prior(sub: SubsetBound, unit: int) -> PriorBounds:
    """The subset stage's bounds in scaled units, and what it reports."""
    info = {
        "subset_bound": sub.bound,
        "subset_bound_seconds": sub.seconds,
        "subset_partition": [list(g.jobs) for g in sub.partition],
    }
    if not sub.partition:
        return PriorBounds(info=info)
    partial = tuple((g.jobs, scaled_bound(g.bound, unit)) for g in sub.partition if g.bound > 0)
    return PriorBounds(scaled_bound(sub.bound, unit), partial, info)


__all__ = [
    "STAGES",
    "SUBSET_MIN_TASKS",
    "ExactRoute",
    "ExactState",
    "Stage",
    "Strategy",
    "choose_strategy",
    "solve_exact",
]
