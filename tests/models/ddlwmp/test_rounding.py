"""The LP roundings of problem (8) (dlsched/models/ddlwmp/rounding.py): alpha-points of the
LP's fractional schedule by hand and against Goemans's mean-busy-time identity, schedules that
pass the checker and sit above the LP value and the certified optimum, determinism for a seed,
the time limit kept (on an injected clock) and bad parameters refused."""

from __future__ import annotations

import itertools
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from fake_clock import FakeClock, record_time_limits, takes_time
from hypothesis import given, settings
from hypothesis import strategies as st

from dlsched.errors import OptionError
from dlsched.instances import load
from dlsched.models import MethodOptions, run_method
from dlsched.models.ddlwmp import mapping_methods, methods, model, online, rounding
from dlsched.models.ddlwmp.check import check_schedule
from dlsched.models.ddlwmp.generate import generate
from dlsched.models.ddlwmp.mapping import alpha_ms, heavy_edge, most_free_caps
from dlsched.models.ddlwmp.model import Share
from dlsched.solvers import SolveOptions, Status
from dlsched.solvers.deadline import Deadline, grace

ROUNDINGS = tuple(methods.ROUNDINGS)
TOY = "ddlwmp/toy-2x4"


def options(limit: float | None, clock: FakeClock | None = None, **params) -> MethodOptions:
    if clock is None:
        return MethodOptions(SolveOptions(time_limit=limit), params)
    return MethodOptions(SolveOptions(time_limit=limit), params, clock=clock)


# --- alpha-points ------------------------------------------------------------------------------


def test_alpha_points_by_hand():
    # half the job from 0 for 10 s, half from 10 for 20 s: f(10) = 1/2, f(30) = 1
    back_to_back = (Share(0, 0.0, 10.0, 0.5), Share(1, 10.0, 20.0, 0.5))
    assert rounding.alpha_point(back_to_back, 0.25) == pytest.approx(5.0)
    assert rounding.alpha_point(back_to_back, 0.5) == pytest.approx(10.0)
    assert rounding.alpha_point(back_to_back, 0.75) == pytest.approx(20.0)
    assert rounding.alpha_point(back_to_back, 1.0) == pytest.approx(30.0)
    # overlapping halves from 0 and 5, 10 s each: f(5) = 1/4, f(10) = 3/4, f(7.5) = 1/2
    overlap = (Share(0, 0.0, 10.0, 0.5), Share(0, 5.0, 10.0, 0.5))
    assert rounding.alpha_point(overlap, 0.5) == pytest.approx(7.5)
    assert rounding.mean_start(overlap) == pytest.approx(2.5)
    assert rounding.mean_completion(back_to_back) == pytest.approx(0.5 * 10 + 0.5 * 30)
    # a job the LP schedules whole: its alpha-point is start + alpha p
    whole = (Share(2, 40.0, 8.0, 1.0),)
    assert [rounding.alpha_point(whole, a) for a in (0.1, 0.5, 1.0)] == pytest.approx(
        [40.8, 44.0, 48.0]
    )


@st.composite
def lp_shares(draw):
    k = draw(st.integers(1, 5))
    starts = draw(st.lists(st.integers(0, 30), min_size=k, max_size=k))
    runs = draw(st.lists(st.floats(0.5, 20.0), min_size=k, max_size=k))
    weights = draw(st.lists(st.floats(0.05, 1.0), min_size=k, max_size=k))
    total = sum(weights)
    return tuple(
        Share(0, float(t), p, w / total) for t, p, w in zip(starts, runs, weights, strict=True)
    )


@settings(max_examples=60, derandomize=True, deadline=None)
@given(lp_shares(), st.floats(0.001, 1.0), st.floats(0.001, 1.0))
def test_an_alpha_point_is_where_that_share_of_the_work_is_done(shares, a, b):
    t = rounding.alpha_point(shares, a)
    assert rounding.done_by(shares, t) == pytest.approx(a, abs=1e-9)
    assert rounding.done_by(shares, t - 1e-6) < a  # the first such time
    lo, hi = sorted((a, b))
    assert rounding.alpha_point(shares, lo) <= rounding.alpha_point(shares, hi) + 1e-12


@settings(max_examples=30, derandomize=True, deadline=None)
@given(lp_shares())
def test_alpha_points_average_to_the_mean_busy_time(shares):
    """Goemans (1997): the integral of t(alpha) over alpha in (0, 1] is the LP's mean busy
    time, sum z (t + p / 2), computed here from the shares without alpha-points."""
    steps = 4000
    integral = sum(rounding.alpha_point(shares, (k + 0.5) / steps) for k in range(steps)) / steps
    busy = sum(s.weight * (s.start + s.run / 2) for s in shares)
    assert integral == pytest.approx(busy, rel=1e-4, abs=1e-4)


def test_random_alphas_lie_in_0_1_and_follow_the_seed():
    a = rounding.random_alphas(50, 7)
    assert a == rounding.random_alphas(50, 7)
    assert a != rounding.random_alphas(50, 8)
    assert all(0.0 < x <= 1.0 for x in a)


# --- schedules ---------------------------------------------------------------------------------


VARIANTS = [(name, {}) for name in ROUNDINGS] + [
    ("lp-alpha", {"strict": True}),
    ("lp-alpha", {"mapping": "lp"}),
    ("lp-random-alpha", {"mapping": "exact", "strict": True}),
]


@settings(max_examples=5, derandomize=True, deadline=None)
@given(st.integers(0, 10_000))
def test_roundings_are_checked_schedules_above_the_lp_and_the_optimum(seed):
    inst = generate(5, 8, seed, gpus_per_server=4)
    opt = run_method(inst, "exact")
    assert opt.status == Status.OPTIMAL
    lp = run_method(inst, "lp-bound").bound
    with pytest.MonkeyPatch.context() as patch:  # the LP solved once for every variant
        solved = methods.solve_relaxation(inst, MethodOptions())
        patch.setattr(methods, "solve_relaxation", lambda *args: solved)
        for name, params in VARIANTS:
            out = run_method(inst, name, options(60, **params))
            ev = check_schedule(inst, out.solution)  # the checker's own evaluation
            assert out.objective == pytest.approx(ev.objective)
            assert out.details["lp_value"] == pytest.approx(lp, rel=1e-9)
            assert out.bound == pytest.approx(lp, rel=1e-9)  # the LP is a certified bound
            assert out.objective >= lp - 1e-6
            assert out.objective >= opt.objective - 1e-6
            proven = out.objective - lp <= 1e-6
            assert out.status == (Status.OPTIMAL if proven else Status.FEASIBLE)


def test_exact_mapping_is_never_slower_than_heavy_edge_on_the_same_free_gpus(monkeypatch):
    """With mapping=exact each job's alpha is the placement ILP's on the GPUs free at its
    start (CP-SAT starts from Heavy-Edge's mapping there): never above Heavy-Edge's."""
    inst = generate(8, 8, 4, gpus_per_server=4)
    seen = []
    real = rounding.ExactPlacing.place

    def spy(self, i, most):
        free = tuple(self.free)
        placement, alpha = real(self, i, most)
        seen.append((i, free, alpha))
        return placement, alpha

    monkeypatch.setattr(rounding.ExactPlacing, "place", spy)
    out = run_method(inst, "lp-alpha", options(60, mapping="exact"))
    assert out.details["mapping"] == "exact" and out.details["heavy_edge_jobs"] == 0
    assert sorted(i for i, _, _ in seen) == list(range(inst.num_jobs))
    for i, free, alpha in seen:
        job = inst.jobs[i]
        he = alpha_ms(job, inst.cluster, heavy_edge(job, most_free_caps(free, job.gpus)))
        assert alpha <= he + 1e-9
    assert out.evaluation.alphas == pytest.approx([a for _, _, a in sorted(seen)])
    assert out.objective >= out.bound - 1e-6


def _lp_policy(free, chosen):
    """An LpPlacing on a cluster whose servers have ``free`` GPUs free (of 4 each)."""
    inst = load(TOY)
    c = replace(inst.cluster, servers=len(free), gpus_per_server=4)
    jobs = tuple(replace(inst.jobs[0], name=f"j{k}") for k in range(len(chosen)))
    policy = rounding.LpPlacing(replace(inst, cluster=c, jobs=jobs), float, False, chosen)
    policy.free = list(free)
    return policy


def test_lp_placement_moves_to_the_tightest_servers_with_room():
    # rows of 3 and 1 GPUs on free (1, 4, 3): the 3 on server 2, the 1 on server 0
    chosen = [((0, (2, 1)), (1, (1, 0)))]
    assert _lp_policy((1, 4, 3), chosen).fit(0) == ((0, (1, 0)), (2, (2, 1)))
    assert _lp_policy((1, 2, 2), chosen).fit(0) is None  # no server holds 3
    shares = (Share(0, 0.0, 5.0, 0.3, ((0, (1,)),)), Share(1, 0.0, 4.0, 0.7, ((0, (2,)),)))
    assert rounding.lp_placement(shares) == ((0, (2,)),)


@settings(max_examples=80, derandomize=True, deadline=None)
@given(
    st.lists(st.integers(0, 4), min_size=1, max_size=5),
    st.lists(st.integers(1, 4), min_size=1, max_size=4),
)
def test_lp_placement_fits_exactly_when_some_servers_have_room(free, rows):
    """Brute force: the rows fit iff some distinct servers each have room for one row."""
    chosen = [tuple((m, (u,)) for m, u in enumerate(rows))]
    got = _lp_policy(free, chosen).fit(0)
    fits = any(
        all(free[m] >= u for m, u in zip(servers, rows, strict=True))
        for servers in itertools.permutations(range(len(free)), len(rows))
    )
    assert (got is not None) == fits
    if got is not None:
        assert sorted(sum(r) for _, r in got) == sorted(rows)
        assert all(free[m] >= sum(r) for m, r in got)


def test_lp_mapping_runs_each_job_at_its_lp_options_speed(monkeypatch):
    """With mapping=lp every job runs on its LP option's placement moved to servers with room:
    the servers are alike, so its alpha is that option's."""
    inst = generate(8, 8, 4, gpus_per_server=4)
    _, lp = _solved_lp(monkeypatch, inst)
    out = run_method(inst, "lp-alpha", options(60, mapping="lp"))
    assert out.details["mapping"] == "lp"
    for job, shares, alpha in zip(inst.jobs, lp, out.evaluation.alphas, strict=True):
        chosen = rounding.lp_placement(shares)
        assert alpha == pytest.approx(alpha_ms(job, inst.cluster, chosen), rel=1e-12)


def test_strict_order_keeps_the_lp_order_among_released_jobs():
    inst = generate(8, 8, 3, gpus_per_server=4)
    out = run_method(inst, "lp-mean-start", options(60, strict=True))
    points = out.details["lp_points"]
    jobs, pairs = inst.jobs, 0
    for i, a in enumerate(jobs):
        for j, b in enumerate(jobs):
            ahead = (points[a.name], i) < (points[b.name], j)
            if ahead and a.release <= out.solution.starts[j]:
                # a was released when b started and is ahead of it: it started no later
                assert out.solution.starts[i] <= out.solution.starts[j]
                pairs += 1
    assert pairs >= inst.num_jobs  # the property was put to the test


def test_random_alpha_is_deterministic_for_a_seed():
    inst = load(TOY)
    runs = [
        run_method(inst, "lp-random-alpha", MethodOptions(SolveOptions(seed=s))) for s in (3, 3)
    ]
    assert runs[0].solution == runs[1].solution
    assert runs[0].details["alphas"] == rounding.random_alphas(inst.num_jobs, 3)
    other = run_method(inst, "lp-random-alpha", MethodOptions(SolveOptions(seed=4)))
    assert other.details["alphas"] != runs[0].details["alphas"]


# --- time limits (an injected clock) -----------------------------------------------------------


def _solved_lp(monkeypatch, inst):
    """Solve the LP once and hand it to every later call (its stage is tested on its own)."""
    got = methods.solve_relaxation(inst, MethodOptions())
    monkeypatch.setattr(methods, "solve_relaxation", lambda *args: got)
    return got


def test_the_lp_gets_the_fork_budget_less_what_building_took(monkeypatch):
    inst = load(TOY)
    clock = FakeClock()
    limits = []

    def in_process(self, fn, *args, label=None):  # no fork: the child's stages are seen here
        limits.append(self.limit)
        return fn(*args)

    monkeypatch.setattr(Deadline, "run", in_process)
    handed = record_time_limits(monkeypatch, methods, "solve")
    takes_time(monkeypatch, clock, 3.0, model, "build_time_indexed")
    out = run_method(inst, "lp-alpha", options(10.0, clock))
    assert limits == [pytest.approx(10.0 - 2 * grace(10.0))]  # Deadline.for_fork
    assert handed == [pytest.approx(10.0 - 2 * grace(10.0) - 3.0)]
    assert out.status in (Status.FEASIBLE, Status.OPTIMAL) and out.details["order_from"] == "LP"


def test_exact_mapping_hands_each_ilp_what_is_left_then_maps_by_heavy_edge(monkeypatch):
    inst = load(TOY)
    _solved_lp(monkeypatch, inst)
    clock = FakeClock()
    handed = []
    real = mapping_methods.exact_mapping

    def timed(job, cluster, free, settings, deadline, *args):  # 0.5 s, or less if less is left
        handed.append(deadline.seconds())
        clock.advance(min(0.5, deadline.seconds()))
        return real(job, cluster, free, settings, deadline, *args)

    monkeypatch.setattr(mapping_methods, "exact_mapping", timed)
    out = run_method(inst, "lp-alpha", options(2.0, clock, mapping="exact"))
    work = 2.0 - grace(2.0)  # a grace kept for Heavy-Edge and the check
    assert handed == pytest.approx([work - 0.5 * k for k in range(len(handed))])
    assert work - 0.5 * len(handed) <= 0 < work - 0.5 * (len(handed) - 1)
    assert out.details["heavy_edge_jobs"] >= 1  # the jobs placed after the ILPs' time
    assert out.status == Status.FEASIBLE and out.objective is not None


def test_list_scheduling_past_the_limit_returns_no_schedule(monkeypatch):
    inst = load(TOY)
    _solved_lp(monkeypatch, inst)
    clock = FakeClock()
    takes_time(monkeypatch, clock, 1.0, online.ClusterPolicy, "start")
    out = run_method(inst, "lp-mean-start", options(2.5, clock))
    assert out.status == Status.TIME_LIMIT and out.solution is None
    assert out.details["reason"].startswith("time limit reached after 3 of 6 jobs started")
    assert out.details["lp_value"] is not None


def test_an_lp_killed_at_the_limit_leaves_release_order_list_scheduling(monkeypatch):
    """The LP's child killed where its fork ends (two graces before the limit, on a fake
    clock): what is left serves the list schedule in release order."""
    inst = load(TOY)
    clock = FakeClock()

    def killed(instance, opts):  # type: ignore[no-untyped-def]
        clock.advance(opts.deadline.for_fork().left())  # killed where the fork ends
        return None, None

    monkeypatch.setattr(methods, "solve_relaxation", killed)
    out = run_method(inst, "lp-alpha", options(0.3, clock))
    assert out.status == Status.TIME_LIMIT and out.bound is None
    assert out.details["lp_value"] is None
    assert out.details["order_from"].startswith("release")
    # work-conserving by release, Heavy-Edge on the most free servers: wcs-subtime itself
    assert out.objective == pytest.approx(run_method(inst, "wcs-subtime").objective)


# --- parameters --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "params", "field"),
    [
        ("lp-alpha", {"alpha": 0}, "alpha"),
        ("lp-alpha", {"alpha": 1.5}, "alpha"),
        ("lp-alpha", {"alpha": "half"}, "alpha"),
        ("lp-mean-start", {"mapping": "ilp"}, "mapping"),
        ("lp-random-alpha", {"strict": "no"}, "strict"),
        ("lp-random-alpha", {"alpha": 0.5}, "alpha"),
    ],
)
def test_bad_parameters_are_refused(name, params, field):
    with pytest.raises(OptionError, match=field):
        run_method(load(TOY), name, options(None, **params))


def test_cli_bad_alpha_is_one_line_exit_2():
    cli = Path(sys.executable).parent / "dlsched"
    cmd = [str(cli), "solve", TOY, "--method", "lp-alpha"]
    got = subprocess.run([*cmd, "--param", "alpha=2"], capture_output=True, text=True)
    assert got.returncode == 2
    assert len(got.stderr.strip().splitlines()) == 1 and "alpha" in got.stderr
    assert "Traceback" not in got.stderr
