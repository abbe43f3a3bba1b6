"""Hare's time limits: the baselines (dlsched/models/hare/baselines.py) honour --time-limit (on
1,000 jobs over 2 GPUs sched-homo took 14-24 s whatever the limit; a baseline cut by its
deadline returns no schedule, status time_limit, details["reason"]), the exact route splits
its Deadline into the stages' budgets (dlsched/models/hare/pipeline.py), and every route keeps
room for the work after it (dlsched/models/hare/budget.py: the check, a forked model's
fallback; a CP-SAT model not built in time is not run). A fake clock stands for the time:
each test shows what a route did at its deadline, never how long it took."""

from __future__ import annotations

import pytest
from fake_clock import FakeClock, record_time_limits

from dlsched.models import MethodOptions, run_method
from dlsched.models.hare import baselines, cpsat, lns, pipeline
from dlsched.models.hare.baselines import BASELINES, BaselineTimeUp, baseline_outcome
from dlsched.models.hare.budget import BUILD_SHARE, CHECK_GRACES, HINT_SHARE, LP_SHARE
from dlsched.models.hare.check import check_schedule
from dlsched.models.hare.common import RouteResult
from dlsched.models.hare.cpsat_model import BuildTimeUp, CpsatConfig, build_cpsat
from dlsched.models.hare.decompose import SubsetBound
from dlsched.models.hare.generate import generate
from dlsched.models.hare.hint import best_hint, hint_candidates
from dlsched.models.hare.lns import LnsResult
from dlsched.models.hare.methods import METHODS
from dlsched.models.hare.relaxation import combinatorial_bound
from dlsched.models.hare.scaling import scale_data, scaled_objective
from dlsched.solvers.base import SolveOptions, SolverSettings, Status
from dlsched.solvers.certify import Proof
from dlsched.solvers.deadline import FORK_GRACES, Deadline, grace


@pytest.fixture(scope="module")
def large():
    return generate(1000, 2, 0)


@pytest.mark.parametrize("method", ["sched-homo", "srtf"])
def test_a_gang_baseline_stops_at_the_first_event_past_its_deadline(large, method):
    # time passes 20 ms at each look at the clock: the limit passes at the 100th look (one per
    # event), and the baseline stops there (no schedule) instead of finishing its jobs
    clock = FakeClock(step=0.02)
    out = baseline_outcome(method, large, MethodOptions(SolveOptions(time_limit=2.0), clock=clock))
    assert out.status == Status.TIME_LIMIT and out.solution is None
    assert "time limit of 2 s" in out.details["reason"]
    assert 100 <= clock.reads <= 100 + 5  # its checks, then the wall time reported


@pytest.mark.parametrize("method", ["sched-homo", "srtf"])
def test_a_gang_baseline_within_its_limit_schedules_a_thousand_jobs(large, method):
    clock = FakeClock()  # the limit never passes
    out = run_method(large, method, MethodOptions(SolveOptions(time_limit=2.0), clock=clock))
    assert out.status == Status.FEASIBLE
    assert out.objective == pytest.approx(check_schedule(large, BASELINES[method](large)).objective)


def test_allox_matching_is_forked_with_what_is_left_and_killed_there(large, monkeypatch):
    # the matching cannot stop itself: it runs in a child given exactly the time left (no
    # grace: cut, the baseline has no schedule); a child killed there means no schedule
    clock = FakeClock()
    options = MethodOptions(SolveOptions(time_limit=0.3), clock=clock)
    clock.advance(0.1)
    handed = []

    def killed(fn, *args, seconds, label):
        handed.append(seconds)
        return None

    monkeypatch.setattr(baselines, "call_with_deadline", killed)
    out = baseline_outcome("sched-allox", large, options)
    assert handed == [pytest.approx(0.2)]
    assert out.status == Status.TIME_LIMIT and out.solution is None
    assert "time limit" in out.details["reason"]


@pytest.mark.parametrize("name", sorted(BASELINES))
def test_a_baseline_past_its_deadline_stops_at_the_limit_with_a_reason(name):
    inst = generate(30, 3, 1)
    clock = FakeClock()
    past = Deadline.after(1.0, clock)
    clock.advance(1.0)
    with pytest.raises(BaselineTimeUp):
        BASELINES[name](inst, past)
    options = MethodOptions(SolveOptions(time_limit=1.0), clock=clock)
    clock.advance(1.0)
    out = baseline_outcome(name, inst, options)
    assert out.status == Status.TIME_LIMIT
    assert out.solution is None and out.bound is None
    assert name in out.details["reason"] and "time limit" in out.details["reason"]


@pytest.mark.parametrize("name", sorted(BASELINES))
def test_a_baseline_within_its_limit_is_the_baseline_unlimited(name):
    inst = generate(30, 3, 2)
    out = baseline_outcome(name, inst, MethodOptions(SolveOptions(time_limit=60.0)))
    assert out.status == Status.FEASIBLE
    assert out.objective == pytest.approx(check_schedule(inst, BASELINES[name](inst)).objective)


def test_a_portion_is_a_share_of_the_limit_from_now_never_past_the_deadline():
    clock = FakeClock()
    d = Deadline.after(10.0, clock)
    clock.advance(4.0)
    assert (
        d.share_of_limit(0.45).limit == pytest.approx(4.5) and d.share_of_limit(0.45).start == 4.0
    )
    assert d.share_of_limit(0.45, cap=1.5).limit == 1.5
    clock.advance(4.0)  # 2 s left: a portion never ends past the deadline
    assert d.share_of_limit(0.45).limit == pytest.approx(2.0)
    never = Deadline.never(clock)
    assert (
        never.share_of_limit(0.1).limit is None and never.share_of_limit(0.1, cap=5.0).limit == 5.0
    )


# --- the exact route's stage budgets --------------------------------------------------------


def test_the_exact_route_splits_its_limit_into_the_stages_shares(monkeypatch):
    """Each stage stubbed to take a known time of the fake clock: the hint gets its share of
    the limit, the subset stage SUBSET_SHARE of what was left after it up to CHECK_GRACES
    graces before the limit (kept for the check), the search LNS_SHARE of that from its own
    start, the LP bound its share of the time left, and the final CP-SAT stage all that is
    left; and each stage is reported."""
    inst = generate(12, 4, 3)  # above SUBSET_MIN_TASKS: the subset stage and the search run
    assert inst.num_tasks > pipeline.SUBSET_MIN_TASKS
    assert pipeline.choose_strategy(inst, SolverSettings()).branch_share == 0
    limit, clock = 100.0, FakeClock()
    took = {"hint": 3.0, "subsets": 20.0, "lp": 5.0, "lns": 30.0}
    seen: dict[str, float | None] = {}
    hint_of = best_hint

    def hint(instance, deadline=None):
        seen["hint"] = deadline.limit
        clock.advance(took["hint"])
        return hint_of(instance)

    def subsets(instance, options, *, deadline, **kw):
        seen["subsets"] = deadline.limit
        clock.advance(took["subsets"])
        return SubsetBound(0.0, (), (), took["subsets"])

    def lp(instance, settings, budget, hint, prior, config):
        seen["lp"] = budget.left()
        clock.advance(took["lp"])
        return prior

    def search(instance, schedule, deadline, **kw):
        seen["lns"] = deadline.limit
        clock.advance(took["lns"])
        d = scale_data(instance)
        value = scaled_objective(d, instance, schedule)
        return LnsResult(schedule, value, value, 1, 0, took["lns"], 24)

    def final(instance, settings, deadline, hint, prior, config):
        seen["final"] = deadline.left()
        value = check_schedule(instance, hint).objective
        return RouteResult(hint, value, Proof(hit_limit=True), dict(prior.info))

    monkeypatch.setattr("dlsched.models.hare.routes.best_hint", hint)
    monkeypatch.setattr(pipeline, "subset_bound", subsets)
    monkeypatch.setattr(pipeline, "lp_bound_stage", lp)
    monkeypatch.setattr(pipeline, "improve", search)
    monkeypatch.setattr(pipeline, "cpsat_stage", final)
    out = run_method(inst, "exact", MethodOptions(SolveOptions(time_limit=limit), clock=clock))
    rest = limit - took["hint"] - CHECK_GRACES * grace(limit)
    assert seen["hint"] == pytest.approx(HINT_SHARE * limit)
    assert seen["subsets"] == pytest.approx(pipeline.SUBSET_SHARE * rest)
    assert seen["lp"] == pytest.approx(LP_SHARE * (rest - took["subsets"]))
    assert seen["lns"] == pytest.approx(pipeline.LNS_SHARE * rest)
    assert seen["final"] == pytest.approx(rest - took["subsets"] - took["lp"] - took["lns"])
    assert out.details["lns_steps"] == 1 and out.details["subset_bound"] == 0.0
    assert out.status == Status.TIME_LIMIT


def test_the_search_never_runs_past_the_time_left(monkeypatch):
    """When the earlier stages leave less than the search's share, the search ends with the
    route's deadline, and every CP-SAT step is handed at most what is left of it."""
    inst = generate(20, 3, 1, rounds=(1, 2), tasks=(1, 2))  # more windows than steps
    d = scale_data(inst)
    hint = best_hint(inst)[1]
    clock = FakeClock()
    route = Deadline.after(10.0, clock)
    clock.advance(9.0)  # 1 s left; the search's share alone would be 4.5 s
    search = route.share_of_limit(pipeline.LNS_SHARE)
    assert search.limit == pytest.approx(1.0)
    handed = record_time_limits(monkeypatch, lns)
    real = lns.reoptimize

    def step(*args):
        got = real(*args)
        clock.advance(0.35)  # each step takes 0.35 s of the clock
        return got

    monkeypatch.setattr(lns, "reoptimize", step)
    got = lns.improve(inst, hint, search, step_seconds=0.4)
    assert got.steps == 3  # 1.0, 0.65, 0.3 s left at their starts; then none
    assert handed == pytest.approx([0.4, 0.4, 0.3])
    assert scaled_objective(d, inst, got.schedule) <= scaled_objective(d, inst, hint)


# --- the room a route keeps for the work after it ----------------------------------------------


def test_sooner_ends_a_budget_earlier_and_never_before_its_start():
    clock = FakeClock()
    d = Deadline.after(10.0, clock)
    clock.advance(2.0)
    early = d.sooner(1.5)
    assert (early.limit, early.start, early.whole, early.left()) == (8.5, 0.0, 10.0, 6.5)
    assert d.sooner(20.0).limit == 0.0 and d.sooner(20.0).passed()
    assert Deadline.never(clock).sooner(1.0).limit is None


#: method -> (its status when the forked model is killed, the detail that says what replaced it)
FORKED = {
    "relaxation": (Status.TIME_LIMIT, ("model_built", False)),
    "relaxation-strong": (Status.TIME_LIMIT, ("model_built", False)),
    "exact-milp": (Status.TIME_LIMIT, ("returned", "greedy")),
    "hare": (Status.FEASIBLE, ("relaxation_status", "time_limit")),
    "hare-strong": (Status.FEASIBLE, ("relaxation_status", "time_limit")),
}


@pytest.mark.parametrize("method", sorted(FORKED))
def test_a_forked_model_is_killed_a_grace_before_the_limit_for_the_fallback(monkeypatch, method):
    """The Pyomo models (RL, its strengthening, the disjunctive model) are built and solved in
    a child whose own deadline ends FORK_GRACES graces before the method's: killed a grace
    past it, a grace before the limit, which the parent keeps for its fallback and the check.
    A fake clock: 0.2 s of the 2 s limit gone at the fork; the child is killed there."""
    from dlsched.solvers import deadline as deadline_module

    inst = generate(8, 3, 1)
    limit, clock = 2.0, FakeClock()
    handed = []

    def killed(fn, *args, seconds, label):
        child = next(a for a in args if isinstance(a, Deadline))
        handed.append((seconds, child.left()))
        return None

    monkeypatch.setattr(deadline_module, "call_with_deadline", killed)
    options = MethodOptions(SolveOptions(time_limit=limit), clock=clock).started()
    clock.advance(0.2)
    out = METHODS[method].runner()(inst, options)
    own = limit - 0.2 - FORK_GRACES * grace(limit)  # the child's deadline and its solver's
    assert handed == [(pytest.approx(own + grace(limit)), pytest.approx(own))]
    assert own + grace(limit) <= limit - 0.2 - grace(limit) + 1e-9  # a grace kept after it
    status, (key, value) = FORKED[method]
    assert out.status == status and out.details[key] == value
    assert out.bound == pytest.approx(combinatorial_bound(inst)["bound"])


def test_no_cpsat_model_is_begun_once_the_deadline_has_passed():
    """A passed deadline stops the build before its first task (and before CP-SAT's import):
    it looks at the clock once."""
    clock = FakeClock()
    stage = Deadline.after(0.5, clock)
    clock.advance(0.5)
    reads = clock.reads
    with pytest.raises(BuildTimeUp):
        build_cpsat(generate(12, 4, 3), deadline=stage)
    assert clock.reads == reads + 1


def test_a_cpsat_model_not_built_in_its_share_is_not_run_and_the_hint_stands(monkeypatch):
    """Building stops when BUILD_SHARE of the stage's time has gone (every look at the fake
    clock takes 10 ms here): CP-SAT is not run, the hint is returned, status time_limit."""
    inst = generate(12, 4, 3)
    hint = best_hint(inst)[1]
    handed = record_time_limits(monkeypatch, cpsat)
    clock = FakeClock(step=0.01)
    stage = Deadline.after(0.5, clock)
    with pytest.raises(BuildTimeUp):  # the build alone looks at the clock once per task
        build_cpsat(inst, deadline=stage.share_of_rest(BUILD_SHARE))
    no_lp = CpsatConfig(lp_bound=False)
    got = cpsat.solve_cpsat_native(inst, SolverSettings(), stage, hint, config=no_lp)
    assert handed == [] and got.schedule is hint
    assert got.info["cpsat_status"] == "not built (time limit)"
    assert got.info["returned"] == "hint"
    cert = got.certified(inst.name)
    assert cert.status == Status.TIME_LIMIT and cert.bound <= got.objective
    frozen = FakeClock()  # time stands still: the model is built and run with all of it
    cpsat.solve_cpsat_native(inst, SolverSettings(), Deadline.after(0.5, frozen), hint)
    assert handed == [pytest.approx(0.5)]


def test_the_search_ends_at_a_step_whose_model_cannot_be_built_in_time(monkeypatch):
    inst = generate(20, 3, 1, rounds=(1, 2), tasks=(1, 2))
    hint = best_hint(inst)[1]
    handed = record_time_limits(monkeypatch, lns)
    shares = []

    def late(*args, deadline, **kw):
        shares.append(deadline.limit)
        raise BuildTimeUp

    monkeypatch.setattr(lns, "build_cpsat", late)
    got = lns.improve(inst, hint, Deadline.after(10.0, FakeClock()))
    assert shares == [pytest.approx(BUILD_SHARE * 10.0)] and handed == []
    assert got.steps == 0 and got.schedule is hint


def test_the_hints_first_list_schedule_always_runs_and_the_rest_stop_at_the_deadline():
    inst = generate(12, 4, 3)
    clock = FakeClock()
    past = Deadline.after(1.0, clock)
    clock.advance(1.0)
    assert [name for name, _ in hint_candidates(inst, past)] == ["arrival/earliest-finish"]
    names = [name for name, _ in hint_candidates(inst)]
    assert len(names) == 8 + len(BASELINES) and names[0] == "arrival/earliest-finish"
