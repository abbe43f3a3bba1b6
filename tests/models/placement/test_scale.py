"""Placement (seed 000) at scale: the column route (Lagrangian bound, reduced-cost
enumeration) against exhaustive search, the other exact routes and its own bookkeeping."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import placement_instances

from dlsched.errors import OptionError
from dlsched.instances import load
from dlsched.models.placement import categories, heuristics
from dlsched.models.placement.check import check_placement
from dlsched.models.placement.columns import (
    Pricing,
    build_master,
    columns_of,
    master_start,
    realize,
)
from dlsched.models.placement.exact import auto_route, solve_exact
from dlsched.models.placement.generator import generate
from dlsched.models.placement.instance import PlacementInstance, PlacementJob, Worker
from dlsched.models.placement.solution import Placement
from dlsched.models.placement.structure import structure
from dlsched.solvers import Status
from dlsched.solvers.base import DEFAULT_TIME_LIMIT
from dlsched.solvers.deadline import Deadline


def default_limit() -> Deadline:
    """The deadline of a route called without a method: the default limit, from now."""
    return Deadline.after(DEFAULT_TIME_LIMIT)


def exhaustive_optimum(inst: PlacementInstance) -> float:
    a, _ = heuristics.exhaustive(inst)
    return check_placement(inst, Placement(a)).avg_jct


@st.composite
def with_twins(draw) -> PlacementInstance:  # type: ignore[no-untyped-def]
    """A small instance whose first job is repeated (identical jobs form one job class)."""
    inst = draw(placement_instances(max_jobs=2, max_workers=6))
    copies = draw(st.integers(1, 2))
    twin = inst.jobs[0]
    jobs = inst.jobs + tuple(dataclasses.replace(twin, name=f"twin{c}") for c in range(copies))
    rows = inst.throughput + (inst.throughput[0],) * copies
    extra = len(jobs) - len(inst.workers)
    workers = inst.workers + tuple(
        dataclasses.replace(inst.workers[0], name=f"extra{c}") for c in range(max(extra, 0))
    )
    rows = tuple(row + (row[0],) * max(extra, 0) for row in rows)
    return dataclasses.replace(inst, jobs=jobs, workers=workers, throughput=rows)


@given(inst=st.one_of(placement_instances(), with_twins()))
@settings(max_examples=40, deadline=None, derandomize=True)
def test_columns_route_equals_exhaustive_search(inst) -> None:
    opt = exhaustive_optimum(inst)
    out = solve_exact(inst, route="columns", deadline=default_limit())
    assert out.status == Status.OPTIMAL
    assert out.objective == pytest.approx(opt, rel=1e-9)
    assert out.bound <= opt * (1 + 1e-9)
    check_placement(inst, out.solution)


@given(inst=placement_instances(max_jobs=3, max_workers=6))
@settings(max_examples=5, deadline=None, derandomize=True)
def test_columns_p2_equals_outer_approximation_per_category(inst) -> None:
    for cat in categories(inst.num_workers, inst.num_jobs):
        a = solve_exact(inst, cat, route="columns", deadline=default_limit())
        b = solve_exact(inst, cat, route="highs", deadline=default_limit())
        assert a.status == b.status == Status.OPTIMAL
        assert a.objective == pytest.approx(b.objective, rel=1e-7), cat
        assert a.evaluation.workers == cat


@given(inst=st.one_of(placement_instances(), with_twins()), data=st.data())
@settings(max_examples=30, deadline=None, derandomize=True)
def test_columns_cost_what_the_checker_says(inst, data) -> None:
    """A placement's columns cost exactly its JCTs, and the Lagrangian bound at any prices
    lies below its average JCT (weak duality)."""
    s, k = inst.num_jobs, inst.num_workers
    base = [w % s for w in range(k)]
    a = tuple(data.draw(st.permutations(base)))
    structure_ = structure(inst)
    cols = columns_of(structure_, a)
    ev = check_placement(inst, Placement(a))
    assert cols.cost.sum() / s == pytest.approx(ev.avg_jct, rel=1e-12)
    pricing = Pricing(structure_)
    pi = np.array(
        data.draw(
            st.lists(
                st.floats(-50, 50), min_size=structure_.num_types, max_size=structure_.num_types
            )
        )
    )
    bound, _ = pricing.lagrangian(pi, pricing.price(pi))
    assert bound <= ev.avg_jct * s * (1 + 1e-12)


def test_two_identical_local_jobs_share_a_node() -> None:
    """Two nodes of four equal GPUs; two identical jobs with a 500 MB model (a ring over the
    10 Gbit/s link costs them more than it saves) and one long job with a small model. The
    optimum keeps every ring inside a node: the long job alone on one node, the twins two
    GPUs each on the other (the slot room rows must allow both on one node)."""
    workers = tuple(Worker(f"w{k}", "V100", f"n{k // 4}") for k in range(8))
    jobs = (
        PlacementJob("long", 1e5, 100, 50.0),
        PlacementJob("twin-a", 2e4, 100, 500.0),
        PlacementJob("twin-b", 2e4, 100, 500.0),
    )
    inst = PlacementInstance("two-local", jobs, workers, ((100.0,) * 8,) * 3)
    out = solve_exact(inst, route="columns", deadline=default_limit())
    assert out.status == Status.OPTIMAL
    assert out.objective == pytest.approx(exhaustive_optimum(inst), rel=1e-12)
    assert out.evaluation.workers == (4, 2, 2)
    assert out.evaluation.bottleneck_gbps == (300.0, 300.0, 300.0)


def test_column_route_matches_outer_approximation_on_bundled_instances() -> None:
    for name in ("placement/liu2024-s4k30-seed0",):
        inst = load(name)
        a = solve_exact(inst, route="columns", deadline=default_limit())
        b = solve_exact(inst, route="highs", deadline=default_limit())
        assert a.status == b.status == Status.OPTIMAL
        assert a.objective == pytest.approx(b.objective, rel=1e-7)


@given(inst=st.one_of(placement_instances(max_jobs=4, max_workers=8), with_twins()), data=st.data())
@settings(max_examples=30, deadline=None, derandomize=True)
def test_master_start_and_realize_round_trip(inst, data) -> None:
    """A placement -> its integer master values (which satisfy every master row) -> a
    placement again: same counts per worker type for every job, local jobs still on one node,
    and never a higher average JCT (a spread job may land on one node by chance)."""
    s, k = inst.num_jobs, inst.num_workers
    a = tuple(data.draw(st.permutations([w % s for w in range(k)])))
    structure_ = structure(inst)
    cols = columns_of(structure_, a)
    master = build_master(structure_, cols, integer=True)
    x0 = master_start(structure_, cols, master, a)
    assert x0 is not None
    rows = master.model.matrix @ x0
    assert np.all(rows >= master.model.row_lower - 1e-9)
    assert np.all(rows <= master.model.row_upper + 1e-9)
    b = realize(structure_, cols, master, x0)
    before, after = check_placement(inst, Placement(a)), check_placement(inst, Placement(b))
    assert after.avg_jct <= before.avg_jct * (1 + 1e-12)

    def counts(assignment, i):  # type: ignore[no-untyped-def]
        kinds = structure_.type_of[np.asarray(assignment) == i]
        return tuple(np.bincount(kinds, minlength=structure_.num_types))

    for j in set(structure_.job_class.tolist()):  # identical jobs may swap columns
        jobs = np.flatnonzero(structure_.job_class == j)
        assert sorted(counts(a, i) for i in jobs) == sorted(counts(b, i) for i in jobs)
    on_one_node = [len(set(structure_.node_of[np.asarray(b) == i])) == 1 for i in range(s)]
    assert sum(on_one_node) >= int((cols.node_class >= 0).sum())


def test_many_worker_types_fall_back_and_columns_refuse() -> None:
    noisy = generate(4, 60, 0, noise=0.1)  # every worker its own type
    assert auto_route(noisy) == "highs"
    with pytest.raises(OptionError, match="columns"):
        solve_exact(noisy, route="columns", deadline=default_limit())
    assert auto_route(generate(8, 200, 0)) == "columns"


def test_outer_approximation_stopped_early_still_returns_a_placement() -> None:
    """Out of time before (or at) its first master: OA returns a checked placement (for P2 one
    of the category), a heuristic one when no master gave any, and never none."""
    inst = load("placement/liu2024-s4k30-seed0")
    p1 = solve_exact(inst, route="highs", deadline=Deadline.after(0.01))
    p2 = solve_exact(inst, (10, 8, 7, 5), route="highs", deadline=Deadline.after(0.01))
    for out in (p1, p2):
        assert out.status == Status.TIME_LIMIT
        assert out.objective == pytest.approx(check_placement(inst, out.solution).avg_jct)
        assert out.details["returned"] in ("master", "optimus-lb", "first K_i workers")
    assert p2.evaluation.workers == (10, 8, 7, 5)
