"""ddlwmp's interval-indexed LP bound on the total flow time (dlsched/models/ddlwmp/flowlp.py):
its LP by hand, below the certified optimum, below every policy on crowded instances."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlsched.models import MethodOptions, run_method
from dlsched.models.ddlwmp.bounds import flow_time_bound, srpt_bound
from dlsched.models.ddlwmp.check import check
from dlsched.models.ddlwmp.flowlp import (
    certified,
    compute_flow_bound,
    flow_bound,
    interval_flow_bound,
    interval_model,
)
from dlsched.models.ddlwmp.generate import generate
from dlsched.models.ddlwmp.online import POLICIES, run_policy
from dlsched.solvers import SolveOptions
from dlsched.solvers.deadline import Deadline
from dlsched.solvers.highs import solve_matrix


def _lp(release, gpus, run, total, points) -> float:
    model = interval_model(
        np.array(release, float),
        np.array(gpus, float),
        np.array(run, float),
        total,
        np.array(points, float),
    )
    res = solve_matrix(model, SolveOptions())
    bound = certified(model, res.row_dual, len(release))
    assert bound is not None and bound <= res.objective * (1 + 1e-9)
    return bound


def test_interval_lp_by_hand() -> None:
    # two 1-GPU jobs of 2 s released at 0 on 1 GPU, intervals of 1 s: each job at most half of
    # its work in an interval, both together one GPU-second an interval, so the work fills
    # [0, 4) at half a job an interval: flow 1/2 (0 + 1 + 2 + 3) + 2 x 2 / 2 = 5 (the optimum is
    # 2 + 4 = 6: the LP is preemptive and spreads both jobs)
    assert _lp([0, 0], [1, 1], [2, 2], 1, [0, 1, 2, 3, 4]) == pytest.approx(5.0, rel=1e-6)
    # one job of 4 GPUs for 3 s on 4 GPUs, released at 1, intervals [0, 2), [2, 10): its work
    # counts from its release, so at most 1/3 of it in [0, 2), priced at 1 (not 0); the rest
    # in [2, 10) priced at 2: the link gives 1/3 x 0 + 2/3 x 1 + 3 / 2 = 13/6, below f >= p = 3
    assert _lp([1], [4], [3], 4, [0, 2, 10]) == pytest.approx(3.0, rel=1e-6)


def test_interval_lp_sees_each_jobs_gpus() -> None:
    # 8 one-GPU jobs of 10 s at 0 on 4 GPUs: the optimum runs 4 and then 4, flow 40 + 80 =
    # 120. Lemma 1's pooled machine runs each at 4 GPUs' speed: SRPT 2.5 + 5 + ... + 20 = 90
    # (sum r + p: 80). The LP: 4 GPU-seconds a 1 s interval hold 0.4 of a job, so the 8 jobs'
    # shares fill [0, 20) at 0.4 an interval, priced at the left ends: 0.4 (0 + ... + 19) = 76;
    # each f_i >= its share of that + 10 / 2, and >= 10, so sum f >= 76 + 40 = 116, reached
    # when every job's part is at least 5 (all alike: 9.5 each)
    got = _lp([0] * 8, [1] * 8, [10] * 8, 4, list(range(0, 41)))
    assert got == pytest.approx(116.0, rel=1e-6)


@pytest.mark.parametrize("seed", [2, 3])
def test_interval_bound_is_below_the_certified_optimum(seed: int) -> None:
    inst = generate(6, 8, seed, gpus_per_server=4)
    releases = math.fsum(j.release for j in inst.jobs)
    exact = run_method(inst, "exact", MethodOptions(SolveOptions(time_limit=20.0)))
    assert str(exact.status) == "optimal"
    lp = interval_flow_bound(inst)
    assert lp is not None and 0 < lp <= exact.objective - releases + 1e-6
    b = compute_flow_bound(inst)
    assert b.flow == max(b.lemma1, lp) and b.flow <= exact.objective - releases + 1e-6


@settings(max_examples=6, derandomize=True, deadline=None)
@given(st.integers(0, 10_000), st.integers(20, 60), st.floats(1.0, 3.0))
def test_bound_is_below_every_policy_on_crowded_instances(seed, jobs, load) -> None:
    inst = generate(jobs, 16, seed, setting="paper", load=load)
    b = compute_flow_bound(inst)
    assert b.interval_lp is not None
    assert b.flow >= flow_time_bound(srpt_bound(inst), inst) - 1e-9
    for name in POLICIES:
        for pool in (False, True):
            flow = check(inst, run_policy(inst, name, pooled=pool)[0]).flow_time
            assert b.flow <= flow * (1 + 1e-9)


def test_flow_report_gives_the_larger_piece_once_per_instance(monkeypatch) -> None:
    from dlsched.models.ddlwmp import flowlp

    inst = generate(30, 16, 1, setting="paper", load=2.0)
    calls = []
    real = flowlp.compute_flow_bound
    monkeypatch.setattr(flowlp, "compute_flow_bound", lambda *a: calls.append(1) or real(*a))
    opts = MethodOptions(params={"pooled": True}, bound=True)
    outs = [run_method(inst, m, opts) for m in POLICIES[:3]]
    assert len(calls) == 1
    for out in outs:
        d = out.details
        lemma1, lp = d["flow_time_bound_lemma1_s"], d["flow_time_bound_lp_s"]
        assert d["flow_time_bound_s"] == max(lemma1, lp) <= d["flow_time_s"]
        assert lemma1 == pytest.approx(flow_time_bound(srpt_bound(inst), inst))


def test_a_passed_deadline_or_a_large_instance_leaves_lemma1(monkeypatch) -> None:
    from dlsched.models.ddlwmp import flowlp

    inst = generate(30, 16, 1, setting="paper", load=2.0)
    clock = iter([0.0] + [100.0] * 1000)
    passed = Deadline.after(1.0, clock=lambda: next(clock))
    assert interval_flow_bound(inst, passed) is None
    b = flow_bound(inst, passed)
    assert b.interval_lp is None and b.flow == b.lemma1
    assert flow_bound(inst).interval_lp is not None  # the cut bound was not kept
    monkeypatch.setattr(flowlp, "MAX_COLUMNS", 30 * flowlp.MIN_INTERVALS // 2 - 1)
    assert interval_flow_bound(inst) is None
