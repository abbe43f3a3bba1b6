"""GPU_Grouping's LP relaxation rounded into a grouping (seed 004, TCC 2024 Section IV-C): the
roundings are partitions into non-empty groups, their spread lies above the brute-force optimum
and that above the LP value; HLAS on a rounded grouping is checked like every online method,
keeps its grouping's share of the limit and is the same for the same seed."""

from __future__ import annotations

import numpy as np
import pytest
from fake_clock import FakeClock, forked
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import brute_force_spread, mixed

from dlsched.errors import OptionError
from dlsched.models import MethodOptions, run_method
from dlsched.models.hare.budget import GROUPING_SHARE
from dlsched.models.hare.check import check_schedule
from dlsched.models.hare.generate import generate
from dlsched.models.hare.online.grouping import as_groups, group_gpus, speed_matrix, spread
from dlsched.models.hare.online.methods import ONLINE_METHODS
from dlsched.models.hare.online.rounding import (
    KILLED,
    ROUNDINGS,
    lp_grouping,
    relaxed_grouping_model,
    repair,
    round_z,
)
from dlsched.solvers import SolveOptions, SolverSettings, Status, solve
from dlsched.solvers.deadline import NEVER, Deadline, grace

SMALL = [
    (mixed((2, 1, 1, 2)), 2),
    (mixed((3, 2, 1), jobs=4, seed=1), 3),
    (generate(jobs=6, workers=6, seed=1, shape="unrelated"), 2),
    (generate(jobs=6, workers=7, seed=2, shape="unrelated"), 3),
]


@pytest.mark.parametrize(("inst", "groups"), SMALL, ids=lambda x: getattr(x, "name", str(x)))
def test_roundings_lie_above_the_optimum_and_it_above_the_lp_value(inst, groups):
    s = speed_matrix(inst)
    best = brute_force_spread(s, groups)
    exact = group_gpus(inst, groups, "exact", deadline=Deadline.after(20))
    assert exact.status == Status.OPTIMAL and exact.spread == pytest.approx(best, abs=1e-9)
    for how in ROUNDINGS:
        res = lp_grouping(inst, groups, how, SolverSettings(seed=3), deadline=Deadline.after(20))
        lp = res.info["lp_value"]
        assert res.method == how and res.info["lp_status"] == "optimal"
        assert 0 <= lp <= best + 1e-9 <= res.spread + 1e-9
        assert res.spread == spread(s, res.groups)
        assert res.bound is not None and res.bound <= res.spread
        # optimal only when the rounding meets the LP value
        assert (res.status == Status.OPTIMAL) == (res.spread - lp <= 1e-6)


def test_the_relaxation_without_the_ordering_rows_is_zero_and_with_them_positive():
    """z_mu = 1/|U| gives every group the same speed: the paper's (4)-(6) relaxed bound
    nothing; the lowest-GPU ordering pins the first GPUs and lifts the bound on distinct GPUs."""
    inst, groups = SMALL[2]
    s = speed_matrix(inst)
    m = relaxed_grouping_model(s, groups)
    with_rows = solve(m, "highs", SolveOptions(time_limit=20))
    m.lowest_gpu_order.deactivate()
    m.identical_order.deactivate()
    without = solve(m, "highs", SolveOptions(time_limit=20))
    assert with_rows.status == without.status == Status.OPTIMAL
    assert without.objective == pytest.approx(0.0, abs=1e-9)
    assert 0 < with_rows.objective <= brute_force_spread(s, groups)


@st.composite
def memberships(draw):
    gpus = draw(st.integers(1, 8))
    groups = draw(st.integers(1, gpus))
    member = draw(st.lists(st.integers(0, groups - 1), min_size=gpus, max_size=gpus))
    rows = st.lists(st.floats(0, 1), min_size=groups, max_size=groups)
    z = np.array(draw(st.lists(rows, min_size=gpus, max_size=gpus))).reshape(gpus, groups)
    return member, z


@settings(max_examples=200, deadline=None)
@given(memberships())
def test_repair_fills_every_group_and_moves_one_gpu_per_empty_group(case):
    member, z = case
    groups = z.shape[1]
    fixed = repair(member, z)
    assert sorted(set(fixed)) == list(range(groups))
    moved = [g for g in range(len(member)) if fixed[g] != member[g]]
    assert len(moved) == groups - len(set(member))
    assert all(fixed[g] not in member for g in moved)  # each went to a group that was empty


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_an_integral_z_rounds_to_its_own_grouping(data):
    gpus = data.draw(st.integers(1, 8))
    groups = data.draw(st.integers(1, gpus))
    more = st.lists(st.integers(0, groups - 1), min_size=gpus - groups, max_size=gpus - groups)
    member = data.draw(st.permutations([*range(groups), *data.draw(more)]))
    z = np.eye(groups)[member]
    s = np.random.default_rng(0).uniform(0.1, 1.0, size=(3, gpus))
    for how in ROUNDINGS:
        assert round_z(s, z, how, seed=data.draw(st.integers(0, 9))) == as_groups(member, groups)


def test_the_random_rounding_is_the_same_for_the_same_seed():
    inst, groups = SMALL[3]
    runs = {
        seed: [
            lp_grouping(inst, groups, "lp-random", SolverSettings(seed=seed), deadline=NEVER)
            for _ in range(2)
        ]
        for seed in (0, 1, 2)
    }
    for first, again in runs.values():
        assert first.groups == again.groups and first.info["seed"] == again.info["seed"]
    s = speed_matrix(inst)
    z = np.full((inst.num_gpus, groups), 1 / groups)  # every draw possible: seeds differ
    drawn = {round_z(s, z, "lp-random", seed, samples=1) for seed in range(20)}
    assert len(drawn) > 1


def test_the_lp_methods_are_registered_as_roundings():
    for name in ("hlas-lp", "hlas-lp-random"):
        m = ONLINE_METHODS[name]
        assert "GPU_Grouping (4)-(6)" in m.rounds and m.guarantee == "none"
        assert "grouping" not in m.params and "groups" in m.params
    with pytest.raises(OptionError) as err:
        run_method(mixed((2, 2)), "hlas", MethodOptions(params={"grouping": "lp"}))
    assert err.value.option == "grouping" and "lp-round" in err.value.reason


def test_hlas_on_a_rounded_grouping_is_checked_and_above_the_offline_optimum():
    inst = mixed((2, 1, 1, 2), jobs=3)
    exact = run_method(inst, "exact", MethodOptions(SolveOptions(time_limit=20)))
    assert exact.status == Status.OPTIMAL
    for name, how in (("hlas-lp", "lp-round"), ("hlas-lp-random", "lp-random")):
        out = run_method(inst, name, MethodOptions(SolveOptions(time_limit=20, seed=4)))
        assert out.objective == pytest.approx(check_schedule(inst, out.solution).objective)
        assert out.objective >= exact.objective - 1e-9
        assert out.status == Status.FEASIBLE and out.bound is None  # the LP bounds the spread
        d = out.details
        assert (
            d["grouping"] == how
            and d["lp_status"] == "optimal"
            and d["lp_value"] <= d["grouping_spread"] + 1e-9
        )
        gpus = sorted(inst.gpus.index(g) for grp in d["groups"] for g in grp)
        assert gpus == list(range(inst.num_gpus)) and all(d["groups"])


def test_hlas_with_a_rounding_named_is_the_lp_method():
    inst = mixed((2, 1, 1, 2), jobs=3)
    opts = SolveOptions(time_limit=20, seed=7)
    named = run_method(inst, "hlas", MethodOptions(opts, {"grouping": "lp-random"}))
    method = run_method(inst, "hlas-lp-random", MethodOptions(opts))
    assert named.details["groups"] == method.details["groups"]
    assert named.objective == method.objective


def test_the_relaxation_is_forked_with_what_is_left_of_its_share(monkeypatch):
    inst = mixed((2, 1, 1, 2))
    handed = forked(monkeypatch)
    clock = FakeClock()
    deadline = Deadline.after(10.0, clock)
    clock.advance(4.0)
    res = lp_grouping(inst, 2, "lp-round", deadline=deadline)
    assert handed == [(pytest.approx(6.0 + grace(10.0)), pytest.approx(6.0))]
    assert res.method == "lp-round" and res.info["lp_status"] == "optimal"
    out = run_method(inst, "hlas-lp", MethodOptions(SolveOptions(time_limit=10.0), clock=clock))
    share = GROUPING_SHARE * 10.0  # from the method's start
    assert handed[1:] == [(pytest.approx(share + grace(10.0)), pytest.approx(share))]
    assert out.details["grouping"] == "lp-round"


def test_a_relaxation_killed_at_its_limit_gives_the_greedy_grouping_and_says_so(monkeypatch):
    inst = mixed((2, 1, 1, 2))
    forked(monkeypatch, kill=True)
    res = lp_grouping(inst, 2, "lp-random", deadline=Deadline.after(10.0))
    assert res.method == "greedy" and res.status == Status.TIME_LIMIT
    assert res.info == {"lp_status": KILLED, "lp_value": None}
    assert res.groups == group_gpus(inst, 2, "greedy", deadline=NEVER).groups
    out = run_method(inst, "hlas-lp", MethodOptions(SolveOptions(time_limit=10.0)))
    assert out.details["grouping"] == "greedy" and out.details["grouping_status"] == "time_limit"
    assert out.details["lp_status"] == KILLED and out.details["lp_value"] is None


def test_one_group_needs_no_solver(monkeypatch):
    inst = mixed((1, 2, 1))
    handed = forked(monkeypatch)
    res = lp_grouping(inst, 1, "lp-round", deadline=Deadline.after(10.0))
    assert handed == [] and res.groups == ((0, 1, 2, 3),) and res.status == Status.OPTIMAL
