"""ddlwmp methods keep --time-limit: the mapping route hands each job's placement ILP what is
left and maps the jobs it does not reach by Heavy-Edge; the online policies stop starting jobs
past the limit (no schedule, status time_limit); the time-indexed routes run in a child under
the deadline, hand HiGHS what building left, and when killed keep the online incumbent and
Lemma 1's bound; Lemma 1's probes share the deadline. Time passes on an injected clock
(tests/fake_clock.py), never by waiting for it."""

from __future__ import annotations

import time

import pytest
from fake_clock import FakeClock, record_time_limits, takes_time

from dlsched.instances import load
from dlsched.models import MethodOptions, run_method
from dlsched.models.ddlwmp import bounds, mapping_methods, methods, online
from dlsched.models.ddlwmp.check import check_schedule
from dlsched.models.ddlwmp.generate import generate
from dlsched.models.ddlwmp.mapping import alpha_ms, heavy_edge, most_free_caps
from dlsched.solvers import SolveOptions, SolverSettings, Status
from dlsched.solvers.deadline import Deadline, grace


def options(limit: float, clock: FakeClock, params: dict | None = None) -> MethodOptions:
    return MethodOptions(SolveOptions(time_limit=limit), params or {}, clock=clock)


def test_mapping_exact_maps_the_jobs_past_the_limit_by_heavy_edge(monkeypatch):
    inst = generate(8, 16, 0)
    clock = FakeClock()
    handed = record_time_limits(monkeypatch, mapping_methods, "exact_mapping")
    takes_time(monkeypatch, clock, 1.0, mapping_methods, "exact_mapping")
    out = run_method(inst, "mapping-exact", options(2.5, clock))
    # three jobs solved, then the limit has passed: each handed what is left of the limit
    # but the grace kept for Heavy-Edge and the check
    g = grace(2.5)
    assert handed == [pytest.approx(x - g) for x in (2.5, 1.5, 0.5)]
    assert out.status == Status.TIME_LIMIT
    assert out.details["heavy_edge_jobs"] == inst.num_jobs - 3
    free = inst.cluster.free()
    for job in inst.jobs[3:]:  # the others: the Heavy-Edge mapping CP-SAT starts from
        expected = alpha_ms(job, inst.cluster, heavy_edge(job, most_free_caps(free, job.gpus)))
        assert out.details["alpha_ms"][job.name] == pytest.approx(expected)
    assert out.bound is None  # a job without a proven bound: no bound on the sum


def test_mapping_exact_counts_loading_cpsat_before_it_starts_a_job(monkeypatch):
    """CP-SAT is loaded before the first look at the deadline: a load that takes all but the
    grace (cold, on a loaded machine) leaves every job to Heavy-Edge, no ILP begun late."""
    inst = generate(8, 16, 0)
    clock = FakeClock()
    handed = record_time_limits(monkeypatch, mapping_methods, "exact_mapping")
    monkeypatch.setattr(mapping_methods, "load_cpsat", lambda: clock.advance(2.5 - grace(2.5)))
    out = run_method(inst, "mapping-exact", options(2.5, clock))
    assert handed == []
    assert out.status == Status.TIME_LIMIT and out.details["heavy_edge_jobs"] == inst.num_jobs


def test_mapping_exact_with_time_solves_every_job():
    inst = load("ddlwmp/toy-2x4")
    out = run_method(inst, "mapping-exact", MethodOptions(SolveOptions(time_limit=None)))
    assert out.status == Status.OPTIMAL
    assert out.details["heavy_edge_jobs"] == 0


@pytest.mark.parametrize("policy", ["a-srpt", "wcs-subtime", "spjf"])
def test_an_online_policy_stops_starting_jobs_past_the_limit(monkeypatch, policy):
    inst = load("ddlwmp/toy-2x4")
    clock = FakeClock()
    takes_time(monkeypatch, clock, 1.0, online.ClusterPolicy, "start")
    out = run_method(inst, policy, options(2.5, clock))
    assert out.status == Status.TIME_LIMIT and out.solution is None
    assert out.details["reason"].startswith("time limit reached after 3 of 6 jobs started")


def test_an_online_policy_within_its_limit_schedules_every_job():
    inst = load("ddlwmp/toy-2x4")
    out = run_method(inst, "a-srpt", MethodOptions(SolveOptions(time_limit=60)))
    assert out.status == Status.FEASIBLE
    assert out.objective == pytest.approx(check_schedule(inst, out.solution).objective)


def test_the_time_indexed_model_gets_what_building_left(monkeypatch):
    from dlsched.models.ddlwmp import model

    inst = load("ddlwmp/toy-2x4")
    clock = FakeClock()
    handed = record_time_limits(monkeypatch, methods, "solve")
    takes_time(monkeypatch, clock, 3.0, model, "build_time_indexed")
    res, _, _ = methods._time_indexed(inst, Deadline.after(10.0, clock), SolverSettings(), True)
    assert handed == [7.0]
    assert res.status == Status.OPTIMAL


def _stuck(*args):  # type: ignore[no-untyped-def]
    time.sleep(60)


def test_exact_killed_at_the_limit_keeps_the_online_incumbent_and_lemma1(monkeypatch):
    inst = load("ddlwmp/toy-2x4")
    monkeypatch.setattr(methods, "_time_indexed", _stuck)
    out = run_method(inst, "exact", MethodOptions(SolveOptions(time_limit=0.3)))
    assert out.status == Status.TIME_LIMIT
    # the incumbent is the best policy its stage had time for (on a loaded machine, maybe not
    # every policy): that policy's own checked schedule, never below the best of them all
    from dlsched.models.ddlwmp.check import check_schedule
    from dlsched.models.ddlwmp.online import run_policy

    policy = out.details["incumbent_from"]
    own = check_schedule(inst, run_policy(inst, policy)[0]).objective
    assert out.objective == pytest.approx(own)
    assert out.objective >= methods.best_online_schedule(inst)[0] - 1e-9
    assert out.bound == pytest.approx(bounds.srpt_bound(inst).bound)
    lp = run_method(inst, "lp-bound", MethodOptions(SolveOptions(time_limit=0.3)))
    assert lp.status == Status.TIME_LIMIT and lp.bound is None


def test_lemma1_probes_get_what_is_left_of_the_deadline(monkeypatch):
    inst = load("ddlwmp/fragmented-8x8")
    shapes = len({(j.stages, j.allreduce) for j in inst.jobs})
    handed = record_time_limits(monkeypatch, mapping_methods, "exact_mapping")
    clock = FakeClock()
    short = bounds.srpt_bound(inst, limit=10.0, deadline=Deadline.after(4.0, clock))
    # each configuration probed once, within the deadline (started by the probe: a real clock)
    assert handed == pytest.approx([4.0] * shapes, abs=0.5)
    bounds._alpha_min_bound.cache_clear()
    handed.clear()
    full = bounds.srpt_bound(inst, limit=10.0, deadline=Deadline.after(100.0, clock))
    assert handed == pytest.approx([10.0] * shapes, abs=0.5)
    assert 0 < short.bound <= full.bound * (1 + 1e-9)


def test_srpt_bound_reports_time_limit_when_the_deadline_passed_during_its_probes(monkeypatch):
    inst = load("ddlwmp/fragmented-8x8")
    bounds._alpha_min_bound.cache_clear()
    clock = FakeClock()
    takes_time(monkeypatch, clock, 5.0, mapping_methods, "exact_mapping")
    out = run_method(inst, "srpt-bound", options(1.0, clock))
    assert out.status == Status.TIME_LIMIT
    assert out.bound > 0
