"""The online hare methods (Chen et al., IEEE TCC 2024): ``run(instance, MethodOptions) ->
Outcome`` for every entry of :data:`ONLINE_METHODS` and :data:`LIST_METHODS`. Each
simulates an online policy (non-clairvoyant, but for the SRTF baselines of
:data:`LIST_METHODS`, which know each arrived job's size: :mod:`.listrules`)
on the shared engine (:mod:`dlsched.simulate`), turns what trained where into a hare
``TaskSchedule`` and hands it to :func:`~dlsched.result.verified_outcome`: the hare checker's
objective (sum of weighted completion times) is the one reported, so the offline ``exact``
and ``hare`` methods are the clairvoyant references. ``details`` carry the average JCT (the
paper's online metric), the grouping, the thresholds and the engine's counts, and the total
flow time ``flow_time_s``; with a bound asked for (:attr:`~dlsched.models.MethodOptions.bound`,
``dlsched solve --bound``), beside it a certified lower bound on it and the gap (:mod:`.bounds`:
``flow_time_bound_s``, ``flow_time_gap``; ``weighted_completion_bound`` and its gap for the
objective) and the seconds the bound took, ``bound_time``, apart from ``wall_time`` (the bound
is computed once per instance object, shared by the policies run on it).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from dlsched.errors import OptionError
from dlsched.models import Method, MethodOptions, method_table
from dlsched.models.hare.instance import HareInstance
from dlsched.online.bounds import total_flow
from dlsched.result import Outcome, on_request, verified_outcome
from dlsched.simulate import SimResult

from ..budget import GROUPING_SHARE
from ..solution import TaskSchedule
from .baselines import (
    default_2dlas_quantum,
    online_fifo,
    sched_allox_unit,
    sched_homo_unit,
    two_d_las,
)
from .common import OnlineHare, average_jct, run_policy
from .grouping import Groups, group_gpus
from .hlas import HLAS, QUEUES, Thresholds, default_quantum, make_thresholds
from .listrules import SLOWDOWN, las, srtf
from .predictors import PREDICTOR_PARAMS, make_predictor
from .rounding import GUARANTEE, RELAXATION, ROUNDINGS, lp_grouping

#: ``grouping="auto"`` solves GPU_Grouping exactly up to this many GPUs, greedily above.
EXACT_GROUPING_GPUS = 16

_THRESHOLD_PARAMS = ("queues", "quantum", "spacing", "thresholds")
_HLAS_PARAMS = ("groups", "grouping", "group_idle", *_THRESHOLD_PARAMS)
#: The groupings ``grouping=`` names: the MILP, the greedy rule, or a rounding of the MILP's LP
#: relaxation (:mod:`.rounding`; seeded by the method's seed).
GROUPINGS = ("auto", "exact", "greedy", *ROUNDINGS)
#: The LP-rounding HLAS methods' parameters: their grouping is their name's.
_LP_PARAMS = tuple(p for p in _HLAS_PARAMS if p != "grouping")


def _thresholds(options: MethodOptions, auto_quantum: float) -> Thresholds:
    q = options.param("quantum", "auto")
    if q == "auto":
        q = auto_quantum
    ok = isinstance(q, int | float) and not isinstance(q, bool) and math.isfinite(q) and q > 0
    if not ok:
        raise OptionError("quantum", q, "expected a positive number or auto")
    return make_thresholds(
        float(q),
        options.param("queues", QUEUES),
        options.param("spacing", "linear"),
        options.param("thresholds"),
    )


def _grouping(
    instance: HareInstance, options: MethodOptions, default: str = "auto"
) -> tuple[Groups, dict[str, Any]]:
    how = options.param("grouping", default)
    if how == "auto":
        how = "exact" if instance.num_gpus <= EXACT_GROUPING_GPUS else "greedy"
    if how not in GROUPINGS:
        raise OptionError("grouping", how, f"expected {', '.join(GROUPINGS)}")
    grouping = options.deadline.share_from_start(GROUPING_SHARE)  # the simulation follows it
    solve = lp_grouping if how in ROUNDINGS else group_gpus
    res = solve(instance, options.param("groups"), how, options.solve, deadline=grouping)
    info = {
        "grouping": res.method,
        "groups": [[instance.gpus[g] for g in grp] for grp in res.groups],
        "grouping_spread": res.spread,
        "grouping_status": str(res.status),
        "grouping_bound": res.bound,
        **(res.info if how in ROUNDINGS else {}),  # lp_value, lp_status (seed, samples)
    }
    return res.groups, info


def _hlas(
    with_predictor: bool, group_idle: str = "all", grouping: str = "auto"
) -> Callable[[HareInstance, MethodOptions], tuple[Any, dict]]:
    def build(instance: HareInstance, options: MethodOptions) -> tuple[OnlineHare, dict]:
        groups, info = _grouping(instance, options, grouping)
        th = _thresholds(options, default_quantum(instance, groups))
        predictor = None
        if with_predictor:
            predictor = make_predictor(options.param("predictor", "history"), options.params)
            predictor.reset(instance)
            info["predictor"] = predictor.name
        info["thresholds"] = list(th.upper)
        idle = options.param("group_idle", group_idle)
        info["group_idle"] = idle
        return HLAS(instance, groups, th, predictor, idle), info

    return build


def _two_d_las(instance: HareInstance, options: MethodOptions) -> tuple[OnlineHare, dict]:
    th = _thresholds(options, default_2dlas_quantum(instance))
    return two_d_las(instance, th), {"thresholds": list(th.upper)}


def _plain(make: Callable[[HareInstance], OnlineHare]) -> Callable[..., tuple[OnlineHare, dict]]:
    return lambda instance, options: (make(instance), {})


def _list_rule(
    make: Callable[[HareInstance, float], OnlineHare], clairvoyant: bool, fit: bool = True
) -> Callable[[HareInstance, MethodOptions], tuple[OnlineHare, dict]]:
    def build(instance: HareInstance, options: MethodOptions) -> tuple[OnlineHare, dict]:
        if not fit:
            return make(instance, math.inf), {"clairvoyant": clairvoyant}
        slowdown = options.param("slowdown", SLOWDOWN)
        return make(instance, slowdown), {"clairvoyant": clairvoyant, "slowdown": slowdown}

    return build


def _online(name: str, build: Callable[..., tuple[OnlineHare, dict]]) -> Callable[..., Outcome]:
    def run(instance: HareInstance, options: MethodOptions) -> Outcome:
        policy, info = build(instance, options)
        t1 = options.deadline.elapsed()
        schedule, sim = run_policy(instance, policy)
        return online_outcome(instance, name, schedule, sim, options, info, t1)

    return run


def online_outcome(
    instance: HareInstance,
    name: str,
    schedule: TaskSchedule,
    sim: SimResult,
    options: MethodOptions,
    info: dict[str, Any],
    setup_time: float,
) -> Outcome:
    """The verified Outcome of an online policy ``name`` whose simulation ``sim`` (begun
    ``setup_time`` seconds into ``options.deadline``, just ended) made ``schedule``: the
    checker's objective, the average JCT and the flow time, and with ``options.bound`` the
    certified flow-time bound and gap (module docstring)."""
    t2 = options.deadline.elapsed()
    out = verified_outcome(
        instance,
        name,
        schedule,
        wall_time=options.deadline.elapsed(),
        details={
            **info,
            "setup_time": setup_time,
            "simulation_time": t2 - setup_time,
            "events": sim.events,
            "decisions": sim.decisions,
        },
    )
    done = out.evaluation.completion
    flow = total_flow(done, instance.jobs)
    out = _with_details(out, {"average_jct": average_jct(instance, done), "flow_time_s": flow})

    def bounded() -> Outcome:
        from .bounds import flow_report

        objective = out.evaluation.objective
        return _with_details(out, flow_report(instance, done, objective, options.deadline))

    return on_request(out, options.bound, bounded, options.clock)


def _hlas_lp(name: str, how: str, summary: str) -> Method:
    """HLAS on the grouping that rounding ``how`` makes of GPU_Grouping's LP relaxation; its
    ``lp_value`` bounds the grouping's spread, not the weighted completion time."""
    run = _online(name, _hlas(False, grouping=how))
    return Method(name, run, summary, params=_LP_PARAMS, rounds=RELAXATION, guarantee=GUARANTEE)


def _with_details(out: Outcome, extra: dict[str, Any]) -> Outcome:
    from dataclasses import replace

    return replace(out, details={**out.details, **extra})


ONLINE_METHODS: dict[str, Method] = method_table(
    Method(
        "hlas",
        _online("hlas", _hlas(False)),
        "online, non-clairvoyant: HLAS (TCC 2024, Algorithms 1-3) on GPU groups",
        params=_HLAS_PARAMS,
    ),
    Method(
        "hlas-any",
        _online("hlas-any", _hlas(False, "any")),
        "HLAS variant: a group takes work as soon as one of its GPUs is idle",
        params=_HLAS_PARAMS,
    ),
    Method(
        "hlas-p",
        _online("hlas-p", _hlas(True)),
        "online: HLAS-P with a pluggable predictor "
        "(predictor=history|conservative|oracle|none|hint, or a Predictor object)",
        params=(*_HLAS_PARAMS, "predictor", *PREDICTOR_PARAMS),
    ),
    _hlas_lp(
        "hlas-lp",
        "lp-round",
        "HLAS on GPU_Grouping's LP relaxation rounded: each GPU to its largest z_mu, "
        "empty groups repaired (lp_value: the LP's spread)",
    ),
    _hlas_lp(
        "hlas-lp-random",
        "lp-random",
        "HLAS on GPU_Grouping's LP relaxation rounded at random (seeded): the least spread "
        "of 20 draws, empty groups repaired (lp_value: the LP's spread)",
    ),
    Method(
        "online-fifo",
        _online("online-fifo", _plain(online_fifo)),
        "online: Gavel FIFO, gang on the fastest idle GPUs, job-level non-preemptive",
    ),
    Method(
        "2d-las",
        _online("2d-las", _two_d_las),
        "online: Tiresias 2D-LAS (attained GPU time), gang per round, heterogeneity-blind",
        params=_THRESHOLD_PARAMS,
    ),
    Method(
        "sched-homo-unit",
        _online("sched-homo-unit", _plain(sched_homo_unit)),
        "online: Sched_Homo with unit job sizes (Smith's rule on weights), gang",
    ),
    Method(
        "sched-allox-unit",
        _online("sched-allox-unit", _plain(sched_allox_unit)),
        "online: AlloX matching with unit job sizes, one GPU per job",
    ),
)

#: The policies a sweep or benchmark runs by default.
ONLINE_POLICIES = tuple(ONLINE_METHODS)

#: The family's own online list rules (:mod:`.listrules`), apart from :data:`ONLINE_POLICIES`
#: (the paper's policies and baselines, which its claims and the ratio sweeps compare): SRTF,
#: clairvoyant about sizes, and LAS, not.
LIST_METHODS: dict[str, Method] = method_table(
    Method(
        "online-srtf",  # hare's offline table has its own srtf (the paper's baseline)
        _online("online-srtf", _list_rule(srtf, True, fit=False)),
        "online, clairvoyant baseline: shortest remaining time first, each task on the "
        "fastest free GPU for its job",
    ),
    Method(
        "srtf-fit",
        _online("srtf-fit", _list_rule(srtf, True)),
        "online, clairvoyant baseline: SRTF on the GPUs that run the job at most `slowdown` "
        f"(default {SLOWDOWN:g}) times as long as its fastest; other GPUs wait",
        params=("slowdown",),
    ),
    Method(
        "las-fit",
        _online("las-fit", _list_rule(las, False)),
        "online, non-clairvoyant baseline: least attained service first, placed as srtf-fit",
        params=("slowdown",),
    ),
)

__all__ = [
    "EXACT_GROUPING_GPUS",
    "LIST_METHODS",
    "ONLINE_METHODS",
    "ONLINE_POLICIES",
    "online_outcome",
]
