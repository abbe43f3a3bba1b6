"""Placement family (seed 000): catalogue of known answers, properties, theorem checks."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from strategies import placement_instances

from dlsched.errors import InfeasibleSolutionError, OptionError
from dlsched.instances import load
from dlsched.models import MethodOptions, run_method
from dlsched.models.placement import categories, heuristics, num_categories, rank, unrank
from dlsched.models.placement.check import check_placement
from dlsched.models.placement.exact import solve_exact, solve_p3
from dlsched.models.placement.metrics import fairness_degree, heterogeneity_degree
from dlsched.models.placement.solution import Placement
from dlsched.solvers import SolveOptions, Status

MOTIVATING = "placement/liu2024-motivating"


def brute_force(inst) -> float:
    """Independent optimum: the checker on every assignment of workers to jobs."""
    best = math.inf
    for a in itertools.product(range(inst.num_jobs), repeat=inst.num_workers):
        if len(set(a)) == inst.num_jobs:
            best = min(best, check_placement(inst, Placement(a)).avg_jct)
    return best


# --- catalogue: the paper's own numbers --------------------------------------------------


@pytest.fixture(scope="module")
def motivating():
    return load(MOTIVATING)


@pytest.mark.parametrize(
    ("category", "jct", "resnet", "vgg", "throughputs"),
    [  # Table II
        ((3, 1), 11225.8, ["T4", "T4", "V100"], ["V100"], (1194, 1754)),
        ((2, 2), 19607.1, ["T4", "T4"], ["V100", "V100"], (550, 3508)),
        ((1, 3), 37502.1, ["T4"], ["T4", "V100", "V100"], (275, 4392)),
    ],
)
def test_table2_has_per_category(motivating, category, jct, resnet, vgg, throughputs) -> None:
    out = run_method(motivating, "has", MethodOptions(params={"category": category}))
    assert round(out.objective, 1) == jct
    ev = out.evaluation
    assert tuple(round(v) for v in ev.throughput) == throughputs
    gpus = [[motivating.workers[k].gpu for k in out.solution.workers_of(i)] for i in range(2)]
    assert sorted(gpus[0]) == resnet and sorted(gpus[1]) == vgg


def test_table2_optimum_las_and_has(motivating) -> None:
    for backend in ("scip", "highs"):
        ex = run_method(motivating, "exact", MethodOptions(params={"backend": backend}))
        assert ex.status == Status.OPTIMAL
        assert round(ex.objective) == 10592  # Table II "Optimal"
        assert ex.evaluation.throughput == (1288.0, 1768.0)
    las = run_method(motivating, "las")
    assert round(las.objective, 1) == 12776.8  # Section IV-A
    assert round(100 * (las.objective / ex.objective - 1), 1) == 20.6  # "loss of 20.6%"
    has = run_method(motivating, "has")
    assert round(has.objective, 1) == 11225.8  # HAS picks {3, 1}
    assert round(100 * (has.objective / ex.objective - 1), 1) == 6.0  # "only 6.0%"
    assert run_method(motivating, "exhaustive").objective == pytest.approx(ex.objective)


def test_algorithm1_order_matches_the_papers_ids() -> None:
    assert categories(5, 3) == [(3, 1, 1), (2, 2, 1), (1, 3, 1), (2, 1, 2), (1, 2, 2), (1, 1, 3)]
    psi = categories(15, 4)
    assert len(psi) == 364 == num_categories(15, 4)
    assert psi[17] == (6, 6, 2, 1)  # ID 18
    assert psi[158] == (5, 5, 2, 3)  # ID 159
    assert psi[93] == (6, 5, 2, 2)  # ID 94
    assert psi[0] == (12, 1, 1, 1) and psi[-1] == (1, 1, 1, 12)
    assert num_categories(30, 4) == 3654


@given(k=..., s=...)
@settings(max_examples=30)
def test_unrank_inverts_algorithm1(k: int, s: int) -> None:
    k, s = 1 + k % 11, 1 + s % 5
    if k < s:
        return
    psi = categories(k, s)
    assert len(set(psi)) == len(psi) == num_categories(k, s)
    for j, c in enumerate(psi):
        assert unrank(j, k, s) == c and rank(c, k) == j
        assert sum(c) == k and min(c) >= 1


def test_literal_has_does_not_terminate_on_the_papers_example(motivating) -> None:
    """Printed tie rule: both jobs chase the cheaper of two identical V100s forever."""
    with pytest.raises(heuristics.PricingDidNotTerminate, match="Theorem 1"):
        heuristics.matching_market(
            np.asarray(motivating.rho), (3, 1), ties="index", pricing="paper"
        )


def test_metrics(motivating) -> None:
    assert heterogeneity_degree(motivating) == pytest.approx((1159 * 2 + 2398 * 2) / (4 * 1159))
    # Jain's index is 1 when every job gets exactly its equal share
    from dlsched.models.placement.metrics import equal_share_jct

    assert fairness_degree(motivating, equal_share_jct(motivating)) == pytest.approx(1.0)
    las = run_method(motivating, "las")
    assert las.details["fairness"] == pytest.approx(1.0)


# --- exact routes agree with each other and with brute force --------------------------


@given(inst=placement_instances())
@settings(max_examples=25)
def test_exact_routes_agree_with_brute_force(inst) -> None:
    opt = brute_force(inst)
    for backend in ("scip", "highs"):
        out = solve_exact(inst, backend=backend)
        assert out.status == Status.OPTIMAL
        assert out.objective == pytest.approx(opt, rel=1e-6)
        assert out.bound <= out.objective * (1 + 1e-9)
    assert run_method(inst, "exhaustive").objective == pytest.approx(opt, rel=1e-9)


@given(inst=placement_instances(max_jobs=3, max_workers=7))
@settings(max_examples=20)
def test_heuristics_never_beat_the_optimum(inst) -> None:
    opt = solve_exact(inst, backend="highs").objective
    for method in ("has", "jps", "optimus", "optimus-lb", "las"):
        out = run_method(inst, method)
        assert out.objective >= opt * (1 - 1e-9), method
        check_placement(inst, out.solution, balance=out.details["data_split"])


@given(inst=placement_instances(max_jobs=3, max_workers=7))
@settings(max_examples=20)
def test_theorem2_has_attains_p3_in_every_category(inst) -> None:
    """Theorem 2: per category, the market's throughput equals the P3 (LP) optimum."""
    for cat in categories(inst.num_workers, inst.num_jobs):
        lp, _, _ = solve_p3(inst, cat)
        best, _ = heuristics.has(inst, only=cat, variant="clearing")
        assert best.throughput == pytest.approx(lp, rel=1e-9), cat
        try:  # the printed price rule: optimal whenever it ends within P_max (Theorem 1)
            paper, _ = heuristics.has(inst, only=cat, variant="paper")
        except heuristics.PricingDidNotTerminate:
            continue
        assert paper.throughput == pytest.approx(lp, rel=1e-9), cat


@given(inst=placement_instances(max_jobs=3, max_workers=6))
@settings(max_examples=15)
def test_p2_is_p1_restricted(inst) -> None:
    opt = solve_exact(inst, backend="scip").objective
    values = [
        solve_exact(inst, c, backend="highs").objective
        for c in categories(inst.num_workers, inst.num_jobs)
    ]
    assert min(values) == pytest.approx(opt, rel=1e-6)


def test_generated_instances_scip_equals_outer_approximation() -> None:
    for name in ("placement/liu2024-s3k8-seed1", "placement/liu2024-s4k12-seed0"):
        inst = load(name)
        a = solve_exact(inst, backend="scip")
        b = solve_exact(inst, backend="highs")
        assert a.status == b.status == Status.OPTIMAL
        assert a.objective == pytest.approx(b.objective, rel=1e-6)


def test_time_limited_exact_reports_bound_and_gap() -> None:
    inst = load("placement/liu2024-s5k100-seed0")
    out = solve_exact(inst, backend="highs", options=SolveOptions(time_limit=3))
    assert out.status in (Status.TIME_LIMIT, Status.OPTIMAL)
    if out.status == Status.TIME_LIMIT and out.objective is not None:
        assert out.bound is None or out.bound <= out.objective
        assert out.gap is None or out.gap >= 0


# --- the checker ------------------------------------------------------------------------


def test_checker_rejects_infeasible_placements(motivating) -> None:
    with pytest.raises(InfeasibleSolutionError, match="8b"):
        check_placement(motivating, Placement((0, 0, 0, 0)))
    with pytest.raises(InfeasibleSolutionError, match="8c"):
        check_placement(motivating, Placement((0, 1, 1)))
    with pytest.raises(InfeasibleSolutionError, match="not one of"):
        check_placement(motivating, Placement((0, 1, 2, 1)))


@given(inst=placement_instances())
@settings(max_examples=30)
def test_checker_matches_the_formula(inst) -> None:
    a = tuple(k % inst.num_jobs for k in range(inst.num_workers))
    ev = check_placement(inst, Placement(a))
    for i, job in enumerate(inst.jobs):
        ks = [k for k in range(inst.num_workers) if a[k] == i]
        comp = job.epochs * job.dataset_size / sum(inst.throughput[i][k] for k in ks)
        assert ev.computation[i] == pytest.approx(comp)
        assert ev.jct[i] >= comp * (1 - 1e-12)
        if len(ks) == 1:
            assert ev.communication[i] == 0


def test_bad_options(motivating) -> None:
    with pytest.raises(OptionError, match="category"):
        run_method(motivating, "exact", MethodOptions(params={"category": (2, 1)}))
    with pytest.raises(OptionError, match="category"):
        run_method(motivating, "has", MethodOptions(params={"category": (4, 0)}))
    with pytest.raises(OptionError, match="backend"):
        run_method(motivating, "exact", MethodOptions(params={"backend": "cpsat"}))
    with pytest.raises(OptionError, match="alpha"):
        run_method(motivating, "jps", MethodOptions(params={"alpha": 1.5}))
    with pytest.raises(OptionError, match="not a parameter"):
        run_method(motivating, "optimus", MethodOptions(params={"alpha": 0.5}))
    with pytest.raises(OptionError, match="unknown"):
        run_method(motivating, "simulated-annealing")


def test_jps_is_reproducible_and_samples_the_rear() -> None:
    inst = load("placement/liu2024-s4k15-seed0")
    opts = MethodOptions(solve=SolveOptions(seed=5), params={"samples": 10, "alpha": 0.7})
    a, b = run_method(inst, "jps", opts), run_method(inst, "jps", opts)
    assert a.solution == b.solution
    assert a.details["category_index"] >= int(0.7 * 364)


def test_reported_data_split_is_proportional() -> None:
    inst = load("placement/liu2024-s4k15-seed0")
    out = run_method(inst, "has")
    names = {w.name: k for k, w in enumerate(inst.workers)}
    for i, job in enumerate(inst.jobs):
        split = out.details["samples_per_worker"][job.name]
        assert sum(split.values()) == pytest.approx(job.dataset_size)
        # eq. (12): every worker of the job needs the same epoch time |pi_ik| / rho_ik
        times = {round(x / inst.throughput[i][names[w]], 6) for w, x in split.items()}
        assert max(times) - min(times) < 1e-4
    opt = run_method(inst, "optimus")
    for job in inst.jobs:  # Optimus splits equally
        assert len({round(x, 6) for x in opt.details["samples_per_worker"][job.name].values()}) == 1
