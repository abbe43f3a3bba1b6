"""The deadline helper's fork (dlsched/solvers/deadline.py) after HiGHS ran multi-threaded in
the parent process."""

from __future__ import annotations

from dlsched.models.hare.generate import generate_unrelated
from dlsched.models.hare.special import solve_single_task
from dlsched.solvers import SolveOptions, Status


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
