"""The exact worst case of a heuristic, MetaOpt's way (Namyar et al., *Finding Adversarial
Inputs for Heuristics using Multi-level Optimization*, NSDI 2024): the heuristic's choices and
the optimum written as one model over the instance's numbers, so that its optimum is the
largest ratio any instance of the size reaches, proven, not sampled.

The hare family's ``metaopt`` part (:func:`worst_cases`, which ``dlsched verify --search``
finds through :mod:`dlsched.families`). Here: ``online-fifo`` (Gavel's FIFO, claim
004-online) on one GPU, ``n`` jobs of one round of
one task, no sync (hare's instance with |M| = 1), arrivals on a grid of ``step`` in
``arrival``, training times on that grid in ``time``, weights in ``weight``. Label the jobs in
FIFO's order (arrival, then index; any instance can be so relabelled): FIFO runs them back to
back in that order, C_j = max(C_{j-1}, a_j) + p_j, which two big-M inequalities and one binary
per job make exact (the model maximizes C, so both upper bounds are needed). The optimum is a
min over schedules, and enters the objective with a minus sign: max over (instance, schedule)
of FIFO - rho x cost(schedule) takes the best schedule of the instance by itself, so no second
level is needed; any single-machine schedule is a job order (binaries x_ij), starts after
arrivals and after the jobs before. Weights enter as w_lo + (w_hi - w_lo) b_j: for a fixed
instance and schedule the objective is linear in w, so a vertex of the weight box is a worst
one, and b_j C_j is linearized (upper bounds on FIFO's side, lower bounds on the schedule's).

The ratio is found by Dinkelbach's method: rho_{k+1} = FIFO / OPT of the instance of step k
(both measured again by the project's own routes: the ``online-fifo`` simulation and the
certified ``exact`` optimum), until the model's optimum F(rho) is 0 within tolerance. Then rho
is the largest ratio of the box, and ``upper`` = rho + (the model's dual bound on F) /
(the least OPT of the box) bounds it whatever the solver's gap: the answer is exact for every
``n`` whose models HiGHS closes within the time given (``status`` "optimal": the upper bound
within :data:`EXACT` of the ratio), a proven interval otherwise. Measured on a loaded 2-core
machine: n = 2 to 6 each exact in 0.4 to 3 s (ratios 1.86, 2.52, 2.97, 3.24, 3.38).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dlsched.errors import InternalError
from dlsched.models import MethodOptions, run_method
from dlsched.models.hare.instance import HareInstance, HareJob
from dlsched.solvers import SolverSettings, Status, solve
from dlsched.solvers.deadline import Deadline
from dlsched.solvers.pyomo_env import pyo

#: The pairs with an exact worst case here: (theorem, method) -> the heuristic modelled.
PAIRS = {("004-online", "online-fifo"): "online-fifo"}
#: Sizes tried, smallest first, while each is solved exactly within the time given.
SIZES = range(2, 9)
#: The worst case is exact when its proven upper bound is within this factor of its ratio.
EXACT = 1e-6


@dataclass(frozen=True)
class Box:
    """The instances the worst case ranges over: ``jobs`` single-task jobs on one GPU."""

    jobs: int
    arrival: tuple[float, float] = (0.0, 10.0)
    time: tuple[float, float] = (0.5, 10.0)
    weight: tuple[float, float] = (1.0, 1.0)
    step: float = 0.5

    @property
    def horizon(self) -> float:
        """No completion is later (a big M)."""
        return self.arrival[1] + self.jobs * self.time[1]

    @property
    def least_opt(self) -> float:
        """No instance of the box has a smaller optimum: every job's weight at least w_lo and
        the k-th completion at least k p_lo."""
        return self.weight[0] * self.time[0] * self.jobs * (self.jobs + 1) / 2


def build_gap(box: Box, rho: float) -> pyo.ConcreteModel:
    """max FIFO(instance) - rho x cost(schedule, instance) over the instances of ``box`` and the
    single-GPU schedules of each."""
    n = box.jobs
    md = pyo.ConcreteModel(name=f"fifo-worst-case-{n}")
    md.JOBS = pyo.RangeSet(0, n - 1)
    md.PAIRS = pyo.Set(initialize=[(i, j) for i in range(n) for j in range(i + 1, n)])
    md.step, md.big = box.step, box.horizon  # plain numbers (not components)
    _variables(md, box)
    _fifo_rows(md)
    _schedule_rows(md)
    _weight_rows(md)
    w_lo, extra = box.weight[0], box.weight[1] - box.weight[0]
    md.gap = pyo.Objective(
        expr=sum(w_lo * md.fifo_c[j] + extra * md.fifo_w[j] for j in md.JOBS)
        - rho * sum(w_lo * _done(md, j) + extra * md.opt_w[j] for j in md.JOBS),
        sense=pyo.maximize,
    )
    return md


def _variables(md: pyo.ConcreteModel, box: Box) -> None:
    big, step = box.horizon, box.step
    a_lo, a_hi = (round(x / step) for x in box.arrival)
    p_lo, p_hi = (round(x / step) for x in box.time)
    md.ka = pyo.Var(md.JOBS, domain=pyo.Integers, bounds=(a_lo, a_hi))  # a_j = step ka_j
    md.kp = pyo.Var(md.JOBS, domain=pyo.Integers, bounds=(p_lo, p_hi))  # p_j = step kp_j
    md.heavy = pyo.Var(md.JOBS, domain=pyo.Binary)  # w_j = w_hi (else w_lo)
    md.fifo_c = pyo.Var(md.JOBS, bounds=(0, big))  # FIFO's completions
    md.later = pyo.Var(md.JOBS, domain=pyo.Binary)  # FIFO's job j starts at its arrival
    md.start = pyo.Var(md.JOBS, bounds=(0, big))  # the schedule's starts
    md.before = pyo.Var(md.PAIRS, domain=pyo.Binary)  # the schedule runs i before j
    md.fifo_w = pyo.Var(md.JOBS, bounds=(0, big))  # heavy_j x FIFO's C_j
    md.opt_w = pyo.Var(md.JOBS, bounds=(0, big))  # heavy_j x the schedule's C_j


def _a(m: Any, j: int) -> Any:
    return m.step * m.ka[j]


def _p(m: Any, j: int) -> Any:
    return m.step * m.kp[j]


def _done(m: Any, j: int) -> Any:  # the schedule's completion of j
    return m.start[j] + _p(m, j)


def _fifo_rows(md: pyo.ConcreteModel) -> None:
    """FIFO's completions, exact: C_j = max(C_{j-1}, a_j) + p_j in the labels' order."""
    big = md.big

    @md.Constraint(md.JOBS)
    def fifo_order(m: Any, j: int) -> Any:  # FIFO's order is the labels': a_{j-1} <= a_j
        return pyo.Constraint.Skip if j == 0 else m.ka[j - 1] <= m.ka[j]

    @md.Constraint(md.JOBS)
    def fifo_after_arrival(m: Any, j: int) -> Any:  # C_j >= a_j + p_j
        return m.fifo_c[j] >= _a(m, j) + _p(m, j)

    @md.Constraint(md.JOBS)
    def fifo_after_previous(m: Any, j: int) -> Any:  # C_j >= C_{j-1} + p_j
        return pyo.Constraint.Skip if j == 0 else m.fifo_c[j] >= m.fifo_c[j - 1] + _p(m, j)

    @md.Constraint(md.JOBS)
    def fifo_no_idle_at_arrival(m: Any, j: int) -> Any:  # C_j <= a_j + p_j unless later
        return m.fifo_c[j] <= _a(m, j) + _p(m, j) + big * m.later[j]

    @md.Constraint(md.JOBS)
    def fifo_no_idle_after_previous(m: Any, j: int) -> Any:  # C_j <= C_{j-1} + p_j if later
        if j == 0:
            return m.later[j] == 0
        return m.fifo_c[j] <= m.fifo_c[j - 1] + _p(m, j) + big * (1 - m.later[j])


def _schedule_rows(md: pyo.ConcreteModel) -> None:
    """Any single-GPU schedule: starts after arrivals, one job at a time (an order x_ij)."""
    big = md.big

    @md.Constraint(md.JOBS)
    def schedule_after_arrival(m: Any, j: int) -> Any:
        return m.start[j] >= _a(m, j)

    @md.Constraint(md.PAIRS)
    def schedule_i_then_j(m: Any, i: int, j: int) -> Any:
        return m.start[j] >= _done(m, i) - big * (1 - m.before[i, j])

    @md.Constraint(md.PAIRS)
    def schedule_j_then_i(m: Any, i: int, j: int) -> Any:
        return m.start[i] >= _done(m, j) - big * m.before[i, j]


def _weight_rows(md: pyo.ConcreteModel) -> None:
    """heavy_j C_j linearized: bounded above on FIFO's side, below on the schedule's."""
    big = md.big

    @md.Constraint(md.JOBS)
    def fifo_weighted_below_c(m: Any, j: int) -> Any:  # heavy_j C_j <= C_j
        return m.fifo_w[j] <= m.fifo_c[j]

    @md.Constraint(md.JOBS)
    def fifo_weighted_if_heavy(m: Any, j: int) -> Any:  # heavy_j C_j <= M heavy_j
        return m.fifo_w[j] <= big * m.heavy[j]

    @md.Constraint(md.JOBS)
    def schedule_weighted(m: Any, j: int) -> Any:  # heavy_j C_j >= C_j - M (1 - heavy_j)
        return m.opt_w[j] >= _done(m, j) - big * (1 - m.heavy[j])


def instance_of(md: pyo.ConcreteModel, box: Box, values: Any) -> HareInstance:
    """The hare instance of a solution of :func:`build_gap` (one GPU, jobs in FIFO's order)."""
    jobs = []
    for j in range(box.jobs):
        a = box.step * round(values[md.ka[j].name])
        p = box.step * round(values[md.kp[j].name])
        w = box.weight[1] if values[md.heavy[j].name] > 0.5 else box.weight[0]
        jobs.append(HareJob(f"j{j}", a, float(w), 1, 1, (p,), (0.0,)))
    return HareInstance(name=f"fifo-worst-case-{box.jobs}", gpus=("g0",), jobs=tuple(jobs))


@dataclass(frozen=True)
class WorstCase:
    jobs: int
    ratio: float | None  # FIFO / OPT of the instance found (both measured by the project's routes)
    upper: float | None  # proven: no instance of the box has a larger ratio
    status: str  # "optimal" when upper = ratio within tolerance
    instance: HareInstance | None
    iterations: int
    seconds: float


#: Dinkelbach's steps at most (it ends sooner: at a ratio that does not grow, or proven).
STEPS = 29
#: The longest either of the project's routes may take to measure one instance found (the
#: ``online-fifo`` simulation, the certified ``exact`` optimum), within what is left.
MEASURE_CAP = 60.0
#: The settings of the worst-case model's HiGHS calls (its limit is the deadline's).
SETTINGS = SolverSettings(threads=1)


def fifo_worst_case(box: Box, deadline: Deadline) -> WorstCase:
    """The largest online-fifo / OPT over ``box`` (Dinkelbach over :func:`build_gap`), every
    solve of it (the model's, the two routes' measuring each instance found) given at most what
    is left of ``deadline``, and none started once it has passed."""
    rho, best, upper, status, it = 1.0, None, None, "time limit", 0
    for it in range(1, STEPS + 1):  # noqa: B007 - reported
        step = _step(box, rho, deadline)
        if step is None:
            break
        new, inst, bound = step
        if best is None or new > best[0]:
            best = (new, inst)
        if bound is not None:
            upper = rho + max(bound, 0.0) / box.least_opt
        if upper is not None and upper <= best[0] * (1 + EXACT):
            status = "optimal"
            break
        if new <= rho * (1 + 1e-12):
            break
        rho = new
    if best is None:
        return WorstCase(box.jobs, None, upper, status, None, it, deadline.elapsed())
    return WorstCase(box.jobs, best[0], upper, status, best[1], it, deadline.elapsed())


def _step(box: Box, rho: float, deadline: Deadline,
          ) -> tuple[float, HareInstance, float | None] | None:  # fmt: skip
    """One step of Dinkelbach's method at ``rho``: the ratio FIFO / OPT of the instance the
    model finds (both measured again by the project's routes), the instance, and the model's
    dual bound on F(rho); None when time ran out or the step found nothing certified."""
    if deadline.passed():
        return None
    md = build_gap(box, rho)
    res = solve(md, "highs", deadline.solve_options(SETTINGS))
    if not res.has_solution:
        return None
    inst = instance_of(md, box, res.values)
    measured = []
    for method in ("online-fifo", "exact"):
        if deadline.passed():
            return None
        limit = MethodOptions(time_limit=deadline.seconds(cap=MEASURE_CAP))
        measured.append(run_method(inst, method, limit))
    fifo, ref = measured[0].objective, measured[1]
    if fifo is None or ref.objective is None or ref.status != Status.OPTIMAL:
        return None
    modelled = sum(j.weight * res.values[md.fifo_c[k].name] for k, j in enumerate(inst.jobs))
    if abs(modelled - fifo) > 1e-6 * max(1.0, fifo):
        raise InternalError(f"the FIFO model gives {modelled}, online-fifo {fifo} on {inst}")
    return fifo / ref.objective, inst, res.bound


def worst_cases(
    theorem: str, method: str, logged: Sequence[Mapping[str, Any]], deadline: Deadline
) -> Iterator[dict[str, Any]]:
    """The exact worst cases of the pair not yet in ``logged`` (none if it has no model here),
    by size, each yielded as it ends, while each is exact and ``deadline`` (the time the search
    gives them) lasts (the family's ``metaopt`` part, :class:`dlsched.families.WorstCases`)."""
    if (theorem, method) not in PAIRS:
        return
    from dlsched.instances import instance_hash, to_dict

    have = sorted((r for r in logged if r.get("kind") == "exact-worst"), key=lambda r: r["jobs"])
    if have and (have[-1]["status"] != "optimal" or have[-1]["jobs"] >= SIZES[-1]):
        return
    for n in SIZES:
        if any(r["jobs"] == n for r in have):
            continue
        if deadline.passed():
            break
        got = fifo_worst_case(Box(n), deadline.share_of_rest(1.0))  # all that is left, from now
        yield {
            "kind": "exact-worst", "theorem": theorem, "method": method,
            "jobs": n, "ratio": got.ratio, "upper": got.upper, "status": got.status,
            "iterations": got.iterations, "seconds": got.seconds,
            "box": "one GPU, single-task jobs, arrivals 0-10 and times 0.5-10 (step 0.5), "
                   "weights 1",
            "instance": to_dict(got.instance) if got.instance is not None else None,
            "instance_hash": instance_hash(got.instance) if got.instance is not None else "",
        }  # fmt: skip
        if got.status != "optimal":
            break


__all__ = [
    "MEASURE_CAP",
    "PAIRS",
    "SETTINGS",
    "STEPS",
    "Box",
    "WorstCase",
    "build_gap",
    "fifo_worst_case",
    "worst_cases",
]
