"""Job-subset lower bounds (dlsched.models.hare.decompose): below the optimum always, equal to
it when groups of jobs do not interact, and the CP-SAT route that uses them stays exact."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import hare_brute_force as brute_force
from strategies import small_jobs, tiny_instances

from dlsched.models import MethodOptions, run_method
from dlsched.models.hare import generate
from dlsched.models.hare.check import check_schedule
from dlsched.models.hare.cpsat import solve_cpsat_native
from dlsched.models.hare.cpsat_model import CpsatConfig
from dlsched.models.hare.decompose import (
    arrival_blocks,
    best_partition,
    segment_spans,
    sub_instance,
    subset_bound,
)
from dlsched.models.hare.hint import best_hint
from dlsched.models.hare.instance import HareInstance, HareJob
from dlsched.models.hare.pipeline import SUBSET_MIN_TASKS, Strategy, solve_exact
from dlsched.solvers import SolveOptions, Status
from dlsched.solvers.deadline import Deadline

OPTS = SolveOptions(time_limit=60)
SETTINGS = OPTS.settings


def within() -> Deadline:
    """The tests' time limit, from now."""
    return Deadline.after(OPTS.time_limit)


def test_blocks_partition_the_jobs_in_arrival_order():
    inst = generate(9, 4, 3, arrival_span=30.0)
    blocks = arrival_blocks(inst, 4)
    flat = [n for b in blocks for n in b]
    assert sorted(flat) == list(range(inst.num_jobs))
    arrivals = [inst.jobs[n].arrival for n in flat]
    assert arrivals == sorted(arrivals)
    for b in blocks:  # between half and one and a half block sizes, unless one job is larger
        tasks = sum(inst.jobs[n].rounds * inst.jobs[n].tasks_per_round for n in b)
        assert tasks <= 6 or len(b) == 1
        assert tasks >= 2 or b is blocks[-1]


def test_blocks_end_at_the_widest_arrival_gap():
    jobs = tuple(
        HareJob(f"j{n}", a, 1.0, 1, 2, (1.0, 1.0), (0.0, 0.0))
        for n, a in enumerate((0.0, 1.0, 2.0, 10.0, 11.0, 12.0))
    )
    inst = HareInstance("gaps", ("g0", "g1"), jobs)
    blocks = arrival_blocks(inst, 6)  # sizes 3..9 tasks allowed: cut at the gap 2 -> 10
    assert blocks == [(0, 1, 2), (3, 4, 5)]
    sub = sub_instance(inst, blocks[0])
    assert sub.gpus == inst.gpus and sub.jobs == tuple(inst.jobs[n] for n in blocks[0])


@settings(
    max_examples=25, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(tiny_instances(max_tasks=4, max_gpus=2))
def test_subset_bound_never_exceeds_the_brute_force_optimum(inst):
    sb = subset_bound(inst, SETTINGS, deadline=within(), block_tasks=1, max_tasks=2)
    opt = brute_force(inst)
    assert sb.bound <= opt + 1e-9
    if sb.partition:  # the partition covers every job exactly once
        jobs = sorted(n for seg in sb.partition for n in seg.jobs)
        assert jobs == list(range(inst.num_jobs))
    if sb.schedule is not None:
        assert check_schedule(inst, sb.schedule).objective >= opt - 1e-9


def _far_apart(gap: float) -> HareInstance:
    """Two copies of a 10-task instance (one default block each), the second ``gap`` later."""
    base = (
        HareJob("a", 0.0, 2.0, 2, 3, (2.0, 1.0, 1.5), (0.5, 0.3, 0.2)),
        HareJob("b", 0.5, 1.0, 2, 2, (1.0, 2.5, 1.0), (0.1, 0.0, 0.4)),
    )
    late = tuple(
        HareJob(
            f"{j.name}2",
            j.arrival + gap,
            j.weight,
            j.rounds,
            j.tasks_per_round,
            j.train_time,
            j.sync_time,
        )
        for j in base
    )
    return HareInstance("far", ("g0", "g1", "g2"), base + late)


def test_bound_is_tight_when_groups_do_not_interact_and_proves_the_hint():
    inst = _far_apart(1000.0)
    half = sub_instance(inst, (0, 1))
    opt_half = run_method(half, "exact-cpsat", MethodOptions(OPTS)).objective
    sb = subset_bound(inst, SETTINGS, deadline=within())  # default blocks of 10 tasks: one per copy
    late = sub_instance(inst, (2, 3))
    opt_late = run_method(late, "exact-cpsat", MethodOptions(OPTS)).objective
    assert sb.bound == pytest.approx(opt_half + opt_late, rel=1e-9)
    assert sb.schedule is not None
    assert check_schedule(inst, sb.schedule).objective == pytest.approx(sb.bound, rel=1e-9)
    # the route: the merged schedule meets the bound, so it is returned as proven optimal
    hint = best_hint(inst)[1]
    cpsat_only = Strategy(0.0, 1, "the subset stage, no branch and bound")
    res = solve_exact(
        inst, SETTINGS, within(), hint, subset_options={"min_tasks": 0}, strategy=cpsat_only
    )
    sched, obj, bound, info = res.schedule, res.objective, res.certified().bound, res.info
    assert res.certified().status == Status.OPTIMAL and info["returned"] == "hint"
    assert obj == pytest.approx(sb.bound, rel=1e-9) and bound == pytest.approx(obj, rel=1e-9)
    assert check_schedule(inst, sched).objective == pytest.approx(obj, rel=1e-9)
    assert info["subset_bound"] == pytest.approx(sb.bound, rel=1e-9)
    # below SUBSET_MIN_TASKS the default route does not decompose
    out = run_method(inst, "exact-cpsat", MethodOptions(OPTS))
    assert out.details.get("subset_bound") is None and inst.num_tasks <= SUBSET_MIN_TASKS
    assert out.status == Status.OPTIMAL and out.objective == pytest.approx(obj, rel=1e-9)


def _near() -> HareInstance:
    """Four jobs on three GPUs, every job competing for them: the subset bound is not tight."""
    jobs = (
        HareJob("a", 0.0, 2.0, 1, 3, (2.0, 1.0, 1.5), (0.5, 0.3, 0.2)),
        HareJob("b", 0.5, 1.0, 2, 1, (1.0, 2.5, 1.0), (0.1, 0.0, 0.4)),
        HareJob("c", 0.5, 3.0, 1, 2, (1.5, 1.0, 2.0), (0.0, 0.2, 0.1)),
        HareJob("d", 1.0, 1.0, 2, 1, (1.0, 0.5, 1.0), (0.3, 0.1, 0.0)),
    )
    return HareInstance("near", ("g0", "g1", "g2"), jobs)


def test_bound_is_below_the_optimum_when_groups_interact():
    inst = _near()  # every job competes for the GPUs
    sb = subset_bound(inst, SETTINGS, deadline=within(), block_tasks=3, max_tasks=5)
    assert len(sb.partition) >= 2
    res = solve_cpsat_native(inst, SETTINGS, within())
    obj, info = res.objective, res.info
    assert res.certified().status == Status.OPTIMAL
    assert sb.bound <= obj + 1e-9
    # with the bound and each group's bound stated in the model
    small = {"block_tasks": 3, "max_tasks": 5, "min_tasks": 0}
    cpsat_only = Strategy(0.0, 1, "the subset stage, no branch and bound")
    res2 = solve_exact(inst, SETTINGS, within(), None, subset_options=small, strategy=cpsat_only)
    obj2, info2 = res2.objective, res2.info
    assert res2.certified().status == Status.OPTIMAL and obj2 == pytest.approx(obj, rel=1e-9)
    assert info2["subset_bound"] == pytest.approx(sb.bound, rel=1e-9)
    assert len(info2["subset_partition"]) == len(sb.partition)
    assert info.get("subset_bound") is None


def test_one_block_gives_no_bound():
    inst = generate(2, 2, 0)
    sb = subset_bound(inst, SETTINGS, deadline=within(), block_tasks=100)
    assert sb.bound == 0.0 and sb.partition == () and sb.schedule is None


def test_segments_include_pairs_of_large_blocks_but_never_everything():
    # four single-job blocks of 20, 12, 16, 12 tasks (the few-jobs shape of the benchmark)
    spans = segment_spans([20, 12, 16, 12], max_tasks=30, pair_tasks=40)
    assert (0, 2) in spans and (1, 3) in spans and (2, 4) in spans  # pairs of 32 and 28 tasks
    assert (0, 3) not in spans and (1, 4) not in spans and (0, 4) not in spans
    assert (0, 2) not in segment_spans([20, 12, 16, 12], max_tasks=30, pair_tasks=30)
    sizes = [sum([20, 12, 16, 12][i:j]) for i, j in spans]
    assert sizes == sorted(sizes)  # smallest first


@settings(max_examples=40, derandomize=True, deadline=None)
@given(st.integers(1, 6), st.data())
def test_best_partition_is_the_best_of_every_partition(k, data):
    spans = [(i, j) for i in range(k) for j in range(i + 1, k + 1)]
    chosen = data.draw(st.lists(st.sampled_from(spans), unique=True))
    bounds = {s: float(data.draw(st.integers(0, 50))) for s in chosen}
    best = None
    for cuts in itertools.product([False, True], repeat=k - 1):  # every composition of 0..k-1
        edges = [0] + [i + 1 for i, c in enumerate(cuts) if c] + [k]
        parts = list(itertools.pairwise(edges))
        if all(p in bounds for p in parts):
            value = sum(bounds[p] for p in parts)
            best = value if best is None else max(best, value)
    got = best_partition(k, bounds)
    if best is None:
        assert got is None
    else:
        assert got is not None and sum(bounds[p] for p in got) == best
        assert [a for a, _ in got] + [k] == [0] + [b for _, b in got]  # consecutive, covering


@settings(
    max_examples=8, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(small_jobs())
def test_each_segment_is_bounded_by_its_parts_and_by_its_optimum(inst):
    sb = subset_bound(inst, SETTINGS, deadline=within(), block_tasks=1, max_tasks=4, pair_tasks=0)
    assert len(arrival_blocks(inst, 1)) == inst.num_jobs >= 3
    solved = {s.blocks: s for s in sb.segments}
    assert any(j - i >= 2 for i, j in solved)  # some segment has parts
    for (i, j), seg in solved.items():
        assert seg.bound <= brute_force(sub_instance(inst, seg.jobs)) + 1e-9
        if j - i < 2:
            continue
        inner = {(a - i, b - i): s.bound for (a, b), s in solved.items() if i <= a and b <= j}
        parts = best_partition(j - i, inner)
        assert parts is not None
        assert seg.bound >= sum(inner[p] for p in parts) - 1e-9
    assert sb.bound <= brute_force(inst) + 1e-9


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_instances())
def test_exact_cpsat_without_the_lp_stage_proves_the_brute_force_optimum(inst):
    """``--param lp=false`` (what Theorem 4's check uses) skips the time-indexed LP and still
    proves the optimum that enumeration finds."""
    opts = MethodOptions(solve=OPTS, params={"lp": False})
    out = run_method(inst, "exact-cpsat", opts)
    assert out.status == Status.OPTIMAL
    assert out.details["lp_bound"] is None
    assert out.objective == pytest.approx(brute_force(inst), rel=1e-9)


def test_the_route_runs_the_lp_stage_once_and_only_when_asked():
    inst = _near()  # the subset bound is not tight
    small = {"block_tasks": 3, "max_tasks": 5, "min_tasks": 0}
    cpsat_only = Strategy(0.0, 1, "the subset stage, no branch and bound")
    on = solve_exact(inst, SETTINGS, within(), None, subset_options=small, strategy=cpsat_only)
    off = solve_exact(
        inst,
        SETTINGS,
        within(),
        None,
        subset_options=small,
        strategy=cpsat_only,
        config=CpsatConfig(lp_bound=False),
    )
    assert on.info["lp_bound"] is not None and off.info["lp_bound"] is None
    assert on.info["lp_bound"] <= on.objective + 1e-9
    assert on.certified().status == off.certified().status == Status.OPTIMAL
    assert on.objective == pytest.approx(off.objective, rel=1e-9)
