"""The hare methods: ``run(instance, MethodOptions) -> Outcome`` for every entry of METHODS.

Chen et al., *Hare*, HPDC 2022, Section 5. Every schedule passes :func:`check_schedule`; the
reported objective is the checker's. Relaxation methods return no schedule: ``objective`` is
None and ``bound`` the certified lower bound (the relaxation's value when solved to
optimality, its dual bound otherwise); ``details`` carry the rest.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from dlsched.errors import OptionError
from dlsched.instances.hare import HareInstance
from dlsched.models import MethodOptions
from dlsched.result import Outcome
from dlsched.solvers import Status, solve

from .baselines import BASELINES
from .common import push_to_feasible, verified_outcome
from .cpsat import best_hint, solve_cpsat_native
from .model import build_exact_gdp, to_milp
from .relaxation import (
    RelaxedSolution,
    combinatorial_bound,
    solve_relaxation,
    solve_strong_relaxation,
)
from .rounding import GPU_RULES, H_RULES, algorithm1, list_schedule, priority_order


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
    instance: HareInstance, options: MethodOptions, name: str = "exact-cpsat"
) -> Outcome:
    t0 = time.perf_counter()
    hint = best_hint(instance)[1] if options.param("hint", True) else None
    flags = {}
    for key in ("pooled", "subsets"):  # model switches of solve_cpsat_native, on by default
        flags[key] = options.param(key, True)
        if not isinstance(flags[key], bool):
            raise OptionError(f"--param {key}", flags[key], "expected true or false")
    solved = solve_cpsat_native(instance, options.solve, hint, **flags)
    return _route_outcome(instance, name, t0, solved, route="cpsat")


def _route_outcome(
    instance: HareInstance, name: str, t0: float, solved: tuple, route: str | None = None
) -> Outcome:
    """Verify a route's (status, schedule, objective, bound, info); the solver's objective is
    checked against the checker's unless the data had to be rounded (``scale_exact`` False)."""
    status, sched, obj, bound, info = solved
    return verified_outcome(
        instance,
        name,
        sched,
        status,
        wall_time=time.perf_counter() - t0,
        bound=bound,
        claimed=obj if info.get("scale_exact", True) else None,
        details={"route": route, **info} if route else info,
    )


def run_exact_milp(
    instance: HareInstance, options: MethodOptions, name: str = "exact-milp"
) -> Outcome:
    t0 = time.perf_counter()
    transform = options.param("transformation", "bigm")
    if transform not in ("bigm", "hull"):
        raise OptionError("transformation", transform, "expected bigm or hull")
    model = to_milp(build_exact_gdp(instance), transform)
    res = solve(model, "highs", options.solve)
    sched, shift = None, 0.0
    if res.has_solution:
        from dlsched.schedule.hare import TaskSchedule

        items = []
        for i in instance.tasks:
            vals = [res.value(model.y[(*i, m)]) for m in range(instance.num_gpus)]
            g = max(range(instance.num_gpus), key=vals.__getitem__)
            items.append((i, g, res.value(model.x[i])))
        sched, shift = push_to_feasible(instance, TaskSchedule.from_items(items))
    return verified_outcome(
        instance,
        name,
        sched,
        res.status,
        wall_time=time.perf_counter() - t0,
        bound=res.bound if res.has_solution or res.status == Status.TIME_LIMIT else None,
        solver=res,
        claimed=res.objective,
        details={
            "route": "milp",
            "transformation": transform,
            "horizon": instance.horizon(),
            "tolerance_shift": shift,
        },
    )


def run_exact_special(
    instance: HareInstance, options: MethodOptions, name: str = "exact"
) -> Outcome:
    """R || sum w_j C_j (one task per job, common arrival): assignment model, see special.py."""
    from .special import solve_single_task

    t0 = time.perf_counter()
    return _route_outcome(instance, name, t0, solve_single_task(instance, options.solve))


def run_exact(instance: HareInstance, options: MethodOptions) -> Outcome:
    """backend=auto (default): the special-case route when the instance is R || sum w_j C_j,
    CP-SAT otherwise; cpsat | milp (highs) | special force a route."""
    from .special import is_single_task_case

    route = options.param("backend", "auto")
    if route == "auto":
        route = "special" if is_single_task_case(instance) else "cpsat"
    if route == "special":
        if not is_single_task_case(instance):
            raise OptionError("backend", route, "special needs one task per job, common arrival")
        return run_exact_special(instance, options, "exact")
    if route in ("cpsat",):
        return run_exact_cpsat(instance, options, "exact")
    if route in ("milp", "highs"):
        return run_exact_milp(instance, options, "exact")
    raise OptionError("backend", route, "exact takes auto, cpsat, milp (highs) or special")


def _relaxation_outcome(
    instance: HareInstance, name: str, rel: RelaxedSolution, wall: float, details: dict[str, Any]
) -> Outcome:
    return verified_outcome(
        instance,
        name,
        None,
        rel.status,
        wall_time=wall,
        bound=rel.bound,
        solver=rel.solver,
        details={"relaxation_value": rel.value, **rel.info, **details},
    )


def run_relaxation(instance: HareInstance, options: MethodOptions) -> Outcome:
    t0 = time.perf_counter()
    backend = options.param("backend", "highs")
    if backend not in ("highs", "scip"):
        raise OptionError("backend", backend, "relaxation takes highs or scip")
    rel = solve_relaxation(instance, options.solve, backend)
    return _relaxation_outcome(instance, "relaxation", rel, time.perf_counter() - t0, {})


def run_relaxation_strong(instance: HareInstance, options: MethodOptions) -> Outcome:
    t0 = time.perf_counter()
    first, last, history = solve_strong_relaxation(
        instance, options.solve, int(options.param("max_rounds", 50))
    )
    base = first.bound
    gain = None if base is None or last.bound is None else last.bound - base
    return _relaxation_outcome(
        instance,
        "relaxation-strong",
        last,
        time.perf_counter() - t0,
        {
            "bound_rl": base,
            "bound_strong": last.bound,
            "subset_gain": gain,
            "separation_rounds": history,
        },
    )


def _hare(h: str, gpu_rule: str, name: str, relaxation: str = "rl") -> Any:
    def run(instance: HareInstance, options: MethodOptions) -> Outcome:
        t0 = time.perf_counter()
        hh = options.param("h", h)
        rule = options.param("gpu_rule", gpu_rule)
        if hh not in H_RULES:
            raise OptionError("h", hh, f"expected one of {', '.join(H_RULES)}")
        if rule not in GPU_RULES:
            raise OptionError("gpu_rule", rule, f"expected one of {', '.join(GPU_RULES)}")
        source = options.param("relaxation", relaxation)
        if source == "rl":
            rel = solve_relaxation(instance, options.solve, options.param("backend", "highs"))
            if not rel.x:
                raise OptionError("relaxation", source, f"RL has no solution ({rel.status})")
            x_hat, y_hat, bound = rel.x, rel.y, rel.bound
            rl_info = {"relaxation_status": str(rel.status), "relaxation_value": rel.value}
        elif source == "strong":  # RL + Queyranne subset inequalities (variant hare-strong)
            _, rel, hist = solve_strong_relaxation(instance, options.solve)
            if not rel.x:
                raise OptionError("relaxation", source, f"no solution ({rel.status})")
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
        rng = np.random.default_rng(options.solve.seed) if options.param("random_ties") else None
        t1 = time.perf_counter()
        sched = algorithm1(instance, x_hat, y_hat, h=hh, gpu_rule=rule, rng=rng)
        t2 = time.perf_counter()
        return verified_outcome(
            instance,
            name,
            sched,
            Status.FEASIBLE,
            wall_time=time.perf_counter() - t0,
            bound=bound,
            details={
                "h": hh,
                "gpu_rule": rule,
                "relaxation": source,
                "alpha": instance.alpha(),
                "relaxation_time": t1 - t0,
                "rounding_time": t2 - t1,
                **rl_info,
            },
        )

    return run


def _chain_starts(instance: HareInstance) -> tuple[dict[Any, float], dict[Any, int]]:
    x, y = {}, {}
    for n, j in enumerate(instance.jobs):
        per = [a + b for a, b in zip(j.train_time, j.sync_time, strict=True)]
        g = min(range(instance.num_gpus), key=lambda m: (per[m], m))  # noqa: B023
        t = j.arrival
        for r in range(j.rounds):
            for k in range(j.tasks_per_round):
                x[(n, r, k)], y[(n, r, k)] = t, g
            t += j.train_time[g] + j.sync_time[g]
    return x, y


def _baseline(name: str) -> Any:
    def run(instance: HareInstance, options: MethodOptions) -> Outcome:
        t0 = time.perf_counter()
        sched = BASELINES[name](instance)
        return verified_outcome(
            instance, name, sched, Status.FEASIBLE, wall_time=time.perf_counter() - t0
        )

    return run


def run_greedy(instance: HareInstance, options: MethodOptions) -> Outcome:
    t0 = time.perf_counter()
    return verified_outcome(
        instance,
        "greedy",
        greedy_schedule(instance),
        Status.FEASIBLE,
        wall_time=time.perf_counter() - t0,
    )


__all__ = [
    "priority_order",
    "run_exact",
    "run_exact_cpsat",
    "run_exact_milp",
    "run_relaxation",
    "run_relaxation_strong",
]
