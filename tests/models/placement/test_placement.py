"""Placement family (seed 000): catalogue of known answers, properties, theorem checks."""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import placement_brute_force as brute_force
from strategies import placement_instances

from dlsched.errors import InfeasibleSolutionError, OptionError
from dlsched.instances import load
from dlsched.models import MethodOptions, run_method
from dlsched.models.placement import categories, heuristics, num_categories, rank, unrank
from dlsched.models.placement.check import check_placement
from dlsched.models.placement.evaluate import Evaluator
from dlsched.models.placement.exact import solve_exact, solve_p3
from dlsched.models.placement.metrics import fairness_degree, heterogeneity_degree
from dlsched.models.placement.solution import Placement
from dlsched.solvers import SolveOptions, Status
from dlsched.solvers.base import DEFAULT_TIME_LIMIT
from dlsched.solvers.deadline import Deadline

MOTIVATING = "placement/liu2024-motivating"


def default_limit() -> Deadline:
    """The deadline of a route called without a method: the default limit, from now."""
    return Deadline.after(DEFAULT_TIME_LIMIT)


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
    for route in ("scip", "highs"):
        ex = run_method(motivating, "exact", MethodOptions(params={"route": route}))
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


@given(data=st.data())
@settings(max_examples=30)
def test_unrank_inverts_algorithm1(data) -> None:
    s = data.draw(st.integers(1, 5), label="S")
    k = data.draw(st.integers(s, 11), label="K")
    psi = categories(k, s)
    assert len(set(psi)) == len(psi) == num_categories(k, s) == math.comb(k - 1, s - 1)
    # every composition of K into S positive parts, in lexicographic order of (K_S, ..., K_2)
    assert set(psi) == {c for c in itertools.product(range(1, k - s + 2), repeat=s) if sum(c) == k}
    assert [c[::-1] for c in psi] == sorted(c[::-1] for c in psi)
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
    from dlsched.models.placement.metrics import equal_share_jct

    # H (35) from the per-worker throughput sums: T4 275 + 884, V100 644 + 1754
    assert heterogeneity_degree(motivating) == pytest.approx((1159 * 2 + 2398 * 2) / (4 * 1159))
    same = dataclasses.replace(motivating, name="same", throughput=((644.0,) * 4, (1754.0,) * 4))
    assert heterogeneity_degree(same) == pytest.approx(1.0)  # identical workers
    # (32) by hand: the equal share is half the cluster, V^Equal = sum_k rho_ik / 2, no model
    equal = (200 * 100_000 / ((2 * 275 + 2 * 644) / 2), 200 * 50_000 / ((2 * 884 + 2 * 1754) / 2))
    assert equal_share_jct(motivating) == pytest.approx(equal)
    # Jain's index (33) of Lambda_i / Lambda_i^[e]: (2, 1) gives 9 / 10
    assert fairness_degree(motivating, (2 * equal[0], equal[1])) == pytest.approx(0.9)
    # Table II "Optimal": ResNet-18 at 1,288 samples/s, VGG-19 at 1,768
    ratios = (200 * 100_000 / 1288 / equal[0], 200 * 50_000 / 1768 / equal[1])
    jain = sum(ratios) ** 2 / (2 * sum(r * r for r in ratios))
    ex = run_method(motivating, "exact")
    assert fairness_degree(motivating, ex.evaluation.jct) == pytest.approx(jain)
    assert jain == pytest.approx(0.8892, abs=1e-4)
    # LAS (max-min of V_i / V_i^Equal, E000-14) gives every job the same ratio here: F = 1
    las = run_method(motivating, "las")
    ratio = [j / e for j, e in zip(las.evaluation.jct, equal, strict=True)]
    assert ratio[0] == pytest.approx(ratio[1])
    assert las.details["fairness"] == pytest.approx(1.0)


def test_rule22_moves_p_either_way() -> None:
    """Theorem 1's potential P = sum V_i + sum p_k (24) is not monotone under (22)
    (docs/errata.md, E000-9)."""

    def potential(rho, prices):  # K_i = 1: V_i is job i's best payoff
        return sum(max(r - p for r, p in zip(row, prices, strict=True)) for row in rho) + sum(
            prices
        )

    rho = np.array([[10.0, 9.0], [10.0, 5.0]])
    assert potential(rho, (0, 0)) == 20
    out = heuristics.matching_market(rho, (1, 1), pricing="paper")
    assert out.rounds == 1 and out.prices == (5.0, 0.0)  # max{1, max(10 - 9, 10 - 5)}
    assert potential(rho, out.prices) == pytest.approx(19)  # P dropped
    assert out.assignment == (1, 0)  # the P3 optimum 10 + 9
    rho = np.array([[10.0, 9.5], [10.0, 9.8]])
    # both prefer worker 0 again; (22) raises p_0 by max{1, max(10 - 9.5, 10 - 9.8)} = 1
    assert potential(rho, (1.0, 0.0)) == pytest.approx(20.3)  # P rose
    # no two workers are identical, yet (22) never clears: it needs 0.2 <= p_0 - p_1 <= 0.5
    with pytest.raises(heuristics.PricingDidNotTerminate, match="Theorem 1"):
        heuristics.matching_market(rho, (1, 1), pricing="paper")
    clearing = heuristics.matching_market(rho, (1, 1))
    assert clearing.assignment == (0, 1)
    assert 0.2 - 1e-9 <= clearing.prices[0] - clearing.prices[1] <= 0.5 + 1e-9


# --- exact routes agree with each other and with brute force --------------------------


@given(inst=placement_instances())
@settings(max_examples=25)
def test_exact_routes_agree_with_brute_force(inst) -> None:
    opt = brute_force(inst)
    for route in ("scip", "highs", "columns"):
        out = solve_exact(inst, route=route, deadline=default_limit())
        assert out.status == Status.OPTIMAL
        assert out.objective == pytest.approx(opt, rel=1e-6)
        assert out.bound <= out.objective * (1 + 1e-9)
    assert run_method(inst, "exhaustive").objective == pytest.approx(opt, rel=1e-9)


@given(inst=placement_instances(max_jobs=3, max_workers=7))
@settings(max_examples=20)
def test_heuristics_never_beat_the_optimum(inst) -> None:
    opt = solve_exact(inst, route="highs", deadline=default_limit()).objective
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
    opt = solve_exact(inst, route="scip", deadline=default_limit()).objective
    values = [
        solve_exact(inst, c, route="highs", deadline=default_limit()).objective
        for c in categories(inst.num_workers, inst.num_jobs)
    ]
    assert min(values) == pytest.approx(opt, rel=1e-6)


def test_generated_instances_scip_equals_outer_approximation() -> None:
    for name in ("placement/liu2024-s3k8-seed1", "placement/liu2024-s4k12-seed0"):
        inst = load(name)
        a = solve_exact(inst, route="scip", deadline=default_limit())
        b = solve_exact(inst, route="highs", deadline=default_limit())
        assert a.status == b.status == Status.OPTIMAL
        assert a.objective == pytest.approx(b.objective, rel=1e-6)


def test_time_limited_exact_reports_bound_and_gap() -> None:
    """Every route under a time limit: each incumbent is the checker's value of its placement,
    each bound lies below every feasible value (every incumbent, JPS), and the gap is theirs."""
    inst = load("placement/liu2024-s4k30-seed0")
    outs = [
        solve_exact(inst, route=b, deadline=Deadline.after(10))
        for b in ("scip", "highs", "columns")
    ]
    jps = run_method(inst, "jps").objective
    for out in outs:
        assert out.status in (Status.TIME_LIMIT, Status.OPTIMAL)
        assert out.objective is not None
        assert check_placement(inst, out.solution).avg_jct == pytest.approx(out.objective)
        if out.bound is None:  # a route killed at the limit (a loaded machine): its fallback
            assert out.status == Status.TIME_LIMIT and out.details["stopped"]
    bounded = [out for out in outs if out.bound is not None]
    assert bounded  # at least one route proved a bound (about 1 s each on an idle machine)
    for out in bounded:
        assert out.gap == pytest.approx((out.objective - out.bound) / out.objective, abs=1e-12)
        if out.status == Status.OPTIMAL:
            assert out.gap <= 1e-6
        for other in outs:
            assert out.bound <= other.objective * (1 + 1e-9)
        assert 0 < out.bound <= jps * (1 + 1e-9)


# --- the checker ------------------------------------------------------------------------


def test_checker_rejects_infeasible_placements(motivating) -> None:
    with pytest.raises(InfeasibleSolutionError, match="8b"):
        check_placement(motivating, Placement((0, 0, 0, 0)))
    with pytest.raises(InfeasibleSolutionError, match="8c"):
        check_placement(motivating, Placement((0, 1, 1)))
    with pytest.raises(InfeasibleSolutionError, match="not one of"):
        check_placement(motivating, Placement((0, 1, 2, 1)))


@given(inst=placement_instances(), data=st.data())
@settings(max_examples=30)
def test_checker_matches_the_formula(inst, data) -> None:
    """The checker against (2)-(7) written out here (ring all-reduce over the slowest link of the
    job's nodes) and against the vectorised evaluator that the searches use."""
    base = [k % inst.num_jobs for k in range(inst.num_workers)]
    a = tuple(data.draw(st.permutations(base)))
    ev = check_placement(inst, Placement(a))
    for i, job in enumerate(inst.jobs):
        ks = [k for k in range(inst.num_workers) if a[k] == i]
        comp = job.epochs * job.dataset_size / sum(inst.throughput[i][k] for k in ks)
        nodes = {inst.workers[k].node for k in ks}
        rate = inst.inter_node_gbps if len(nodes) > 1 else inst.intra_node_gbps
        comm = job.epochs * 2 * (len(ks) - 1) * job.model_size_mb * 8e6 / (rate * 1e9 * len(ks))
        assert ev.computation[i] == pytest.approx(comp)
        assert ev.communication[i] == pytest.approx(comm, abs=1e-9)
        assert ev.jct[i] == pytest.approx(comp + comm)
    evaluator = Evaluator(inst)
    comp, comm = evaluator.per_job(np.array([a]))
    assert comp[0] == pytest.approx(ev.computation)
    assert comm[0] == pytest.approx(ev.communication, abs=1e-9)
    assert evaluator.avg_jct(np.array([a]))[0] == pytest.approx(ev.avg_jct)
    equal = check_placement(inst, Placement(a), balance="equal")
    assert evaluator.avg_jct(np.array([a]), "equal")[0] == pytest.approx(equal.avg_jct)
    assert equal.avg_jct >= ev.avg_jct * (1 - 1e-12)  # (12) balances the slowest worker away


def test_bad_options(motivating) -> None:
    with pytest.raises(OptionError, match="category"):
        run_method(motivating, "exact", MethodOptions(params={"category": (2, 1)}))
    with pytest.raises(OptionError, match="category"):
        run_method(motivating, "has", MethodOptions(params={"category": (4, 0)}))
    with pytest.raises(OptionError, match="route"):
        run_method(motivating, "exact", MethodOptions(params={"route": "cpsat"}))
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


def test_a_market_that_never_clears_is_a_no_solution_outcome_not_an_error(motivating) -> None:
    # has-literal on the paper's own example exceeds P_max (E000-8): compare and sweep go on
    out = run_method(motivating, "has-literal")
    assert str(out.status) == "no_solution" and out.objective is None
    assert "Theorem 1" in out.details["reason"]
    assert run_method(motivating, "has").objective is not None
