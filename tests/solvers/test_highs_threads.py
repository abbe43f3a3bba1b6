"""HiGHS's one global task scheduler per process (dlsched/solvers/highs.py, use_threads): runs
with different thread counts one after the other in one process all solve."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest

from dlsched.solvers import solve
from dlsched.solvers.base import SolveOptions, Status
from dlsched.solvers.highs import MatrixModel, solve_matrix


def _lp() -> MatrixModel:
    # min x0 + 2 x1  s.t.  x0 + x1 >= 3,  x0 <= 2: optimum 2 + 2 = 4
    return MatrixModel(
        cost=np.array([1.0, 2.0]),
        matrix=np.array([[1.0, 1.0]]),
        row_lower=np.array([3.0]),
        row_upper=np.array([np.inf]),
        col_lower=np.zeros(2),
        col_upper=np.array([2.0, 10.0]),
    )


def _pyomo_mip() -> pyo.ConcreteModel:
    m = pyo.ConcreteModel()
    m.x = pyo.Var([0, 1, 2], domain=pyo.Binary)
    m.c = pyo.Constraint(expr=m.x[0] + m.x[1] + m.x[2] >= 2)
    m.o = pyo.Objective(expr=3 * m.x[0] + m.x[1] + 2 * m.x[2])
    return m


@pytest.mark.parametrize("counts", [(1, 2, 1), (2, 1, 3)])
def test_matrix_runs_with_changing_thread_counts_all_solve(counts):
    # HiGHS 1.13 fails a run at once when its scheduler was started with another count
    for threads in counts:
        res = solve_matrix(_lp(), SolveOptions(time_limit=10, threads=threads))
        assert res.status == Status.OPTIMAL and res.objective == pytest.approx(4.0)


def test_pyomo_runs_with_changing_thread_counts_all_solve():
    for threads in (2, 1, 2):
        res = solve(_pyomo_mip(), "highs", SolveOptions(time_limit=10, threads=threads))
        assert res.status == Status.OPTIMAL and res.objective == pytest.approx(3.0)
