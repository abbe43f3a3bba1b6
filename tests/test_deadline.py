"""The deadline helper (dlsched/solvers/deadline.py): its fork after HiGHS ran multi-threaded in
the parent process, and the grace a child has past its limit."""

from __future__ import annotations

import time

import pytest

from dlsched.models.hare.generate import generate_unrelated
from dlsched.models.hare.special import solve_single_task
from dlsched.solvers import SolveOptions, Status
from dlsched.solvers.deadline import GRACE, GRACE_SHARE, grace, within_time_limit


def test_a_forked_highs_mip_after_a_multithreaded_parent_run_still_proves():
    # Without stopping HiGHS's workers before the fork, the child inherits the task scheduler
    # without its threads and this MILP (a proof in about 2 s) runs to the 30 s limit.
    inst = generate_unrelated(30, 3, 1)
    opts = SolveOptions(time_limit=30, threads=2)
    first = solve_single_task(inst, opts, "colgen")  # HiGHS with 2 threads, in this process
    forked = solve_single_task(inst, opts, "time-indexed")  # the MILP in a forked child
    cert = forked.certified()
    assert cert.status == Status.OPTIMAL
    assert forked.objective == first.objective


def _sleep_then(seconds: float, value: int) -> int:
    time.sleep(seconds)
    return value


def test_grace_is_a_share_of_the_limit_up_to_a_second():
    assert grace(None) == GRACE == 1.0
    assert grace(120.0) == 1.0 and grace(10.0) == 1.0
    assert grace(1.0) == pytest.approx(GRACE_SHARE * 1.0) and grace(0.5) < grace(1.0)


def test_work_past_its_limit_is_killed_after_the_grace():
    t0 = time.perf_counter()
    assert within_time_limit(_sleep_then, 30.0, 1, time_limit=0.5, t0=t0) is None
    took = time.perf_counter() - t0
    assert took >= 0.5 + grace(0.5)  # it had its limit and its grace
    assert took < 0.5 + GRACE  # not a whole second more: before, 1.5 s at a 0.5 s limit
    # within the limit the answer comes back
    assert within_time_limit(_sleep_then, 0.05, 7, time_limit=5.0, t0=time.perf_counter()) == 7
