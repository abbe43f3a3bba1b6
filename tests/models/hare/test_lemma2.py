"""Lemma 2 of seed 002 fails on ``hare/lemma2-counterexample`` (docs/errata.md V-8): the vertex
of Hare_Sched_RL its description records, and (10) checked by hand on it."""

from __future__ import annotations

import pytest

from dlsched.instances import load
from dlsched.models import MethodOptions, run_method
from dlsched.models.hare.relaxation import solve_relaxation
from dlsched.models.hare.theorems import THEOREMS, lemma2_measure
from dlsched.solvers import Status
from dlsched.solvers.base import SolverSettings
from dlsched.solvers.deadline import Deadline

NAME = "hare/lemma2-counterexample"
#: The vertex the description records: task (job, round, index) -> x^ (every task on g0).
VERTEX = {(0, 0, 0): 1.0, (0, 0, 1): 1.0, (1, 0, 0): 6.4375, (2, 0, 0): 1.5}


def test_relaxation_returns_the_recorded_vertex() -> None:
    inst = load(NAME)
    rel = solve_relaxation(inst, SolverSettings(), Deadline.after(60.0))
    assert rel.status == Status.OPTIMAL and rel.value == pytest.approx(22.4375)
    assert set(rel.x) == set(VERTEX)
    for task, x in VERTEX.items():
        assert rel.x[task] == pytest.approx(x, abs=1e-7), task
        assert rel.y[task] == 0
    train = {t: inst.jobs[t[0]].train_time[0] for t in VERTEX}
    lhs = sum(train[t] * (VERTEX[t] + train[t]) for t in VERTEX)  # (9) on g0, tight
    total = sum(train.values())
    assert lhs == pytest.approx((total**2 + sum(p * p for p in train.values())) / 2) == 58.25
    assert "6.4375" in inst.description and "11/9" in inst.description


def test_the_vertex_violates_10_at_j2() -> None:
    """H = x^ + T^c / 2 = (2, 2, 8.4375, 2.25): pi is j0, j0, j2, j1, and at j2 the prefix
    2 + 2 + 1.5 = 5.5 exceeds 2 H = 4.5."""
    inst = load(NAME)
    rel = solve_relaxation(inst, SolverSettings(), Deadline.after(60.0))
    train = {t: inst.jobs[t[0]].train_time[0] for t in rel.x}
    h = {t: rel.x[t] + train[t] / 2 for t in rel.x}
    order = sorted(h, key=lambda t: (h[t], t))
    assert order == [(0, 0, 0), (0, 0, 1), (2, 0, 0), (1, 0, 0)]
    prefix, broken = 0.0, []
    for t in order:
        prefix += train[t]
        if prefix > 2 * h[t] + 1e-9:
            broken.append((t, prefix, 2 * h[t]))
    assert broken == [((2, 0, 0), pytest.approx(5.5), pytest.approx(4.5))]
    lemma2 = next(th for th in THEOREMS if th.id == "002-lemma2")
    (row,) = lemma2_measure(lemma2, inst, MethodOptions())
    assert row.ratio == pytest.approx(11 / 9) and row.details["task"] == "j2/r0/k0"


def test_algorithm_1_and_the_optimum() -> None:
    inst = load(NAME)
    assert run_method(inst, "hare").objective == pytest.approx(35.0)
    exact = run_method(inst, "exact")
    assert exact.status == Status.OPTIMAL and exact.objective == pytest.approx(27.0)
