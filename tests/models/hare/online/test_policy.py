"""A user's online hare policy: the same flow time as the shipped policy it re-implements,
the certified bound beside it, its wrong decisions refused in one line, and the proof that it
cannot know a job's number of rounds."""

from __future__ import annotations

import dataclasses
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from user_policies import Fixed, Recorder, examples, same_until, slot_fields

from dlsched import families
from dlsched.errors import OptionError, UserCodeError
from dlsched.models import MethodOptions, run_method
from dlsched.models.hare.online.policy import HareJobView, HareView, Start, run_user_policy
from dlsched.online.policy import Wake

HARE = families.get("hare")


def instance(seed: int, jobs: int = 6, gpus: int = 4):
    return HARE.generate(jobs, gpus, seed)


@pytest.mark.parametrize("seed", range(4))
def test_fifo_of_ones_own_is_online_fifo(seed):
    inst = instance(seed)
    mine = HARE.run_policy(inst, examples.HareFifo(), MethodOptions())
    shipped = run_method(inst, "online-fifo", MethodOptions())
    assert mine.method == "hare-fifo"
    assert mine.details["flow_time_s"] == pytest.approx(shipped.details["flow_time_s"])
    assert mine.objective == pytest.approx(shipped.objective)


def test_bound_and_gap_as_the_shipped_policies():
    inst = instance(7)
    out = run_user_policy(inst, examples.HareFifo(), MethodOptions(bound=True))
    d = out.details
    assert d["flow_time_bound_s"] <= d["flow_time_s"] * (1 + 1e-9)
    assert d["flow_time_gap"] == pytest.approx(1 - d["flow_time_bound_s"] / d["flow_time_s"])
    assert "bound_time" in d and out.wall_time >= 0
    plain = run_user_policy(inst, examples.HareFifo(), MethodOptions())
    assert "flow_time_bound_s" not in plain.details
    assert plain.details["flow_time_s"] == d["flow_time_s"]


def test_hooks_see_every_arrival_and_completion():
    inst = instance(3)
    rec = Recorder(examples.HareFifo())
    run_user_policy(inst, rec, MethodOptions())
    assert sorted(j.index for j in rec.arrived) == list(range(inst.num_jobs))
    assert sorted(j.index for j in rec.completed) == list(range(inst.num_jobs))
    assert all(j.rounds_done == inst.jobs[j.index].rounds for j in rec.completed)


def test_the_policy_cannot_know_a_jobs_rounds():
    a = instance(11, jobs=5, gpus=3)
    k = 0
    more = dataclasses.replace(a.jobs[k], rounds=a.jobs[k].rounds + 3)
    b = dataclasses.replace(a, jobs=(more, *a.jobs[1:]))
    runs = []
    for inst in (a, b):
        rec = Recorder(examples.HareFifo())
        run_user_policy(inst, rec, MethodOptions())
        runs.append(rec.views)
    shared, equal = same_until(runs[0], runs[1], k)
    assert shared >= 2 and equal  # identical until job k's end in a, its next round in b
    assert runs[0] != runs[1]  # and the difference shows then
    fields = slot_fields(HareJobView) | slot_fields(HareView)
    assert not fields & {"rounds", "remaining", "work", "size", "instance", "completion"}
    view = runs[0][0]
    for obj in (view, view.jobs[0]):
        assert not hasattr(obj, "__dict__")
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(obj, dataclasses.fields(obj)[0].name, None)


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        ([Start(99, 0)], "no such arrived unfinished job"),
        ([Start(0, 17)], "no such GPU"),
        ([Start(0, 0), Start(0, 0)], "GPU 0 is busy"),
        ([(0, 0)], "expected Start(job="),
        ([Start(True, 0)], "no such arrived unfinished job"),
        (5, "expected a sequence of Start("),
        ([Wake(-1.0)], "Wake(at) with a time later than now"),
    ],
)
def test_wrong_decisions_are_refused_in_one_line(answer, words):
    inst = dataclasses.replace(
        instance(2, jobs=2, gpus=2),
        jobs=tuple(dataclasses.replace(j, arrival=0.0) for j in instance(2, jobs=2, gpus=2).jobs),
    )
    with pytest.raises(UserCodeError) as err:
        run_user_policy(inst, Fixed(answer), MethodOptions())
    assert words in str(err.value) and "\n" not in str(err.value)


def test_a_job_with_no_task_ready_is_refused():
    job = instance(2, jobs=1, gpus=2).jobs[0]
    inst = dataclasses.replace(
        instance(2, jobs=1, gpus=2),
        jobs=(dataclasses.replace(job, arrival=0.0, tasks_per_round=1),),
    )
    with pytest.raises(UserCodeError, match="has no task ready"):
        run_user_policy(inst, Fixed([Start(0, 0), Start(0, 1)]), MethodOptions())


@pytest.mark.parametrize("policy", [object(), examples.HareFifo, {"decide": None}])
def test_an_object_without_decide_is_refused_in_one_line(policy):
    with pytest.raises(UserCodeError, match="has no decide") as err:
        HARE.run_policy(instance(1), policy, MethodOptions())
    assert "\n" not in str(err.value)


def test_a_policy_that_starts_nothing_is_refused():
    with pytest.raises(UserCodeError, match=r"started nothing while jobs waited at t="):
        run_user_policy(instance(1), Fixed([]), MethodOptions())


def test_the_policys_own_error_propagates():
    class Broken:
        def decide(self, view):
            raise KeyError("mine")

    with pytest.raises(KeyError, match="mine"):
        run_user_policy(instance(1), Broken(), MethodOptions())


def test_a_family_without_online_policies_says_so():
    with pytest.raises(OptionError, match="the placement family takes no online policies"):
        families.get("placement").run_policy(None, examples.HareFifo(), MethodOptions())


class RandomPolicy:
    """Any valid decision: a random subset of (ready job, free GPU) pairs, at least one when
    there is one, sometimes a wake."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def decide(self, view):
        free = list(view.free_gpus)
        self.rng.shuffle(free)
        left = {j.index: j.left for j in view.jobs}
        out: list = []
        for g in free:
            ready = [n for n, k in left.items() if k > 0]
            if not ready or (out and self.rng.random() < 0.3):
                break
            n = self.rng.choice(ready)
            left[n] -= 1
            out.append(Start(n, g))
        if self.rng.random() < 0.2:
            out.append(Wake(view.now + self.rng.uniform(0.1, 5.0)))
        return out


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), policy_seed=st.integers(0, 10_000))
def test_any_valid_policy_passes_the_checker(seed, policy_seed):
    inst = HARE.generate(4, 3, seed)
    out = run_user_policy(inst, RandomPolicy(policy_seed), MethodOptions(bound=True))
    assert str(out.status) == "feasible"  # re-checked from the raw instance
    assert out.details["flow_time_bound_s"] <= out.details["flow_time_s"] * (1 + 1e-9)
