"""The online side of Hare (seed 004, Chen et al., IEEE TCC 2024): the paper's toy examples,
non-clairvoyance, cross-checks with the offline baselines, the offline optimum as a floor, and
GPU_Grouping against brute force."""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from fake_clock import FakeClock, forked
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import brute_force_spread, mixed

from dlsched.errors import OptionError
from dlsched.instances import load
from dlsched.models import MethodOptions, run_method
from dlsched.models.hare.baselines import gavel_fifo, sched_homo
from dlsched.models.hare.budget import GROUPING_SHARE
from dlsched.models.hare.check import check_schedule
from dlsched.models.hare.generate import GPU_TYPES
from dlsched.models.hare.instance import HareInstance, HareJob
from dlsched.models.hare.online.common import OnlineHare, average_jct, run_policy, task_gpu_time
from dlsched.models.hare.online.grouping import (
    build_grouping_model,
    build_pooled_model,
    gpu_classes,
    greedy_grouping,
    group_gpus,
    speed_matrix,
    spread,
)
from dlsched.models.hare.online.hlas import make_thresholds, round_times
from dlsched.models.hare.online.methods import ONLINE_METHODS
from dlsched.models.hare.online.predictors import BasePredictor, History, Oracle
from dlsched.solvers import SolveOptions, Status, solve
from dlsched.solvers.deadline import NEVER, Deadline, grace

FIG12 = "hare/tcc2024-fig12"
FIG9 = "hare/tcc2024-fig9"
#: Policies that know nothing of a job's rounds (HLAS-P's "none" predictor included).
BLIND = [
    ("hlas", {}),
    ("hlas", {"group_idle": "any"}),
    ("hlas-p", {"predictor": "none"}),
    ("online-fifo", {}),
    ("2d-las", {}),
    ("sched-homo-unit", {}),
    ("sched-allox-unit", {}),
]


def _run(inst, method, **params):
    return run_method(inst, method, MethodOptions(params=params))


# --- Figs. 12, 9 and 10 -----------------------------------------------------------------------
def test_fig12_hlas_average_jct_is_6_7():
    out = _run(load(FIG12), "hlas")
    assert out.evaluation.completion == (4.0, 7.0, 9.0)  # round robin, one round a turn
    assert round(out.details["average_jct"], 1) == 6.7


def test_fig12_full_knowledge_is_the_certified_optimum_5_3():
    inst = load(FIG12)
    exact = run_method(inst, "exact")
    oracle = _run(inst, "hlas-p", predictor="oracle")
    assert exact.status == Status.OPTIMAL and exact.objective == 16.0
    assert oracle.objective == exact.objective
    assert round(oracle.details["average_jct"], 1) == 5.3


def test_fig12_partial_prediction_j3_at_least_3_rounds_gives_5_7():
    out = _run(load(FIG12), "hlas-p", predictor="hint", hints={"J3": 3})
    assert out.evaluation.completion == (3.0, 5.0, 9.0)  # J1, J2 run first, then J3 alone
    assert round(out.details["average_jct"], 1) == 5.7


class Priority(OnlineHare):
    """Fig. 9's two schedules: a fixed job order; each job's round goes on the idle GPUs
    fastest for it, one task per GPU."""

    def __init__(self, instance, order):
        super().__init__(instance)
        self.order = order

    def assign(self, now):
        out = []
        for n in self.order:
            speed = self.instance.jobs[n].train_time
            for g in sorted(self.free_gpus, key=lambda m: (speed[m], m)):
                if n not in self.ready:
                    break
                out.append(self.start_task(n, g, now))
        return out


def test_fig9_giving_job_b_priority_shortens_the_average_jct():
    """Counting tasks would put J_A (4 tasks) first; J_B (6 tasks, faster) first is better and
    is the certified optimum. HLAS's size per round (T_n) ranks J_B below J_A, as the paper
    asks of "attained service"."""
    inst = load(FIG9)
    a_first, b_first = (
        check_schedule(inst, run_policy(inst, Priority(inst, o))[0]) for o in ((0, 1), (1, 0))
    )
    assert average_jct(inst, a_first.completion) == 4.0  # (3 + 5) / 2
    assert average_jct(inst, b_first.completion) == 3.75  # (5 + 2.5) / 2
    exact = run_method(inst, "exact")
    assert exact.status == Status.OPTIMAL and exact.objective == b_first.objective
    t_bar = round_times(inst, group_gpus(inst, 1, "greedy", deadline=NEVER).groups)
    assert t_bar[1] < t_bar[0] and inst.jobs[0].tasks_per_round < inst.jobs[1].tasks_per_round


def test_fig10_task_gpu_time_depends_on_which_gpus_are_idle():
    """Fig. 10 (the jobs of Fig. 9): task-GPU time ranks J_B first on GPUs 1-2 and J_A first on
    GPUs 3-4."""
    a, b = (j.train_time for j in load(FIG9).jobs)
    assert task_gpu_time(4, [0, 1], a) == 12
    assert task_gpu_time(6, [0, 1], b) == 8  # B first on GPUs 1-2
    assert task_gpu_time(4, [2, 3], a) == pytest.approx(7.2)
    assert task_gpu_time(6, [2, 3], b) == 9  # A first on GPUs 3-4


# --- random instances ------------------------------------------------------------------------
@st.composite
def instances(draw, max_jobs=4, max_gpus=3, shape=None):
    gpus = draw(st.integers(1, max_gpus))
    types = [list(GPU_TYPES)[draw(st.integers(0, 3))] for _ in range(gpus)]
    jobs = []
    for n in range(draw(st.integers(1, max_jobs))):
        base = draw(st.integers(1, 4))
        sync = draw(st.integers(0, 2)) / 2
        rounds, tasks = shape or (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
        jobs.append(
            HareJob(
                f"j{n}",
                float(draw(st.integers(0, 6))),
                float(draw(st.integers(1, 3))),
                rounds,
                tasks,
                tuple(round(base * GPU_TYPES[t][0], 1) for t in types),
                tuple(round(sync * GPU_TYPES[t][1], 1) for t in types),
            )
        )
    names = tuple(f"{t}-{k}" for k, t in enumerate(types))
    return HareInstance("random", names, tuple(jobs))


def _items(out):
    return {(e.task, e.gpu, e.start) for e in out.solution.entries}


@settings(max_examples=25)
@given(instances(), st.data())
def test_policies_never_read_a_jobs_rounds_before_it_ends(inst, data):
    """Non-clairvoyance: give one job more rounds; until it ended in the shorter instance, every
    policy starts the same tasks at the same times on the same GPUs."""
    x = data.draw(st.integers(0, inst.num_jobs - 1))
    longer = replace(
        inst,
        jobs=tuple(
            replace(j, rounds=j.rounds + 2) if n == x else j for n, j in enumerate(inst.jobs)
        ),
    )
    for method, params in BLIND:
        short, long_ = _run(inst, method, **params), _run(longer, method, **params)
        end = short.evaluation.completion[x]
        before = {i for i in _items(short) if i[2] < end - 1e-9}
        assert before == {i for i in _items(long_) if i[2] < end - 1e-9}, method


@settings(max_examples=25)
@given(instances())
def test_hlas_p_without_information_is_hlas(inst):
    assert _items(_run(inst, "hlas")) == _items(_run(inst, "hlas-p", predictor="none"))


@settings(max_examples=25)
@given(instances(max_jobs=5))
def test_online_fifo_on_the_engine_is_the_offline_gavel_fifo(inst):
    online = _run(inst, "online-fifo")
    offline = check_schedule(inst, gavel_fifo(inst))
    assert online.objective == pytest.approx(offline.objective)
    assert online.evaluation.completion == pytest.approx(offline.completion)


@settings(max_examples=20)
@given(instances(max_jobs=5, shape=(2, 2)))
def test_sched_homo_unit_is_sched_homo_when_sizes_are_equal(inst):
    jobs = tuple(replace(j, train_time=inst.jobs[0].train_time) for j in inst.jobs)
    inst = replace(inst, jobs=tuple(replace(j, sync_time=inst.jobs[0].sync_time) for j in jobs))
    online = _run(inst, "sched-homo-unit")
    assert online.objective == pytest.approx(check_schedule(inst, sched_homo(inst)).objective)


TINY = [
    load(FIG12),
    load("hare/toy-2gpu"),
    HareInstance(
        "tiny-hetero",
        ("V100", "K80"),
        (
            HareJob("a", 0.0, 1.0, 2, 2, (1.0, 3.4), (0.5, 0.8)),
            HareJob("b", 1.0, 2.0, 1, 1, (2.0, 6.8), (0.0, 0.0)),
            HareJob("c", 1.0, 1.0, 3, 1, (1.0, 3.4), (0.5, 0.8)),
        ),
    ),
]


@pytest.mark.parametrize("inst", TINY, ids=lambda i: i.name)
def test_every_online_policy_is_at_least_the_certified_offline_optimum(inst):
    exact = run_method(inst, "exact", MethodOptions(solve=SolveOptions(time_limit=20)))
    assert exact.status == Status.OPTIMAL
    for method in ONLINE_METHODS:
        params = {"predictor": "oracle"} if method == "hlas-p" else {}
        assert _run(inst, method, **params).objective >= exact.objective - 1e-9, method


@settings(max_examples=15)
@given(instances(max_jobs=3, max_gpus=4))
def test_every_policy_schedules_every_task_feasibly(inst):
    for method in ONLINE_METHODS:
        out = _run(inst, method)  # the checker ran inside; the outcome is verified
        assert len(out.solution.entries) == inst.num_tasks
        assert out.details["average_jct"] > 0


# --- HLAS-P's predictors (Section V-A) -------------------------------------------------------
def _jobs(*spec):
    """Jobs (name, rounds[, arrival]) of one task on one GPU."""
    return HareInstance(
        "named",
        ("GPU",),
        tuple(
            HareJob(n, float(a[0]) if a else 0.0, 1.0, r, 1, (1.0,), (0.0,)) for n, r, *a in spec
        ),
    )


def test_history_averages_with_finished_jobs_of_the_same_name_or_user():
    inst = _jobs(("resnet-1", 8), ("bert-1", 5), ("vgg-1", 5), ("resnet-2", 9))
    users = {"resnet-1": "alice", "bert-1": "alice", "vgg-1": "bob"}
    with_users, alone = History(3, users=users), History(3)
    for p in (with_users, alone):
        p.reset(inst)
        p.finished(0, 8)  # resnet-1 ran 8 rounds
    # conservative fit min(3, left) = 3, averaged with the 8 rounds of the similar job: 5
    assert [with_users.predict(n, 0) for n in (1, 2, 3)] == [5, 3, 5]
    assert [alone.predict(n, 0) for n in (1, 2, 3)] == [3, 3, 5]  # no user: only the name
    assert with_users.predict(1, 4) == 2  # (min(3, 1) + 8 - 4) / 2


def test_history_is_more_conservative_for_a_nas_job_far_behind_its_group():
    inst = _jobs(("a", 9), ("b", 9), ("c", 9), ("d", 9))
    nas = History(3, nas_groups={"search": ["a", "b", "c"]})
    nas.reset(inst)
    nas.observed(0, 6)  # the leader ran 6 rounds
    assert nas.predict(1, 2) == 1  # 2 <= 6 / 2: far behind, alpha 3 halved (floor)
    assert nas.predict(2, 4) == 3  # 4 > 3: not far behind
    assert nas.predict(3, 0) == 3  # not in the group
    zero = History(3, nas_groups={"search": ["a", "b"]}, nas_factor=0)
    zero.reset(inst)
    zero.finished(1, 2)  # a member killed after 2 rounds counts as progress too
    assert zero.predict(0, 1) == 0 and zero.predict(0, 2) == 3


def test_nas_groups_reach_hlas_p_as_a_method_parameter():
    """nas-2 arrives when its NAS peer has run 2 rounds: far behind, its prediction (3 more
    rounds, equal to other's) drops to 1, and other no longer waits behind it."""
    inst = _jobs(("nas-1", 6), ("nas-2", 6, 2), ("other", 4, 2))
    plain = _run(inst, "hlas-p")
    nas = _run(inst, "hlas-p", nas_groups={"g": ["nas-1", "nas-2"]})
    assert plain.details["predictor"] == nas.details["predictor"] == "history"
    assert nas.evaluation.completion[2] < plain.evaluation.completion[2]


@settings(max_examples=15)
@given(instances(max_jobs=5))
def test_history_without_similar_jobs_or_peers_is_the_conservative_fit(inst):
    """Distinct name stems, one user each, NAS groups of one: nothing to adjust by."""
    names = [f"{chr(97 + n)}x{n}" for n in range(inst.num_jobs)]  # stems ax, bx, ...
    inst = replace(
        inst, jobs=tuple(replace(j, name=m) for j, m in zip(inst.jobs, names, strict=True))
    )
    alone = {
        "users": {m: m for m in names},
        "nas_groups": {m: [m] for m in names},
        "nas_factor": 0,
    }
    conservative = _items(_run(inst, "hlas-p", predictor="conservative"))
    assert _items(_run(inst, "hlas-p", predictor="history", **alone)) == conservative


def test_a_predictor_object_plugs_into_hlas_p():
    fig12 = load(FIG12)
    by_name = _run(fig12, "hlas-p", predictor="oracle")
    assert _items(_run(fig12, "hlas-p", predictor=Oracle())) == _items(by_name)

    class Pessimist(BasePredictor):
        name = "pessimist"

        def predict(self, n, rounds_done):
            return 0

    out = _run(fig12, "hlas-p", predictor=Pessimist())
    assert out.details["predictor"] == "pessimist"
    assert _items(out) == _items(_run(fig12, "hlas"))


# --- thresholds and options ----------------------------------------------------------------
def test_linear_thresholds_put_k_rounds_of_the_quantum_in_queue_k():
    th = make_thresholds(1.5, queues=4)
    assert th.upper == (1.5, 3.0, 4.5)
    assert [th.queue_of(x) for x in (0, 1.49, 1.5, 3.0 - 1e-12, 4.5, 1e9)] == [0, 0, 1, 2, 3, 3]
    assert make_thresholds(1.0, queues=4, spacing="geometric").upper == (1.0, 2.0, 4.0)


@pytest.mark.parametrize(
    ("method", "params", "name"),
    [
        ("hlas", {"quantum": -1}, "quantum"),
        ("hlas", {"queues": 0}, "queues"),
        ("hlas", {"spacing": "cubic"}, "spacing"),
        ("hlas", {"thresholds": [2, 1]}, "thresholds"),
        ("hlas", {"groups": 0}, "groups"),
        ("hlas", {"grouping": "random"}, "grouping"),
        ("hlas", {"group_idle": "some"}, "group_idle"),
        ("hlas-p", {"predictor": "crystal-ball"}, "predictor"),
        ("hlas-p", {"predictor": "hint", "hints": {"J9": 1}}, "hints"),
        ("hlas-p", {"predictor": "conservative", "alpha": 0}, "alpha"),
        ("hlas-p", {"predictor": object()}, "predictor"),
        ("hlas-p", {"users": {"J1": 7}}, "users"),
        ("hlas-p", {"users": {"J9": "alice"}}, "users"),
        ("hlas-p", {"nas_groups": {"g": ["J1", "J9"]}}, "nas_groups"),
        ("hlas-p", {"nas_groups": ["J1"]}, "nas_groups"),
        ("hlas-p", {"nas_behind": 0}, "nas_behind"),
        ("hlas-p", {"nas_factor": 1.5}, "nas_factor"),
    ],
)
def test_bad_options_name_the_option(method, params, name):
    with pytest.raises(OptionError) as err:
        _run(load(FIG12), method, **params)
    assert err.value.option == name and "\n" not in str(err.value)


# --- GPU_Grouping ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("counts", "groups"), [((2, 1, 1, 2), 2), ((3, 2, 1), 3), ((1, 1, 2, 2), 3)]
)
def test_grouping_milps_reach_the_brute_force_optimum(counts, groups):
    inst = mixed(counts)
    s = speed_matrix(inst)
    best = brute_force_spread(s, groups)
    for pooled in (True, False):
        res = group_gpus(inst, groups, "exact", pooled=pooled, deadline=Deadline.after(20))
        assert res.status == Status.OPTIMAL
        assert res.spread == pytest.approx(best, abs=1e-9)
        assert spread(s, res.groups) == res.spread
    greedy = group_gpus(inst, groups, "greedy", deadline=NEVER)
    assert greedy.spread >= best - 1e-12


def _labellings(m, names):
    """The 0/1 assignments of 4 GPUs to 2 groups (z[g] = 1: GPU g in group 1) that satisfy the
    named constraints."""
    import pyomo.environ as pyo

    out = []
    for z in itertools.product((0, 1), repeat=4):
        for g in range(4):
            m.z[g, 0].fix(1 - z[g])
            m.z[g, 1].fix(z[g])
        if all(
            (c.lower is None or pyo.value(c.body) >= c.lower - 1e-9)
            and (c.upper is None or pyo.value(c.body) <= c.upper + 1e-9)
            for name in names
            for c in getattr(m, name).values()
        ):
            out.append(z)
    return out


def test_grouping_symmetry_breaking_keeps_every_partition():
    """4 GPUs in 2 non-empty groups: Stirling S(4, 2) = 7 partitions, exactly one labelling each
    under the lowest-GPU ordering. With all 4 GPUs identical, the partitions up to swaps are
    {1, 3} and {2, 2}: both survive the identical-GPU ordering, and fewer labellings remain."""
    m = build_grouping_model(np.ones((1, 4)), 2)
    groups = ("one_group", "non_empty", "lowest_gpu_order")
    assert len(_labellings(m, groups)) == 7
    kept = _labellings(m, (*groups, "identical_order"))
    assert {tuple(sorted((sum(z), 4 - sum(z)))) for z in kept} == {(1, 3), (2, 2)}
    assert len(kept) < 7


def test_pooled_grouping_of_16_gpus_of_4_types_in_4_groups_is_certified():
    inst = mixed((7, 5, 3, 1), jobs=8)
    s = speed_matrix(inst)
    assert len(gpu_classes(s)) == 4
    res = group_gpus(inst, 4, "exact", pooled=True, deadline=Deadline.after(10))
    assert res.status == Status.OPTIMAL
    greedy = greedy_grouping(s, 4)
    assert spread(s, greedy) >= res.spread - 1e-9
    model = build_pooled_model(s, gpu_classes(s), 4)
    again = solve(model, "highs", SolveOptions(time_limit=10))
    assert again.objective == pytest.approx(res.spread, abs=1e-6)


#: 14 GPUs in 2 groups: S(14, 2) = 8,191 groupings, more than are listed, so the MILP runs
BEYOND_LISTING = (4, 4, 3, 3)


def test_the_exact_grouping_is_forked_with_what_is_left_of_its_share(monkeypatch):
    # GPU_Grouping is built, handed to HiGHS and solved in a child (none of it can stop), given
    # what is left of its deadline and killed a grace past it (a fake clock: 4 of 10 s gone);
    # the online methods give it GROUPING_SHARE of their limit, the simulation follows it
    inst = mixed(BEYOND_LISTING)
    handed = forked(monkeypatch)
    clock = FakeClock()
    deadline = Deadline.after(10.0, clock)
    clock.advance(4.0)
    res = group_gpus(inst, 2, "exact", deadline=deadline)
    assert handed == [(pytest.approx(6.0 + grace(10.0)), pytest.approx(6.0))]
    assert res.status == Status.OPTIMAL
    options = MethodOptions(SolveOptions(time_limit=10.0), {"grouping": "exact"}, clock=clock)
    out = run_method(inst, "hlas", options)
    share = GROUPING_SHARE * 10.0  # from the method's start
    assert handed[1:] == [(pytest.approx(share + grace(10.0)), pytest.approx(share))]
    assert out.details["grouping"] == "exact" and out.details["grouping_status"] == "optimal"


def test_a_grouping_killed_at_its_limit_is_the_greedy_one_and_says_so(monkeypatch):
    inst = mixed(BEYOND_LISTING)
    s = speed_matrix(inst)
    forked(monkeypatch, kill=True)
    res = group_gpus(inst, 2, "exact", deadline=Deadline.after(10.0))
    assert res.groups == greedy_grouping(s, 2) and res.spread == spread(s, res.groups) > 0
    assert res.status == Status.TIME_LIMIT
    assert res.info["solver_status"] == "killed at the time limit"
    options = MethodOptions(SolveOptions(time_limit=10.0), {"grouping": "exact"})
    out = run_method(inst, "hlas", options)
    assert out.status == Status.FEASIBLE and out.details["grouping_status"] == "time_limit"


def test_one_group_has_no_spread_and_the_round_time_of_the_whole_cluster():
    inst = mixed((1, 1, 1, 1))
    res = group_gpus(inst, 1, "greedy", deadline=NEVER)
    assert res.spread == 0 and res.status == Status.OPTIMAL
    s = 1 / (inst.tc + inst.ts)
    assert round_times(inst, res.groups) == pytest.approx(1 / s.sum(axis=1))


# --- competitive ratios ----------------------------------------------------------------------
def test_ratio_sweep_records_every_policy_against_the_certified_optimum(tmp_path):
    import json

    from dlsched import families
    from dlsched.instances import instance_hash
    from dlsched.models.hare.online.ratios import ratio_instance, ratio_sweep

    insts = [ratio_instance(3, 2, seed, load, "high") for seed, load in ((0, 0.0), (1, 2.0))]
    worst = ratio_sweep(insts, tmp_path / "ratios.jsonl", worst_dir=tmp_path / "worst")
    assert set(worst) == set(ONLINE_METHODS)
    for rec in worst.values():
        assert rec["reference_kind"] == "optimum" and rec["ratio"] >= 1 - 1e-9
        saved = json.loads(Path(rec["saved"]).read_text())  # the instance of the worst ratio
        inst = families.get("hare").from_dict(saved["instance"], rec["saved"])
        assert instance_hash(inst) == rec["instance_hash"] == saved["record"]["instance_hash"]
    lines = (tmp_path / "ratios.jsonl").read_text().splitlines()
    assert len(lines) == 2 * (1 + len(ONLINE_METHODS))
    again = ratio_sweep(insts, tmp_path / "ratios.jsonl")  # resumes: nothing new to run
    assert len((tmp_path / "ratios.jsonl").read_text().splitlines()) == len(lines)
    assert again.keys() == worst.keys()
