"""Placement heuristics honour --time-limit: HAS and JPS stop at the limit and report the best
placement of the categories they finished (status time_limit), or no_solution before any."""

from __future__ import annotations

import math

import pytest

from dlsched.instances import load
from dlsched.models import MethodOptions, run_method
from dlsched.models.placement import heuristics
from dlsched.models.placement.categories import algorithm1
from dlsched.models.placement.evaluate import Evaluator
from dlsched.solvers import SolveOptions, Status

#: 3654 categories: HAS over all of them takes several times the limits used here.
LARGE = "placement/liu2024-s4k30-seed0"
SMALL = "placement/liu2024-s4k12-seed0"


def within(wall: float, limit: float) -> bool:
    return wall <= limit * 1.5 + 1.5


@pytest.mark.parametrize("method", ["has", "has-paper"])
def test_has_stops_at_the_limit_with_the_best_category_it_finished(method):
    inst = load(LARGE)
    out = run_method(inst, method, MethodOptions(SolveOptions(time_limit=0.5)))
    assert out.status == Status.TIME_LIMIT
    assert within(out.wall_time, 0.5)
    done = out.details["categories_examined"]
    assert 0 < done < out.details["categories_total"]
    # the placement is the best of the finished prefix of Algorithm 1's order, run uncut
    variant = "clearing" if method == "has" else "paper"
    cats = list(enumerate(algorithm1(inst.num_workers, inst.num_jobs)))[:done]
    redo = heuristics._run_categories(inst, Evaluator(inst), cats, variant, None)
    assert out.objective == pytest.approx(min(r.avg_jct for r in redo), rel=1e-9)


def test_has_reports_no_solution_when_the_limit_comes_before_any_category():
    out = run_method(load(LARGE), "has", MethodOptions(SolveOptions(time_limit=1e-9)))
    assert out.status == Status.NO_SOLUTION
    assert out.objective is None and out.solution is None
    assert "time limit" in out.details["reason"]


def test_jps_cut_by_the_limit_reports_time_limit():
    out = run_method(
        load(LARGE), "jps", MethodOptions(SolveOptions(time_limit=1.0), {"samples": 10**8})
    )
    assert out.status == Status.TIME_LIMIT
    assert within(out.wall_time, 1.0)
    assert 0 < out.details["categories_examined"] < out.details["samples_drawn"]


def test_jps_that_examines_all_its_samples_is_not_cut():
    out = run_method(load(SMALL), "jps", MethodOptions(SolveOptions(time_limit=60.0)))
    assert out.status == Status.FEASIBLE
    assert out.details["categories_examined"] == out.details["samples_drawn"]


def surjections(s: int, k: int) -> int:
    """Assignments of k workers onto all s jobs, by inclusion-exclusion."""
    return sum((-1) ** i * math.comb(s, i) * (s - i) ** k for i in range(s + 1))


def test_exhaustive_cut_by_the_limit_proves_nothing():
    inst = load(SMALL)  # 4^12 assignments: about 16 s in all
    out = run_method(inst, "exhaustive", MethodOptions(SolveOptions(time_limit=0.5)))
    assert out.status == Status.TIME_LIMIT
    assert within(out.wall_time, 0.5)
    assert out.bound is None
    assert 0 < out.details["assignments_examined"] < surjections(inst.num_jobs, inst.num_workers)


def test_exhaustive_examines_every_surjection_when_it_ends():
    inst = load("placement/liu2024-s3k8-seed1")
    out = run_method(inst, "exhaustive", MethodOptions(SolveOptions(time_limit=60.0)))
    assert out.status == Status.OPTIMAL
    assert out.details["assignments_examined"] == surjections(inst.num_jobs, inst.num_workers)


@pytest.mark.parametrize(("method", "params"), [("has", {}), ("jps", {"samples": 10**8})])
def test_the_categories_of_a_large_instance_are_not_listed_before_the_search(method, params):
    inst = load("placement/liu2024-s5k100-seed0")  # |Psi| = C(99, 4) = 3.8 million
    out = run_method(inst, method, MethodOptions(SolveOptions(time_limit=1.0), params))
    assert out.status == Status.TIME_LIMIT
    assert within(out.wall_time, 1.0)
    assert out.details["categories_examined"] > 0
