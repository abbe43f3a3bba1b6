"""Backends: coexistence, agreement, statuses, the CP-SAT bridge."""

from __future__ import annotations

import pyomo.environ as pyo
import pytest

from dlsched.errors import OptionError
from dlsched.solvers import BACKENDS, SolveOptions, Status, solve
from dlsched.solvers.cpsat_bridge import BridgeError, integer_scale


def knapsack(n: int = 25, seed: int = 3) -> pyo.ConcreteModel:
    import random

    rnd = random.Random(seed)
    w = [rnd.randint(5, 60) for _ in range(n)]
    v = [round(rnd.uniform(1, 50), 1) for _ in range(n)]
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(0, n - 1)
    m.x = pyo.Var(m.I, domain=pyo.Binary)
    m.cap = pyo.Constraint(expr=sum(w[i] * m.x[i] for i in m.I) <= sum(w) // 3)
    m.obj = pyo.Objective(expr=sum(v[i] * m.x[i] for i in m.I), sense=pyo.maximize)
    return m


def test_highs_and_ortools_in_one_process() -> None:
    import highspy
    from ortools.sat.python import cp_model

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    assert h.version().startswith("1.13")  # the pinned highspy, beside OR-Tools
    cp = cp_model.CpModel()
    x = cp.NewIntVar(0, 10, "x")
    cp.Maximize(x)
    solver = cp_model.CpSolver()
    assert solver.Solve(cp) == cp_model.OPTIMAL
    res = solve(knapsack(), "highs")
    assert res.status == Status.OPTIMAL
    from importlib.metadata import version

    assert version("highspy") == "1.13.1" and res.objective is not None


def test_backends_agree_on_a_milp() -> None:
    values = {b: solve(knapsack(), b).objective for b in BACKENDS}
    assert len({round(v, 6) for v in values.values()}) == 1, values
    for b in BACKENDS:
        assert solve(knapsack(), b).status == Status.OPTIMAL


def test_result_values_are_a_feasible_solution() -> None:
    m = knapsack()
    res = solve(m, "cpsat")
    total = sum(res.value(m.x[i]) * 1.0 for i in m.I)
    assert total >= 1
    assert res.info["objective_scale"] == 10  # values have one decimal digit


def test_time_limit_reports_incumbent_bound_and_gap() -> None:
    m = knapsack(n=400, seed=7)
    res = solve(m, "highs", SolveOptions(time_limit=0.05, mip_gap=0.0))
    assert res.status in (Status.TIME_LIMIT, Status.OPTIMAL)
    if res.status == Status.TIME_LIMIT and res.objective is not None:
        assert res.bound is not None and res.bound >= res.objective - 1e-6
        assert res.gap is not None and res.gap >= 0


def test_unknown_backend_and_bad_options() -> None:
    with pytest.raises(OptionError, match="backend"):
        solve(knapsack(), "gurobi")
    with pytest.raises(OptionError, match="time_limit"):
        SolveOptions(time_limit=-1)
    with pytest.raises(OptionError, match="mip_gap"):
        SolveOptions(mip_gap=2)


def test_cpsat_bridge_refuses_what_it_cannot_represent() -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1))
    m.o = pyo.Objective(expr=m.x)
    with pytest.raises(BridgeError, match="continuous"):
        solve(m, "cpsat")
    m2 = pyo.ConcreteModel()
    m2.y = pyo.Var(domain=pyo.Integers)
    m2.o = pyo.Objective(expr=m2.y)
    with pytest.raises(BridgeError, match="finite bounds"):
        solve(m2, "cpsat")
    with pytest.raises(BridgeError):
        integer_scale([1 / 3], "row")
    assert integer_scale([0.25, 3], "row") == 100


def test_infeasible_status() -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Binary)
    m.c = pyo.Constraint(expr=m.x >= 2)
    m.o = pyo.Objective(expr=m.x)
    for b in BACKENDS:
        assert solve(m, b).status == Status.INFEASIBLE, b
