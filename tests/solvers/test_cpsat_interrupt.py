"""Ctrl-C during a CP-SAT solve (dlsched/solvers/cpsat.py, run_cpsat): the solve stops at once
and KeyboardInterrupt reaches the caller (the command line prints "interrupted", exit 130);
Python's SIGINT handler is in place afterwards."""

from __future__ import annotations

import os
import signal
import threading

import pytest
from ortools.sat.python import cp_model

from dlsched.solvers.base import SolveOptions
from dlsched.solvers.cpsat import run_cpsat


def _hard_model() -> cp_model.CpModel:
    m = cp_model.CpModel()
    xs = [m.new_int_var(0, 100, f"x{i}") for i in range(80)]
    for a, b in zip(xs, xs[1:], strict=False):
        m.add(a != b)
    m.add_all_different(xs[:60])
    m.maximize(sum((i % 7) * x for i, x in enumerate(xs)))
    return m


@pytest.fixture
def python_sigint():
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


def _summary(lines: list[str], key: str) -> str:
    """A field of CP-SAT's own response summary, the last lines of its log."""
    text = "\n".join(lines).splitlines()
    return next(x.split(":", 1)[1].strip() for x in reversed(text) if x.startswith(key + ":"))


def test_ctrl_c_stops_the_solve_and_raises(python_sigint, monkeypatch):
    """Ctrl-C half a second into the search: CP-SAT stops by its own report (status not
    optimal, its own clock far from the 20 s limit) and KeyboardInterrupt reaches the caller."""
    log: list[str] = []

    class Interrupted(cp_model.CpSolver):  # type: ignore[misc]
        def solve(self, model, callback=None):  # type: ignore[no-untyped-def]
            self.parameters.log_search_progress = True
            self.parameters.log_to_stdout = False
            self.log_callback = log.append
            timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
            timer.start()  # once the search starts: the signal cannot land before it
            try:
                return super().solve(model, callback)
            finally:
                timer.join()

    monkeypatch.setattr(cp_model, "CpSolver", Interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_cpsat(_hard_model(), SolveOptions(time_limit=20, threads=2))
    # before: the solve ran on to its limit and nothing was raised
    assert _summary(log, "status") in ("FEASIBLE", "UNKNOWN")
    assert float(_summary(log, "walltime")) < 20
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_solve_without_ctrl_c_is_unchanged(python_sigint):
    m = cp_model.CpModel()
    x = m.new_int_var(0, 10, "x")
    m.add(2 * x <= 15)
    m.maximize(x)
    run = run_cpsat(m, SolveOptions(time_limit=5))
    assert run.proven_optimal and run.objective == 7
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert signal.set_wakeup_fd(-1) == -1  # the wakeup fd was given back
