"""Problem (8) of Luo et al. (seed 001) as a time-indexed MILP, for small instances.

min sum_i (t_i + n_i alpha_i)  s.t. (1) t_i >= r_i, (2) every replica placed, (3) at most g
GPUs per server per slot. Capacity (3) depends on a placement only through its GPUs per server
(its *usage*), so for each job and usage the placement of least alpha dominates every other one
with that usage; the exact route keeps one option per (job, usage):

    z[i, u, t] = 1  <=>  job i starts at slot t with usage u (its best placement),

each job starts once, and per server m and slot tau the usage of the jobs running at tau is at
most g (3). Start slots run from ceil(r_i / slot) to the horizon H of :func:`horizon` (slot
t counted from the beginning of the first slot); in (8) a start in slot t is at time
t slot + first_slot_s, the first slot's number in [T] times the slot length (the paper numbers
them from 1; :attr:`~dlsched.models.ddlwmp.instance.Cluster.first_slot_s`). The LP relaxation of
the same model is the ``lp-bound``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from dlsched.errors import OptionError
from dlsched.models.ddlwmp.alpha import Placement, alpha_ms
from dlsched.models.ddlwmp.check import busy_slots, run_seconds
from dlsched.models.ddlwmp.instance import DdlwmpInstance
from dlsched.models.ddlwmp.mapping import all_placements

#: Most placements enumerated per job by the exact route (it is for small instances).
MAX_PLACEMENTS = 200_000
#: The equation each component of :func:`build_time_indexed` states (its ``doc``).
EQUATIONS = {
    "start_once": "(2), (1): every job starts once, at or after its release",
    "server_capacity": "(3): at most g GPUs of a server busy in each slot",
    "obj": "(8): min sum_i (t_i + n_i alpha_i)",
}


@dataclass(frozen=True)
class Option:
    """Job i's best placement for one usage vector, its alpha (ms) and busy slots."""

    usage: tuple[int, ...]
    placement: Placement
    alpha: float
    slots: int


def job_options(instance: DdlwmpInstance, i: int) -> list[Option]:
    """One option per usage vector: the placement of least alpha with that usage."""
    job, c = instance.jobs[i], instance.cluster
    best: dict[tuple[int, ...], tuple[float, Placement]] = {}
    for count, p in enumerate(all_placements(job, [c.gpus_per_server] * c.servers)):
        if count >= MAX_PLACEMENTS:
            raise OptionError(
                "method exact",
                instance.name,
                f"job {job.name} has over {MAX_PLACEMENTS} placements",
            )
        usage = [0] * c.servers
        for m, row in p:
            usage[m] = sum(row)
        a = alpha_ms(job, c, p)
        key = tuple(usage)
        if key not in best or a < best[key][0]:
            best[key] = (a, p)
    return [
        Option(u, p, a, busy_slots(run_seconds(job, a), c.slot_s))
        for u, (a, p) in sorted(best.items())
    ]


def horizon(instance: DdlwmpInstance, options: list[list[Option]]) -> int:
    """Last start slot H of some optimal schedule: max release slot + sum of the longest busy
    times. In an optimal schedule no slot after the last release is idle before the last start
    (else every later job could start one slot earlier, lowering the objective), so the last
    start is at most the last release plus the busy slots of the other jobs."""
    last = max(instance.slot_of(j.release) for j in instance.jobs)
    return last + sum(max(o.slots for o in opts) for opts in options)


def starts(
    instance: DdlwmpInstance, options: list[list[Option]], upper: float | None = None
) -> list[tuple[int, int, int]]:
    """Every (job, option, start slot) of some optimal schedule: from the release slot (1) to
    the horizon, and, given the objective ``upper`` of a known schedule, only starts whose
    completion leaves room for the others' earliest completions r_j + n_j alpha_j^min."""
    c, h = instance.cluster, horizon(instance, options)
    done = [
        min(j.release + c.first_slot_s + run_seconds(j, o.alpha) for o in opts)
        for j, opts in zip(instance.jobs, options, strict=True)
    ]
    out = []
    for i, job in enumerate(instance.jobs):
        room = math.inf if upper is None else upper - (sum(done) - done[i]) + 1e-9
        for o, opt in enumerate(options[i]):
            run = run_seconds(job, opt.alpha)
            for t in range(instance.slot_of(job.release), h + 1):
                if t * c.slot_s + c.first_slot_s + run > room:
                    break
                out.append((i, o, t))
    return out


def build_time_indexed(
    instance: DdlwmpInstance,
    options: list[list[Option]],
    relax: bool = False,
    upper: float | None = None,
) -> Any:
    """The time-indexed MILP (or its LP relaxation with ``relax``) over :func:`starts`."""
    from dlsched.solvers.pyomo_env import pyo

    c, first = instance.cluster, instance.cluster.first_slot_s
    mdl = pyo.ConcreteModel(name=f"ddlwmp-{instance.name}")
    mdl.STARTS = pyo.Set(dimen=3, initialize=starts(instance, options, upper))
    mdl.z = pyo.Var(mdl.STARTS, domain=pyo.UnitInterval if relax else pyo.Binary)
    _start_once(mdl, instance)
    _server_capacity(mdl, instance, options)
    mdl.obj = pyo.Objective(
        expr=sum(
            mdl.z[i, o, t]
            * (t * c.slot_s + first + run_seconds(instance.jobs[i], options[i][o].alpha))  # (8)
            for i, o, t in mdl.STARTS
        ),
        sense=pyo.minimize,
        doc=EQUATIONS["obj"],
    )
    return mdl


def _start_once(mdl: Any, instance: DdlwmpInstance) -> None:
    from dlsched.solvers.pyomo_env import pyo

    by_job: dict[int, list[Any]] = {}
    for i, o, t in mdl.STARTS:
        by_job.setdefault(i, []).append(mdl.z[i, o, t])
    mdl.JOBS = pyo.Set(initialize=range(instance.num_jobs))

    @mdl.Constraint(mdl.JOBS, doc=EQUATIONS["start_once"])
    def start_once(mdl: Any, i: int) -> Any:  # every job runs: (2) with its option's placement
        return sum(by_job[i]) == 1


def _server_capacity(mdl: Any, instance: DdlwmpInstance, options: list[list[Option]]) -> None:
    from dlsched.solvers.pyomo_env import pyo

    terms: dict[tuple[int, int], list[Any]] = {}
    for i, o, t in mdl.STARTS:
        opt = options[i][o]
        for m, u in enumerate(opt.usage):
            if u:
                for tau in range(t, t + opt.slots):
                    terms.setdefault((m, tau), []).append(u * mdl.z[i, o, t])
    g = instance.cluster.gpus_per_server
    mdl.BUSY = pyo.Set(dimen=2, initialize=sorted(k for k, v in terms.items() if len(v) > 1))

    @mdl.Constraint(mdl.BUSY, doc=EQUATIONS["server_capacity"])
    def server_capacity(mdl: Any, m: int, tau: int) -> Any:  # (3)
        return sum(terms[m, tau]) <= g


def decode(
    instance: DdlwmpInstance, mdl: Any, options: list[list[Option]], values: dict[str, float]
) -> tuple[list[float], list[Placement]]:
    starts = [0.0] * instance.num_jobs
    places: list[Placement] = [()] * instance.num_jobs
    for i, o, t in mdl.STARTS:
        if values.get(mdl.z[i, o, t].name, 0.0) > 0.5:
            starts[i] = t * instance.cluster.slot_s
            places[i] = options[i][o].placement
    return starts, places


@dataclass(frozen=True)
class Share:
    """A share ``weight`` of one job in a solution of the LP relaxation: the job on option
    ``option`` (its best placement for one usage, ``placement``) from ``start`` for ``run``
    seconds."""

    option: int
    start: float
    run: float
    weight: float
    placement: Placement = ()


#: LP values at or below this are read as 0 (a solver's noise on columns at zero)
SHARE_TOL = 1e-9


def shares(
    instance: DdlwmpInstance, mdl: Any, options: list[list[Option]], values: dict[str, float]
) -> tuple[tuple[Share, ...], ...]:
    """Each job's shares z[i, o, t] > 0 of an LP solution, by start then option: the fractional
    schedule the LP describes (the share z of job i runs n_i alpha_o from slot t)."""
    out: list[list[Share]] = [[] for _ in instance.jobs]
    for i, o, t in mdl.STARTS:
        z = values.get(mdl.z[i, o, t].name, 0.0)
        if z > SHARE_TOL:
            opt = options[i][o]
            run = run_seconds(instance.jobs[i], opt.alpha)
            out[i].append(Share(o, t * instance.cluster.slot_s, run, z, opt.placement))
    return tuple(tuple(sorted(s, key=lambda x: (x.start, x.option))) for s in out)


__all__ = [
    "MAX_PLACEMENTS",
    "Option",
    "Share",
    "build_time_indexed",
    "decode",
    "horizon",
    "job_options",
    "shares",
]
