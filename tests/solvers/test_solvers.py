"""Backends: coexistence, agreement, statuses, the CP-SAT bridge."""

from __future__ import annotations

import pyomo.environ as pyo
import pytest

from dlsched.errors import OptionError
from dlsched.solvers import BACKENDS, SolveOptions, Status, solve
from dlsched.solvers.cpsat_bridge import BridgeError, integer_scale


def items(n: int = 25, seed: int = 3) -> tuple[list[int], list[float], int]:
    """Weights, values (one decimal) and capacity of the knapsack of :func:`knapsack`."""
    import random

    rnd = random.Random(seed)
    w = [rnd.randint(5, 60) for _ in range(n)]
    v = [round(rnd.uniform(1, 50), 1) for _ in range(n)]
    return w, v, sum(w) // 3


def knapsack(n: int = 25, seed: int = 3) -> pyo.ConcreteModel:
    w, v, cap = items(n, seed)
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(0, n - 1)
    m.x = pyo.Var(m.I, domain=pyo.Binary)
    m.cap = pyo.Constraint(expr=sum(w[i] * m.x[i] for i in m.I) <= cap)
    m.obj = pyo.Objective(expr=sum(v[i] * m.x[i] for i in m.I), sense=pyo.maximize)
    return m


def knapsack_optimum(n: int = 25, seed: int = 3) -> float:
    """Dynamic programming over integer weights (values in tenths): an independent optimum."""
    w, v, cap = items(n, seed)
    best = [0] * (cap + 1)
    for wi, vi in zip(w, v, strict=True):
        for c in range(cap, wi - 1, -1):
            best[c] = max(best[c], best[c - wi] + round(vi * 10))
    return best[cap] / 10


def market_split(rows: int = 4, seed: int = 1) -> pyo.ConcreteModel:
    """Cornuejols-Dawande market split with slacks: sum_j a_ij x_j + s+_i - s-_i =
    floor(sum_j a_ij / 2), min sum (s+ + s-). Every x is feasible (the slacks absorb it), and
    branch and bound takes minutes to close the gap (4 rows, 30 binaries)."""
    import random

    rnd = random.Random(seed)
    n = 10 * (rows - 1)
    a = [[rnd.randint(0, 99) for _ in range(n)] for _ in range(rows)]
    m = pyo.ConcreteModel()
    m.J, m.R = pyo.RangeSet(0, n - 1), pyo.RangeSet(0, rows - 1)
    m.x = pyo.Var(m.J, domain=pyo.Binary)
    m.up = pyo.Var(m.R, domain=pyo.NonNegativeReals)
    m.down = pyo.Var(m.R, domain=pyo.NonNegativeReals)
    m.split = pyo.Constraint(
        m.R,
        rule=lambda m, i: (
            sum(a[i][j] * m.x[j] for j in m.J) + m.up[i] - m.down[i] == sum(a[i]) // 2
        ),
    )
    m.obj = pyo.Objective(expr=sum(m.up[i] + m.down[i] for i in m.R))
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
    best = knapsack_optimum()
    for b in BACKENDS:
        res = solve(knapsack(), b)
        assert res.status == Status.OPTIMAL, b
        assert res.objective == pytest.approx(best, abs=1e-6), b


def test_result_values_are_a_feasible_solution() -> None:
    m = knapsack()
    w, v, cap = items()
    res = solve(m, "cpsat")
    x = [res.value(m.x[i]) for i in m.I]
    assert all(xi in (0.0, 1.0) for xi in x)
    assert sum(wi * xi for wi, xi in zip(w, x, strict=True)) <= cap  # the capacity row holds
    assert res.objective == pytest.approx(sum(vi * xi for vi, xi in zip(v, x, strict=True)))
    assert res.objective == pytest.approx(knapsack_optimum(), abs=1e-6)
    assert res.info["objective_scale"] == 10  # values have one decimal digit


def test_time_limit_reports_incumbent_bound_and_gap() -> None:
    """Market split: an incumbent at the root, no proof in a second. The result must carry
    the incumbent (feasible, its objective what its values give), a proven bound below it and
    the gap between them."""
    m = market_split()
    res = solve(m, "highs", SolveOptions(time_limit=1.0, mip_gap=0.0))
    assert res.status == Status.TIME_LIMIT
    assert res.objective is not None and res.has_solution
    slack = sum(res.value(m.up[i]) + res.value(m.down[i]) for i in m.R)
    assert res.objective == pytest.approx(slack, abs=1e-6)
    for i in m.R:  # the incumbent satisfies every row
        body = pyo.value(m.split[i].body)
        assert body == pytest.approx(pyo.value(m.split[i].upper), abs=1e-6)
    assert res.bound is not None and 0.0 <= res.bound <= res.objective - 1e-6
    assert res.gap is not None and 0 < res.gap <= 1


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
