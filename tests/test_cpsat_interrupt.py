"""Ctrl-C during a CP-SAT solve (dlsched/solvers/cpsat.py, run_cpsat): the solve stops at once
and KeyboardInterrupt reaches the caller (the command line prints "interrupted", exit 130);
Python's SIGINT handler is in place afterwards."""

from __future__ import annotations

import os
import signal
import threading
import time

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


def test_ctrl_c_stops_the_solve_and_raises(python_sigint):
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    t0 = time.perf_counter()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        run_cpsat(_hard_model(), SolveOptions(time_limit=20, threads=2))
        time.sleep(5)  # the interrupt is raised by now whatever the solve did
    assert time.perf_counter() - t0 < 4  # before: the solve ran on and nothing was raised
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
