"""The chronological branch and bound of the hare exact route (dlsched/models/hare/branch.py):
its optima against a brute force over list schedules and against CP-SAT, and the route's
choice of strategy."""

from __future__ import annotations

import os
import signal
import threading

import numpy as np
import pytest
from fake_clock import FakeClock, record_time_limits
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy.optimize import linear_sum_assignment
from strategies import hare_brute_force as brute_force

from dlsched.models import MethodOptions, run_method
from dlsched.models.hare import branch
from dlsched.models.hare.branch import applicable, branch_and_bound, compile_search, prefix_bounds
from dlsched.models.hare.branch_core import assignment_cost
from dlsched.models.hare.check import check_schedule
from dlsched.models.hare.generate import generate
from dlsched.models.hare.instance import HareInstance, HareJob
from dlsched.models.hare.pipeline import Strategy, choose_strategy, solve_exact
from dlsched.models.hare.scaling import scale_data
from dlsched.solvers.base import SolveOptions, SolverSettings, Status
from dlsched.solvers.deadline import Deadline, grace


def _job(name: str, arrival: float, weight: float, rounds: int, k: int, tc, ts) -> HareJob:
    return HareJob(name, arrival, weight, rounds, k, tuple(tc), tuple(ts))


def _tiny(draw_jobs: list[tuple], gpus: int) -> HareInstance:
    jobs = tuple(
        _job(f"j{i}", a, w, r, k, tc[:gpus], ts[:gpus])
        for i, (a, w, r, k, tc, ts) in enumerate(draw_jobs)
    )
    return HareInstance("tiny", tuple(f"g{m}" for m in range(gpus)), jobs)


TIMES = st.lists(st.integers(1, 6), min_size=2, max_size=2)
SYNCS = st.lists(st.integers(0, 5), min_size=2, max_size=2)
JOB = st.tuples(
    st.integers(0, 3), st.integers(1, 3), st.integers(1, 2), st.integers(1, 2), TIMES, SYNCS
)


@settings(max_examples=15, deadline=None, derandomize=True)
@given(st.lists(JOB, min_size=1, max_size=3), st.integers(1, 2))
def test_branch_and_bound_matches_brute_force(jobs, gpus):
    inst = _tiny(jobs, gpus)
    assume(inst.num_tasks <= 5)  # the brute force grows as tasks! x GPUs^tasks
    d = scale_data(inst)
    got = branch_and_bound(inst, d, upper=10**9)
    assert got.proven and got.schedule is not None
    value = check_schedule(inst, got.schedule).objective
    assert value == pytest.approx(got.objective / (d.time_scale * d.weight_scale))
    assert value == pytest.approx(brute_force(inst))


def test_brute_force_on_a_hand_instance():
    # one job, one round of two tasks on (fast, slow): both on the fast GPU end at 2 + 2 + 1
    # = 5, one on each at max(2 + 1, 5 + 1) = 6: the optimum is 5 (weight 1)
    inst = _tiny([(0, 1, 1, 2, [2, 5], [1, 1])], 2)
    assert brute_force(inst) == 5
    d = scale_data(inst)
    assert branch_and_bound(inst, d, upper=10**9).objective == 5 * d.time_scale


@pytest.mark.parametrize(
    ("jobs", "gpus", "seed"),
    [(3, 2, 0), (4, 3, 1), (3, 5, 2), (4, 4, 3)],  # 5 GPUs: two identical V100s (rule d)
)
def test_branch_and_bound_matches_cpsat(jobs, gpus, seed):
    inst = generate(jobs, gpus, seed, rounds=(1, 2), tasks=(1, 2))
    d = scale_data(inst)
    unit = d.time_scale * d.weight_scale
    cpsat = solve_exact(
        inst, SolverSettings(), Deadline.after(20), strategy=Strategy(0.0, 1, "cp-sat")
    )
    assert cpsat.certified().status == Status.OPTIMAL
    got = branch_and_bound(inst, d, upper=10**12)
    assert got.proven
    assert got.objective == round(cpsat.objective * unit)
    assert check_schedule(inst, got.schedule).objective == pytest.approx(cpsat.objective)


def test_long_sync_and_late_arrivals_match_cpsat():
    # sync longer than training on one GPU (the active-schedule cut must not use that GPU)
    inst = HareInstance(
        "long-sync",
        ("a", "b"),
        (
            _job("x", 0, 2, 2, 1, (1, 3), (6, 0)),
            _job("y", 1, 1, 1, 2, (2, 2), (0, 4)),
            _job("z", 2, 3, 1, 1, (4, 1), (1, 5)),
        ),
    )
    d = scale_data(inst)
    cpsat = solve_exact(
        inst, SolverSettings(), Deadline.after(20), strategy=Strategy(0.0, 1, "cp-sat")
    )
    assert cpsat.certified().status == Status.OPTIMAL
    got = branch_and_bound(inst, d, upper=10**12)
    assert got.proven and got.objective == round(cpsat.objective * d.time_scale)
    assert brute_force(inst) == pytest.approx(cpsat.objective)


def test_a_search_stopped_by_its_deadline_proves_nothing():
    inst = generate(6, 4, 2)
    d = scale_data(inst)
    clock = FakeClock()
    past = Deadline.after(1.0, clock)
    clock.advance(2.0)
    got = branch_and_bound(inst, d, upper=10**12, deadline=past)
    assert not got.proven


def test_route_proves_a_small_heterogeneous_instance_by_branch_and_bound():
    inst = generate(4, 4, 6, rounds=(1, 2), tasks=(1, 3))
    out = run_method(inst, "exact", MethodOptions(SolveOptions(time_limit=20)))
    assert out.status == Status.OPTIMAL
    assert out.details["strategy"].startswith("branch and bound")
    other = solve_exact(
        inst, SolverSettings(), Deadline.after(20), strategy=Strategy(0.0, 2, "cp-sat")
    )
    assert other.certified().status == Status.OPTIMAL
    assert out.objective == pytest.approx(other.objective)


@pytest.fixture(scope="module", autouse=True)
def _compiled() -> None:
    """The routes below choose the search only once it is compiled (``make`` compiles it
    after installing; loading it from numba's cache takes a moment)."""
    compile_search()
    assert branch.search_compiled()


def test_a_fresh_install_answers_by_cp_sat_while_the_search_compiles(monkeypatch):
    """No compiled search (a fresh ``pip install``): the exact route does not wait for the
    compiler; it starts the compilation in the background once and proves by CP-SAT."""
    started = []
    monkeypatch.setattr(branch, "search_compiled", lambda: False)
    monkeypatch.setattr(branch, "compile_in_background", lambda: started.append(1))
    inst = generate(3, 2, 4, rounds=(1, 2), tasks=(1, 2))
    out = run_method(inst, "exact", MethodOptions(SolveOptions(time_limit=20)))
    assert started == [1]
    assert out.details["strategy"] == "cp-sat (the branch and bound is being compiled)"
    assert "branch_nodes" not in out.details
    assert out.status == Status.OPTIMAL
    assert out.objective == pytest.approx(brute_force(inst))


def test_strategy_by_size_and_shape():
    small = generate(4, 4, 0)
    s = choose_strategy(small, SolveOptions())
    assert s.branch_share > 0 and applicable(small)
    big_rounds = generate(3, 4, 0, rounds=(1, 1), tasks=(5, 5))
    assert not applicable(big_rounds)
    assert choose_strategy(big_rounds, SolveOptions()).branch_share == 0
    large = generate(30, 8, 0)
    assert large.num_tasks > 30
    s = choose_strategy(large, SolveOptions(threads=1))
    assert s.branch_share == 0 and s.workers > 1
    tiny = HareInstance("t", ("g",), (_job("a", 0, 1, 1, 1, (1,), (0,)),))
    assert choose_strategy(tiny, SolveOptions(threads=1)).workers == 1
    assert choose_strategy(tiny, SolveOptions(threads=3)).workers == 3


def test_branch_and_bound_matches_brute_force_on_generated_instances():
    checked = 0
    for seed in range(40):
        inst = generate(2 + seed % 2, 2 + seed % 3 // 2, seed, rounds=(1, 2), tasks=(1, 2))
        if inst.num_tasks > 5:
            continue
        d = scale_data(inst)
        got = branch_and_bound(inst, d, upper=10**12)
        assert got.proven
        assert got.objective / (d.time_scale * d.weight_scale) == pytest.approx(brute_force(inst))
        checked += 1
    assert checked >= 10


def test_route_keeps_its_time_limit_when_the_search_does_not_end(monkeypatch):
    """29 tasks, 7 jobs: the proof takes far longer than the limit. The search stops, unproven,
    at its share of the time left; CP-SAT (the warm start before it, the final stage after)
    is handed at most what is left before the time kept for the check. The fake clock moves
    only while the search runs (a tenth of a second at each of its looks at the deadline), then
    the search's stop leaves a tenth of a second to the final stage."""
    from dlsched.models.hare import branch, cpsat, pipeline
    from dlsched.models.hare.budget import CHECK_GRACES

    inst = generate(7, 4, 2)
    strategy = choose_strategy(inst, SolverSettings())
    assert strategy.branch_share == pipeline.BRANCH_SHARE_LARGE and strategy.warm_start
    limit, clock = 3.0, FakeClock()
    end = limit - CHECK_GRACES * grace(limit)  # the pipeline's share: the check follows it
    handed = record_time_limits(monkeypatch, cpsat)
    spy = cpsat.run_cpsat

    def final_stage_takes_its_time(*args, **kwargs):  # so the real run cannot end the test
        out = spy(*args, **kwargs)
        if len(handed) == 2:
            clock.advance(handed[-1])
        return out

    monkeypatch.setattr(cpsat, "run_cpsat", final_stage_takes_its_time)
    real = branch.branch_and_bound
    stages = []

    def search(instance, d, upper, deadline=None):
        stages.append(deadline.limit)
        clock.step = 0.1
        got = real(instance, d, upper, deadline)
        clock.step = 0.0
        clock.advance(end - 0.1 - clock.now)  # the route started at 0: 0.1 s left
        return got

    monkeypatch.setattr(pipeline, "branch_and_bound", search)
    out = run_method(inst, "exact", MethodOptions(SolveOptions(time_limit=limit), clock=clock))
    assert stages == [pytest.approx(pipeline.BRANCH_SHARE_LARGE * end)]  # no time before it
    warm = min(pipeline.WARM_SECONDS, pipeline.WARM_SHARE * end)
    assert handed == [pytest.approx(warm), pytest.approx(0.1)]  # warm start, final stage
    assert out.details["branch_proven"] is False
    assert out.status == Status.TIME_LIMIT
    assert out.bound is not None and out.bound <= out.objective


def _bounds_along(inst: HareInstance, schedule) -> tuple[int, list[int]]:
    """The scaled cost of ``schedule`` (tasks re-placed in order of start, as the search
    does) and cost + queue bound at each of its proper prefixes."""
    d = scale_data(inst)
    moves = sorted((round(e.start * d.time_scale), e.job, e.gpu) for e in schedule.entries)
    return prefix_bounds(inst, d, [(n, m, s) for s, n, m in moves])


@settings(max_examples=15, deadline=None, derandomize=True)
@given(st.lists(JOB, min_size=1, max_size=3), st.integers(1, 2))
def test_queue_bound_never_exceeds_an_optimal_completion(jobs, gpus):
    # every prefix of an optimal schedule (brute force) has a bound at most the optimum
    inst = _tiny(jobs, gpus)
    assume(inst.num_tasks <= 5)
    d = scale_data(inst)
    got = branch_and_bound(inst, d, upper=10**9)
    optimum = brute_force(inst)
    assert got.objective == pytest.approx(optimum * d.time_scale * d.weight_scale)
    total, bounds = _bounds_along(inst, got.schedule)
    assert total == got.objective
    assert max(bounds) <= total


@pytest.mark.parametrize("seed", [3, 5, 8])
def test_queue_bound_along_a_cpsat_optimum_on_four_distinct_gpus(seed):
    inst = generate(4, 4, seed, rounds=(1, 2), tasks=(1, 3))  # 9-12 tasks
    d = scale_data(inst)
    cpsat = solve_exact(
        inst, SolverSettings(), Deadline.after(20), strategy=Strategy(0.0, 2, "cp-sat")
    )
    assert cpsat.certified().status == Status.OPTIMAL
    got = branch_and_bound(inst, d, upper=10**12)
    assert got.objective == round(cpsat.objective * d.time_scale * d.weight_scale)
    total, bounds = _bounds_along(inst, got.schedule)
    assert total == got.objective and max(bounds) <= total
    assert bounds[0] > 0  # the root bound says something


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    st.integers(1, 6).flatmap(
        lambda rows: st.integers(rows, 3 * rows).flatmap(
            lambda cols: hnp.arrays(
                np.float64,
                (rows, cols),
                elements=st.sampled_from([0.0, 1.0, 2.5, 3.0, 7.25, 1e6, 123456.789]),
            )
        )
    )
)
def test_compiled_assignment_matches_scipy(cost):
    # ties (repeated entries) and wide ranges: the search's own assignment against scipy's
    r, c = linear_sum_assignment(cost)
    assert assignment_cost(cost) == pytest.approx(cost[r, c].sum(), rel=1e-12, abs=1e-9)


def test_ctrl_c_stops_the_compiled_search_and_raises():
    # the search runs in a thread without the GIL; Ctrl-C in the caller sets its stop flag,
    # waits for it and raises KeyboardInterrupt (the command line prints "interrupted")
    inst = generate(7, 4, 2)  # 29 tasks: its search runs far longer than the test
    d = scale_data(inst)
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    before = {t for t in threading.enumerate() if t.is_alive()}
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    returned = []
    try:
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            # a minute of limit: if Ctrl-C did not stop it, the search would return unproven
            branch_and_bound(inst, d, upper=10**12, deadline=Deadline.after(60.0))
            returned.append(True)
    finally:
        timer.join()
        signal.signal(signal.SIGINT, old)
    assert not returned  # raised by the search, not after it
    assert {t for t in threading.enumerate() if t.is_alive()} == before  # the search ended


def test_an_error_in_the_search_thread_is_raised_not_read_as_a_proof(monkeypatch):
    from dlsched.models.hare import branch_core

    def broken(*args):
        raise MemoryError("no room for the search")

    monkeypatch.setattr(branch_core, "search", broken)
    inst = generate(3, 2, 0, rounds=(1, 2), tasks=(1, 2))
    with pytest.raises(MemoryError):
        branch_and_bound(inst, scale_data(inst), upper=10**12)


def test_a_search_still_loading_at_its_deadline_is_left_behind(monkeypatch):
    # numba compiling or loading the search cannot be stopped by the flag: at the deadline the
    # caller returns unproven instead of waiting for it
    from dlsched.models.hare import branch_core

    loaded = threading.Event()

    def still_loading(*args):
        loaded.wait(10.0)  # until the test lets it end

    monkeypatch.setattr(branch_core, "search", still_loading)
    inst = generate(3, 2, 0, rounds=(1, 2), tasks=(1, 2))
    clock = FakeClock(step=0.1)  # the limit passes at the caller's third look
    try:
        got = branch_and_bound(inst, scale_data(inst), 10**12, Deadline.after(0.3, clock))
        assert not loaded.is_set()  # returned while the search was still loading
    finally:
        loaded.set()
    assert not got.proven and got.schedule is None
