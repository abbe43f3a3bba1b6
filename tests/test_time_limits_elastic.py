"""Elastic ``exact`` honours --time-limit: the enumeration of Gamma_j (32 s on 40 jobs over 8
servers) runs under the deadline, and a cut run reports the quick incumbent (Smith-order list
schedule) and bound (each job's earliest completion alone) it holds."""

from __future__ import annotations

import time

import pytest

from dlsched.models import MethodOptions, run_method
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


def within(wall: float, limit: float) -> bool:
    return wall <= limit * 1.5 + 1.5


def test_exact_returns_at_the_limit_while_enumerating():
    inst = generate(40, 8, 1)
    t0 = time.perf_counter()
    out = run_method(inst, "exact", MethodOptions(SolveOptions(time_limit=1.0)))
    assert within(time.perf_counter() - t0, 1.0)
    assert out.status == Status.TIME_LIMIT
    assert out.details["stopped_in"] == "enumeration"
    assert out.details["jobs_enumerated"] < inst.num_jobs
    assert out.bound is not None and out.bound > 0
    assert "time limit" in out.details["reason"]


def test_the_enumeration_raises_at_its_deadline():
    inst = generate(40, 8, 1)
    with pytest.raises(EnumerationTimeUp) as cut:
        enumerate_all(inst, deadline=time.perf_counter() + 0.2)
    assert cut.value.done < inst.num_jobs


def test_a_cut_exact_keeps_the_smith_list_incumbent():
    # the quick stage takes milliseconds per job; the enumeration of 20 jobs, seconds
    inst = generate(20, 8, 0)
    quick = smith_list(inst)
    assert quick is not None
    t0 = time.perf_counter()
    out = run_method(inst, "exact", MethodOptions(SolveOptions(time_limit=1.0)))
    assert within(time.perf_counter() - t0, 1.0)
    assert out.details["stopped_in"] == "enumeration"
    assert out.objective == check_schedule(inst, quick).objective
    assert out.bound == alone_bound(inst) < out.objective
    assert out.status == Status.TIME_LIMIT
    assert out.details["incumbent"] == "smith-list"


def test_the_quick_stage_keeps_the_deadline():
    inst = generate(40, 8, 1)
    assert _quick(inst, time.perf_counter()) == (0.0, None)  # nothing reached: no job counted
    full = alone_completions(inst)
    part = alone_completions(inst, time.perf_counter() + 0.01)
    assert part == full[: len(part)]  # a prefix of the jobs
    assert alone_bound(inst, part) <= alone_bound(inst)
    assert smith_list(inst, full, deadline=time.perf_counter()) is None  # placed none in time
    # a run on 200 jobs cut at 0.01 s: the quick stage (about 0.3 s in all here) stops part way
    # instead of running on past the limit with every job
    big = generate(200, 16, 0)
    t0 = time.perf_counter()
    out = run_method(big, "exact", MethodOptions(SolveOptions(time_limit=0.01)))
    assert within(time.perf_counter() - t0, 0.01)
    assert out.status == Status.TIME_LIMIT and out.objective is None
    assert out.bound is not None and 0 <= out.bound < alone_bound(big)


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
