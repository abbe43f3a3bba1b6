"""One rule decides every status: certify(). Optimal only when the numbers close the gap, a
proof against a known solution is an internal error, and time limits hold."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dlsched.instances import load
from dlsched.models import MethodOptions, run_method
from dlsched.models.hare import generate
from dlsched.models.hare.instance import HareInstance, HareJob
from dlsched.solvers import SolveOptions, SolverSettings, Status
from dlsched.solvers.certify import EPSILON, ContradictionError, Proof, certify, lattice_bound


def test_optimal_only_when_the_numbers_close_the_gap():
    assert certify(10.0, Proof(bound=10.0 - EPSILON / 2)).status == Status.OPTIMAL
    # a solver's own "optimal" at a gap tolerance is not optimal
    cert = certify(4938.0, Proof(bound=4920.0, claimed_optimal=True))
    assert cert.status == Status.FEASIBLE
    assert cert.gap == pytest.approx(18 / 4938)
    assert certify(5.0, Proof(bound=4.0, hit_limit=True)).status == Status.TIME_LIMIT
    assert certify(5.0, Proof()).status == Status.FEASIBLE and certify(5.0, Proof()).gap is None


def test_an_integral_optimum_rounds_the_bound_up_to_its_lattice():
    assert lattice_bound(4923.2, 1.0) == 4924.0
    assert lattice_bound(4923.0000000001, 1.0) == 4923.0  # solver noise is not a rounding step
    assert lattice_bound(1.25, 0.1) == pytest.approx(1.3)
    assert certify(4924.0, Proof(bound=4923.2, unit=1.0)).status == Status.OPTIMAL
    assert certify(4924.0, Proof(bound=4923.2)).status == Status.FEASIBLE


def test_a_proof_against_a_known_solution_raises():
    with pytest.raises(ContradictionError, match="inst.*route"):
        certify(10.0, Proof(infeasible=True), instance="inst", route="route")
    with pytest.raises(ContradictionError):
        certify(10.0, Proof(bound=10.0 + 10 * EPSILON))
    assert certify(None, Proof(infeasible=True)).status == Status.INFEASIBLE


def _single_task(n: int, gpus: int, seed: int) -> HareInstance:
    """R || sum w_j C_j: weights 1-8, training times 1-39, sync 0-4, all released at 0."""
    rng = np.random.default_rng(seed)
    jobs = []
    for j in range(n):
        w = float(rng.integers(1, 9))
        tc = tuple(float(rng.integers(1, 40)) for _ in range(gpus))
        ts = tuple(float(rng.integers(0, 5)) for _ in range(gpus))
        jobs.append(HareJob(f"j{j}", 0.0, w, 1, 1, tc, ts))
    return HareInstance(
        f"single-{n}x{gpus}-s{seed}", tuple(f"g{m}" for m in range(gpus)), tuple(jobs)
    )


def test_the_reported_false_optimum_is_gone():
    """30 jobs on 4 GPUs, mip_gap 0.2: HiGHS stops at 4938 against 4920 and calls it optimal;
    the true optimum is 4924 (proven by the same route with mip_gap 0)."""
    inst = _single_task(30, 4, 0)
    out = run_method(inst, "exact", MethodOptions(SolveOptions(time_limit=30, mip_gap=0.2)))
    assert out.details["route"] == "special"
    assert out.objective >= 4924.0 and out.bound <= 4924.0
    if out.status == Status.OPTIMAL:  # only if the numbers really closed
        assert out.objective == out.bound == 4924.0
    else:
        assert out.gap == pytest.approx((out.objective - out.bound) / out.objective)
        assert out.gap > 0


EXACT_ROUTES = [
    ("hare", "exact", {}),
    ("hare", "exact-cpsat", {}),
    ("hare", "exact-milp", {}),
    ("hare", "exact", {"route": "special"}),
    ("placement", "exact", {"route": "scip"}),
    ("placement", "exact", {"route": "highs"}),
]


@pytest.mark.parametrize(("family", "method", "params"), EXACT_ROUTES)
@settings(
    max_examples=4, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(seed=st.integers(0, 10_000), gap=st.sampled_from([0.05, 0.3, 0.9]))
def test_mip_gap_never_yields_an_unclosed_optimum(family, method, params, seed, gap):
    if family == "placement":
        from dlsched.models.placement import generate as generate_placement

        inst = generate_placement(3, 8, seed)
    elif params.get("route") == "special":
        inst = _single_task(8, 3, seed)
    else:
        inst = generate(3, 2, seed, rounds=(1, 2), tasks=(1, 2))
    strict = run_method(inst, method, MethodOptions(SolveOptions(time_limit=60), params))
    loose = run_method(
        inst, method, MethodOptions(SolveOptions(time_limit=60, mip_gap=gap), params)
    )
    assert strict.status == Status.OPTIMAL
    assert loose.objective >= strict.objective - EPSILON
    assert loose.bound is None or loose.bound <= strict.objective + EPSILON
    if loose.status == Status.OPTIMAL:
        assert loose.objective - loose.bound <= EPSILON
        assert loose.objective == pytest.approx(strict.objective, abs=EPSILON)


def test_cpsat_infeasible_with_a_known_hint_is_an_internal_error(monkeypatch):
    from ortools.sat.python import cp_model

    monkeypatch.setattr(cp_model.CpSolver, "solve", lambda self, *a, **k: cp_model.INFEASIBLE)
    with pytest.raises(ContradictionError, match="toy-2gpu"):
        run_method(load("hare/toy-2gpu"), "exact-cpsat")


def test_highs_infeasible_on_a_feasible_instance_is_an_internal_error(monkeypatch):
    import highspy

    monkeypatch.setattr(
        highspy.Highs, "getModelStatus", lambda self: highspy.HighsModelStatus.kInfeasible
    )
    from dlsched.models.hare.special import solve_single_task
    from dlsched.solvers.deadline import Deadline

    # the time-indexed MILP stage forced: column generation would prove 6 jobs before it
    inst = _single_task(6, 2, 1)
    with pytest.raises(ContradictionError, match="single-6x2-s1.*infeasibility proven"):
        solve_single_task(
            inst, SolverSettings(), model="time-indexed", deadline=Deadline.after(30)
        ).certified(inst.name)


def test_a_time_limited_milp_incumbent_is_decoded_and_checked():
    """The MILP's completion variables need not be tight at a time limit: the checker's value
    is reported, the solver's kept in the details (it bounds the checked one from above)."""
    inst = load("hare/hetero-4gpu-6jobs")
    out = run_method(inst, "exact-milp", MethodOptions(SolveOptions(time_limit=6)))
    assert out.objective is not None and out.status in (Status.TIME_LIMIT, Status.OPTIMAL)
    assert out.bound is not None and out.bound <= out.objective
    claimed = out.details.get("claimed_objective")
    assert claimed is None or claimed >= out.objective - 1e-6 * out.objective


def forked_seconds(monkeypatch) -> list[float]:  # type: ignore[no-untyped-def]
    """Record the seconds each piece of forked work (model building and solving in a child,
    :meth:`Deadline.run`) is given before it is killed."""
    from dlsched.solvers import deadline

    handed: list[float] = []
    real = deadline.call_with_deadline

    def spy(fn, *args, seconds, label):  # type: ignore[no-untyped-def]
        handed.append(seconds)
        return real(fn, *args, seconds=seconds, label=label)

    monkeypatch.setattr(deadline, "call_with_deadline", spy)
    return handed


@pytest.mark.parametrize("method", ["exact-milp", "relaxation", "relaxation-strong", "hare"])
def test_time_limits_hold_including_model_building(monkeypatch, method):
    """A 20-job, 8-GPU instance takes about 100 s to build as a pyomo.gdp model here: with a
    0.5 s limit the model is built in a child given no more than the limit and its grace
    (killed there), and the method still reports a bound."""
    from dlsched.solvers.deadline import grace

    inst = generate(20, 8, 0)
    handed = forked_seconds(monkeypatch)
    out = run_method(inst, method, MethodOptions(SolveOptions(time_limit=0.5)))
    assert handed and all(0 < s <= 0.5 + grace(0.5) for s in handed)
    assert out.bound is not None and out.bound > 0
    if method == "hare":
        assert out.objective is not None and "relaxation_fallback" in out.details


def test_solver_tolerance_above_a_lattice_point_is_not_rounded_up_a_step():
    """HiGHS's big-M model proved 99.00000044 on an optimum of 99.0 (lattice 0.1): rounding
    that up to 99.1 contradicted the verified schedule."""
    import numpy as np

    from dlsched.models.hare.theorems import random_small_instance

    assert lattice_bound(99.00000044, 0.1) == pytest.approx(99.0)
    inst = random_small_instance(np.random.default_rng(9), max_gpus=2, max_jobs=3, max_tasks=5)
    milp = run_method(inst, "exact-milp", MethodOptions(SolveOptions(time_limit=30)))
    exact = run_method(inst, "exact", MethodOptions(SolveOptions(time_limit=30)))
    assert exact.status == milp.status == Status.OPTIMAL
    assert milp.objective == pytest.approx(exact.objective, abs=EPSILON)


def test_special_route_keeps_its_limit_when_highs_sets_up_a_large_milp(monkeypatch):
    """R||sum wC, 8 GPUs x 100 jobs: the time-indexed stage has about 286,000 columns, and
    HiGHS sets that MIP up for over 10 s here before it first checks its own time limit. The
    stage runs in a child given no more than the limit and its grace, killed there."""
    from dlsched.models.hare.generate import generate_unrelated
    from dlsched.models.hare.special import solve_single_task
    from dlsched.solvers.deadline import Deadline, grace

    inst = generate_unrelated(100, 8, 2)
    handed = forked_seconds(monkeypatch)
    res = solve_single_task(
        inst, SolverSettings(), model="time-indexed", deadline=Deadline.after(2.0)
    )
    assert handed and all(0 < s <= 2.0 + grace(2.0) for s in handed)
    assert res.info["exact_stage_finished"] is False and res.proof.hit_limit
