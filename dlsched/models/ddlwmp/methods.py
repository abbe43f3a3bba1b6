"""Named methods of the ddlwmp family; every one returns a checker-verified Outcome.

An online policy reports its schedule's flow time (``flow_time_s``); with a bound asked for
(:attr:`~dlsched.models.MethodOptions.bound`, ``dlsched solve --bound``), beside it the
certified lower bound of :func:`.online.flow_report` and the gap, and the seconds the bound
took, ``bound_time``, apart from ``wall_time`` (once per instance object, shared by the
policies run on it)."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from dlsched.errors import OptionError
from dlsched.models import Method, MethodOptions, method_table
from dlsched.models.ddlwmp.instance import DdlwmpInstance
from dlsched.models.ddlwmp.mapping_methods import run_heavy_edge, run_mapping_exact
from dlsched.models.ddlwmp.solution import Schedule
from dlsched.result import Outcome, no_solution, on_request, verified_outcome
from dlsched.solvers import SolverSettings, solve
from dlsched.solvers.base import SolveResult, Status
from dlsched.solvers.certify import Proof
from dlsched.solvers.deadline import NEVER, Deadline

if TYPE_CHECKING:
    from dlsched.models.ddlwmp.model import Share
    from dlsched.models.ddlwmp.online import PolicyTimeUp, Reserve

    #: the LP relaxation's solution: each job's shares (option, start, run, weight)
    LpShares = tuple[tuple[Share, ...], ...]

#: The exact route's online incumbent (every policy, best kept) may use this first share of
#: the time limit; the first policy always runs, so there is an incumbent. On 2,000 jobs the
#: eight policies took 0.7 s of a 1 s limit on an idle machine, and more than the limit on a
#: loaded one, before the model had begun.
ONLINE_SHARE = 0.25
#: Lemma 1's bound may use the next share (its alpha^min probes took 0.6 s of 1 s there).
SRPT_SHARE = 0.25


def best_online_schedule(
    instance: DdlwmpInstance, deadline: Deadline = NEVER
) -> tuple[float, str, Schedule]:
    """The online policy with the least verified objective: (objective, policy, schedule), a
    feasible schedule of problem (8) and so an upper bound on its optimum. The first policy
    always runs (an incumbent); the others while ``deadline`` has not passed (a policy it cuts
    is left out)."""
    from dlsched.models.ddlwmp.check import check_schedule
    from dlsched.models.ddlwmp.online import POLICIES, PolicyTimeUp, run_policy

    runs = [(run_policy(instance, POLICIES[0])[0], POLICIES[0])]
    for p in POLICIES[1:]:
        if deadline.passed():
            break
        with contextlib.suppress(PolicyTimeUp):
            runs.append((run_policy(instance, p, deadline=deadline)[0], p))
    return min((check_schedule(instance, s).objective, p, s) for s, p in runs)[:3]


def _time_indexed(
    instance: DdlwmpInstance,
    deadline: Deadline,
    settings: SolverSettings,
    relax: bool,
    upper: float | None = None,
) -> tuple[SolveResult, Schedule | LpShares | None, dict[str, Any]]:
    """Build and solve the time-indexed model (run in a child under ``deadline``; HiGHS gets
    what building left of it); ``upper``: a known objective (default:
    :func:`best_online_schedule`'s). The solution read back: the MILP's schedule, or with
    ``relax`` the LP's shares of every job (:func:`.model.shares`, what the roundings read)."""
    from dlsched.models.ddlwmp.model import build_time_indexed, decode, job_options, shares

    options = [job_options(instance, i) for i in range(instance.num_jobs)]
    upper = best_online_schedule(instance, deadline)[0] if upper is None else upper
    mdl = build_time_indexed(instance, options, relax=relax, upper=upper)
    res = solve(mdl, "highs", deadline.solve_options(settings))
    solution: Schedule | LpShares | None = None
    if res.has_solution and relax:
        solution = shares(instance, mdl, options, dict(res.values))
    elif res.has_solution:
        starts, places = decode(instance, mdl, options, dict(res.values))
        solution = Schedule(tuple(starts), tuple(places))
    info = {
        "variables": len(mdl.STARTS),
        "options": [len(o) for o in options],
        "online_upper_bound": upper,
    }
    return res, solution, info


def run_exact(instance: DdlwmpInstance, opts: MethodOptions) -> Outcome:
    """Problem (8) by the time-indexed MILP of :mod:`dlsched.models.ddlwmp.model`, model
    building included in the time limit. The best online policy's schedule (milliseconds) is
    the incumbent until the MILP finds a better one, and Lemma 1's bound (:mod:`.bounds`)
    stands when the MILP proves less, so a run cut by the limit still reports both."""
    from dlsched.models.ddlwmp.bounds import srpt_bound

    deadline = opts.deadline
    upper, policy, online = best_online_schedule(instance, deadline.share_from_start(ONLINE_SHARE))
    lemma1 = srpt_bound(
        instance, deadline=deadline.share_from_start(ONLINE_SHARE + SRPT_SHARE)
    ).bound
    child = deadline.for_fork()
    got = child.run(_time_indexed, instance, child, opts.solve, False, upper)
    res, solution, info = got if got is not None else (None, None, {})
    claimed = None if res is None or solution is None else res.objective
    if claimed is None or claimed >= upper:
        solution, claimed, info = online, upper, {**info, "incumbent_from": policy}
    bounds = [lemma1] + ([res.bound] if res is not None and res.bound is not None else [])
    return verified_outcome(
        instance,
        "exact",
        solution,
        wall_time=deadline.elapsed(),
        proof=Proof(bound=max(bounds), hit_limit=res is None or res.status == Status.TIME_LIMIT),
        claimed=claimed,
        solver=res,
        details={**info, "online_upper_bound": upper, "lemma1_bound": lemma1},
    )


def solve_relaxation(
    instance: DdlwmpInstance, opts: MethodOptions
) -> tuple[SolveResult | None, LpShares | None]:
    """The LP relaxation of the time-indexed MILP, solved in a child under ``opts.deadline``
    (killed two graces before the limit, for the work that follows): the solver's result
    (None when killed) and every job's shares in its solution (None without one)."""
    child = opts.deadline.for_fork()
    got = child.run(_time_indexed, instance, child, opts.solve, True)
    if got is None:
        return None, None
    res, lp, _ = got
    return res, None if isinstance(lp, Schedule) else lp


def run_lp_bound(instance: DdlwmpInstance, opts: MethodOptions) -> Outcome:
    """The LP relaxation of the time-indexed MILP: a certified lower bound."""
    res, _ = solve_relaxation(instance, opts)
    ok = res is not None and res.status == Status.OPTIMAL
    return verified_outcome(
        instance,
        "lp-bound",
        None,
        wall_time=opts.deadline.elapsed(),
        proof=Proof(bound=res.objective if ok and res is not None else None, hit_limit=not ok),
        status=res.status if res is not None else Status.TIME_LIMIT,
        solver=res,
    )


def run_srpt_bound(instance: DdlwmpInstance, opts: MethodOptions) -> Outcome:
    """Lemma 1: the single-machine preemptive SRPT bound (see :mod:`.bounds`); its alpha^min
    probes share the time limit (status time_limit when it passed while they ran: the bound
    holds, and may be weaker than with more time)."""
    from dlsched.models.ddlwmp.bounds import srpt_bound

    b = srpt_bound(instance, deadline=opts.deadline)
    cut = opts.deadline.passed()
    return verified_outcome(
        instance,
        "srpt-bound",
        None,
        wall_time=opts.deadline.elapsed(),
        proof=Proof(bound=b.bound, hit_limit=cut),
        status=Status.TIME_LIMIT if cut else Status.OPTIMAL,
        details={
            "srpt": b.srpt,
            "release_plus_run": b.release_plus_run,
            "paper_form": b.paper_form,
            "rho": b.rho,
        },
    )


def _tau(opts: MethodOptions) -> float:
    tau = opts.param("tau", 1.0)
    if isinstance(tau, bool) or not isinstance(tau, int | float) or not 0 <= tau <= 1e6:
        raise OptionError("tau", tau, "expected a number from 0 to 1e6")
    return float(tau)


def _reserve(opts: MethodOptions) -> Reserve:
    """``wcs-reserve``'s rule from ``--param long_s=`` (seconds) and ``reserve=`` (a share)."""
    from dlsched.models.ddlwmp.online import Reserve

    long_s, share = opts.param("long_s", Reserve.long_s), opts.param("reserve", Reserve.share)
    if isinstance(long_s, bool) or not isinstance(long_s, int | float) or not 0 <= long_s <= 1e12:
        raise OptionError("long_s", long_s, "expected a number of seconds from 0 to 1e12")
    if isinstance(share, bool) or not isinstance(share, int | float) or not 0 <= share < 1:
        raise OptionError("reserve", share, "expected a share from 0 to below 1")
    return Reserve(float(long_s), float(share))


def _with_predictor(
    instance: DdlwmpInstance, opts: MethodOptions
) -> tuple[DdlwmpInstance, dict[str, Any]]:
    """With ``--param predictor=NAME`` (Section IV-C 3): the predictor is trained on the first
    ``train_share`` (default 0.8) of the jobs in release order and predicts every job's
    iterations; without it, the instance's own predictions."""
    from dlsched.models.ddlwmp.predict import PREDICTORS, predict_all

    name = opts.param("predictor")
    if name is None:
        return instance, {}
    if name not in PREDICTORS:
        raise OptionError("predictor", name, f"expected one of {', '.join(PREDICTORS)}")
    share = opts.param("train_share", 0.8)
    predicted, error = predict_all(instance, name, share, opts.solve.seed)
    return predicted, {"predictor": name, "train_share": share, "eps_bar_held_out": error}


def cut_outcome(
    instance: DdlwmpInstance,
    name: str,
    cut: PolicyTimeUp,
    deadline: Deadline,
    details: dict[str, Any],
) -> Outcome:
    """No schedule: the time limit passed while a list schedule started its jobs (status
    time_limit, the reason in the details)."""
    reason = f"time limit reached after {cut.started} of {instance.num_jobs} jobs started"
    wall = deadline.elapsed()
    return no_solution(instance, name, reason, wall_time=wall, hit_limit=True, details=details)


def _online(name: str) -> Any:
    def run(instance: DdlwmpInstance, opts: MethodOptions) -> Outcome:
        from dlsched.models.ddlwmp.online import PolicyTimeUp, flow_report, run_policy

        deadline = opts.deadline
        instance, info = _with_predictor(instance, opts)
        pooled = opts.param("pooled", False)
        rule = _reserve(opts) if name == "wcs-reserve" else None
        try:
            schedule, stats = run_policy(
                instance, name, _tau(opts), None, deadline, pooled, reserve=rule
            )
        except PolicyTimeUp as cut:
            return cut_outcome(instance, name, cut, deadline, info)
        out = verified_outcome(
            instance, name, schedule, wall_time=deadline.elapsed(), details=info | stats
        )
        return on_request(out, opts.bound, lambda: flow_report(out, instance, deadline), opts.clock)

    return run


_ONLINE = {
    "a-srpt": "Algorithm 1 on predicted iterations (COMM_HEAVY 1.5, delay factor tau)",
    "a-srpt-perfect": "Algorithm 1 with the true iterations",
    "spjf": "shortest predicted job first, strict order, Heavy-Edge",
    "spwf": "shortest predicted workload (GPUs x duration) first, strict order",
    "wcs-duration": "work-conserving by predicted duration",
    "wcs-workload": "work-conserving by predicted workload",
    "wcs-subtime": "work-conserving by submission time",
    "wcs-reserve": "wcs-duration with a reserve: jobs predicted longer than long_s (default a"
    " day) hold together at most 1 - reserve of the GPUs (reserve default 0.25); not of the"
    " paper",
}

#: what the LP roundings round, and their guarantee (dlsched/models/ddlwmp/rounding.py says why)
_LP = "the LP of the time-indexed program (8): (1), (2), (3) with z in [0, 1]"
_NO_GUARANTEE = (
    "none: the alpha-point bounds of Hall, Schulz, Shmoys, Wein (1997) and Goemans (1997) are"
    " for jobs of fixed length on one machine or on identical parallel machines; here a job"
    " holds g_i GPUs at once and its length n_i alpha_i depends on the GPUs free at its start"
)
#: the LP roundings (dlsched/models/ddlwmp/rounding.py): summary, parameters of their own
ROUNDINGS = {
    "lp-alpha": ("list scheduling by the LP's alpha-points (alpha, default 0.5)", ("alpha",)),
    "lp-random-alpha": ("list scheduling by the LP's alpha-points, alpha_i drawn per job", ()),
    "lp-mean-start": ("list scheduling by the LP's mean start times", ()),
}

METHODS: dict[str, Method] = method_table(
    Method("exact", run_exact, "certified optimum of problem (8), time-indexed MILP", True),
    Method("lp-bound", run_lp_bound, "LP relaxation of the time-indexed MILP (lower bound)"),
    Method("srpt-bound", run_srpt_bound, "single-machine SRPT bound of Lemma 1"),
    Method(
        "mapping-exact",
        run_mapping_exact,
        "each job's minimum alpha on the free GPUs (placement ILP, CP-SAT or HiGHS);"
        " sum of alpha, ms",
        False,
        ("solver",),
    ),
    Method("heavy-edge", run_heavy_edge, "Heavy-Edge mapping of each job on the free GPUs, ms"),
    *(
        Method(
            name,
            _online(name),
            summary,
            False,
            (("tau",) if "srpt" in name else ())
            + (("long_s", "reserve") if name == "wcs-reserve" else ())
            + ("predictor", "train_share", "pooled"),
        )
        for name, summary in _ONLINE.items()
    ),
    *(
        Method(
            name,
            f"dlsched.models.ddlwmp.rounding:run_{name.replace('-', '_')}",
            summary + "; work-conserving (strict: order kept); mapping heavy-edge, exact or lp",
            False,
            (*extra, "mapping", "strict"),
            ("strict",),
            rounds=_LP,
            guarantee=_NO_GUARANTEE,
        )
        for name, (summary, extra) in ROUNDINGS.items()
    ),
)

__all__ = ["METHODS", "ROUNDINGS", "solve_relaxation"]
