"""Elastic methods keep --time-limit. ``exact``: the enumeration of Gamma_j (32 s on 40 jobs over
8 servers) runs under the deadline, a cut run reports the quick incumbent (Smith-order list
schedule) and bound (each job's earliest completion alone), and the packing ILP runs in a child
killed at the limit. ``lp-bound``: each master LP gets what is left, and a cut run keeps the
bound of its last complete round. The algorithms and baselines stop when the deadline passes
(no schedule, status time_limit). Time passes on an injected clock (tests/fake_clock.py), never
by waiting for it."""

from __future__ import annotations

import time

import pytest
from fake_clock import FakeClock, record_time_limits, takes_time

from dlsched.models import MethodOptions, run_method
from dlsched.models.elastic import algorithms, baselines, colgen, methods
from dlsched.models.elastic import enumerate as enumeration
from dlsched.models.elastic.algorithms import (
    alone_bound,
    alone_completion,
    alone_completions,
    smith_list,
)
from dlsched.models.elastic.check import check_schedule
from dlsched.models.elastic.enumerate import EnumerationTimeUp, enumerate_all
from dlsched.models.elastic.generate import generate
from dlsched.models.elastic.methods import _quick
from dlsched.solvers import SolveOptions, Status
from dlsched.solvers.deadline import Deadline


def options(limit: float, clock: FakeClock, params: dict | None = None) -> MethodOptions:
    return MethodOptions(SolveOptions(time_limit=limit), params or {}, clock=clock)


def test_exact_returns_at_the_limit_while_enumerating(monkeypatch):
    inst = generate(40, 8, 1)
    clock = FakeClock()
    takes_time(monkeypatch, clock, 1.0, enumeration, "gamma")  # each Gamma_j takes a second
    out = run_method(inst, "exact", options(2.5, clock))
    assert out.status == Status.TIME_LIMIT
    assert out.details["stopped_in"] == "enumeration"
    assert out.details["jobs_enumerated"] == 3  # the limit passed during the third
    assert out.bound == alone_bound(inst) > 0
    assert "time limit" in out.details["reason"]


def test_the_enumeration_raises_at_its_deadline(monkeypatch):
    inst = generate(40, 8, 1)
    clock = FakeClock()
    takes_time(monkeypatch, clock, 1.0, enumeration, "gamma")
    with pytest.raises(EnumerationTimeUp) as cut:
        enumerate_all(inst, deadline=Deadline.after(2.5, clock))
    assert cut.value.done == 3


def test_a_cut_exact_keeps_the_smith_list_incumbent(monkeypatch):
    inst = generate(20, 8, 0)
    quick = smith_list(inst)
    assert quick is not None
    clock = FakeClock()
    takes_time(monkeypatch, clock, 1.0, enumeration, "gamma")
    out = run_method(inst, "exact", options(1.5, clock))
    assert out.details["stopped_in"] == "enumeration"
    assert out.objective == check_schedule(inst, quick).objective
    assert out.bound == alone_bound(inst) < out.objective
    assert out.status == Status.TIME_LIMIT
    assert out.details["incumbent"] == "smith-list"


def test_the_quick_stage_keeps_the_deadline(monkeypatch):
    inst = generate(40, 8, 1)
    passed = Deadline.after(0.5, FakeClock(step=1.0))  # passed at the first look
    assert _quick(inst, passed) == (0.0, None)  # nothing reached: no job counted
    full = alone_completions(inst)
    assert smith_list(inst, full, deadline=passed) is None  # placed none in time
    clock = FakeClock()
    takes_time(monkeypatch, clock, 1.0, algorithms, "alone_completion")
    part = alone_completions(inst, Deadline.after(4.5, clock))
    assert part == full[:5]  # a prefix of the jobs: those reached by the deadline
    assert alone_bound(inst, part) <= alone_bound(inst)


def test_a_run_cut_in_its_quick_stage_has_a_partial_bound_and_no_incumbent(monkeypatch):
    big = generate(200, 16, 0)
    clock = FakeClock()
    takes_time(monkeypatch, clock, 0.01, algorithms, "alone_completion")
    out = run_method(big, "exact", options(0.5, clock))
    assert out.status == Status.TIME_LIMIT and out.objective is None
    assert out.details["stopped_in"] == "enumeration"
    assert 0 < out.bound < alone_bound(big)


def _stuck(*args):  # type: ignore[no-untyped-def]
    time.sleep(60)


def test_exact_kills_a_packing_ilp_past_the_limit_and_keeps_the_quick_incumbent(monkeypatch):
    inst = generate(5, 3, 1)
    monkeypatch.setattr(methods, "_solve_packing", _stuck)
    out = run_method(inst, "exact", MethodOptions(SolveOptions(time_limit=0.5)))
    assert out.status == Status.TIME_LIMIT
    assert out.details["stopped_in"] == "building the packing ILP"
    assert out.details["incumbent"] == "smith-list"
    assert out.objective == check_schedule(inst, smith_list(inst)).objective
    assert out.bound == alone_bound(inst)


def test_lp_bound_hands_each_master_what_is_left_and_keeps_its_last_round(monkeypatch):
    inst = generate(30, 10, 0, horizon=50)
    full = run_method(inst, "lp-bound", MethodOptions(SolveOptions(time_limit=None)))
    assert full.details["converged"] and full.details["iterations"] > 2
    clock = FakeClock()
    handed = record_time_limits(monkeypatch, colgen, "solve_matrix")
    takes_time(monkeypatch, clock, 1.0, colgen, "lagrangian_round")  # a pricing round: 1 s
    out = run_method(inst, "lp-bound", options(2.5, clock))
    assert handed == [1.5, 0.5]  # after the first round, then the second
    assert out.status == Status.TIME_LIMIT
    assert out.details["iterations"] == 2
    # the best bound of the complete rounds (the first, at zero prices, is not in the history)
    assert max(b for _, b in out.details["history"]) <= out.bound <= full.bound


@pytest.mark.parametrize("method", ["a-dual", "a-online"])
def test_an_algorithm_cut_by_the_limit_returns_no_schedule(monkeypatch, method):
    inst = generate(30, 10, 0, horizon=50)
    clock = FakeClock()
    takes_time(monkeypatch, clock, 1.0, algorithms, "a_maxweight")  # a round of A_maxweight
    out = run_method(inst, method, options(1.5, clock, {"alpha": 4}))
    assert out.status == Status.TIME_LIMIT and out.solution is None
    assert out.details["hit_limit"] and out.details["time_limit"] == 1.5
    assert "time limit of 1.5 s reached" in out.details["reason"]


@pytest.mark.parametrize("method", ["fifo", "drf", "tiresias", "antman"])
def test_a_baseline_cut_by_the_limit_returns_no_schedule(monkeypatch, method):
    inst = generate(30, 10, 0, horizon=50)
    whole = run_method(inst, method)
    assert whole.status == Status.FEASIBLE
    clock = FakeClock()
    takes_time(monkeypatch, clock, 1.0, baselines.ListPolicy, "decide")  # a decision: 1 s
    out = run_method(inst, method, options(2.5, clock))
    assert out.status == Status.TIME_LIMIT and out.solution is None
    assert out.details["hit_limit"]
    assert f"of {inst.num_jobs} jobs" in out.details["reason"]


@pytest.mark.parametrize("seed", range(6))
def test_alone_completion_is_the_least_completion_in_gamma(seed):
    inst = generate(4, 2, seed)
    for g in enumerate_all(inst):  # brute force: every undominated configuration at arrival
        least = min(inst.jobs[g.job].arrival + c.duration for c in g.configs)
        assert alone_completion(inst, g.job) == least


def test_the_alone_bound_and_smith_list_bracket_the_optimum():
    inst = generate(5, 3, 1)
    out = run_method(inst, "exact", MethodOptions(SolveOptions(time_limit=60.0)))
    assert out.status == Status.OPTIMAL
    assert alone_bound(inst) <= out.objective
    quick = smith_list(inst)
    assert quick is not None
    assert check_schedule(inst, quick).objective >= out.objective
