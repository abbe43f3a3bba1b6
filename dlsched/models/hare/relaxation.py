"""Solving Hare_Sched_RL (9), (4)-(7) and its strengthening by Queyranne's subset inequalities.

Chen et al., *Hare*, HPDC 2022, Section 5.2 (Step 1); M. Queyranne, *Structure of a simple
scheduling polyhedron*, Math. Programming 58 (1993) 263-285.

- :func:`solve_relaxation`: RL as printed, linearized exactly (HiGHS) or quadratic (SCIP).
  Its optimum is a lower bound on Hare_Sched's; a time-limited run's certified bound is the
  solver's dual bound, which is still a lower bound on the optimum.
- :func:`solve_strong_relaxation`: RL plus Queyranne's inequality for subsets of the tasks on a
  GPU, separated exactly per GPU by sorting the tasks the solution assigns there by x + T^c (a
  prefix of that order is the most violated subset) and re-solved until no cut is violated.
- :func:`combinatorial_bound`: a bound that needs no solver (for the paper's scale).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dlsched.models.hare.instance import HareInstance, Task
from dlsched.solvers import SolveResult, Status, solve
from dlsched.solvers.base import SolverSettings
from dlsched.solvers.deadline import Deadline

if TYPE_CHECKING:
    from dlsched.solvers.pyomo_env import pyo


@dataclass(frozen=True)
class RelaxedSolution:
    """x^ and y^ of RL, with the certified lower bound on Hare_Sched."""

    status: Status
    value: float | None  # RL objective of the incumbent (None without one)
    bound: float | None  # certified lower bound on RL, hence on Hare_Sched
    x: dict[Task, float]
    y: dict[Task, int]
    solver: SolveResult | None
    info: dict[str, Any] = field(default_factory=dict)


def _extract(
    model: pyo.ConcreteModel, res: SolveResult
) -> tuple[dict[Task, float], dict[Task, int]]:
    if not res.has_solution:
        return {}, {}
    x = {i: res.value(model.x[i]) for i in model.TASKS}
    y: dict[Task, int] = {}
    for i in model.TASKS:
        vals = [res.value(model.y[(*i, g)]) for g in model.GPUS]
        y[i] = int(max(range(len(vals)), key=vals.__getitem__))
    return x, y


def solve_relaxation(
    instance: HareInstance, settings: SolverSettings, deadline: Deadline, backend: str = "highs"
) -> RelaxedSolution:
    """RL exactly as printed: HiGHS on the exact linearization, or SCIP on the quadratic form,
    in what is left of ``deadline`` once the model is built."""
    from .model import build_relaxation  # Pyomo, when a relaxation runs

    form = "quadratic" if backend == "scip" else "pairs"
    model = build_relaxation(instance, form)
    res = solve(model, backend, deadline.solve_options(settings))
    x, y = _extract(model, res)
    bound = res.bound
    if res.status == Status.OPTIMAL and bound is None:
        bound = res.objective
    info = {
        "form": form,
        "backend": backend,
        "horizon": model.horizon,
        "horizon_active": any(v >= model.horizon * (1 - 1e-9) for v in x.values()),
    }
    return RelaxedSolution(res.status, res.objective, bound, x, y, res, info)


def violated_subsets(
    instance: HareInstance, x: dict[Task, float], y: dict[Task, int], tol: float = 1e-6
) -> list[tuple[int, list[Task], float]]:
    """Per GPU, the most violated prefix of the tasks on it sorted by x + T^c (Queyranne)."""
    out = []
    for g in range(instance.num_gpus):
        mine = [i for i in instance.tasks if y[i] == g]
        p = {i: instance.jobs[i[0]].train_time[g] for i in mine}
        mine.sort(key=lambda i: (x[i] + p[i], i))
        lhs = rhs = load = 0.0
        best, best_k = 0.0, -1
        for k, i in enumerate(mine):
            lhs += p[i] * x[i]
            rhs += p[i] * load
            load += p[i]
            if rhs - lhs > max(best, tol * max(1.0, rhs)):
                best, best_k = rhs - lhs, k
        if best_k >= 1:
            out.append((g, mine[: best_k + 1], best))
    return out


def solve_strong_relaxation(
    instance: HareInstance, settings: SolverSettings, deadline: Deadline, max_rounds: int = 50
) -> tuple[RelaxedSolution, RelaxedSolution, list[dict[str, Any]]]:
    """(RL, RL + subset cuts, history). Each round solves the MILP to optimality, in what is
    left of ``deadline``."""
    from .model import add_subset_cut, build_relaxation

    model = build_relaxation(instance, "pairs")
    history: list[dict[str, Any]] = []
    first: RelaxedSolution | None = None
    last: RelaxedSolution | None = None
    for rnd in range(max_rounds + 1):
        res = solve(model, "highs", deadline.solve_options(settings))
        x, y = _extract(model, res)
        bound = res.bound if res.bound is not None else res.objective
        last = RelaxedSolution(res.status, res.objective, bound, x, y, res, {"round": rnd})
        if first is None:
            first = last
        cuts = violated_subsets(instance, x, y) if res.has_solution else []
        history.append(
            {
                "round": rnd,
                "value": res.objective,
                "bound": bound,
                "status": str(res.status),
                "cuts_added": len(cuts),
            }
        )
        if res.status != Status.OPTIMAL or not cuts:
            break
        for g, subset, _viol in cuts:
            add_subset_cut(model, g, subset)
    assert first is not None and last is not None
    return first, last, history


def fastest_round(tc: Any, ts: Any) -> tuple[list[int], list[Any]]:
    """The one place of the per-job fastest round: per job n, the GPU minimising
    T^c_{n,m} + T^s_{n,m} (lowest index on ties) and that time. ``tc``, ``ts``: rows per job
    (the instance's floats or the scaled integers); the times keep their type."""
    gpus, times = [], []
    for row_c, row_s in zip(tc, ts, strict=True):
        per = [a + b for a, b in zip(row_c, row_s, strict=True)]
        g = min(range(len(per)), key=lambda m: (per[m], m))  # noqa: B023
        gpus.append(g)
        times.append(per[g])
    return gpus, times


def chain_bounds(instance: HareInstance) -> list[float]:
    """Per job, C_n >= a_n + R_n * fastest round (each round after the previous one's sync)."""
    _, fast = fastest_round(instance.tc.tolist(), instance.ts.tolist())
    return [j.arrival + j.rounds * f for j, f in zip(instance.jobs, fast, strict=True)]


def combinatorial_bound(instance: HareInstance) -> dict[str, float]:
    """Two lower bounds on Hare_Sched that need no solver.

    - ``chain``: each job alone on the fastest GPUs, sum_n w_n (a_n + sum_r min_m (T^c + T^s))
      (:func:`chain_bounds`).
    - ``fast_machine``: by time t the GPUs do at most |M| t of work measured in each task's
      fastest training time, so the completion times are at least those of Smith's rule on one
      machine |M| times faster: sum_n w_n (sum_{k <= n} P_k)/|M| in w/P order.
    """
    jobs = instance.jobs
    chain = sum(j.weight * c for j, c in zip(jobs, chain_bounds(instance), strict=True))
    work = [j.rounds * j.tasks_per_round * min(j.train_time) for j in jobs]
    order = sorted(range(len(jobs)), key=lambda n: work[n] / jobs[n].weight)
    acc, fast = 0.0, 0.0
    for n in order:
        acc += work[n]
        fast += jobs[n].weight * acc / instance.num_gpus
    return {"chain": chain, "fast_machine": fast, "bound": max(chain, fast)}
