"""One SolveOptions for every backend: HiGHS on a matrix model, CP-SAT on a native model and
HiGHS through Pyomo each get the same seed, threads, relative gap and time limit, and a route's
Deadline reaches them only as the time limit of those options (what is left of it)."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest
from fake_clock import FakeClock

from dlsched.solvers import SolveOptions, Status, highs, solve
from dlsched.solvers import cpsat as cpsat_module
from dlsched.solvers.deadline import Deadline
from dlsched.solvers.highs import MatrixModel, solve_matrix

OPTIONS = SolveOptions(time_limit=7.0, seed=3, threads=2, mip_gap=0.01)


def _matrix_mip() -> MatrixModel:
    # min -x0 - x1  s.t.  x0 + x1 <= 1.5, binaries: optimum -1
    return MatrixModel(
        cost=np.array([-1.0, -1.0]),
        matrix=np.array([[1.0, 1.0]]),
        row_lower=np.array([-np.inf]),
        row_upper=np.array([1.5]),
        col_lower=np.zeros(2),
        col_upper=np.ones(2),
        integrality=np.ones(2, dtype=bool),
    )


def test_native_highs_reads_seed_threads_gap_and_limit(monkeypatch):
    seen = {}
    real = highs.run_highs

    def spy(h):  # type: ignore[no-untyped-def]
        for name in ("random_seed", "threads", "mip_rel_gap", "time_limit"):
            seen[name] = h.getOptionValue(name)[1]
        real(h)

    monkeypatch.setattr(highs, "run_highs", spy)
    res = solve_matrix(_matrix_mip(), OPTIONS)
    assert res.status == Status.OPTIMAL and res.objective == pytest.approx(-1.0)
    limit = seen.pop("time_limit")
    assert seen == {"random_seed": 3, "threads": 2, "mip_rel_gap": 0.01}
    # what is left of the 7 s once the model was handed over: it counts against the limit
    assert 6.0 < limit <= 7.0


def _cpsat_model():  # type: ignore[no-untyped-def]
    from ortools.sat.python import cp_model

    m = cp_model.CpModel()
    x = [m.new_bool_var(f"x{i}") for i in range(2)]
    m.add(sum(x) <= 1)
    m.maximize(sum(x))
    return m


def test_native_cpsat_reads_seed_workers_gap_and_limit(monkeypatch):
    from ortools.sat.python import cp_model

    seen = {}

    class Spy(cp_model.CpSolver):  # type: ignore[misc]
        def solve(self, model, callback=None):  # type: ignore[no-untyped-def]
            p = self.parameters
            seen.update(
                seed=p.random_seed,
                workers=p.num_workers,
                gap=p.relative_gap_limit,
                limit=p.max_time_in_seconds,
            )
            return super().solve(model, callback)

    monkeypatch.setattr(cp_model, "CpSolver", Spy)
    run = cpsat_module.run_cpsat(_cpsat_model(), OPTIONS)
    assert run.proven_optimal and run.objective == 1
    assert seen == {"seed": 3, "workers": 2, "gap": 0.01, "limit": 7.0}


def test_pyomo_highs_reads_the_same_options(monkeypatch):
    """A Pyomo model goes to HiGHS as a matrix: the matrix route gets the same options, and
    the absolute gap Pyomo's interface was given."""
    from dlsched.solvers import pyomo_backend

    seen = []
    real = pyomo_backend.solve_matrix

    def record(model, options, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(options)
        return real(model, options, **kwargs)

    monkeypatch.setattr(pyomo_backend, "solve_matrix", record)
    m = pyo.ConcreteModel()
    m.x = pyo.Var([0, 1], domain=pyo.Binary)
    m.c = pyo.Constraint(expr=m.x[0] + m.x[1] <= 1)
    m.o = pyo.Objective(expr=-m.x[0] - m.x[1])
    res = solve(m, "highs", OPTIONS)
    assert res.status == Status.OPTIMAL and res.objective == -1
    [handed] = seen
    assert (handed.seed, handed.threads, handed.mip_gap, handed.time_limit) == (3, 2, 0.01, 7.0)
    assert handed.extra == {"mip_abs_gap": pyomo_backend.ABS_GAP}


def test_a_deadline_reaches_a_solver_as_what_is_left_of_it(monkeypatch):
    clock = FakeClock()
    deadline = Deadline.after(10.0, clock)
    clock.advance(3.0)
    handed = deadline.solve_options(OPTIONS)
    assert handed.time_limit == 7.0
    assert (handed.seed, handed.threads, handed.mip_gap) == (3, 2, 0.01)
    clock.advance(30.0)  # past it: the shortest limit a solver takes, never 0 (no limit)
    assert deadline.solve_options(OPTIONS).time_limit == 0.01
    assert Deadline.after(None, clock).solve_options(OPTIONS).time_limit is None
