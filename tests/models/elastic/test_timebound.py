"""The time-indexed bound of the elastic family (dlsched/models/elastic/timebound.py): equal to
the time-indexed LP over every run when column generation converges, below the certified
optimum, above the preemptive bounds where a long run blocks a short job, and valid when the
deadline cuts it."""

from __future__ import annotations

import math
from dataclasses import replace
from itertools import count

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog
from scipy.sparse import lil_matrix

from dlsched.api import generate
from dlsched.models import MethodOptions, run_method
from dlsched.models.elastic.flowbound import flow_bound, preemptive_bound
from dlsched.models.elastic.instance import (
    ElasticInstance,
    ElasticJob,
    NodeType,
    Server,
    durations,
    most_workers,
)
from dlsched.models.elastic.timebound import time_indexed_bound
from dlsched.solvers import SolveOptions, Status
from dlsched.solvers.deadline import Deadline


def _job(name: str, arrival: int, slots: int, chunks: int = 1) -> ElasticJob:
    """A Ring-AllReduce job of ``slots`` one-slot mini-batches per chunk on one worker type."""
    return ElasticJob(name, arrival, 1.0, 1, chunks, slots, (1.0,), 0.0, reduce_time=0.0)


def _one_gpu(*jobs: ElasticJob, horizon: int = 20) -> ElasticInstance:
    return ElasticInstance(
        "one-gpu",
        "ring",
        horizon,
        ("gpu",),
        (Server("s0", (1.0,)),),
        (NodeType("w", (1.0,), 1.0),),
        (),
        jobs,
    )


def full_lp(inst: ElasticInstance, weights: list[float]) -> float:
    """The time-indexed LP over every run (every worker count, not only the Pareto-least,
    every start), written out and solved by scipy's HiGHS: the value column generation must
    reach."""
    most = most_workers(inst)
    supply = np.array([s.capacity for s in inst.servers]).sum(axis=0)
    demand = np.array([t.demand for t in inst.worker_types])
    runs = []
    for j, job in enumerate(inst.jobs):
        for m, top in enumerate(most):
            for n in range(1, min(job.chunks, top) + 1):
                ps = [p if inst.is_ps else None for p in inst.ps_choices()]
                d = min(int(durations(inst, j, m, p, np.array([n]), True)[0]) for p in ps)
                runs += [(j, m, n, d, s) for s in range(job.arrival, inst.horizon - d + 1)]
    rows = inst.num_jobs + len(supply) * inst.horizon
    a = lil_matrix((rows, len(runs)))
    for k, (j, m, n, d, s) in enumerate(runs):
        a[j, k] = 1.0
        for r in np.flatnonzero(demand[m]):
            for t in range(s, s + d):
                a[inst.num_jobs + r * inst.horizon + t, k] = n * demand[m, r]
    cost = [weights[j] * (s + d) for j, _, _, d, s in runs]
    eq = a[: inst.num_jobs].tocsr()
    ub = a[inst.num_jobs :].tocsr()
    got = linprog(
        cost,
        A_ub=ub,
        b_ub=np.repeat(supply, inst.horizon),
        A_eq=eq,
        b_eq=np.ones(inst.num_jobs),
        bounds=(0, None),
        method="highs",
    )
    assert got.status == 0
    return float(got.fun)


def test_a_long_run_blocks_a_short_job_by_hand() -> None:
    """One GPU; a 10-slot job at 0, a 1-slot job at 1. Non-preemptive, the best is to leave
    the GPU idle for a slot: the short job 1-2, the long one 2-12, flow 1 + 12 = 13 (starting
    the long job at 0 costs 10 + 10). Preemptive SRPT runs the long job 0-1 and 2-11, flow 12:
    the preemptive bounds stop at 12, the time-indexed one reaches the optimum."""
    inst = _one_gpu(_job("long", 0, 10), _job("short", 1, 1))
    exact = run_method(inst, "exact")
    assert exact.status == Status.OPTIMAL
    assert exact.objective - 1 == 13  # sum C less the arrivals
    assert preemptive_bound(inst).flow == 12
    assert flow_bound(inst).flow == 13
    got = time_indexed_bound(inst, [1.0, 1.0])
    assert got.converged
    assert got.value == pytest.approx(14.0)


@pytest.mark.parametrize(("seed", "arch"), [(s, a) for s in range(3) for a in ("ring", "ps")])
def test_column_generation_reaches_the_full_lp(seed: int, arch: str) -> None:
    """Converged, the best Lagrangian value is the optimum of the LP over every run (within
    the rounding margin), with unit and with the instance's own weights."""
    inst = generate("elastic", 5, 2, seed, architecture=arch, horizon=16)
    for weights in ([1.0] * inst.num_jobs, [j.weight for j in inst.jobs]):
        got = time_indexed_bound(inst, weights)
        assert got.converged
        lp = full_lp(inst, weights)
        assert got.value <= lp + 1e-9
        assert got.value == pytest.approx(lp, rel=1e-6)


@settings(max_examples=4, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(["ps", "ring"]), st.integers(2, 4))
def test_below_the_certified_optimum_on_crowded_instances(seed: int, arch: str, jobs: int) -> None:
    """On one server with a short horizon (crowded), the bound on sum w C and on the flow
    time is below the certified optimum (unit weights and own weights)."""
    inst = generate("elastic", jobs, 1, seed, architecture=arch, horizon=12)
    opts = MethodOptions(solve=SolveOptions(time_limit=60))
    unit = replace(inst, jobs=tuple(replace(j, weight=1.0) for j in inst.jobs))
    for case in (unit, inst):
        exact = run_method(case, "exact", opts)
        if exact.status == Status.INFEASIBLE:
            return
        assert exact.status == Status.OPTIMAL
        got = time_indexed_bound(case)
        assert got.value <= exact.objective * (1 + 1e-9)
        if case is unit:
            arrivals = sum(j.arrival for j in case.jobs)
            assert flow_bound(case).flow <= exact.objective - arrivals + 1e-9


def test_a_cut_keeps_the_bound_at_the_start() -> None:
    """A deadline passed after the first pricing (a fake clock) stops before any master LP:
    the value is L(0), each job's earliest completion summed, and still a bound."""
    inst = _one_gpu(_job("long", 0, 10), _job("short", 1, 1))
    ticks = count()
    clock = lambda: float(next(ticks))  # noqa: E731 - one second per reading
    got = time_indexed_bound(inst, [1.0, 1.0], Deadline.after(1.5, clock))
    assert (got.iterations, got.converged) == (0, False)
    assert got.value == pytest.approx(10 + 2)
    assert got.value <= run_method(inst, "exact").objective


def test_a_job_that_cannot_end_by_the_horizon_adds_nothing() -> None:
    """A job longer than the horizon: no run at all, the value is -inf and the flow bound is
    the preemptive one."""
    inst = _one_gpu(_job("long", 0, 30), horizon=20)
    assert time_indexed_bound(inst).value == -math.inf
    assert flow_bound(inst) == preemptive_bound(inst)
