"""A user's online elastic policy: the same flow time as the shipped policy it re-implements,
the certified bound beside it, its wrong decisions refused in one line, and the proof that it
is online (no job is seen before it arrives; the paper's policies know an arrived job's size)."""

from __future__ import annotations

import dataclasses
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from user_policies import Fixed, Recorder, examples

from dlsched import families
from dlsched.errors import UserCodeError
from dlsched.models import MethodOptions, run_method
from dlsched.models.elastic.policy import Start, fit, run_user_policy
from dlsched.online.policy import Wake

ELASTIC = families.get("elastic")


def instance(seed: int, jobs: int = 6, servers: int = 3, architecture: str = "ps"):
    return ELASTIC.generate(jobs, servers, seed, architecture=architecture)


@pytest.mark.parametrize("architecture", ["ps", "ring"])
@pytest.mark.parametrize("seed", range(4))
def test_fifo_of_ones_own_is_fifo(seed, architecture):
    inst = instance(seed, architecture=architecture)
    mine = ELASTIC.run_policy(inst, examples.ElasticFifo(), MethodOptions())
    shipped = run_method(inst, "fifo", MethodOptions())
    assert str(mine.status) == str(shipped.status)
    assert mine.details.get("flow_time_s") == shipped.details.get("flow_time_s")
    assert mine.solution == shipped.solution


def test_bound_and_gap_as_the_shipped_policies():
    inst = instance(1)
    out = run_user_policy(inst, examples.ElasticFifo(), MethodOptions(bound=True))
    d = out.details
    assert str(out.status) == "feasible"
    assert d["flow_time_bound_s"] <= d["flow_time_s"] * (1 + 1e-9)
    assert 0 <= d["flow_time_gap"] <= 1 and "bound_time" in d


def test_no_job_is_seen_before_it_arrives():
    a = instance(2)
    late = max(range(a.num_jobs), key=lambda j: a.jobs[j].arrival)
    moved = dataclasses.replace(a.jobs[late], arrival=a.jobs[late].arrival + 2)
    b = dataclasses.replace(a, jobs=tuple(moved if j == late else x for j, x in enumerate(a.jobs)))
    runs = []
    for inst in (a, b):
        rec = Recorder(examples.ElasticFifo())
        run_user_policy(inst, rec, MethodOptions())
        assert all(j.profile.arrival <= v.now for v in rec.views for j in v.jobs)
        runs.append(rec.views)
    first = a.jobs[late].arrival
    before = [[v for v in views if v.now < first] for views in runs]
    assert before[0] and before[0] == before[1]


def at_zero():
    inst = instance(1, jobs=2)
    jobs = tuple(dataclasses.replace(j, arrival=0) for j in inst.jobs)
    return dataclasses.replace(inst, jobs=jobs)


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (lambda v: [Start(9, 0, {0: 1})], "no such arrived unfinished job"),
        (lambda v: [Start(0, 9, {0: 1})], "no such worker type"),
        (lambda v: [Start(0, 0, {9: 1})], "no such server"),
        (lambda v: [Start(0, 0, {0: 0})], "no worker"),
        (lambda v: [Start(0, 0, {0: -1})], "is not a count"),
        (lambda v: [Start(0, 0, {0: 10_000})], "does not fit the free resources"),
        (lambda v: [fit(v, v.jobs[0], 1), fit(v, v.jobs[0], 1)], "already running"),
        (lambda v: [Start(0, 0, [1])], "workers is not a mapping"),
        (lambda v: [None], "expected Start(job="),
    ],
)
def test_wrong_decisions_are_refused_in_one_line(answer, words):
    with pytest.raises(UserCodeError) as err:
        run_user_policy(at_zero(), Fixed(answer), MethodOptions())
    assert words in str(err.value) and "\n" not in str(err.value)


def test_a_run_past_the_horizon_is_refused():
    inst = at_zero()
    slow = dataclasses.replace(inst, horizon=1)
    with pytest.raises(UserCodeError, match="past T=1"):
        run_user_policy(slow, Fixed(lambda v: [Start(0, 0, {0: 1})]), MethodOptions())


def test_jobs_left_at_the_horizon_make_no_schedule_as_the_heuristics():
    out = run_user_policy(at_zero(), Fixed(lambda v: []), MethodOptions())
    assert out.solution is None and "no room" in out.details["reason"]


class RandomPolicy:
    """Any valid decision: waiting jobs in random order, each placed by :func:`fit` with a
    random worker count and type, or left waiting; sometimes a wake."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def decide(self, view):
        out: list = []
        jobs = list(view.waiting)
        self.rng.shuffle(jobs)
        for job in jobs:
            if self.rng.random() < 0.2:
                continue
            n = self.rng.randint(1, job.profile.chunks)
            kind = self.rng.randrange(len(view.cluster.worker_types))
            start = fit(view, job, n, kind, after=out)
            if start is not None:
                out.append(start)
        if self.rng.random() < 0.2:
            out.append(Wake(view.now + self.rng.randint(1, 3)))
        return out


@settings(max_examples=20, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    policy_seed=st.integers(0, 10_000),
    architecture=st.sampled_from(["ps", "ring"]),
)
def test_any_valid_policy_passes_the_checker(seed, policy_seed, architecture):
    inst = instance(seed, jobs=4, servers=2, architecture=architecture)
    out = run_user_policy(inst, RandomPolicy(policy_seed), MethodOptions(bound=True))
    assert str(out.status) in ("feasible", "no_solution", "infeasible")
    if out.solution is not None:  # re-checked from the raw instance
        assert out.details["flow_time_bound_s"] <= out.details["flow_time_s"] * (1 + 1e-9)
