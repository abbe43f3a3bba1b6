"""A user's online ddlwmp policy: the same flow time as the shipped policy it re-implements,
the certified bound beside it, its wrong decisions refused in one line, and the proof that it
cannot know a job's true iterations (it sees the prediction)."""

from __future__ import annotations

import dataclasses
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from user_policies import Fixed, Recorder, examples, same_until, slot_fields

from dlsched import families
from dlsched.errors import UserCodeError
from dlsched.models import MethodOptions, run_method
from dlsched.models.ddlwmp.policy import DdlwmpJobView, DdlwmpView, Start, run_user_policy
from dlsched.online.policy import Wake

DDLWMP = families.get("ddlwmp")


def instance(seed: int, jobs: int = 8, gpus: int = 16):
    return DDLWMP.generate(jobs, gpus, seed)


@pytest.mark.parametrize("seed", range(4))
def test_fifo_of_ones_own_is_wcs_subtime(seed):
    inst = instance(seed)
    mine = DDLWMP.run_policy(inst, examples.DdlwmpFifo(), MethodOptions())
    shipped = run_method(inst, "wcs-subtime", MethodOptions())
    assert mine.method == "ddlwmp-fifo"
    assert mine.details["flow_time_s"] == pytest.approx(shipped.details["flow_time_s"])
    assert mine.solution == shipped.solution


def test_bound_and_gap_as_the_shipped_policies():
    inst = instance(5)
    out = run_user_policy(inst, examples.DdlwmpFifo(), MethodOptions(bound=True))
    d = out.details
    assert d["flow_time_bound_s"] <= d["flow_time_s"] * (1 + 1e-9)
    assert 0 <= d["flow_time_gap"] <= 1 and "bound_time" in d


def test_the_policy_cannot_know_a_jobs_true_iterations():
    a = instance(3, jobs=6)
    jobs = [dataclasses.replace(j, predicted_iterations=j.iterations) for j in a.jobs]
    a = dataclasses.replace(a, jobs=tuple(jobs))
    k = 0
    b = dataclasses.replace(
        a, jobs=(dataclasses.replace(jobs[k], iterations=jobs[k].iterations * 3), *jobs[1:])
    )
    runs = []
    for inst in (a, b):
        rec = Recorder(examples.DdlwmpFifo())
        run_user_policy(inst, rec, MethodOptions())
        runs.append(rec.views)
    shared, equal = same_until(runs[0], runs[1], k)
    assert shared >= 1 and equal  # identical until job k ends in one of them
    assert runs[0] != runs[1]
    fields = slot_fields(DdlwmpJobView) | slot_fields(DdlwmpView)
    assert not fields & {"iterations", "end", "duration", "instance", "completion"}
    assert all(not hasattr(v, "__dict__") for v in (runs[0][0], runs[0][0].jobs[0]))


def one_at_zero():
    inst = instance(1, jobs=2)
    jobs = tuple(dataclasses.replace(j, release=0.0) for j in inst.jobs)
    return dataclasses.replace(inst, jobs=jobs)


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        ([Start(7)], "no such released unfinished job"),
        ([Start(0), Start(0)], "already running"),
        ([Start(0, {99: 1})], "no such server"),
        ([Start(0, {0: 1000})], "free GPUs"),
        ([Start(0, {0: 0})], "needs"),
        ([Start(0, [0])], "servers is not a mapping"),
        (["start 0"], "expected Start(job="),
        ({"job": 0}, "expected a sequence of Start("),
        ([Wake(0.0)], "later than now"),
    ],
)
def test_wrong_decisions_are_refused_in_one_line(answer, words):
    with pytest.raises(UserCodeError) as err:
        run_user_policy(one_at_zero(), Fixed(answer), MethodOptions())
    assert words in str(err.value) and "\n" not in str(err.value)


def test_a_policy_that_starts_nothing_is_refused():
    with pytest.raises(UserCodeError, match=r"started nothing while jobs waited at t=0 "):
        run_user_policy(one_at_zero(), Fixed([]), MethodOptions())


def test_a_policy_that_waits_may_wake_later():
    class Late:
        def decide(self, view):
            if view.now < 3 * view.slot_s:
                return [Wake(3 * view.slot_s)]
            return [Start(j.index) for j in view.waiting if j.gpus <= view.free_gpus][:1]

    out = run_user_policy(one_at_zero(), Late(), MethodOptions())
    assert min(out.solution.starts) == pytest.approx(3 * one_at_zero().cluster.slot_s)


class RandomPolicy:
    """Any valid decision: waiting jobs in random order, each started (on random servers
    with room, or the default placement) or not, at least one when one fits."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def decide(self, view):
        free = list(view.free)
        out: list = []
        jobs = list(view.waiting)
        self.rng.shuffle(jobs)
        for job in jobs:
            if job.gpus > sum(free) or (out and self.rng.random() < 0.4):
                continue
            if self.rng.random() < 0.5:
                out.append(Start(job.index))
                break  # the default placement reads the free GPUs: one per decision
            caps, need = {}, job.gpus
            for m in self.rng.sample(range(len(free)), len(free)):
                take = min(free[m], need)
                if take:
                    caps[m], need = take, need - take
                    free[m] -= take
            out.append(Start(job.index, caps))
        return out


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), policy_seed=st.integers(0, 10_000))
def test_any_valid_policy_passes_the_checker(seed, policy_seed):
    inst = DDLWMP.generate(5, 16, seed)
    out = run_user_policy(inst, RandomPolicy(policy_seed), MethodOptions(bound=True))
    assert str(out.status) == "feasible"
    assert out.details["flow_time_bound_s"] <= out.details["flow_time_s"] * (1 + 1e-9)
