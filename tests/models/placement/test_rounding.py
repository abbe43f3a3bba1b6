"""P1's continuous relaxation rounded into a placement (seed 000, TPDS 2024): the relaxation is
fractional and below the optimum, the roundings keep every group's workers and serve every job,
their placements pass the checker above the certified optimum, and the relaxation keeps the
method's time limit."""

from __future__ import annotations

import numpy as np
import pytest
from fake_clock import FakeClock, forked, record_time_limits, takes_time
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import placement_brute_force as brute_force
from strategies import placement_instances

from dlsched.instances import load
from dlsched.models import MethodOptions, run_method
from dlsched.models.placement.check import check_placement
from dlsched.models.placement.heuristics import optimus_lb
from dlsched.models.placement.methods import METHODS
from dlsched.models.placement.rounding import (
    ROUNDINGS,
    fractional_counts,
    largest_remainder,
    repair,
    round_counts,
    solve_relaxation,
    systematic,
)
from dlsched.models.placement.solution import Placement
from dlsched.solvers import SolveOptions, SolverSettings, Status
from dlsched.solvers.deadline import Deadline, grace

SMALL = [
    "placement/liu2024-motivating",
    "placement/liu2024-s3k8-seed1",
    "placement/liu2024-s4k12-seed0",
]


def _relaxation(inst, limit=30.0):
    return solve_relaxation(inst, SolverSettings(), Deadline.after(limit))


@pytest.mark.parametrize("name", SMALL)
def test_roundings_lie_above_the_certified_optimum_and_it_above_the_relaxation(name):
    inst = load(name)
    exact = run_method(inst, "exact", MethodOptions(SolveOptions(time_limit=30)))
    assert exact.status == Status.OPTIMAL
    for method in ROUNDINGS:
        out = run_method(inst, method, MethodOptions(SolveOptions(time_limit=30, seed=2)))
        lp = out.details["lp_value"]
        assert out.details["lp_ended"] == "converged"
        assert lp <= exact.objective + 1e-6 <= out.objective + 1e-6
        assert out.bound == pytest.approx(lp) and out.status in (Status.FEASIBLE, Status.OPTIMAL)
        again = check_placement(inst, out.solution)
        assert again.avg_jct == pytest.approx(out.objective)


def test_the_relaxation_is_fractional_on_the_motivating_example():
    """Two jobs, two groups of two workers: the relaxation splits a worker between the jobs
    (2 of the 4 counts fractional) and lies below the optimum, which exhaustion proves."""
    inst = load("placement/liu2024-motivating")
    relax = _relaxation(inst)
    assert relax.ended == "converged" and fractional_counts(relax.counts) == 2
    assert relax.counts.sum(axis=0) == pytest.approx(relax.groups.cap)
    best = brute_force(inst)
    assert relax.value < best - 1.0  # 10,578.5 against 10,592.0


@settings(max_examples=20, deadline=None)
@given(placement_instances())
def test_roundings_pass_the_checker_above_the_brute_force_optimum(inst):
    relax = _relaxation(inst)
    best = brute_force(inst)
    assert relax.value <= best * (1 + 1e-7) + 1e-6
    for how in ROUNDINGS:
        a = round_counts(inst, relax, how, seed=1)
        assert check_placement(inst, Placement(a)).avg_jct >= best * (1 - 1e-9)


@st.composite
def fractional(draw):
    """Relaxed counts n (jobs x groups): each group's cap split at random over the jobs."""
    caps = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    jobs = draw(st.integers(1, sum(caps)))
    weights = st.lists(st.floats(0, 1), min_size=jobs, max_size=jobs)
    cols = []
    for cap in caps:
        w = np.array(draw(weights)) + 1e-3
        cols.append(cap * w / w.sum())
    return np.array(cols).T, caps


@settings(max_examples=200, deadline=None)
@given(fractional(), st.integers(0, 99))
def test_roundings_keep_every_group_and_stay_next_to_the_relaxed_counts(case, seed):
    n, caps = case
    for counts in (largest_remainder(n, caps), systematic(n, caps, np.random.default_rng(seed))):
        assert counts.min() >= 0 and tuple(counts.sum(axis=0)) == caps
        assert np.abs(counts - n).max() < 1 + 1e-9  # floor or ceiling of each n_ig
        fixed = repair(counts, n)
        assert tuple(fixed.sum(axis=0)) == caps and fixed.sum(axis=1).min() >= 1
        moved = np.abs(fixed - counts).sum()
        assert moved == 2 * int((counts.sum(axis=1) == 0).sum())  # one worker per empty job


def test_integral_counts_round_to_themselves():
    n = np.array([[2.0, 0.0, 1.0], [0.0, 3.0, 0.0], [1.0, 0.0, 1.0]])
    caps = (3, 3, 2)
    assert (largest_remainder(n, caps) == n).all()
    for seed in range(5):
        assert (systematic(n, caps, np.random.default_rng(seed)) == n).all()


def test_systematic_sampling_keeps_the_relaxed_counts_on_average():
    n = np.array([[0.3, 1.5], [1.2, 0.25], [0.5, 0.25]])
    caps = (2, 2)
    rng = np.random.default_rng(0)
    mean = np.mean([systematic(n, caps, rng) for _ in range(4000)], axis=0)
    assert mean == pytest.approx(n, abs=0.03)


def test_the_random_rounding_is_the_same_for_the_same_seed():
    inst = load("placement/liu2024-s4k12-seed0")
    runs = [
        run_method(inst, "lp-random", MethodOptions(SolveOptions(time_limit=30, seed=s)))
        for s in (5, 5)
    ]
    assert runs[0].solution == runs[1].solution and runs[0].details["seed"] == 5


def test_the_roundings_are_registered_and_lazy():
    for name in ROUNDINGS:
        m = METHODS[name]
        assert m.run == f"dlsched.models.placement.rounding:run_{name.replace('-', '_')}"
        assert "P1 (8)/(14)" in m.rounds and m.guarantee == "none" and not m.exact


def test_each_lp_is_handed_what_is_left_and_the_loop_stops_at_the_limit(monkeypatch):
    # 3 s per LP on a fake clock against a 10 s limit: the LPs get 10, 7, 4 and 1 s, and the
    # loop stops before a fifth (the motivating example takes five to converge)
    from dlsched import solvers

    inst = load("placement/liu2024-motivating")
    clock = FakeClock()
    handed = record_time_limits(monkeypatch, solvers, "solve")
    takes_time(monkeypatch, clock, 3.0, solvers, "solve")
    relax = solve_relaxation(inst, SolverSettings(), Deadline.after(10.0, clock))
    assert handed == pytest.approx([10.0, 7.0, 4.0, 1.0])
    assert relax.ended == "time_limit" and relax.lps == 4 and relax.value is not None


def test_the_relaxation_is_forked_a_grace_short_and_a_killed_one_gives_optimus_lb(monkeypatch):
    inst = load("placement/liu2024-s3k8-seed1")
    handed = forked(monkeypatch, kill=True)
    clock = FakeClock()
    out = run_method(inst, "lp-round", MethodOptions(SolveOptions(time_limit=10.0), clock=clock))
    child = 10.0 - 2 * grace(10.0)  # for_fork: two graces before the limit
    assert handed == [(pytest.approx(child + grace(10.0)), pytest.approx(child))]
    assert out.status == Status.TIME_LIMIT and out.bound is None
    assert out.solution == Placement(optimus_lb(inst))
    assert out.details["lp_ended"] == "killed at the time limit" and out.details["lp_value"] is None
