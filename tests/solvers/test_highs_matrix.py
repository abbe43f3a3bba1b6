"""Matrix models solved by HiGHS (dlsched.solvers.highs): primal and dual values, MIP bounds,
time limits, and the weak-duality bound that holds for any row multipliers."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from fake_clock import FakeClock
from hypothesis import given
from hypothesis import strategies as st
from scipy.optimize import linprog

from dlsched.errors import OptionError
from dlsched.solvers import highs
from dlsched.solvers.base import SolveOptions, SolverSettings, Status
from dlsched.solvers.deadline import Deadline
from dlsched.solvers.highs import (
    MatrixModel,
    RowBlock,
    safe_dual_bound,
    segment_offsets,
    solve_matrix,
    stack_rows,
)

INF = math.inf


def small_lp(offset: float = 0.0) -> MatrixModel:
    """min x + 2y + 3z + 5u + offset s.t. x + y + z + u >= 6, x <= 2, y - z = 1, all in [0, 10].

    Optimum x = 2, y = 2.5, z = 1.5, u = 0 (11.5); duals 2.5, -1.5, -0.5 (x, y, z basic:
    1 = y0 + y1, 2 = y0 + y2, 3 = y0 - y2), reduced cost of u 5 - 2.5 = 2.5."""
    a = np.array([[1.0, 1.0, 1.0, 1.0], [1.0, 0.0, 0.0, 0.0], [0.0, 1.0, -1.0, 0.0]])
    return MatrixModel(
        cost=np.array([1.0, 2.0, 3.0, 5.0]),
        matrix=sp.csc_matrix(a),
        row_lower=np.array([6.0, -INF, 1.0]),
        row_upper=np.array([INF, 2.0, 1.0]),
        col_lower=np.zeros(4),
        col_upper=np.full(4, 10.0),
        offset=offset,
    )


def test_lp_optimum_and_duals_match_linprog() -> None:
    model = small_lp(offset=1.0)
    res = solve_matrix(model, SolveOptions())
    assert res.status == Status.OPTIMAL
    assert res.objective == pytest.approx(12.5, abs=1e-9)
    assert res.col_value == pytest.approx([2.0, 2.5, 1.5, 0.0], abs=1e-9)
    assert res.row_dual == pytest.approx([2.5, -1.5, -0.5], abs=1e-9)
    assert res.col_dual == pytest.approx([0.0, 0.0, 0.0, 2.5], abs=1e-9)
    assert res.has_solution and res.values["x[1]"] == pytest.approx(2.5)
    # the same LP for linprog: >= rows negated into A_ub x <= b_ub
    a = model.matrix.toarray()
    ref = linprog(
        model.cost,
        A_ub=np.vstack([-a[0], a[1]]),
        b_ub=[-6.0, 2.0],
        A_eq=a[2:],
        b_eq=[1.0],
        bounds=[(0, 10)] * 4,
        method="highs",
    )
    assert ref.status == 0 and ref.fun + 1.0 == pytest.approx(res.objective, abs=1e-9)
    marginals = [-ref.ineqlin.marginals[0], ref.ineqlin.marginals[1], ref.eqlin.marginals[0]]
    assert res.row_dual == pytest.approx(marginals, abs=1e-9)
    assert res.col_dual == pytest.approx(ref.lower.marginals + ref.upper.marginals, abs=1e-9)
    # the LP's bound is the certified one, and it closes the gap
    assert res.bound == safe_dual_bound(model, res.row_dual)
    assert res.bound <= 12.5 and res.bound == pytest.approx(12.5, abs=1e-9)


def knapsack_mip(start_ok: bool = True) -> MatrixModel:
    """max 5a + 4b + 3c s.t. 2a + 3b + c <= 5, 4a + b + 2c <= 11, 3a + 4b + 2c <= 8, integers
    in [0, 10]: optimum 13 at (2, 0, 1) (as a minimisation: -13)."""
    a = np.array([[2.0, 3.0, 1.0], [4.0, 1.0, 2.0], [3.0, 4.0, 2.0]])
    return MatrixModel(
        cost=np.array([-5.0, -4.0, -3.0]),
        matrix=sp.csc_matrix(a),
        row_lower=np.full(3, -INF),
        row_upper=np.array([5.0, 11.0, 8.0]),
        col_lower=np.zeros(3),
        col_upper=np.full(3, 10.0),
        integrality=np.ones(3, dtype=bool),
    )


def test_mip_optimum_bound_and_start() -> None:
    model = knapsack_mip()
    for start in (None, [1.0, 0.0, 0.0]):
        res = solve_matrix(model, SolveOptions(), start=start)
        assert res.status == Status.OPTIMAL
        assert res.objective == pytest.approx(-13.0, abs=1e-9)
        assert res.bound == pytest.approx(-13.0, abs=1e-9)  # HiGHS's mip_dual_bound
        assert res.col_value == pytest.approx([2.0, 0.0, 1.0], abs=1e-9)
        assert res.row_dual is None and res.col_dual is None
        assert res.info["claimed_optimal"] and not res.info["hit_limit"]


def market_split(m: int = 4, seed: int = 1) -> MatrixModel:
    """Cornuejols-Dawande market split: sum_j a_ij x_j + s+_i - s-_i = floor(sum_j a_ij / 2),
    x binary, min sum s; notoriously hard for branch and bound (m = 4: minutes in HiGHS)."""
    rng = np.random.default_rng(seed)
    n = 10 * (m - 1)
    a = rng.integers(0, 100, size=(m, n)).astype(float)
    rhs = np.floor(a.sum(axis=1) / 2)
    k = n + 2 * m
    return MatrixModel(
        cost=np.r_[np.zeros(n), np.ones(2 * m)],
        matrix=sp.csc_matrix(np.hstack([a, np.eye(m), -np.eye(m)])),
        row_lower=rhs,
        row_upper=rhs,
        col_lower=np.zeros(k),
        col_upper=np.r_[np.ones(n), np.full(2 * m, INF)],
        integrality=np.r_[np.ones(n, dtype=bool), np.zeros(2 * m, dtype=bool)],
    )


@pytest.mark.parametrize("how", ["time_limit", "deadline"])
def test_time_limit_is_honoured_on_a_hard_mip(monkeypatch, how: str) -> None:
    """HiGHS is handed the options' limit (or what is left of a deadline: 1 s of 5 after 4 s
    on the clock), less the time handing it the model took, and stops there by its own
    report: model status time limit."""
    handed = []
    real = highs.run_highs

    def spy(h):  # type: ignore[no-untyped-def]
        handed.append(h.getOptionValue("time_limit")[1])
        real(h)

    monkeypatch.setattr(highs, "run_highs", spy)
    model = market_split()
    if how == "time_limit":
        res = solve_matrix(model, SolveOptions(time_limit=1.0))
    else:
        clock = FakeClock()
        deadline = Deadline.after(5.0, clock)
        clock.advance(4.0)
        res = solve_matrix(model, deadline.solve_options(SolverSettings()))
    assert len(handed) == 1 and 0.9 < handed[0] <= 1.0  # less what handing the model took
    assert res.info["highs_status"] == "Time limit reached"
    assert res.status == Status.TIME_LIMIT and res.info["hit_limit"]
    assert res.bound is None or res.objective is None or res.bound <= res.objective


def test_rejected_option_raises() -> None:
    with pytest.raises(OptionError, match="no_such_option"):
        solve_matrix(small_lp(), SolveOptions(extra={"no_such_option": 1}))


def test_row_blocks_stack_into_one_matrix() -> None:
    assert segment_offsets([2, 0, 3]).tolist() == [0, 1, 0, 1, 2]
    first = RowBlock.of([0, 0, 1], [0, 1, 1], [1.0, 2.0, 3.0], 0.0, 1.0, 2)
    second = RowBlock.of([0], [2], [4.0], -INF, 5.0, 1)
    matrix, lower, upper = stack_rows([first, second], 3)
    assert matrix.toarray().tolist() == [[1, 2, 0], [0, 3, 0], [0, 0, 4]]
    assert lower.tolist() == [0.0, 0.0, -INF] and upper.tolist() == [1.0, 1.0, 5.0]


# --- safe_dual_bound ------------------------------------------------------------------------


def random_lp(seed: int) -> MatrixModel:
    """A feasible LP with bounded columns and rows of every kind (>=, <=, ranged, equality)."""
    rng = np.random.default_rng(seed)
    m, n = int(rng.integers(2, 7)), int(rng.integers(2, 9))
    a = rng.integers(-5, 6, size=(m, n)) * (rng.random((m, n)) < 0.7)
    lo, hi = -rng.integers(0, 5, n).astype(float), rng.integers(1, 6, n).astype(float)
    ax = a @ rng.uniform(lo, hi)  # a feasible point's activities
    kind = rng.integers(0, 4, m)  # 0: >=, 1: <=, 2: ranged, 3: equality
    row_lower = np.where(kind == 1, -INF, np.where(kind == 3, ax, ax - rng.random(m)))
    row_upper = np.where(kind == 0, INF, np.where(kind == 3, ax, ax + rng.random(m)))
    return MatrixModel(
        rng.normal(size=n), sp.csc_matrix(a.astype(float)), row_lower, row_upper, lo, hi
    )


@given(
    st.integers(0, 10**6),
    st.lists(st.floats(-10, 10, allow_nan=False), min_size=6, max_size=6),
)
def test_safe_dual_bound_never_exceeds_the_optimum(seed: int, noise: list[float]) -> None:
    model = random_lp(seed)
    res = solve_matrix(model, SolveOptions())
    assert res.status == Status.OPTIMAL and res.objective is not None
    opt = res.objective
    tol = 1e-9 * max(1.0, abs(opt))
    assert res.row_dual is not None
    # at the optimal duals the bound is the optimum
    assert abs(safe_dual_bound(model, res.row_dual) - opt) <= tol
    # any other multipliers (wrong signs included) give a bound below it
    y = res.row_dual + np.resize(np.asarray(noise), model.num_rows)
    assert safe_dual_bound(model, y) <= opt + tol
    assert safe_dual_bound(model, np.zeros(model.num_rows)) <= opt + tol


def test_safe_dual_bound_conventions() -> None:
    model = small_lp()
    # a multiplier of the wrong sign for an infinite side counts as 0
    y = np.array([2.5, 7.0, -0.5])  # row 1 has no lower side: 7 -> 0
    assert safe_dual_bound(model, y) == pytest.approx(safe_dual_bound(model, [2.5, 0.0, -0.5]))
    assert safe_dual_bound(model, y) <= 11.5
    # an infinite column bound with a reduced cost of the wrong sign: no certified bound
    free = MatrixModel(
        model.cost,
        model.matrix,
        model.row_lower,
        model.row_upper,
        model.col_lower,
        np.r_[10.0, INF, 10.0, 10.0],
    )
    assert safe_dual_bound(free, [2.5, -1.5, -0.5]) == -INF  # y's reduced cost 0 +- rounding
    assert safe_dual_bound(free, [1.0, 0.0, 0.0]) <= 11.5  # reduced cost 1 > 0: finite
    assert math.isfinite(safe_dual_bound(free, [1.0, 0.0, 0.0]))
