"""The hare exact routes count the hint's baselines in their time limit
(dlsched/models/hare/methods.py, HINT_SHARE): on 1,000 jobs over 2 GPUs the baselines alone
take about 30 s."""

from __future__ import annotations

import pytest

from dlsched.models import MethodOptions, run_method
from dlsched.models.hare.generate import generate
from dlsched.solvers.base import SolveOptions, Status


@pytest.mark.parametrize("method", ["exact", "exact-cpsat"])
def test_a_large_instance_keeps_the_time_limit(method):
    inst = generate(1000, 2, 0)
    out = run_method(inst, method, MethodOptions(SolveOptions(time_limit=4.0)))
    assert out.status == Status.TIME_LIMIT
    assert out.objective is not None and out.bound is not None and out.bound <= out.objective
    assert out.wall_time < 4.0 * 1.5 + 1.5  # before: 28-34 s, the baselines outside the limit
