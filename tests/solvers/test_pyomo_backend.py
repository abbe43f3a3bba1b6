"""Pyomo models solved from several threads at once (as in a Dask worker) never enter
``pyomo.common.tee``'s output capture: it redirects the process's file descriptors 1 and 2
through a pipe read by a thread, and two solves in one process (one waiting for the capture's
lock, one joining a reader whose pipe never ended) once blocked a run for good. HiGHS solves a
Pyomo model as a matrix (dlsched/solvers/pyomo_backend.py), SCIP with its output hidden."""

from __future__ import annotations

import importlib.util
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pyomo.common.tee as tee
import pyomo.environ as pyo
import pytest

from dlsched.solvers import SolveOptions, Status, solve
from dlsched.solvers.pyomo_backend import to_matrix

OPTIONS = SolveOptions(time_limit=60)


@pytest.fixture
def no_capture(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every entry into the capture (a TeeStream made, capture_output entered) is counted and
    fails: a solve that entered it would come back as an error."""
    entered: list[str] = []

    def refuse(what: str) -> Any:
        def enter(*_args: Any, **_kwargs: Any) -> None:
            entered.append(what)
            raise RuntimeError(f"{what} entered")

        return enter

    monkeypatch.setattr(tee.TeeStream, "__init__", refuse("TeeStream"))
    monkeypatch.setattr(tee.capture_output, "__enter__", refuse("capture_output"))
    return entered


def knapsack(k: int) -> tuple[pyo.ConcreteModel, float]:
    """max sum v_i x_i s.t. sum w_i x_i <= 5, x binary; plus y / 2 with a ranged row keeping
    y + one in [1, 3] (y integer), plus one, a variable fixed at 1: the optimum by hand."""
    m = pyo.ConcreteModel()
    items = range(4)
    value, weight = [k + 1, 3, 4, 2], [2, 3, 4, 1]
    m.x = pyo.Var(items, domain=pyo.Binary)
    m.y = pyo.Var(domain=pyo.Integers, bounds=(0, 10))
    m.one = pyo.Var(initialize=1.0)
    m.one.fix()
    m.cap = pyo.Constraint(expr=sum(weight[i] * m.x[i] for i in items) <= 5)
    m.range = pyo.Constraint(expr=pyo.inequality(1, m.y + m.one, 3))
    m.o = pyo.Objective(
        expr=sum(value[i] * m.x[i] for i in items) + 0.5 * m.y + m.one, sense=pyo.maximize
    )
    # the best sets of weight <= 5: {0, 1} worth k + 4, {2, 3} worth 6
    best = max(k + 4, 6)
    return m, best + 0.5 * 2 + 1


def test_the_matrix_is_the_models(no_capture: list[str]) -> None:
    m, best = knapsack(5)
    matrix, columns = to_matrix(m)
    assert [v.name for v in columns] == ["x[0]", "x[1]", "x[2]", "x[3]", "y", "one"]
    assert matrix.num_rows == 2 and matrix.is_mip  # the ranged row is one row
    assert list(matrix.row_lower) == [float("-inf"), 0.0] and list(matrix.row_upper) == [5, 2]
    assert (matrix.col_lower[-1], matrix.col_upper[-1]) == (1.0, 1.0)  # fixed at its value
    res = solve(m, "highs", OPTIONS)
    assert res.status == Status.OPTIMAL and res.sense == "max"
    assert res.objective == pytest.approx(best) and res.bound == pytest.approx(best)
    assert pyo.value(m.o) == pytest.approx(best)  # the values are loaded into the model
    assert res.values["y"] == pytest.approx(2.0) and not no_capture


def test_a_nonlinear_model_is_an_error_for_highs(no_capture: list[str]) -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(1, 2))
    m.c = pyo.Constraint(expr=m.x * m.x >= 2)
    m.o = pyo.Objective(expr=m.x)
    res = solve(m, "highs", OPTIONS)
    assert res.status == Status.ERROR and "not linear" in res.message and not no_capture


@pytest.mark.parametrize(
    "backend",
    [
        "highs",
        pytest.param(
            "scip",
            marks=pytest.mark.skipif(
                importlib.util.find_spec("pyscipopt") is None, reason="needs pyscipopt"
            ),
        ),
    ],
)
def test_solves_from_several_threads_at_once_never_capture_output(
    no_capture: list[str], backend: str
) -> None:
    def one(k: int) -> tuple[Status, float | None, float]:
        m, best = knapsack(k)
        res = solve(m, backend, OPTIONS)
        return res.status, res.objective, best

    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(one, range(12)))
    assert not no_capture
    for status, objective, best in got:
        assert status == Status.OPTIMAL and objective == pytest.approx(best)


@pytest.mark.parametrize("scipy_first", [True, False])
def test_pyomo_loads_no_scipy_statistics_whichever_comes_first(scipy_first):
    """Pyomo imported through dlsched.solvers.pyomo_env leaves scipy.stats unloaded (about a
    second of a whole-process time limit), whether SciPy was loaded before it or after, and
    one SciPy is loaded, not two."""
    import subprocess
    import sys

    first, second = "import scipy.sparse", "from dlsched.models.placement import model"
    if not scipy_first:
        first, second = second, first
    code = (
        f"import sys; {first}; {second}; import scipy.optimize; "
        "assert 'scipy.stats' not in sys.modules, 'scipy.stats loaded'; "
        "assert model.pyo.ConcreteModel; "
        "assert sys.modules['scipy.sparse'] is sys.modules['scipy'].sparse"
    )
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert got.returncode == 0, got.stderr
