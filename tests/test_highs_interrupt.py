"""Ctrl-C during an in-process HiGHS run (dlsched/solvers/highs.py, run_highs; and under Pyomo's
interface, which stops by its own means): HiGHS stops at
its next interrupt callback and the handler in place before is called after it (Python's raises
KeyboardInterrupt: the command line prints "interrupted", exit 130); that handler is back in
place afterwards. Before, a Ctrl-C waited for HiGHS's own time limit."""

from __future__ import annotations

import os
import signal
import threading
import time

import highspy  # noqa: F401  (loaded before the timers start: the signal must find HiGHS running)
import numpy as np
import pytest
import scipy.sparse as sp

from dlsched.solvers.base import SolveOptions
from dlsched.solvers.highs import MatrixModel, solve_matrix


def _market_split(rows: int = 5, cols: int = 40, seed: int = 0) -> MatrixModel:
    """Cornuejols-Dawande market split: a x + s+ - s- = floor(sum a / 2) with x binary, the slack
    minimised. Branch and bound does not prove it within minutes."""
    a = np.random.default_rng(seed).integers(0, 100, size=(rows, cols))
    rhs = (a.sum(axis=1) // 2).astype(float)
    matrix = sp.hstack([sp.csc_matrix(a), sp.eye(rows), -sp.eye(rows)]).tocsc()
    return MatrixModel(
        np.r_[np.zeros(cols), np.ones(2 * rows)],
        matrix,
        rhs,
        rhs,
        np.zeros(cols + 2 * rows),
        np.r_[np.ones(cols), np.full(2 * rows, np.inf)],
        integrality=np.r_[np.ones(cols, bool), np.zeros(2 * rows, bool)],
    )


def _sparse_lp(rows: int = 2500, seed: int = 0) -> MatrixModel:
    """A random packing LP that takes the simplex 10 s or more here."""
    rng = np.random.default_rng(seed)
    matrix = sp.random(
        rows, 2 * rows, density=0.01, random_state=seed, data_rvs=lambda k: rng.uniform(1, 10, k)
    ).tocsc()
    return MatrixModel(
        -rng.uniform(1, 10, 2 * rows),
        matrix,
        np.full(rows, -np.inf),
        rng.uniform(10, 100, rows),
        np.zeros(2 * rows),
        np.full(2 * rows, np.inf),
    )


@pytest.fixture
def python_sigint():
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


@pytest.mark.parametrize("build", [_market_split, _sparse_lp], ids=["mip", "lp"])
def test_ctrl_c_stops_highs_and_raises(python_sigint, build):
    model = build()
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
    t0 = time.perf_counter()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        solve_matrix(model, SolveOptions(time_limit=60, threads=2))
        time.sleep(5)  # the interrupt is raised by now whatever the solve did
    assert time.perf_counter() - t0 < 5  # before: HiGHS ran to its limit (60 s)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_ctrl_c_stops_highs_under_pyomo(python_sigint):
    import pyomo.environ as pyo

    from dlsched.solvers import solve

    a = np.random.default_rng(0).integers(0, 100, size=(5, 40))
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(40), domain=pyo.Binary)
    m.over = pyo.Var(range(5), domain=pyo.NonNegativeReals)
    m.under = pyo.Var(range(5), domain=pyo.NonNegativeReals)
    m.split = pyo.Constraint(
        range(5),
        rule=lambda m, i: (
            sum(int(a[i, j]) * m.x[j] for j in range(40)) + m.under[i] - m.over[i]
            == int(a[i].sum()) // 2
        ),
    )
    m.slack = pyo.Objective(expr=sum(m.over[i] + m.under[i] for i in range(5)))
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
    t0 = time.perf_counter()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        solve(m, "highs", SolveOptions(time_limit=60, threads=2))
        time.sleep(5)
    assert time.perf_counter() - t0 < 5  # before: HiGHS ran to its limit (60 s)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_the_handler_in_place_is_called_after_the_run():
    calls: list[int] = []

    def mine(signum, _frame):
        calls.append(signum)

    old = signal.signal(signal.SIGINT, mine)
    try:
        timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
        t0 = time.perf_counter()
        timer.start()
        got = solve_matrix(_market_split(), SolveOptions(time_limit=60, threads=1))
        assert time.perf_counter() - t0 < 5
        assert calls == [signal.SIGINT]  # once, after HiGHS returned
        assert got.info["highs_status"] == "Interrupted by user"
        assert got.status.value != "optimal"
        assert signal.getsignal(signal.SIGINT) is mine
    finally:
        signal.signal(signal.SIGINT, old)


def test_a_run_without_ctrl_c_is_unchanged(python_sigint):
    # min -x - y s.t. x + 2y <= 4, 3x + y <= 6: optimum at (8/5, 6/5), value -14/5
    model = MatrixModel(
        np.array([-1.0, -1.0]),
        sp.csc_matrix(np.array([[1.0, 2.0], [3.0, 1.0]])),
        np.full(2, -np.inf),
        np.array([4.0, 6.0]),
        np.zeros(2),
        np.full(2, np.inf),
    )
    got = solve_matrix(model, SolveOptions(time_limit=5))
    assert got.objective == pytest.approx(-2.8, abs=1e-9)
    assert got.col_value == pytest.approx([1.6, 1.2], abs=1e-9)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
