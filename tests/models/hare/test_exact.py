"""Exact routes of Hare_Sched agree with each other and with brute force; relaxation <= optimum;
Algorithm 1 and baselines are feasible and never beat the optimum (seed 002)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import hare_brute_force as brute_force
from strategies import tiny_instances

from dlsched.instances import load
from dlsched.models import MethodOptions, run_method
from dlsched.models.hare import METHODS, generate
from dlsched.models.hare.check import check_schedule
from dlsched.models.hare.instance import HareInstance, HareJob
from dlsched.models.hare.rounding import list_schedule
from dlsched.solvers import SolveOptions, Status
from dlsched.solvers.deadline import Deadline

OPTS = MethodOptions(solve=SolveOptions(time_limit=60))


def within() -> Deadline:
    """The tests' time limit, from now."""
    return Deadline.after(OPTS.time_limit)


def test_toy_instance_known_optimum():
    inst = load("hare/toy-2gpu")
    assert brute_force(inst) == pytest.approx(13.5)
    for m in ("exact", "exact-cpsat", "exact-milp"):
        out = run_method(inst, m, OPTS)
        assert out.status == Status.OPTIMAL
        assert out.objective == pytest.approx(13.5, rel=1e-6)
        assert out.evaluation.objective == out.objective
    out = run_method(inst, "exact-cpsat", OPTS)
    assert out.details["time_scale"] == 10  # 0.5 needs one decimal


@settings(
    max_examples=25, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(tiny_instances())
def test_cpsat_milp_brute_force_agree(inst):
    cp = run_method(inst, "exact-cpsat", OPTS)
    mi = run_method(inst, "exact-milp", OPTS)
    assert cp.status == Status.OPTIMAL and mi.status == Status.OPTIMAL
    bf = brute_force(inst)
    assert cp.objective == pytest.approx(bf, rel=1e-6, abs=1e-6)
    assert mi.objective == pytest.approx(bf, rel=1e-6, abs=1e-6)


@settings(
    max_examples=15, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(tiny_instances(max_tasks=5, max_gpus=3))
def test_relaxation_below_and_heuristics_above_optimum(inst):
    opt = run_method(inst, "exact-cpsat", OPTS)
    assert opt.status == Status.OPTIMAL
    rel = run_method(inst, "relaxation", OPTS)
    assert rel.solution is None and rel.objective is None
    assert rel.bound <= opt.objective * (1 + 1e-6)
    strong = run_method(inst, "relaxation-strong", OPTS)
    assert rel.bound - 1e-6 <= strong.bound <= opt.objective * (1 + 1e-6)
    for name in (
        "hare",
        "hare-assigned",
        "hare-eft",
        "hare-strong",
        "gavel-fifo",
        "srtf",
        "sched-homo",
        "sched-allox",
        "greedy",
    ):
        out = run_method(inst, name, OPTS)
        assert check_schedule(inst, out.solution).objective == out.objective
        assert out.objective >= opt.objective * (1 - 1e-9), name


def test_scip_quadratic_relaxation_matches_linearized():
    inst = load("hare/toy-2gpu")
    lin = run_method(inst, "relaxation", OPTS)
    quad = run_method(inst, "relaxation", MethodOptions(OPTS.solve, {"backend": "scip"}))
    assert quad.status == Status.BOUND  # a relaxation solved to the end
    assert quad.details["relaxation_value"] == pytest.approx(
        lin.details["relaxation_value"], rel=1e-5
    )


def test_time_limited_run_reports_incumbent_bound_and_gap():
    inst = load("hare/hetero-4gpu-6jobs")
    out = run_method(inst, "exact-cpsat", MethodOptions(SolveOptions(time_limit=1.0)))
    assert out.status in (Status.TIME_LIMIT, Status.OPTIMAL)
    assert out.objective is not None and out.bound is not None
    assert out.bound <= out.objective * (1 + 1e-9)
    assert out.gap is not None and 0 <= out.gap < 1


def test_algorithm1_as_written_on_a_hand_example():
    # one job, one round of two tasks, GPUs (fast, slow): earliest-available puts the second
    # task on the idle slow GPU (line 12) rather than waiting for the fast one.
    inst = HareInstance(
        "h", ("fast", "slow"), (HareJob("j", 0.0, 1.0, 1, 2, (1.0, 10.0), (0.0, 0.0)),)
    )
    s = list_schedule(inst, inst.tasks, "earliest-available").as_dict()
    assert s == {(0, 0, 0): (0, 0.0), (0, 0, 1): (1, 0.0)}
    s = list_schedule(inst, inst.tasks, "earliest-finish").as_dict()
    assert s == {(0, 0, 0): (0, 0.0), (0, 0, 1): (0, 1.0)}


def test_every_registered_method_runs_on_the_toy_instance():
    """Every method of the registry against the toy's optimum 13.5 (brute force): exact methods
    certify it, relaxations bound it from below without a schedule, the rest schedule at or
    above it."""
    inst = load("hare/toy-2gpu")
    assert brute_force(inst) == pytest.approx(13.5)
    want = {
        "exact",
        "exact-cpsat",
        "exact-milp",
        "relaxation",
        "relaxation-strong",
        "hare",
        "hare-strong",
        "gavel-fifo",
        "srtf",
        "sched-homo",
        "sched-allox",
    }
    assert want <= set(METHODS)
    for name, method in METHODS.items():
        out = run_method(inst, name, OPTS)
        if method.exact:
            assert out.status == Status.OPTIMAL, name
            assert out.objective == pytest.approx(13.5, rel=1e-6), name
        if out.solution is None:  # a relaxation: a certified lower bound only
            assert name.startswith("relaxation") and not method.exact
            assert out.objective is None and out.bound <= 13.5 * (1 + 1e-6), name
            assert out.bound > 0, name
        else:
            assert check_schedule(inst, out.solution).objective == out.objective, name
            assert out.objective >= 13.5 * (1 - 1e-9), name


# --- R || sum w_j C_j special case (one task per job, common arrival) --------------------------


@st.composite
def single_task_instances(draw, max_jobs: int = 4, max_gpus: int = 2):
    gpus = draw(st.integers(1, max_gpus))
    arrival = draw(st.integers(0, 2)) / 2
    half = st.integers(1, 8).map(lambda v: v / 2)
    jobs = tuple(
        HareJob(
            name=f"j{n}",
            arrival=arrival,
            weight=draw(st.integers(1, 4)),
            rounds=1,
            tasks_per_round=1,
            train_time=tuple(draw(half) for _ in range(gpus)),
            sync_time=tuple(draw(st.integers(0, 4)) / 2 for _ in range(gpus)),
        )
        for n in range(draw(st.integers(1, max_jobs)))
    )
    return HareInstance(name="r-sum-wc", gpus=tuple(f"g{k}" for k in range(gpus)), jobs=jobs)


@settings(
    max_examples=20, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(single_task_instances())
def test_special_route_matches_brute_force_and_general_routes(inst):
    from dlsched.models.hare.instance import is_single_task_case
    from dlsched.models.hare.special import solve_single_task

    assert is_single_task_case(inst)
    bf = brute_force(inst)
    auto = run_method(inst, "exact", OPTS)
    assert auto.details["route"] == "special"
    assert auto.status == Status.OPTIMAL
    assert auto.objective == pytest.approx(bf, rel=1e-6, abs=1e-6)
    for model in ("time-indexed", "pairs"):
        res = solve_single_task(inst, OPTS.solve, model, deadline=Deadline.after(OPTS.time_limit))
        sched, cert = res.schedule, res.certified()
        obj, bound = cert.objective, cert.bound
        assert cert.status == Status.OPTIMAL, model
        assert check_schedule(inst, sched).objective == pytest.approx(bf, rel=1e-6, abs=1e-6)
        assert obj == pytest.approx(bf, rel=1e-6, abs=1e-6)
        assert bound <= bf * (1 + 1e-6) + 1e-6
    general = run_method(inst, "exact", MethodOptions(OPTS.solve, {"route": "cpsat"}))
    assert general.details["route"] == "cpsat"
    assert general.objective == pytest.approx(bf, rel=1e-6, abs=1e-6)


def test_special_route_on_a_larger_instance_agrees_with_cpsat():
    import numpy as np

    rng = np.random.default_rng(3)
    jobs = tuple(
        HareJob(
            f"j{n}",
            1.0,
            float(rng.integers(1, 5)),
            1,
            1,
            tuple(float(rng.integers(1, 6)) for _ in range(3)),
            tuple(float(rng.integers(0, 3)) for _ in range(3)),
        )
        for n in range(7)
    )
    inst = HareInstance("r-3x7", ("a", "b", "c"), jobs)
    special = run_method(inst, "exact", OPTS)
    general = run_method(inst, "exact-cpsat", OPTS)
    milp = run_method(inst, "exact", MethodOptions(OPTS.solve, {"route": "milp"}))
    assert special.status == general.status == milp.status == Status.OPTIMAL
    assert special.objective == pytest.approx(general.objective, rel=1e-6)
    assert special.objective == pytest.approx(milp.objective, rel=1e-6)


def test_special_route_rejects_other_instances():
    from dlsched.errors import OptionError

    inst = load("hare/toy-2gpu")
    with pytest.raises(OptionError):
        run_method(inst, "exact", MethodOptions(OPTS.solve, {"route": "special"}))
    assert run_method(inst, "exact", OPTS).details["route"] == "cpsat"


def test_the_exact_methods_route_parameter_and_its_deprecated_name_backend():
    """``route`` picks the exact method's route (``dlsched methods hare`` says so); ``backend``,
    its former name, still does with a warning, and must agree with ``route`` when both are
    given; an unknown route is refused naming the parameter."""
    from dlsched.errors import OptionError

    exact = METHODS["exact"]
    assert "route" in exact.params and "route=auto|cpsat|milp|special" in exact.summary
    inst = load("hare/toy-2gpu")
    new = run_method(inst, "exact", MethodOptions(OPTS.solve, {"route": "milp"}))
    with pytest.warns(FutureWarning, match="route="):
        old = run_method(inst, "exact", MethodOptions(OPTS.solve, {"backend": "milp"}))
    assert new.details["route"] == old.details["route"] == "milp"
    assert new.objective == old.objective == pytest.approx(13.5)
    with pytest.warns(FutureWarning), pytest.raises(OptionError, match="backend"):
        run_method(inst, "exact", MethodOptions(OPTS.solve, {"route": "cpsat", "backend": "milp"}))
    with pytest.raises(OptionError, match="route"):
        run_method(inst, "exact", MethodOptions(OPTS.solve, {"route": "scip"}))


def test_identical_gpu_symmetry_breaking_keeps_the_optimum():
    # GPUs 0 and 2 are interchangeable (same T^c and T^s columns for every job)
    jobs = (
        HareJob("a", 0.0, 2.0, 2, 1, (2.0, 1.0, 2.0), (0.5, 1.0, 0.5)),
        HareJob("b", 0.5, 1.0, 1, 2, (1.0, 3.0, 1.0), (0.0, 0.5, 0.0)),
    )
    inst = HareInstance("sym", ("t4-0", "v100", "t4-1"), jobs)
    from dlsched.models.hare.cpsat import solve_cpsat_native
    from dlsched.models.hare.cpsat_model import CpsatConfig, gpu_classes

    assert [0, 2] in gpu_classes(inst)
    bf = brute_force(inst)
    for kw in (
        {},
        {"pooled": False},
        {"pooled": False, "redundant": True},
        {"pooled": False, "symmetry": False, "use_upper": False, "job_bounds": False},
        {"redundant": True, "lp_bound": False},
    ):
        cert = solve_cpsat_native(inst, OPTS.solve, within(), config=CpsatConfig(**kw))
        cert = cert.certified()
        obj = cert.objective
        assert cert.status == Status.OPTIMAL and obj == pytest.approx(bf, rel=1e-6)
    out = run_method(inst, "exact-cpsat", OPTS)  # with a hint and its objective as upper bound
    assert out.status == Status.OPTIMAL and out.objective == pytest.approx(bf, rel=1e-6)


@st.composite
def paired_gpu_instances(draw):
    """Instances whose GPUs come in classes of identical columns (as in the generator)."""
    sizes = draw(st.lists(st.integers(1, 3), min_size=1, max_size=2))
    cls_of = [c for c, k in enumerate(sizes) for _ in range(k)]
    jobs = []
    for n in range(draw(st.integers(1, 2))):
        tc = [draw(st.integers(1, 6)) / 2 for _ in sizes]
        ts = [draw(st.integers(0, 2)) / 2 for _ in sizes]
        jobs.append(
            HareJob(
                f"j{n}",
                draw(st.integers(0, 3)) / 2,
                float(draw(st.integers(1, 3))),
                draw(st.integers(1, 2)),
                draw(st.integers(1, 3)),
                tuple(tc[c] for c in cls_of),
                tuple(ts[c] for c in cls_of),
            )
        )
    return HareInstance("pairs", tuple(f"g{k}" for k in range(len(cls_of))), tuple(jobs))


@settings(
    max_examples=20, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(paired_gpu_instances())
def test_pooled_identical_gpus_match_one_no_overlap_per_gpu(inst):
    """A cumulative of capacity |class| per class of identical GPUs (then GPUs coloured by
    start) gives the same optimum as a NoOverlap per GPU, and a schedule the checker accepts."""
    from dlsched.models.hare.cpsat import solve_cpsat_native
    from dlsched.models.hare.cpsat_model import CpsatConfig

    r1 = solve_cpsat_native(inst, OPTS.solve, within(), config=CpsatConfig(pooled=True))
    r2 = solve_cpsat_native(inst, OPTS.solve, within(), config=CpsatConfig(pooled=False))
    s1, o1, o2 = r1.schedule, r1.objective, r2.objective
    assert r1.certified().status == r2.certified().status == Status.OPTIMAL
    assert o1 == pytest.approx(o2, rel=1e-9, abs=1e-9)
    assert check_schedule(inst, s1).objective == pytest.approx(o1, rel=1e-9, abs=1e-9)
    if inst.num_tasks <= 4 and inst.num_gpus <= 4:
        assert o1 == pytest.approx(brute_force(inst), rel=1e-9, abs=1e-9)


# --- time-indexed LP lower bound ----------------------------------------------------------------


@settings(
    max_examples=15, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(tiny_instances(max_tasks=5, max_gpus=3), st.integers(1, 7))
def test_time_indexed_bound_below_brute_force_optimum(inst, grid):
    from dlsched.models.hare.hint import best_hint
    from dlsched.models.hare.lowerbound import time_indexed_bound
    from dlsched.models.hare.scaling import scale_data, scaled_objective

    bf = brute_force(inst)
    d = scale_data(inst)
    upper = scaled_objective(d, inst, best_hint(inst)[1])
    for up in (None, upper):
        lb = time_indexed_bound(inst, d, up, grid=grid)
        assert lb is not None
        assert lb.bound <= bf * (1 + 1e-9) + 1e-9
        assert lb.scaled <= round(bf * d.time_scale * d.weight_scale) + 1e-9
        strong = time_indexed_bound(inst, d, up, grid=grid, strong=True)
        assert strong is not None
        assert lb.bound - 1e-6 <= strong.bound <= bf * (1 + 1e-9) + 1e-9
        assert strong.scaled <= round(bf * d.time_scale * d.weight_scale) + 1e-9


def test_strong_time_indexed_bound_cuts_the_mean_barrier():
    # one GPU, two tasks of length 1 in the first round, then one task: the second round
    # starts at 2 (after the later task); the mean barrier lets it start at 1.5
    from dlsched.models.hare.lowerbound import time_indexed_bound
    from dlsched.models.hare.scaling import scale_data

    inst = HareInstance("h", ("g",), (HareJob("j", 0.0, 1.0, 2, 2, (1.0,), (0.0,)),))
    d = scale_data(inst)
    mean = time_indexed_bound(inst, d, None, grid=1)
    strong = time_indexed_bound(inst, d, None, grid=1, strong=True)
    assert brute_force(inst) == pytest.approx(4.0)
    assert mean.bound < 3.9
    assert strong.bound == pytest.approx(4.0, abs=1e-5)


def test_time_indexed_bound_on_the_bundled_instance():
    from dlsched.models.hare.hint import best_hint
    from dlsched.models.hare.lowerbound import time_indexed_bound
    from dlsched.models.hare.relaxation import combinatorial_bound
    from dlsched.models.hare.scaling import scale_data, scaled_objective

    inst = load("hare/hetero-4gpu-6jobs")  # optimum 99.9 (proven by CP-SAT)
    d = scale_data(inst)
    upper = scaled_objective(d, inst, best_hint(inst)[1])
    lb = time_indexed_bound(inst, d, upper, grid=1)
    assert combinatorial_bound(inst)["bound"] <= lb.bound <= 99.9 + 1e-9
    out = run_method(load("hare/toy-2gpu"), "exact-cpsat", OPTS)
    assert out.status == Status.OPTIMAL
    assert out.details["lp_bound"] is not None
    assert out.details["lp_bound"] <= out.objective * (1 + 1e-9) <= out.bound * (1 + 1e-9) + 1e-9


def test_a_slack_cpsat_objective_is_an_upper_bound_not_a_disagreement():
    # CP-SAT stopped by a gap (or a limit) may return C_n above the schedule's completion (the
    # model only asks C_n >= every last finish): its objective then bounds the checker's from
    # above. Said by the route, it is accepted; the same number claimed as exact is an error.
    from dlsched.errors import AgreementError
    from dlsched.models.hare.common import RouteResult
    from dlsched.models.hare.hint import best_hint
    from dlsched.models.hare.routes import _route_outcome
    from dlsched.solvers.certify import Proof

    inst = generate(3, 2, 0, rounds=(1, 2), tasks=(1, 2))
    hint = best_hint(inst)[1]
    true = check_schedule(inst, hint).objective
    slack = RouteResult(hint, true + 0.1, Proof(), {"objective_is_upper": True})
    out = _route_outcome(inst, "exact-cpsat", Deadline.never(), slack)
    assert out.objective == true
    exact = RouteResult(hint, true + 0.1, Proof(), {"objective_is_upper": False})
    with pytest.raises(AgreementError):
        _route_outcome(inst, "exact-cpsat", Deadline.never(), exact)
    below = RouteResult(hint, true - 0.1, Proof(), {"objective_is_upper": True})
    with pytest.raises(AgreementError):  # a model claiming less than its schedule costs
        _route_outcome(inst, "exact-cpsat", Deadline.never(), below)
