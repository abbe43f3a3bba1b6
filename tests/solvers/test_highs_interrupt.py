"""Ctrl-C during an in-process HiGHS run (dlsched/solvers/highs.py, run_highs; a Pyomo model too,
solved as a matrix through it): HiGHS stops at
its next interrupt callback and the handler in place before is called after it (Python's raises
KeyboardInterrupt: the command line prints "interrupted", exit 130); that handler is back in
place afterwards. Before, a Ctrl-C waited for HiGHS's own time limit."""

from __future__ import annotations

import os
import signal
import threading

import highspy
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


@pytest.fixture
def ctrl_c_in_run(monkeypatch):
    """Every HiGHS run gets a Ctrl-C one second after it starts (so the signal cannot land
    before HiGHS runs, whatever the machine's load); HiGHS's own report of each run (model
    status, run time on its clock, time limit) is kept."""
    reports: list[dict] = []
    real = highspy.Highs.run

    def run(h):  # type: ignore[no-untyped-def]
        timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        try:
            return real(h)
        finally:
            timer.join()
            reports.append(
                {
                    "status": h.modelStatusToString(h.getModelStatus()),
                    "seconds": h.getRunTime(),
                    "limit": h.getOptionValue("time_limit")[1],
                }
            )

    monkeypatch.setattr(highspy.Highs, "run", run)
    return reports


def _stopped_by_ctrl_c(reports: list[dict], status: str = "Interrupted by user") -> None:
    """One run, stopped by the interrupt by HiGHS's own report (its status, and its clock far
    from the limit): before, it ran to its limit. HiGHS is handed what is left of the 60 s
    once the model is passed in, so a little under 60."""
    assert len(reports) == 1
    assert reports[0]["status"] == status
    assert 55 < reports[0]["limit"] <= 60
    assert reports[0]["seconds"] < reports[0]["limit"]


@pytest.mark.parametrize("build", [_market_split, _sparse_lp], ids=["mip", "lp"])
def test_ctrl_c_stops_highs_and_raises(python_sigint, ctrl_c_in_run, build):
    with pytest.raises(KeyboardInterrupt):
        solve_matrix(build(), SolveOptions(time_limit=60, threads=2))
    _stopped_by_ctrl_c(ctrl_c_in_run)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_ctrl_c_stops_highs_under_pyomo(python_sigint, ctrl_c_in_run):
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
    with pytest.raises(KeyboardInterrupt):
        solve(m, "highs", SolveOptions(time_limit=60, threads=2))
    # a Pyomo model is solved as a matrix: the same stop as solve_matrix's
    _stopped_by_ctrl_c(ctrl_c_in_run)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_the_handler_in_place_is_called_after_the_run(ctrl_c_in_run):
    calls: list[int] = []

    def mine(signum, _frame):
        calls.append(signum)

    old = signal.signal(signal.SIGINT, mine)
    try:
        got = solve_matrix(_market_split(), SolveOptions(time_limit=60, threads=1))
        assert calls == [signal.SIGINT]  # once, after HiGHS returned
        assert got.info["highs_status"] == "Interrupted by user"
        assert got.status.value != "optimal"
        _stopped_by_ctrl_c(ctrl_c_in_run)
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
