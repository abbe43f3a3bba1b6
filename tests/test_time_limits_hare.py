"""Hare's baselines (dlsched/models/hare/baselines.py) honour --time-limit: on 1,000 jobs over
2 GPUs sched-homo took 14-24 s whatever the limit; a baseline cut by its deadline returns no
schedule (status no_solution, details["reason"])."""

from __future__ import annotations

import time

import pytest

from dlsched.models import MethodOptions, run_method
from dlsched.models.hare.baselines import BASELINES, BaselineTimeUp, baseline_outcome
from dlsched.models.hare.check import check_schedule
from dlsched.models.hare.generate import generate
from dlsched.solvers.base import SolveOptions, Status


def within(wall: float, limit: float) -> bool:
    return wall <= limit * 1.5 + 1.5


@pytest.fixture(scope="module")
def large():
    return generate(1000, 2, 0)


@pytest.mark.parametrize("method", ["sched-homo", "srtf"])
def test_a_gang_baseline_keeps_the_time_limit_on_a_thousand_jobs(large, method):
    t0 = time.perf_counter()
    out = run_method(large, method, MethodOptions(SolveOptions(time_limit=2.0)))
    assert within(time.perf_counter() - t0, 2.0)  # checking included
    assert out.status == Status.FEASIBLE


def test_allox_matching_is_killed_at_the_limit(large):
    t0 = time.perf_counter()
    out = baseline_outcome("sched-allox", large, MethodOptions(SolveOptions(time_limit=0.3)))
    assert within(time.perf_counter() - t0, 0.3)
    assert out.status in (Status.NO_SOLUTION, Status.FEASIBLE)
    assert (out.status == Status.NO_SOLUTION) == (out.objective is None)


@pytest.mark.parametrize("name", sorted(BASELINES))
def test_a_baseline_past_its_deadline_returns_no_solution_with_a_reason(name):
    inst = generate(30, 3, 1)
    with pytest.raises(BaselineTimeUp):
        BASELINES[name](inst, time.perf_counter())
    out = baseline_outcome(name, inst, MethodOptions(SolveOptions(time_limit=1e-9)))
    assert out.status == Status.NO_SOLUTION
    assert out.solution is None and out.bound is None
    assert name in out.details["reason"] and "time limit" in out.details["reason"]


@pytest.mark.parametrize("name", sorted(BASELINES))
def test_a_baseline_within_its_limit_is_the_baseline_unlimited(name):
    inst = generate(30, 3, 2)
    out = baseline_outcome(name, inst, MethodOptions(SolveOptions(time_limit=60.0)))
    assert out.status == Status.FEASIBLE
    assert out.objective == pytest.approx(check_schedule(inst, BASELINES[name](inst)).objective)
