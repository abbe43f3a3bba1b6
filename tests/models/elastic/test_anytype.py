"""``sjf-any`` (dlsched/models/elastic/anytype.py): shortest job first on any worker type.
Small cases by hand (the type, the worker count, the wait, the share of long jobs), its
decisions online (later arrivals change nothing before them), and on random crowded
instances its checked schedules above the certified bound."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlsched.api import generate
from dlsched.errors import OptionError
from dlsched.instances import load
from dlsched.models import MethodOptions, run_method
from dlsched.models.elastic.anytype import sjf_any
from dlsched.models.elastic.flowbound import flow_bound
from dlsched.models.elastic.instance import (
    ElasticInstance,
    ElasticJob,
    NodeType,
    Server,
)
from dlsched.solvers import Status

FAST, SLOW = 0, 1


def _job(
    name: str, arrival: int, batches: int, v: tuple[float, ...], chunks: int = 1, u: float = 0.0
) -> ElasticJob:
    """``batches`` mini-batches per chunk of v_jm slots each (one per worker type), all-reduce
    time ``u``."""
    return ElasticJob(name, arrival, 1.0, 1, chunks, batches, v, 0.0, reduce_time=u)


def _two_types(
    *jobs: ElasticJob, fast: int = 1, slow: int = 1, horizon: int = 100
) -> ElasticInstance:
    """A server of ``fast`` fast GPUs and one of ``slow`` slow GPUs."""
    return ElasticInstance(
        "two-types",
        "ring",
        horizon,
        ("fast", "slow"),
        (Server("f0", (float(fast), 0.0)), Server("s0", (0.0, float(slow)))),
        (NodeType("fast", (1.0, 0.0), 1.0), NodeType("slow", (0.0, 1.0), 1.0)),
        (),
        jobs,
    )


def _runs(inst: ElasticInstance, **params: float) -> dict[str, tuple[int, int, int, int]]:
    """Each job's (start, end, worker type, workers) in sjf-any's checked schedule."""
    out = run_method(inst, "sjf-any", MethodOptions(params=params))
    assert out.status == Status.FEASIBLE
    return {
        inst.jobs[e.job].name: (e.start, e.end, e.worker_type, e.num_workers)
        for e in out.solution.entries
    }


def test_a_job_as_short_anywhere_leaves_the_fast_type_to_one_it_speeds_up() -> None:
    """Both at 0 on one fast and one slow GPU: `any` ends in one slot on either, `fast-only`
    in one slot on the fast GPU and two on the slow one. Shortest first (a tie: `any` first),
    `any` takes the slow GPU, so both end at 1 (flow 2); taking the fast one, as the type that
    ends it soonest first, would end `fast-only` at 2."""
    inst = _two_types(_job("any", 0, 1, (0.5, 1.0)), _job("fast-only", 0, 2, (0.5, 1.0)))
    assert _runs(inst) == {"any": (0, 1, SLOW, 1), "fast-only": (0, 1, FAST, 1)}


def test_a_job_waits_for_the_fast_type_rather_than_stretch() -> None:
    """The fast GPU busy until 2; `later` ends in 1 slot there and in 4 on the free slow GPU,
    beyond 3 times its least duration: it waits, starts at 2 on the fast GPU, ends at 3 (on
    the slow one it would end at 5). With stretch 4 it takes the slow GPU at once."""
    first = _job("first", 0, 4, (0.5, 100.0))  # 2 slots on the fast GPU
    later = _job("later", 1, 2, (0.5, 2.0))
    inst = _two_types(first, later)
    assert _runs(inst)["later"] == (2, 3, FAST, 1)
    assert _runs(inst, stretch=4)["later"] == (1, 5, SLOW, 1)


def test_fewest_workers_that_end_as_soon() -> None:
    """Four chunks of one 0.25-slot mini-batch: one worker ends in one slot, as four would;
    it takes one, and the three other fast GPUs start three more such jobs at once. With
    slack 0 it still takes the fewest workers of the shortest duration."""
    jobs = [_job(f"j{k}", 0, 1, (0.25, 100.0), chunks=4) for k in range(4)]
    inst = _two_types(*jobs, fast=4)
    for slack in (1.0, 0.0):
        got = _runs(inst, slack=slack)
        assert all(run == (0, 1, FAST, 1) for run in got.values())


def test_in_a_queue_fewer_workers_run_longer() -> None:
    """Four chunks of one 0.5-slot mini-batch, all-reduce 0.5 slot: one worker ends in 2
    slots (2 worker-slots), two in 2 (4), four in 1 (4). Alone on four GPUs it takes four and
    ends at 1. Six at once: while more wait than GPUs are free, each takes one worker for 2
    slots (slack 1: within twice the shortest), four at 0; at 2 the queue is short again and
    the last two take four GPUs each: flow 4 x 2 + 3 + 4 = 15 (21 with slack 0)."""
    job = _job("j0", 0, 1, (0.5, 100.0), chunks=4, u=0.5)
    assert _runs(_two_types(job, fast=4)) == {"j0": (0, 1, FAST, 4)}
    six = _two_types(*(replace(job, name=f"j{k}") for k in range(6)), fast=4, slow=0)
    got = sorted(_runs(six).values())
    assert got == [(0, 2, FAST, 1)] * 4 + [(2, 3, FAST, 4), (3, 4, FAST, 4)]
    assert sum(end for _, end, _, _ in got) == 15
    slow = sorted(_runs(six, slack=0.0).values())
    assert slow == [(k, k + 1, FAST, 4) for k in range(6)]


def test_long_jobs_share_the_cluster() -> None:
    """Two 30-slot jobs at 0 on two fast GPUs (long: above 20 slots): with share 0.5 the
    second waits for the first to end; with share 1 both start at once. Near the horizon
    (T = 100: at slot 10, waiting 3 x 30 slots more would reach it) the wait ends."""
    jobs = [_job(f"long{k}", 0, 60, (0.5, 1000.0)) for k in range(2)]
    inst = _two_types(*jobs, fast=2, horizon=200)
    got = _runs(inst, share=0.5)
    assert sorted(got.values()) == [(0, 30, FAST, 1), (30, 60, FAST, 1)]
    assert sorted(_runs(inst, share=1.0).values()) == [(0, 30, FAST, 1)] * 2
    near = _runs(replace(inst, horizon=100), share=0.5)
    assert sorted(near.values()) == [(0, 30, FAST, 1), (10, 40, FAST, 1)]


@pytest.mark.parametrize(
    ("name", "value"), [("stretch", 0.5), ("share", 2), ("slack", -1), ("long", "x")]
)
def test_a_bad_parameter_names_itself(name: str, value: object) -> None:
    inst = _two_types(_job("a", 0, 1, (0.5, 1.0)))
    with pytest.raises(OptionError, match=name):
        sjf_any(inst, MethodOptions(params={name: value}))


@settings(max_examples=15, deadline=None)
@given(
    st.integers(0, 10_000),
    st.sampled_from(["ps", "ring"]),
    st.integers(3, 9),
    st.integers(1, 8),
)
def test_online_and_above_the_bound(seed: int, arch: str, jobs: int, cut: int) -> None:
    """Crowded random instances: the schedule passes the checker (status feasible) with its
    flow time at least the certified bound; and the runs that start by slot ``cut`` are the
    same when the jobs arriving after it are left out (decisions use only the jobs arrived)."""
    inst = generate("elastic", jobs, 2, seed, architecture=arch, horizon=30)
    out = run_method(inst, "sjf-any", MethodOptions(bound=True))
    if out.evaluation is None:  # no room before the horizon
        return
    assert out.status == Status.FEASIBLE
    d = out.details
    assert d["flow_time_bound_s"] == pytest.approx(flow_bound(inst).flow * inst.slot_seconds)
    assert d["flow_time_bound_s"] <= d["flow_time_s"] * (1 + 1e-9)
    assert d["weighted_completion_bound"] <= out.objective * (1 + 1e-9)
    early = replace(inst, jobs=tuple(j for j in inst.jobs if j.arrival <= cut))
    if not early.jobs:
        return
    sub = run_method(early, "sjf-any")

    def starts(i: ElasticInstance, entries: tuple) -> set[tuple]:
        return {
            (i.jobs[e.job].name, e.start, e.duration, e.worker_type, e.workers, e.ps)
            for e in entries
            if e.start <= cut
        }

    if sub.solution is not None:
        assert starts(early, sub.solution.entries) == starts(inst, out.solution.entries)


@pytest.mark.parametrize("name", ["elastic/intro-cifar10", "elastic/ring-2jobs"])
def test_never_below_the_certified_optimum(name: str) -> None:
    inst = load(name)
    exact = run_method(inst, "exact")
    assert exact.status == Status.OPTIMAL
    out = run_method(inst, "sjf-any")
    assert out.status == Status.FEASIBLE
    assert out.objective >= exact.objective - 1e-9


def test_a_job_too_long_for_the_horizon_is_proven_infeasible() -> None:
    """The introduction's jobs need 10 slots at least: with T = 9 no schedule exists, and
    sjf-any says so as the other heuristics do (no schedule, the proof named)."""
    inst = replace(load("elastic/intro-cifar10"), horizon=9)
    out = run_method(inst, "sjf-any")
    assert out.status == Status.INFEASIBLE and out.solution is None
    assert "even alone" in out.details["no_schedule"]
