"""The hare exact routes count the hint's baselines in their time limit
(dlsched/models/hare/methods.py, HINT_SHARE): on 1,000 jobs over 2 GPUs the baselines alone
took about 30 s, outside the limit. A fake clock stands for the time: the first baseline takes
half a second of it, past the hint's share of a 4 s limit, so it stops and the others are not
run, and the later stages get what is left up to the time kept for the check; once it has
passed, the final CP-SAT model is not even built."""

from __future__ import annotations

import pytest
from fake_clock import FakeClock, record_time_limits

from dlsched.models import MethodOptions, run_method
from dlsched.models.hare import cpsat, pipeline
from dlsched.models.hare.baselines import BASELINES, BaselineTimeUp
from dlsched.models.hare.budget import CHECK_GRACES, HINT_SHARE
from dlsched.models.hare.generate import generate
from dlsched.solvers.base import SolveOptions, Status
from dlsched.solvers.deadline import grace

LIMIT, FIRST_BASELINE_SECONDS = 4.0, 0.5


@pytest.mark.parametrize("method", ["exact", "exact-cpsat"])
def test_the_hint_baselines_stop_at_their_share_and_the_stages_get_what_is_left(
    monkeypatch, method
):
    inst = generate(100, 2, 0)
    clock = FakeClock()
    assert FIRST_BASELINE_SECONDS > HINT_SHARE * LIMIT
    calls: list[tuple[str, str]] = []  # (baseline, how it ended)

    def timed(name, real, seconds):
        def run(instance, deadline=None):
            clock.advance(seconds)
            try:
                sched = real(instance, deadline)
            except BaselineTimeUp:
                calls.append((name, "cut"))
                raise
            calls.append((name, "done"))
            return sched

        return run

    first = next(iter(BASELINES))
    for name, real in list(BASELINES.items()):
        seconds = FIRST_BASELINE_SECONDS if name == first else 0.0
        monkeypatch.setitem(BASELINES, name, timed(name, real, seconds))
    budgets = {}
    real_subsets = pipeline.subset_bound

    def subsets(instance, options, *, deadline, **kw):
        budgets["subsets"] = deadline.limit
        clock.advance(LIMIT)  # the limit passes in this stage: the later stages get nothing
        return real_subsets(instance, options, deadline=deadline, **kw)

    monkeypatch.setattr(pipeline, "subset_bound", subsets)
    handed = record_time_limits(monkeypatch, cpsat)
    out = run_method(inst, method, MethodOptions(SolveOptions(time_limit=LIMIT), clock=clock))
    assert calls == [(first, "cut")]  # past the hint's share: the other baselines never ran
    rest = LIMIT - FIRST_BASELINE_SECONDS - CHECK_GRACES * grace(LIMIT)
    assert budgets["subsets"] == pytest.approx(pipeline.SUBSET_SHARE * rest)
    assert handed == []  # the final CP-SAT stage: nothing left to build its model in
    assert out.details["cpsat_status"] == "not built (time limit)"
    assert out.details["lns_steps"] == 0 and out.details["returned"] == "hint"
    assert out.status == Status.TIME_LIMIT
    assert out.objective is not None and out.bound is not None and out.bound <= out.objective
